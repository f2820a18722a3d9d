package graph

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// checkOrientation checks the properties every consumer of a forward graph
// relies on, independently of how the rank was chosen.
func checkOrientation(t *testing.T, g naiveGraph, fwd *CSR, rank []uint32, st OrientStats) {
	t.Helper()
	n := len(g.nbr)
	seen := make([]bool, n)
	for _, r := range rank {
		if int(r) >= n || seen[r] {
			t.Fatalf("rank is not a permutation of 0..%d: %v", n-1, rank)
		}
		seen[r] = true
	}
	if err := fwd.Validate(); err != nil {
		t.Fatalf("forward graph: %v", err)
	}
	if fwd.NumRows() != int64(n) || fwd.NCols != int64(n) {
		t.Fatalf("forward graph is %dx%d, want %d", fwd.NumRows(), fwd.NCols, n)
	}
	want := naiveForward(g, rank)
	var total int64
	for v := range want {
		got := fwd.Row(int64(v))
		if !slices.Equal(got, want[v]) && len(got)+len(want[v]) > 0 {
			t.Fatalf("forward row %d = %v, want %v", v, got, want[v])
		}
		for _, x := range got {
			if x <= uint32(v) {
				t.Fatalf("edge %d->%d does not go up", v, x)
			}
		}
		total += int64(len(got))
	}
	if total != g.stats.Edges {
		t.Fatalf("forward graph has %d edges, undirected has %d", total, g.stats.Edges)
	}
	var wedges uint64
	var maxDeg, maxOut int64
	for v := range g.nbr {
		d := uint64(len(g.nbr[v]))
		wedges += d * (d - 1) / 2
		maxDeg = max(maxDeg, int64(d))
		maxOut = max(maxOut, int64(len(want[v])))
	}
	if st.Wedges != wedges || st.MaxDegree != maxDeg || st.MaxOutDegree != maxOut {
		t.Fatalf("stats %+v, want wedges %d, max degree %d, max out-degree %d", st, wedges, maxDeg, maxOut)
	}
}

func TestOrientMatchesNaive(t *testing.T) {
	for _, shape := range edgeShapes() {
		t.Run(shape.name, func(t *testing.T) {
			for seed := uint64(0); seed < 25; seed++ {
				r := rand.New(rand.NewPCG(seed, 2))
				edges := shape.make(r)
				g := naiveClean(edges)
				u, _, err := Clean(edges, CleanOptions{Workers: 2})
				if err != nil {
					t.Fatal(err)
				}
				for _, order := range []Order{OrderDegree, OrderDegeneracy} {
					for _, w := range []int{1, 3} {
						t.Run(fmt.Sprintf("seed%d-%s-w%d", seed, order, w), func(t *testing.T) {
							fwd, rank, st, err := Orient(u, order, w)
							if err != nil {
								t.Fatal(err)
							}
							checkOrientation(t, g, fwd, rank, st)
							switch order {
							case OrderDegree:
								if want := naiveDegreeRank(g); !slices.Equal(rank, want) {
									t.Fatalf("rank %v, want %v", rank, want)
								}
								if st.Degeneracy != 0 {
									t.Fatalf("degeneracy %d reported for degree order", st.Degeneracy)
								}
							case OrderDegeneracy:
								want, level := naivePeelRank(g)
								if !slices.Equal(rank, want) {
									t.Fatalf("rank %v, want %v", rank, want)
								}
								k := naiveDegeneracy(g)
								if st.Degeneracy != int64(k) || level != k {
									t.Fatalf("degeneracy %d, peeling level %d, k-core %d", st.Degeneracy, level, k)
								}
								if st.MaxOutDegree > st.Degeneracy {
									t.Fatalf("max out-degree %d above degeneracy %d", st.MaxOutDegree, st.Degeneracy)
								}
							}
						})
					}
				}
			}
		})
	}
}

