package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
)

type statusFlags struct {
	sec         securityFlags
	coordinator string
	asJSON      bool
}

func newStatusCommand() *cobra.Command {
	var f statusFlags
	cmd := &cobra.Command{
		Use:   "status --coordinator ADDR [JOB]",
		Short: "Show the progress of a coordinator's jobs",
		Long: `Show one job (JOB) or every job the coordinator knows: state, subtasks
queued, running and done, attempts, and the total once a job is done.
Without JOB the workers follow: connected ones with their state (busy, idle,
draining, lost), devices, results, kernel, fetch and decode time, edges per
second, busy share and heartbeat age, then the latest that left. --json
prints one object per job (key "job") and one per worker (key "worker", the
dashboard's /api/v1 worker fields).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			conn, err := f.sec.dial(f.coordinator)
			if err != nil {
				return err
			}
			defer conn.Close()
			client := pb.NewJobsClient(conn)
			ctx, cancel := rpcContext(cmd.Context())
			defer cancel()
			var jobs []api.JobStatus
			var workers []api.WorkerInfo
			if len(args) == 1 {
				id, err := pb.DecodeJobID("job", args[0])
				if err != nil {
					return err
				}
				m, err := client.Status(ctx, &pb.StatusRequest{Job: string(id)})
				if err != nil {
					return fmt.Errorf("status of %s: %w", id, rpcError(err))
				}
				st, err := pb.DecodeStatus(m)
				if err != nil {
					return err
				}
				jobs = append(jobs, st)
			} else {
				m, err := client.List(ctx, &pb.ListRequest{})
				if err != nil {
					return fmt.Errorf("list jobs of %s: %w", f.coordinator, rpcError(err))
				}
				for _, j := range m.GetJobs() {
					st, err := pb.DecodeStatus(j)
					if err != nil {
						return err
					}
					jobs = append(jobs, st)
				}
				if workers, err = listWorkers(ctx, client, cmd.ErrOrStderr()); err != nil {
					return fmt.Errorf("list workers of %s: %w", f.coordinator, err)
				}
			}
			if err := printStatus(cmd.OutOrStdout(), jobs, f.asJSON); err != nil {
				return err
			}
			return printWorkers(cmd.OutOrStdout(), workers, len(args) == 0, f.asJSON)
		},
	}
	cmd.Flags().StringVar(&f.coordinator, "coordinator", "", "coordinator gRPC address (host:port)")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print JSON (one object per job, then one per worker)")
	f.sec.add(cmd)
	f.sec.addServerName(cmd)
	return cmd
}

func printStatus(out io.Writer, jobs []api.JobStatus, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(out)
		for _, st := range jobs {
			r := resultOf(st)
			if err := enc.Encode(struct {
				jobResult
				Queued  int64 `json:"queued"`
				Running int64 `json:"running"`
				Done    int64 `json:"done"`
			}{r, st.Queued, st.Running, st.Done}); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tSTATE\tDONE\tRUNNING\tQUEUED\tATTEMPTS\tELAPSED\tTRIANGLES\tSOURCE")
	for _, st := range jobs {
		pct := 0.0
		if st.Subtasks > 0 {
			pct = 100 * float64(st.Done) / float64(st.Subtasks)
		}
		tri := "-"
		if st.State == api.JobDone {
			tri = fmt.Sprint(st.Triangles)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d (%.0f%%)\t%d\t%d\t%d\t%s\t%s\t%s\n", st.Job, st.State, st.Done, st.Subtasks, pct,
			st.Running, st.Queued, st.Attempts, st.Elapsed.Round(time.Millisecond), tri, st.Source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, st := range jobs {
		if st.Err != "" {
			fmt.Fprintf(out, "%s: %s\n", st.Job, st.Err)
		}
		for _, fw := range st.Faulty {
			fmt.Fprintf(out, "%s: faulty worker %s: %s\n", st.Job, fw.Worker, fw.Reason)
		}
	}
	return nil
}

func newCancelCommand() *cobra.Command {
	var f statusFlags
	cmd := &cobra.Command{
		Use:   "cancel --coordinator ADDR JOB",
		Short: "Cancel a job",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := pb.DecodeJobID("job", args[0])
			if err != nil {
				return err
			}
			conn, err := f.sec.dial(f.coordinator)
			if err != nil {
				return err
			}
			defer conn.Close()
			ctx, cancel := rpcContext(cmd.Context())
			defer cancel()
			if _, err := pb.NewJobsClient(conn).Cancel(ctx, &pb.CancelRequest{Job: string(id)}); err != nil {
				return fmt.Errorf("cancel %s: %w", id, rpcError(err))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cancelled %s\n", id)
			return nil
		},
	}
	cmd.Flags().StringVar(&f.coordinator, "coordinator", "", "coordinator gRPC address (host:port)")
	f.sec.add(cmd)
	f.sec.addServerName(cmd)
	return cmd
}
