package gpu

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/trigrid/trigrid/kernels"
)

// localKernels are the GPU kernels with a per-vertex mode (tg_count_local
// has one for polak and wetric); auto chooses between those two as it does
// for totals.
var localKernels = []string{"auto", "polak", "wetric"}

// LocalKernels lists the GPU kernels that count per vertex and per edge.
func LocalKernels() []string { return append([]string(nil), localKernels...) }

// HasLocal reports whether GPU kernel name has a per-vertex mode.
func HasLocal(name string) bool { return slices.Contains(localKernels, name) }

// localOut is tg_local_out of trigrid.h: the host arrays the library adds
// a subtask's counts to (nil: not wanted).
type localOut struct {
	vi, vj, vk    *uint64
	eij, eik, ejk *uint64
}

var _ kernels.LocalCounter = (*Counter)(nil)

// HasLocalMode reports whether the counter's kernel has a per-vertex mode
// (kernels.HasLocalMode reads it).
func (c *Counter) HasLocalMode() bool { return HasLocal(c.kernel) }

// CountLocal implements kernels.LocalCounter: it counts t like Count and
// adds its per-vertex (and, when acc.PerEdge(), per-edge) counts to acc,
// in the blocks' local index spaces. A subtask that does not fit is
// counted in row ranges, as Count does. A kernel without a per-vertex mode
// (HasLocal) is an error that wraps ErrNoLocalMode and names the kernels
// that have one.
func (c *Counter) CountLocal(ctx context.Context, t kernels.Subtask, acc *kernels.Local) (kernels.Result, error) {
	if err := ctx.Err(); err != nil {
		return kernels.Result{}, err
	}
	if !HasLocal(c.kernel) {
		return kernels.Result{}, fmt.Errorf("%w: %s (kernels with one: %s)", ErrNoLocalMode, c.kernel, strings.Join(localKernels, ", "))
	}
	if t.IJ == nil || t.IK == nil || t.JK == nil {
		return kernels.Result{}, fmt.Errorf("gpu: count per vertex: nil block in subtask")
	}
	if err := checkLocal(t, acc); err != nil {
		return kernels.Result{}, fmt.Errorf("gpu: count per vertex: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == 0 {
		return kernels.Result{}, fmt.Errorf("gpu: count per vertex: counter is closed")
	}
	res, err := c.localWhole(t, acc)
	if !errors.Is(err, ErrOutOfMemory) {
		return res, err
	}
	// Rows [first, ...) of IJ and IK against the whole JK: the counts of
	// those rows and of their edges start further into acc; J and K stay.
	return c.countRowsWith(ctx, t, 0, t.IJ.NumRows(), func(part kernels.Subtask, first int64) (kernels.Result, error) {
		sub := &kernels.Local{
			VI: acc.VI[first:], VJ: acc.VJ, VK: acc.VK,
			EIJ: tail(acc.EIJ, t.IJ.Offsets[first]), EIK: tail(acc.EIK, t.IK.Offsets[first]), EJK: acc.EJK,
		}
		return c.localWhole(part, sub)
	})
}

// tail is s from index i on (nil stays nil).
func tail(s []uint64, i uint64) []uint64 {
	if s == nil {
		return nil
	}
	return s[i:]
}

// checkLocal checks acc's lengths against t (kernels.Local's contract).
func checkLocal(t kernels.Subtask, acc *kernels.Local) error {
	if acc == nil {
		return fmt.Errorf("no counts to add to")
	}
	for _, r := range []struct {
		name string
		have int
		want int64
		edge bool
	}{
		{"VI", len(acc.VI), t.IJ.NumRows(), false},
		{"VJ", len(acc.VJ), t.JK.NumRows(), false},
		{"VK", len(acc.VK), max(t.IK.NCols, t.JK.NCols), false},
		{"EIJ", len(acc.EIJ), t.IJ.NumEdges(), true},
		{"EIK", len(acc.EIK), t.IK.NumEdges(), true},
		{"EJK", len(acc.EJK), t.JK.NumEdges(), true},
	} {
		if r.edge && !acc.PerEdge() {
			continue
		}
		if int64(r.have) < r.want {
			return fmt.Errorf("%s has %d entries, the subtask needs %d", r.name, r.have, r.want)
		}
	}
	return nil
}

// localWhole is countWhole for the per-vertex mode. c.mu is held.
func (c *Counter) localWhole(t kernels.Subtask, acc *kernels.Local) (kernels.Result, error) {
	res, err := c.tryLocal(t, acc)
	if errors.Is(err, ErrOutOfMemory) && c.releaseAll() {
		res, err = c.tryLocal(t, acc)
	}
	return res, err
}

// tryLocal is tryWhole for the per-vertex mode. c.mu is held.
func (c *Counter) tryLocal(t kernels.Subtask, acc *kernels.Local) (kernels.Result, error) {
	s, pinned, err := c.ready(t)
	if err != nil {
		return kernels.Result{}, fmt.Errorf("gpu: count per vertex: %w", err)
	}
	for {
		res, err := c.countSlots(kernels.Stats(t), s, func() { c.stage(t) }, acc)
		if !errors.Is(err, ErrOutOfMemory) || !c.releaseIdle(&pinned, t.Ahead) {
			return res, err
		}
	}
}

// countLocalCall is tg_count_local of kernel id on three slots into acc's
// arrays. A failed call adds nothing to acc (the library adds only after
// the kernel succeeded). c.mu is held.
func (c *Counter) countLocalCall(id int32, s [3]int32, acc *kernels.Local, tri *uint64, ms *float64) int32 {
	out := localOut{vi: ptr(acc.VI), vj: ptr(acc.VJ), vk: ptr(acc.VK)}
	if acc.PerEdge() {
		out.eij, out.eik, out.ejk = ptr(acc.EIJ), ptr(acc.EIK), ptr(acc.EJK)
	}
	rc := c.lib.countLocal(c.ctx, id, s[0], s[1], s[2], &out, tri, ms, &c.buf[0], errBufLen)
	runtime.KeepAlive(acc)
	return rc
}
