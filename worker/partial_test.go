package worker

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

// TestRunPerVertexPartials asks for per-vertex and per-edge counts: mapped
// back to global ids (hash scheme: global = group + P*local) the partials
// of all subtasks must equal the per-vertex counts found by walking every
// triangle of the forward graph, and each subtask's per-edge supports sum
// to its count.
func TestRunPerVertexPartials(t *testing.T) {
	fwd := testForward(t, 9, 7)
	const p = 3
	part, err := partition.Split(fwd, storage.SchemeHash, p, 2)
	if err != nil {
		t.Fatal(err)
	}
	as := assignments("v", "", part.Subtasks())
	for x := range as {
		as[x].PerVertex, as[x].PerEdge = true, x%2 == 0
	}
	conn := newFakeConn(as)
	// merge has no per-vertex mode: the slot falls back to the CPU's auto.
	runWorker(t, testConfig(t, conn, cpuSlots(2, "merge"), PartitionSource{Part: part}))
	got := make([]uint64, fwd.NumRows())
	var total uint64
	for x, r := range conn.check(t, as) {
		if r.Err != "" || r.Partial == nil {
			t.Fatalf("subtask %d: %+v", x, r)
		}
		a, pt := as[x], r.Partial
		var si, sj, sk uint64
		for l, c := range pt.VI {
			got[a.I+p*l] += c
			si += c
		}
		for l, c := range pt.VJ {
			got[a.J+p*l] += c
			sj += c
		}
		for l, c := range pt.VK {
			got[a.K+p*l] += c
			sk += c
		}
		if si != r.Triangles || sj != r.Triangles || sk != r.Triangles {
			t.Fatalf("subtask %d: vertex sums %d %d %d, count %d", x, si, sj, sk, r.Triangles)
		}
		if a.PerEdge {
			for _, e := range [][]uint64{pt.EIJ, pt.EIK, pt.EJK} {
				var se uint64
				for _, c := range e {
					se += c
				}
				if se != r.Triangles {
					t.Fatalf("subtask %d: edge supports sum to %d, count %d", x, se, r.Triangles)
				}
			}
		} else if pt.EIJ != nil {
			t.Fatalf("subtask %d: per-edge counts not asked for", x)
		}
		total += r.Triangles
	}
	want := walkTriangles(fwd)
	var sum uint64
	for v := range want {
		if got[v] != want[v] {
			t.Fatalf("vertex %d: partials give %d triangles, the walk %d", v, got[v], want[v])
		}
		sum += want[v]
	}
	if sum != 3*total || total != referenceCount(t, fwd) {
		t.Fatalf("total %d, reference %d, vertex sum %d", total, referenceCount(t, fwd), sum)
	}
}

// walkTriangles counts the triangles at each vertex of a forward graph by
// marking u's list and looking for marks among its neighbours' lists.
func walkTriangles(fwd *graph.CSR) []uint64 {
	n := fwd.NumRows()
	per := make([]uint64, n)
	mark := make([]int64, n)
	for i := range mark {
		mark[i] = -1
	}
	for u := int64(0); u < n; u++ {
		for _, v := range fwd.Row(u) {
			mark[v] = u
		}
		for _, v := range fwd.Row(u) {
			for _, w := range fwd.Row(int64(v)) {
				if mark[w] == u {
					per[u]++
					per[v]++
					per[w]++
				}
			}
		}
	}
	return per
}

// noModeCounter is a LocalCounter whose kernel has no per-vertex mode, as
// a GPU counter of trix, grouptc or trust.
type noModeCounter struct{ kernels.Counter }

func (noModeCounter) CountLocal(context.Context, kernels.Subtask, *kernels.Local) (kernels.Result, error) {
	return kernels.Result{}, errors.New("no per-vertex mode")
}
func (noModeCounter) HasLocalMode() bool { return false }

// A slot whose kernel says it has no per-vertex mode counts partials with
// the CPU's auto kernel; one that has a mode keeps its own.
func TestLocalCounterAsksTheMode(t *testing.T) {
	merge, err := kernels.NewCPU("merge", kernels.CPUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	local, err := kernels.NewCPU("local", kernels.CPUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := &slotState{}
	log := slog.New(slog.DiscardHandler)
	if c, err := s.localCounter(noModeCounter{merge}, 1, log); err != nil || c.Name() != "auto" {
		t.Fatalf("no mode: %v, %v; want the CPU's auto", c, err)
	}
	if c, err := s.localCounter(local, 1, log); err != nil || c != local {
		t.Fatalf("local: %v, %v; want itself", c, err)
	}
}
