package simulate

import (
	"fmt"
	"math"

	"github.com/trigrid/trigrid/bench/scale"
)

// DefaultTolerance is the largest relative error of a prediction that
// Validate accepts.
const DefaultTolerance = 0.15

// Comparison is the simulator's prediction for one worker count of a
// bench scale report against what it measured.
type Comparison struct {
	Workers int `json:"workers"`
	Runs    int `json:"runs"`
	// Job seconds: the median measured, the simulated, and the relative
	// error predicted / measured - 1.
	MeasuredSeconds  float64  `json:"measured_job_s"`
	PredictedSeconds float64  `json:"predicted_job_s"`
	Error            float64  `json:"error"`
	MeasuredIR       *float64 `json:"measured_ir"`
	PredictedIR      *float64 `json:"predicted_ir"`
	// Fitted says the model was fitted to this worker count's runs.
	Fitted bool `json:"fitted"`
}

// Validation is Validate's answer.
type Validation struct {
	Source      string       `json:"source"`
	P           int          `json:"p"`
	Tolerance   float64      `json:"tolerance"`
	Model       Model        `json:"model"`
	Comparisons []Comparison `json:"comparisons"`
	// WorstError is the largest |Error|.
	WorstError float64 `json:"worst_error"`
	OK         bool    `json:"ok"`
}

// Validate simulates every worker count of rep on rep's own partition
// with model m and compares the makespan with the median job time
// measured. Each prediction must be within tolerance.
func Validate(rep *scale.Report, m *Model, tolerance float64) (*Validation, error) {
	g, err := ReportGrid(rep)
	if err != nil {
		return nil, err
	}
	if len(rep.Rows) == 0 {
		return nil, fmt.Errorf("simulate: the report of %s has no rows to compare", rep.Source)
	}
	v := &Validation{Source: rep.Source, P: rep.P, Tolerance: tolerance, Model: *m, OK: true}
	for _, row := range rep.Rows {
		res, err := Simulate(g, DefaultConfig(row.Workers, *m))
		if err != nil {
			return nil, err
		}
		c := Comparison{Workers: row.Workers, Runs: row.Runs, MeasuredSeconds: row.JobSeconds, PredictedSeconds: res.MakespanSeconds,
			MeasuredIR: row.IR, PredictedIR: res.IR}
		if m.Fit != nil {
			for _, w := range m.Fit.Workers {
				c.Fitted = c.Fitted || w == row.Workers
			}
		}
		if row.JobSeconds > 0 {
			c.Error = res.MakespanSeconds/row.JobSeconds - 1
		}
		v.WorstError = max(v.WorstError, math.Abs(c.Error))
		v.OK = v.OK && math.Abs(c.Error) <= tolerance
		v.Comparisons = append(v.Comparisons, c)
	}
	return v, nil
}
