// Package report holds what the bench commands' reports share: their JSON
// and CSV files and how their numbers are written in them and in tables.
package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
)

// WriteCSV writes rows to path as CSV, created or truncated.
func WriteCSV(path string, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if err := w.WriteAll(rows); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// WriteJSON writes v to path as indented JSON with a final newline,
// created or truncated.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// Float is v with six decimals, as the CSV files write figures.
func Float(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }

// IR is a time imbalance ratio with three decimals, "inf" when not
// defined (a worker with no busy time).
func IR(ir *float64) string {
	if ir == nil {
		return "inf"
	}
	return strconv.FormatFloat(*ir, 'f', 3, 64)
}
