package gpu

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu/abi"
)

// localKernels are the GPU kernels with a per-vertex mode (tg_count_local
// has one for polak and wetric); auto chooses between those two as it does
// for totals.
var localKernels = []string{"auto", "polak", "wetric"}

// LocalKernels lists the GPU kernels that count per vertex and per edge.
func LocalKernels() []string { return append([]string(nil), localKernels...) }

// HasLocal reports whether GPU kernel name has a per-vertex mode.
func HasLocal(name string) bool { return slices.Contains(localKernels, name) }

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
	if c.ctx == nil {
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
	res, err := c.tryWhole(t, acc)
	if errors.Is(err, ErrOutOfMemory) && c.slots.ReleaseAll() {
		res, err = c.tryWhole(t, acc)
	}
	return res, err
}

// localOut is the arrays of acc tg_count_local adds to: the per-edge ones
// only when acc counts per edge. A failed call adds nothing to them (the
// library adds only after the kernel succeeded).
func localOut(acc *kernels.Local) abi.LocalOut {
	out := abi.LocalOut{VI: acc.VI, VJ: acc.VJ, VK: acc.VK}
	if acc.PerEdge() {
		out.EIJ, out.EIK, out.EJK = acc.EIJ, acc.EIK, acc.EJK
	}
	return out
}
