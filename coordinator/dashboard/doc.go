// Package dashboard is the coordinator's live view for people and its
// JSON for scripts: jobs, a job's block grid and subtasks in flight, and
// workers. Snapshot and Detail are pure functions of an Input (the
// coordinator's state at one moment, which the coordinator gathers);
// Handler is the thin HTTP edge that serves them as JSON under /api/v1/
// and an embedded page at / that polls it. The JSON shapes are versioned
// (Version); docs/dashboard.md documents them.
package dashboard
