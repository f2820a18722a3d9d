package gpu

import (
	"context"
	"fmt"
	"time"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu/abi"
	"github.com/trigrid/trigrid/kernels/gpu/devmem"
)

// Prepared is the outcome of GPU preprocessing.
type Prepared struct {
	// Forward is the forward CSR (rank order, rows sorted), when copied back.
	Forward *graph.CSR
	// Rank maps each compact id to its forward id, when copied back.
	Rank []uint32
	// Stats are the figures tg_preprocess reports (TG_PREP_* in
	// trigrid.h).
	Stats kernels.PrepStats
	// GPUTime is the CUDA-event time of the whole device pipeline,
	// transfers included.
	GPUTime time.Duration
}

// Preprocess cleans and orients a graph on the GPU: pairs holds n-vertex
// compact ids, u then v for each pair (any direction, duplicates and loops
// allowed). The result is the forward graph the CPU path (graph.Clean, then
// graph.Orient with OrderDegree) builds from the same ids, with every id in
// 0..n-1 kept. It uses a context of its own.
func (l *Library) Preprocess(pairs []uint32, n uint64) (*Prepared, error) {
	c, err := l.NewCounter("auto")
	if err != nil {
		return nil, fmt.Errorf("gpu: preprocess: %w", err)
	}
	defer c.Close()
	return c.Preprocess(pairs, n, true)
}

// Preprocess builds the forward graph of pairs on the device into one of
// the counter's slots, where CountResident counts it without another
// upload. copyBack also returns the forward CSR and ranks to the host.
func (c *Counter) Preprocess(pairs []uint32, n uint64, copyBack bool) (*Prepared, error) {
	if len(pairs)%2 != 0 {
		return nil, fmt.Errorf("gpu: preprocess: odd number of ids (%d)", len(pairs))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		return nil, fmt.Errorf("gpu: preprocess: counter is closed")
	}
	np := uint64(len(pairs) / 2)
	var rowptr []uint64
	var cols, rank []uint32
	if copyBack {
		rowptr = make([]uint64, n+1)
		cols = make([]uint32, np+1)
		rank = make([]uint32, n+1)
		devmem.Prefault(rowptr)
		devmem.Prefault(cols)
		devmem.Prefault(rank)
	}
	var st abi.PrepStats
	c.emptyResident()
	ms, err := c.ctx.Preprocess(devmem.ResidentSlot, pairs, n, rowptr, cols, rank, &st)
	if err != nil {
		c.freeResident()
		return nil, fmt.Errorf("gpu: preprocess: %w", err)
	}
	p := c.madeResident(&st, ms)
	if copyBack {
		p.Forward = &graph.CSR{Offsets: rowptr, Cols: cols[:st[abi.PrepEdges]], NCols: int64(n)}
		p.Rank = rank[:n]
	}
	return p, nil
}

// madeResident records that the resident slot holds the graph whose
// stats the library just returned and makes the Prepared for them.
func (c *Counter) madeResident(st *abi.PrepStats, ms float64) *Prepared {
	p := &Prepared{
		Stats: kernels.PrepStats{Vertices: st[abi.PrepVertices], InputPairs: st[abi.PrepInputPairs], SelfLoops: st[abi.PrepSelfLoops],
			Duplicates: st[abi.PrepDuplicates], Edges: st[abi.PrepEdges], Wedges: st[abi.PrepWedges],
			MaxDegree: st[abi.PrepMaxDegree], MaxForward: st[abi.PrepMaxForward], IsolatedIDs: st[abi.PrepIsolated]},
		GPUTime: time.Duration(ms * float64(time.Millisecond)),
	}
	c.slots.SetResident(true)
	e, rows := int64(p.Stats.Edges), int64(p.Stats.Vertices)
	c.residentStats = kernels.SubtaskStats{Edges: e, Rows: rows, IKEdges: e, JKEdges: e, KCols: rows}
	if rows > 0 {
		c.residentStats.Wedges = float64(e) * 2 * float64(e) / float64(rows)
	}
	return p
}

// CountResident counts the graph the last Preprocess left on the device.
func (c *Counter) CountResident(ctx context.Context) (kernels.Result, error) {
	if err := ctx.Err(); err != nil {
		return kernels.Result{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil || !c.slots.Resident() {
		return kernels.Result{}, fmt.Errorf("gpu: count resident: no preprocessed graph on the device")
	}
	r := int32(devmem.ResidentSlot)
	return c.countSlots(c.residentStats, [3]int32{r, r, r}, nil, nil)
}
