package scale

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"text/tabwriter"

	"github.com/trigrid/trigrid/bench/chart"
	"github.com/trigrid/trigrid/bench/report"
)

// The files WriteDir writes.
const (
	JSONName       = "scale.json"
	RunsCSVName    = "scale-runs.csv"
	RowsCSVName    = "scale.csv"
	SpeedupPNGName = "speedup.png"
	EffPNGName     = "efficiency.png"
)

// WriteDir writes the report into dir (made if missing): the whole
// report as JSON, a CSV row per run and per worker count, and the
// speedup and efficiency plots against N with the ideal line.
func (r *Report) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("bench scale: --out: %w", err)
	}
	if err := report.WriteJSON(filepath.Join(dir, JSONName), r); err != nil {
		return fmt.Errorf("bench scale: %w", err)
	}
	if err := report.WriteCSV(filepath.Join(dir, RowsCSVName), r.rowsTable()); err != nil {
		return fmt.Errorf("bench scale: %w", err)
	}
	if err := report.WriteCSV(filepath.Join(dir, RunsCSVName), r.runsTable()); err != nil {
		return fmt.Errorf("bench scale: %w", err)
	}
	return r.plots(dir)
}

func (r *Report) plots(dir string) error {
	var n, sp, eff []float64
	for _, row := range r.Rows {
		n = append(n, float64(row.Workers))
		sp = append(sp, row.Speedup)
		eff = append(eff, row.Efficiency)
	}
	ones := make([]float64, len(n))
	for i := range ones {
		ones[i] = 1
	}
	title := fmt.Sprintf("%s, P = %d (%s), %s workers", filepath.Base(r.Source), r.P, r.Scheme, r.Device)
	speed := chart.Plot{Title: title, XLabel: "workers N", YLabel: "speedup T(1) / T(N)", Series: []chart.Series{
		{Name: "measured", X: n, Y: sp}, {Name: "ideal", X: n, Y: n, Ideal: true}}}
	if err := speed.WritePNG(filepath.Join(dir, SpeedupPNGName)); err != nil {
		return err
	}
	effp := chart.Plot{Title: title, XLabel: "workers N", YLabel: "parallel efficiency speedup / N", Legend: chart.BottomRight, Series: []chart.Series{
		{Name: "measured", X: n, Y: eff}, {Name: "ideal", X: n, Y: ones, Ideal: true}}}
	return effp.WritePNG(filepath.Join(dir, EffPNGName))
}

func (r *Report) rowsTable() [][]string {
	out := [][]string{{"workers", "runs", "job_s", "min_job_s", "max_job_s", "kernel_s", "fetch_s", "decode_s", "upload_s",
		"speedup", "efficiency", "ir", "teps", "worker_cores", "other_cores"}}
	for _, x := range r.Rows {
		out = append(out, []string{strconv.Itoa(x.Workers), strconv.Itoa(x.Runs), report.Float(x.JobSeconds), report.Float(x.MinJobSeconds),
			report.Float(x.MaxJobSeconds), report.Float(x.KernelSeconds), report.Float(x.FetchSeconds), report.Float(x.DecodeSeconds), report.Float(x.UploadSeconds),
			report.Float(x.Speedup), report.Float(x.Efficiency), report.IR(x.IR), report.Float(x.TEPS),
			report.Float(x.WorkerCores), report.Float(x.OtherCores)})
	}
	return out
}

func (r *Report) runsTable() [][]string {
	out := [][]string{{"workers", "repeat", "job", "triangles", "job_s", "wall_s", "start_s", "end_s", "kernel_s", "fetch_s",
		"decode_s", "upload_s", "busy_s", "ir", "teps", "coordinator_cpu_s", "attempts", "requeued", "speculated",
		"worker_cpu_s", "worker_cores", "other_cores"}}
	for _, x := range r.Runs {
		out = append(out, []string{strconv.Itoa(x.Workers), strconv.Itoa(x.Repeat), x.Job, strconv.FormatUint(x.Triangles, 10),
			report.Float(x.JobSeconds), report.Float(x.WallSeconds), report.Float(x.StartSeconds), report.Float(x.EndSeconds), report.Float(x.KernelSeconds), report.Float(x.FetchSeconds),
			report.Float(x.DecodeSeconds), report.Float(x.UploadSeconds), report.Float(x.BusySeconds), report.IR(x.IR), report.Float(x.TEPS), report.Float(x.CoordinatorCPUSeconds),
			strconv.FormatInt(x.Attempts, 10), strconv.FormatInt(x.Requeued, 10), strconv.FormatInt(x.Speculated, 10),
			report.Float(x.WorkerCPUSeconds), report.Float(x.WorkerCores), report.Float(x.OtherCores)})
	}
	return out
}

// WriteTable prints the per-worker-count table for people.
func (r *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "%s: %d vertices, %d edges, %d triangles (every job checked against %s)\n",
		r.Source, r.Vertices, r.Edges, r.Triangles, r.Reference)
	fmt.Fprintf(w, "P = %d (%s), %d subtasks, %s workers", r.P, r.Scheme, r.Subtasks, r.Device)
	if r.Device == "cpu" {
		fmt.Fprintf(w, " of %d core%s on a %d-core machine", r.CoresPerWorker, plural(r.CoresPerWorker), r.HostCores)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workers\truns\tjob s\t(min\tmax)\tkernel s\tfetch s\tdecode s\tupload s\tspeedup\tefficiency\tIR\tTEPS\tcores\tothers\t")
	for _, x := range r.Rows {
		fmt.Fprintf(tw, "%d\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.2fx\t%.0f%%\t%s\t%.3g\t%.2f\t%.2f\t\n", x.Workers, x.Runs,
			x.JobSeconds, x.MinJobSeconds, x.MaxJobSeconds, x.KernelSeconds, x.FetchSeconds, x.DecodeSeconds, x.UploadSeconds,
			x.Speedup, 100*x.Efficiency, report.IR(x.IR), x.TEPS, x.WorkerCores, x.OtherCores)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "cores: the workers' CPU time over the job's; others: the same of the rest of the machine (coordinator, bench, other processes)")
	return err
}