// TestDegeneracyKnown checks graphs whose degeneracy is known in closed
// form, on sizes the naive peeling could not afford.
func TestDegeneracyKnown(t *testing.T) {
	grid := func(k int) []Edge {
		var es []Edge
		for i := 0; i < k; i++ {
			for j := 0; j < k; j++ {
				v := uint64(i*k + j)
				if j+1 < k {
					es = append(es, Edge{v, v + 1})
				}
				if i+1 < k {
					es = append(es, Edge{v, v + uint64(k)})
				}
			}
		}
		return es
	}
	star := func(k int) []Edge {
		var es []Edge
		for i := 1; i <= k; i++ {
			es = append(es, Edge{0, uint64(i)})
		}
		return es
	}
	cases := []struct {
		name  string
		edges []Edge
		k     int64
	}{
		{"clique-40", cliqueEdges(40), 39},
		{"grid-100", grid(100), 2},
		{"star-5000", star(5000), 1},
		{"clique-plus-star", append(cliqueEdges(12), star(3000)...), 11},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u, _, err := Clean(c.edges, CleanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			_, _, st, err := Orient(u, OrderDegeneracy, 0)
			if err != nil {
				t.Fatal(err)
			}
			if st.Degeneracy != c.k || st.MaxOutDegree > c.k {
				t.Fatalf("degeneracy %d, max out-degree %d, want %d", st.Degeneracy, st.MaxOutDegree, c.k)
			}
		})
	}
}

func TestOrientRejectsBadInput(t *testing.T) {
	good := func() *Undirected {
		u, _, err := Clean(cliqueEdges(4), CleanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	cases := []struct {
		name  string
		u     *Undirected
		order Order
	}{
		{"nil", nil, OrderDegree},
		{"nil-adjacency", &Undirected{}, OrderDegree},
		{"column-out-of-range", func() *Undirected { u := good(); u.Adj.Cols[2] = 9; return u }(), OrderDegree},
		{"offsets-decrease", func() *Undirected { u := good(); u.Adj.Offsets[1] = 5; u.Adj.Offsets[2] = 1; return u }(), OrderDegeneracy},
		{"offset-past-end", func() *Undirected { u := good(); u.Adj.Offsets[1] = 99; return u }(), OrderDegree},
		{"not-square", func() *Undirected { u := good(); u.Adj.NCols = 7; return u }(), OrderDegree},
		{"unknown-order", good(), Order(9)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, _, _, err := Orient(c.u, c.order, 2); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func TestParseOrder(t *testing.T) {
	for _, o := range []Order{OrderDegree, OrderDegeneracy} {
		got, err := ParseOrder(o.String())
		if err != nil || got != o {
			t.Fatalf("ParseOrder(%q) = %v, %v", o.String(), got, err)
		}
	}
	if got, err := ParseOrder(" Degeneracy "); err != nil || got != OrderDegeneracy {
		t.Fatalf("ParseOrder with spaces and case = %v, %v", got, err)
	}
	for _, s := range []string{"", "rank", "degrees"} {
		if _, err := ParseOrder(s); err == nil {
			t.Fatalf("ParseOrder(%q) accepted", s)
		}
	}
	if s := Order(7).String(); s != "Order(7)" {
		t.Fatalf("String of an unknown order = %q", s)
	}
}

func TestForwardFromEdges(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	edges := spreadIDs(randomEdges(r, 500, 4000), r, true)
	g := naiveClean(edges)
	for _, order := range []Order{OrderDegree, OrderDegeneracy} {
		fwd, cst, ost, err := ForwardFromEdges(edges, order, 2)
		if err != nil {
			t.Fatal(err)
		}
		if cst != g.stats {
			t.Fatalf("clean stats %+v, want %+v", cst, g.stats)
		}
		var rank []uint32
		if order == OrderDegree {
			rank = naiveDegreeRank(g)
		} else {
			rank, _ = naivePeelRank(g)
		}
		checkOrientation(t, g, fwd, rank, ost)
	}
}
