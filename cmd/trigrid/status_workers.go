package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
	"github.com/trigrid/trigrid/coordinator/dashboard"
)

// listWorkers asks the coordinator for its workers. A coordinator too old
// to list them gets a note on warn and no workers.
func listWorkers(ctx context.Context, client pb.JobsClient, warn io.Writer) ([]api.WorkerInfo, error) {
	m, err := client.ListWorkers(ctx, &pb.ListWorkersRequest{})
	if status.Code(err) == codes.Unimplemented {
		fmt.Fprintln(warn, "note: this coordinator does not list its workers (an older version)")
		return nil, nil
	}
	if err != nil {
		return nil, rpcError(err)
	}
	return pb.DecodeWorkers(m)
}

// printWorkers prints the workers after the jobs: a table (when show,
// "no workers" when there are none), or one JSON object per worker.
func printWorkers(out io.Writer, ws []api.WorkerInfo, show, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(out)
		for _, w := range ws {
			if err := enc.Encode(struct {
				Name string `json:"worker"`
				dashboard.Worker
			}{string(w.Worker), dashboard.WorkerOf(w)}); err != nil {
				return err
			}
		}
		return nil
	}
	if !show {
		return nil
	}
	if len(ws) == 0 {
		_, err := fmt.Fprintln(out, "\nno workers")
		return err
	}
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKER\tHOST\tSTATE\tRUNNING\tDONE\tFAILED\tKERNEL\tFETCH\tDECODE\tEDGES/S\tBUSY\tHEARD\tDEVICES")
	for _, wi := range ws {
		w := dashboard.WorkerOf(wi)
		eps, busy := "-", "-"
		if w.EdgesPerSecond != nil {
			eps = humanCount(*w.EdgesPerSecond)
		}
		if w.BusyShare != nil {
			busy = fmt.Sprintf("%.0f%%", 100**w.BusyShare)
		}
		host := w.Host
		if host == "" {
			host = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s ago\t%s\n", w.ID, host, w.State, w.Running, w.Done, w.Failed,
			shortDur(wi.Stats.KernelTime), shortDur(wi.Stats.Fetch), shortDur(wi.Stats.Decode), eps, busy, shortDur(wi.Heard), devices(wi.Devices))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, w := range ws {
		if w.Faulty != "" {
			fmt.Fprintf(out, "%s: faulty: %s\n", w.Worker, w.Faulty)
		}
		if w.Left != "" {
			fmt.Fprintf(out, "%s: %s\n", w.Worker, w.Left)
		}
	}
	return nil
}

func shortDur(d time.Duration) string { return d.Round(time.Millisecond).String() }

// devices names a worker's devices, alike ones counted once: "2 x gpu
// NVIDIA H200 (140 GiB)", "cpu (23.5 GiB)".
func devices(ds []api.Device) string {
	if len(ds) == 0 {
		return "-"
	}
	var parts []string
	for i := 0; i < len(ds); {
		j := i
		for j < len(ds) && ds[j] == ds[i] {
			j++
		}
		p := ds[i].Kind
		if ds[i].Name != "" && ds[i].Name != ds[i].Kind {
			p += " " + ds[i].Name // a CPU is named "cpu": said once
		}
		if ds[i].Memory > 0 {
			p += fmt.Sprintf(" (%s)", humanBytes(ds[i].Memory))
		}
		if j-i > 1 {
			p = fmt.Sprintf("%d x %s", j-i, p)
		}
		parts = append(parts, p)
		i = j
	}
	return strings.Join(parts, ", ")
}
