package pipeline

import (
	"fmt"
	"testing"

	"github.com/trigrid/trigrid/partition"
)

func TestReuseOrder(t *testing.T) {
	var tasks []partition.Subtask
	// Enumerate's order: groups by work, K ascending; here reversed groups.
	for i := 1; i >= 0; i-- {
		for j := 1; j >= 0; j-- {
			for k := range 2 {
				tasks = append(tasks, partition.Subtask{I: i, J: j, K: k, Edges: int64(10*i + j)})
			}
		}
	}
	got := ""
	for _, s := range reuseOrder(tasks) {
		got += fmt.Sprintf("%d%d%d ", s.I, s.J, s.K)
	}
	// I ascending; J ascending for I = 0, descending for I = 1; K snaking.
	want := "000 001 011 010 110 111 101 100 "
	if got != want {
		t.Errorf("reuseOrder = %q, want %q", got, want)
	}
	// Every subtask once, fields kept.
	seen := map[[3]int]partition.Subtask{}
	for _, s := range reuseOrder(tasks) {
		seen[[3]int{s.I, s.J, s.K}] = s
	}
	for _, s := range tasks {
		if seen[[3]int{s.I, s.J, s.K}] != s {
			t.Errorf("subtask %+v lost or changed", s)
		}
	}
	if len(reuseOrder(nil)) != 0 {
		t.Error("reuseOrder(nil) not empty")
	}
}
