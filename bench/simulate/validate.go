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
	Source    string  `json:"source"`
	P         int     `json:"p"`
	Tolerance float64 `json:"tolerance"`
	// Model is the one model of every prediction; EachModel the model of
	// each worker count, fitted to its own runs, when there is none.
	Model       Model        `json:"model,omitzero"`
	EachModel   []Model      `json:"each_model,omitempty"`
	Comparisons []Comparison `json:"comparisons"`
	// WorstError is the largest |Error|.
	WorstError float64 `json:"worst_error"`
	OK         bool    `json:"ok"`
}

// Validate simulates every worker count of rep on rep's own partition
// with model m, its workers sharing m's host as the measured ones did
// (Model.OnHost), and compares the makespan with the median job time
// measured. Each prediction must be within tolerance. With m nil, each
// worker count gets a model fitted to its own runs: that checks how the
// simulator composes measured costs into a job (overlap, balance, loads
// repeated per worker, the tail), not how the costs carry over from one
// worker count to another.
func Validate(rep *scale.Report, m *Model, tolerance float64) (*Validation, error) {
	g, err := ReportGrid(rep)
	if err != nil {
		return nil, err
	}
	if len(rep.Rows) == 0 {
		return nil, fmt.Errorf("simulate: the report of %s has no rows to compare", rep.Source)
	}
	v := &Validation{Source: rep.Source, P: rep.P, Tolerance: tolerance, OK: true}
	if m != nil {
		v.Model = *m
	}
	for _, row := range rep.Rows {
		model := m
		if m == nil {
			if model, err = Fit(rep, []int{row.Workers}); err != nil {
				return nil, err
			}
			v.EachModel = append(v.EachModel, *model)
		}
		// The measured workers shared one host: so do the simulated ones.
		res, err := Simulate(g, DefaultConfig(row.Workers, model.OnHost(row.Workers)))
		if err != nil {
			return nil, err
		}
		c := Comparison{Workers: row.Workers, Runs: row.Runs, MeasuredSeconds: row.JobSeconds, PredictedSeconds: res.MakespanSeconds,
			MeasuredIR: row.IR, PredictedIR: res.IR}
		if model.Fit != nil {
			for _, w := range model.Fit.Workers {
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
