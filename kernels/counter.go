// Package kernels counts the triangles of one subtask: three CSR views
// B[I][J], B[I][K] and B[J][K] of a forward graph. It holds the Counter
// interface, the pure-Go CPU kernels (the reference everywhere) and the
// loader for the native CUDA library.
package kernels

import (
	"context"
	"time"

	"github.com/trigrid/trigrid/graph"
)

// Subtask is the input of one count: for every edge (u, v) of IJ, the
// triangles closed are |IK.Row(u) ∩ JK.Row(v)|.
//
// Index spaces: rows of IJ and IK are I-local; columns of IJ and rows of JK
// are J-local; columns of IK and JK are K-local. For the whole graph (P = 1)
// all three point at the same forward CSR.
//
// Clip narrows the count to what a forward graph can hold, so that kernels
// can skip the part of IK.Row(u) that lies at or below v: with Clip set, an
// edge (u, v) closes only the triangles through the K-local ids w of both
// lists with w >= v + TailOffset (v is J-local, w K-local). The caller, who
// knows how the three index spaces sit in the global order, picks the
// offset so that this drops nothing its blocks hold (every w of JK.Row(v)
// is above v globally): 1 for the whole graph and for K == J; with hash
// ids (global = g + P*local) 1 if K < J and 0 if K > J; with range ids
// (global = start(g) + local) any value <= -2^32 if K > J. A clip that
// is too low costs only speed, one that is too high loses triangles. The
// zero value counts every common element, which is the definition the GPU
// kernels implement; for correctly clipped blocks both give the same count.
type Subtask struct {
	IJ, IK, JK *graph.CSR
	Clip       bool
	// TailOffset is the offset of the clip, used only with Clip. Values
	// beyond ±2^32 act as ±2^32: every w qualifies, or none.
	TailOffset int64
	// Ahead lists, in order and as far as the caller knows them, the
	// subtasks the same counter will count next. A counter with a block
	// cache may upload their blocks while it counts this one and keep the
	// blocks they need; Ahead never changes a count, and nil is fine.
	Ahead []Subtask
}

// Whole returns the subtask that counts an entire forward graph.
func Whole(g *graph.CSR) Subtask { return Subtask{IJ: g, IK: g, JK: g} }

// Result is what a Counter reports for one subtask.
type Result struct {
	Triangles uint64
	// KernelTime is the time spent counting only: CUDA-event time for GPU
	// kernels, wall time of the parallel loop for CPU kernels.
	KernelTime time.Duration
	// Upload is the time the count waited for its blocks to reach the
	// device and be ready there (copies, their completion, the device's
	// checks and indexes), beyond what ran beside an earlier kernel, and
	// excluding the host's page-locking; 0 for a counter without a device
	// of its own.
	Upload time.Duration
}

// Counter counts the triangles of a subtask. Implementations must be exact
// for any three blocks that satisfy graph.CSR's invariants, and safe to call
// from one goroutine at a time (a Counter may own device state).
type Counter interface {
	// Name is the kernel name used by --kernel and in reports.
	Name() string
	Count(ctx context.Context, t Subtask) (Result, error)
}
