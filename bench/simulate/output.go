package simulate

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/trigrid/trigrid/bench/chart"
	"github.com/trigrid/trigrid/bench/report"
)

// The files WriteDir writes.
const (
	JSONName        = "simulate.json"
	CSVName         = "simulate.csv"
	MakespanPNGName = "makespan.png"
	BalancePNGName  = "efficiency-ir.png"
)

// WriteDir writes the report into dir (made if missing): JSON, a CSV row
// per worker count, the makespan plot and the efficiency and IR plot
// (both against the ideal 1).
func (r *Report) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("simulate: --out: %w", err)
	}
	if err := report.WriteJSON(filepath.Join(dir, JSONName), r); err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	rows := [][]string{{"workers", "p", "subtasks", "makespan_s", "efficiency", "utilization", "ir", "min_busy_s", "max_busy_s", "attempts", "speculated"}}
	var n, mk, eff, ir, ones []float64
	for _, x := range r.Rows {
		rows = append(rows, []string{strconv.Itoa(x.Workers), strconv.Itoa(x.P), strconv.Itoa(x.Subtasks), report.Float(x.MakespanSeconds),
			report.Float(x.Efficiency), report.Float(x.Utilization), report.IR(x.IR), report.Float(x.MinBusySeconds), report.Float(x.MaxBusySeconds),
			strconv.Itoa(x.Attempts), strconv.Itoa(x.Speculated)})
		n = append(n, float64(x.Workers))
		mk = append(mk, x.MakespanSeconds)
		eff = append(eff, x.Efficiency)
		ones = append(ones, 1)
		if x.IR != nil {
			ir = append(ir, *x.IR)
		} else {
			ir = append(ir, 0)
		}
	}
	if err := report.WriteCSV(filepath.Join(dir, CSVName), rows); err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	title := fmt.Sprintf("%s, P = %d (simulated)", filepath.Base(r.Source), r.P)
	mp := chart.Plot{Title: title, XLabel: "workers", YLabel: "makespan (s)", LogX: true, Legend: chart.TopRight,
		Series: []chart.Series{{Name: "simulated", X: n, Y: mk}}}
	if err := mp.WritePNG(filepath.Join(dir, MakespanPNGName)); err != nil {
		return err
	}
	bp := chart.Plot{Title: title, XLabel: "workers", YLabel: "efficiency, IR", LogX: true, Legend: chart.BottomRight, Series: []chart.Series{
		{Name: "efficiency T(1) / (N T(N))", X: n, Y: eff}, {Name: "IR max / min busy (0: a worker idle)", X: n, Y: ir},
		{Name: "ideal", X: n, Y: ones, Ideal: true}}}
	return bp.WritePNG(filepath.Join(dir, BalancePNGName))
}

// WriteTable prints the report for people.
func (r *Report) WriteTable(w io.Writer) error {
	how := "given"
	switch {
	case r.Chosen && r.Balanced:
		how = fmt.Sprintf("chosen: the smallest makespan at the most workers with IR at most %.2f", r.MaxIR)
	case r.Chosen:
		how = fmt.Sprintf("chosen: the smallest makespan at the most workers; no candidate kept IR at most %.2f", r.MaxIR)
	}
	fmt.Fprintf(w, "%s: P = %d (%s), simulated on the scheduler core with a %s cost model (%.3g ns per work unit)\n",
		r.Source, r.P, how, r.Model.Device, r.Model.KernelNsPerWork)
	if len(r.Speeds) > 0 {
		fmt.Fprintf(w, "workers' speeds, in turn: %s (efficiency against their summed speeds)\n", strings.Trim(fmt.Sprint(r.Speeds), "[]"))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	if len(r.Candidates) > 0 {
		fmt.Fprintln(tw, "P\tsubtasks\tmakespan s\tIR\tutilization\t")
		for _, c := range r.Candidates {
			fmt.Fprintf(tw, "%d\t%d\t%.3f\t%s\t%.0f%%\t\n", c.P, c.Subtasks, c.MakespanSeconds, report.IR(c.IR), 100*c.Utilization)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(tw, "workers\tsubtasks\tmakespan s\tefficiency\tutilization\tIR\tbusy s (min\tmax)\tspeculated\t")
	for _, x := range r.Rows {
		fmt.Fprintf(tw, "%d\t%d\t%.3f\t%.0f%%\t%.0f%%\t%s\t%.3f\t%.3f\t%d\t\n", x.Workers, x.Subtasks, x.MakespanSeconds,
			100*x.Efficiency, 100*x.Utilization, report.IR(x.IR), x.MinBusySeconds, x.MaxBusySeconds, x.Speculated)
	}
	return tw.Flush()
}

// WriteTable prints the validation for people.
func (v *Validation) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "%s, P = %d: simulated against measured job time (tolerance %.0f%%)\n", v.Source, v.P, 100*v.Tolerance)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workers\truns\tmeasured s\tpredicted s\terror\tmeasured IR\tpredicted IR\tfitted to\t")
	for _, c := range v.Comparisons {
		fitted := "no"
		if c.Fitted {
			fitted = "yes"
		}
		fmt.Fprintf(tw, "%d\t%d\t%.3f\t%.3f\t%+.1f%%\t%s\t%s\t%s\t\n", c.Workers, c.Runs, c.MeasuredSeconds, c.PredictedSeconds,
			100*c.Error, report.IR(c.MeasuredIR), report.IR(c.PredictedIR), fitted)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	verdict := "within tolerance"
	if !v.OK {
		verdict = "OUTSIDE the tolerance"
	}
	_, err := fmt.Fprintf(w, "worst error %.1f%%: %s\n", 100*v.WorstError, verdict)
	return err
}
