package partition

import (
	"slices"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/testgraphs"
	"github.com/trigrid/trigrid/internal/testlong"
	"github.com/trigrid/trigrid/storage"
)

var testPs = sweepPs()

var schemes = []storage.Scheme{storage.SchemeHash, storage.SchemeRange}

// countPartition sums the subtask counts of a partition.
func countPartition(t testing.TB, part *Partition) uint64 {
	t.Helper()
	var n uint64
	for _, s := range part.Subtasks() {
		n += countBlocks(part.Block(s.I, s.J), part.Block(s.I, s.K), part.Block(s.J, s.K))
	}
	return n
}

// checkPartition verifies blocks against fwd edge by edge: every forward
// edge lands in exactly its block at its local ids.
func checkPartition(t *testing.T, fwd *graph.CSR, part *Partition) {
	t.Helper()
	l := part.Layout
	var total int64
	for i := range l.P {
		for j := range l.P {
			b := part.Block(i, j)
			if err := b.Validate(); err != nil {
				t.Fatalf("block (%d,%d): %v", i, j, err)
			}
			if b.NumRows() != l.GroupSize(i) || b.NCols != l.GroupSize(j) {
				t.Fatalf("block (%d,%d): %dx%d, want %dx%d", i, j, b.NumRows(), b.NCols, l.GroupSize(i), l.GroupSize(j))
			}
			if !l.CanHaveEdges(i, j) && b.NumEdges() != 0 {
				t.Fatalf("block (%d,%d) of the range scheme holds %d edges", i, j, b.NumEdges())
			}
			total += b.NumEdges()
			for r := int64(0); r < b.NumRows(); r++ {
				u := l.Global(i, uint32(r))
				for _, c := range b.Row(r) {
					v := l.Global(j, c)
					if _, ok := slices.BinarySearch(fwd.Row(int64(u)), v); !ok {
						t.Fatalf("block (%d,%d) holds %d->%d, not a forward edge", i, j, u, v)
					}
				}
			}
		}
	}
	if total != fwd.NumEdges() {
		t.Fatalf("blocks hold %d edges, graph has %d", total, fwd.NumEdges())
	}
}

func TestSplitCountsMatchWholeGraph(t *testing.T) {
	t.Parallel()
	graphs := []struct {
		name string
		fwd  *graph.CSR
	}{
		{"rmat10", refForward(rmatEdges(10, 8, 1))},
		{"empty", &graph.CSR{Offsets: []uint64{0}}},
		{"two-vertices", refForward([]graph.Edge{{U: 1, V: 2}})},
	}
	if testlong.Enabled() {
		graphs = append(graphs, struct {
			name string
			fwd  *graph.CSR
		}{"rmat12", refForward(rmatEdges(12, 16, 2))})
	}
	for _, g := range graphs {
		want := bruteCount(g.fwd)
		for _, sc := range schemes {
			for _, p := range testPs {
				t.Run(g.name+"/"+sc.String()+"/P"+itoa(p), func(t *testing.T) {
					t.Parallel()
					part, err := Split(g.fwd, sc, p, 2)
					if err != nil {
						t.Fatal(err)
					}
					checkPartition(t, g.fwd, part)
					if got := countPartition(t, part); got != want {
						t.Fatalf("partitioned count %d, whole-graph count %d", got, want)
					}
				})
			}
		}
	}
}

func TestSplitDatasets(t *testing.T) {
	if testing.Short() {
		t.Skip("datasets are slow in -short mode")
	}
	for _, d := range testgraphs.Datasets(t) {
		if d.Name != "ca-GrQc" && d.Name != "ego-Facebook" && d.Name != "ca-HepTh" {
			continue // the larger ones run through the shard tests
		}
		t.Run(d.Name, func(t *testing.T) {
			testgraphs.SkipSweep(t, d)
			fwd := refForward(readEdgeList(t, d.Path))
			for _, sc := range schemes {
				for _, p := range testPs {
					t.Run(sc.String()+"/P"+itoa(p), func(t *testing.T) {
						part, err := Split(fwd, sc, p, 2)
						if err != nil {
							t.Fatal(err)
						}
						if got := countPartition(t, part); got != d.Triangles {
							t.Fatalf("%s: partitioned count %d, MANIFEST.tsv says %d", d.Name, got, d.Triangles)
						}
					})
				}
			}
		})
	}
}

// TestEachTriangleInOneSubtask lists every triangle found by every subtask
// (translating local ids back) and checks each real triangle appears
// exactly once.
func TestEachTriangleInOneSubtask(t *testing.T) {
	t.Parallel()
	fwd := refForward(rmatEdges(8, 8, 7))
	// Independent triangle list from the whole graph.
	want := map[[3]uint32]int{}
	for a := int64(0); a < fwd.NumRows(); a++ {
		for _, b := range fwd.Row(a) {
			for _, c := range fwd.Row(int64(b)) {
				if _, ok := slices.BinarySearch(fwd.Row(a), c); ok {
					want[[3]uint32{uint32(a), b, c}] = 0
				}
			}
		}
	}
	if len(want) == 0 {
		t.Fatal("test graph has no triangles")
	}
	ps := []int{2, 3}
	if testlong.Enabled() {
		ps = []int{2, 3, 4, 5, 8}
	}
	for _, sc := range schemes {
		for _, p := range ps {
			t.Run(sc.String()+"/P"+itoa(p), func(t *testing.T) {
				t.Parallel()
				part, err := Split(fwd, sc, p, 2)
				if err != nil {
					t.Fatal(err)
				}
				l := part.Layout
				if sc == storage.SchemeRange && l.Fold < 2 {
					t.Fatalf("range layout has fold %d", l.Fold)
				}
				seen := map[[3]uint32]int{}
				for _, s := range part.Subtasks() {
					ij, ik, jk := part.Block(s.I, s.J), part.Block(s.I, s.K), part.Block(s.J, s.K)
					for u := int64(0); u < ij.NumRows(); u++ {
						for _, v := range ij.Row(u) {
							for _, w := range ik.Row(u) {
								if _, ok := slices.BinarySearch(jk.Row(int64(v)), w); ok {
									tri := [3]uint32{l.Global(s.I, uint32(u)), l.Global(s.J, v), l.Global(s.K, w)}
									if l.Group(tri[0]) != s.I || l.Group(tri[1]) != s.J || l.Group(tri[2]) != s.K {
										t.Fatalf("triangle %v (groups %d,%d,%d) found by subtask %+v", tri, l.Group(tri[0]), l.Group(tri[1]), l.Group(tri[2]), s)
									}
									seen[tri]++
								}
							}
						}
					}
				}
				for tri, c := range seen {
					if _, ok := want[tri]; !ok {
						t.Fatalf("subtasks found %v, not a triangle", tri)
					}
					if c != 1 {
						t.Fatalf("triangle %v found %d times", tri, c)
					}
				}
				if len(seen) != len(want) {
					t.Fatalf("subtasks found %d distinct triangles, graph has %d", len(seen), len(want))
				}
			})
		}
	}
}

func TestSubtaskOrderKeepsBaseBlock(t *testing.T) {
	t.Parallel()
	fwd := refForward(rmatEdges(10, 8, 3))
	for _, sc := range schemes {
		part, err := Split(fwd, sc, 4, 2)
		if err != nil {
			t.Fatal(err)
		}
		tasks := part.Subtasks()
		done := map[[2]int]bool{}
		for x, s := range tasks {
			if x > 0 && (tasks[x-1].I != s.I || tasks[x-1].J != s.J) {
				ij := [2]int{tasks[x-1].I, tasks[x-1].J}
				done[ij] = true
				if done[[2]int{s.I, s.J}] {
					t.Fatalf("%v: base block (%d,%d) comes back after another one", sc, s.I, s.J)
				}
			}
			if x > 0 && tasks[x-1].I == s.I && tasks[x-1].J == s.J && tasks[x-1].K >= s.K {
				t.Fatalf("%v: K not ascending within (%d,%d)", sc, s.I, s.J)
			}
			if s.Work < s.Edges || s.Edges == 0 {
				t.Fatalf("%v: subtask %+v has no edges or work below its edge count", sc, s)
			}
		}
		below := 0
		for _, s := range tasks {
			if part.Block(s.I, s.J).NumEdges() == 0 || part.Block(s.I, s.K).NumEdges() == 0 || part.Block(s.J, s.K).NumEdges() == 0 {
				t.Fatalf("%v subtask %+v has an empty block", sc, s)
			}
			if s.I > s.J || s.J > s.K {
				below++
			}
		}
		// Folded range groups hold low and high ranks, so subtasks outside
		// I <= J <= K carry triangles too and must be listed.
		if sc == storage.SchemeRange && (part.Layout.Fold < 2 || below == 0) {
			t.Fatalf("range: fold %d, %d subtasks outside I <= J <= K", part.Layout.Fold, below)
		}
	}
}

func TestBalanceRMAT(t *testing.T) {
	t.Parallel()
	scale := 13
	if testlong.Enabled() {
		scale = 16
	}
	fwd := refForward(rmatEdges(scale, 16, 11))
	// Range: one contiguous range per group cannot get below about 1.41
	// on this graph (an exhaustive search over cut placements finds no
	// better); folded ranges fill all P^2 blocks and must get within 15%
	// of their mean, the target the fold search stops at.
	limits := map[storage.Scheme]float64{storage.SchemeHash: 1.05, storage.SchemeRange: 1.15}
	if scale == 13 {
		limits[storage.SchemeHash] = 1.10 // scale 13 has ~6k edges per block
	}
	for _, sc := range schemes {
		part, err := Split(fwd, sc, 4, 2)
		if err != nil {
			t.Fatal(err)
		}
		b := part.Balance()
		t.Logf("%v P=4: blocks %d non-empty %d max %d mean %.0f ratio %.3f; subtasks %d work ratio %.2f",
			sc, b.Blocks, b.NonEmpty, b.MaxBlock, b.MeanBlock, b.BlockRatio, b.Subtasks, b.WorkRatio)
		if b.BlockRatio > limits[sc] {
			t.Errorf("%v: largest block %.3f x the mean, want <= %.2f", sc, b.BlockRatio, limits[sc])
		}
		if b.Blocks != 16 {
			t.Errorf("%v: balance over %d blocks, want all 16", sc, b.Blocks)
		}
	}
}

func itoa(p int) string { return string(rune('0'+p/10%10)) + string(rune('0'+p%10)) }
