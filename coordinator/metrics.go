package coordinator

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/coordinator/scheduler"
)

// metrics are the coordinator's Prometheus metrics, all prefixed
// trigrid_coordinator_.
type metrics struct {
	assigned, speculated, requeued *prometheus.CounterVec // by worker
	settled, reopened, faulty      prometheus.Counter
	ignored                        prometheus.Counter
	results                        *prometheus.CounterVec // by worker, outcome
	kernelSeconds, fetchSeconds    *prometheus.CounterVec // by worker
	decodeSeconds                  *prometheus.CounterVec
	bytesServed                    prometheus.Counter
	jobs                           *prometheus.CounterVec // ended, by state
	queued, running, workers       prometheus.Gauge
	jobsActive                     prometheus.Gauge
}

func newMetrics(reg *prometheus.Registry) (*metrics, error) {
	const ns = "trigrid_coordinator"
	byWorker := []string{"worker"}
	m := &metrics{
		assigned: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "attempts_total",
			Help: "Attempts handed out, per worker."}, byWorker),
		speculated: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "speculated_total",
			Help: "Speculative copies of stragglers handed out, per worker."}, byWorker),
		requeued: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "requeued_total",
			Help: "Attempts after the first of a subtask (retries, recounts, verification copies), per worker."}, byWorker),
		settled: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "subtasks_done_total",
			Help: "Subtasks settled (each counted once into its job's total)."}),
		reopened: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "subtasks_reopened_total",
			Help: "Settled subtasks reopened by a disagreeing count or a faulty worker."}),
		faulty: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "workers_faulty_total",
			Help: "Workers found faulty (outvoted on a recount)."}),
		ignored: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "events_ignored_total",
			Help: "Stale, duplicate or unknown results and messages ignored."}),
		results: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "results_total",
			Help: "Results received, per worker and outcome (counted, failed, handed_back)."}, []string{"worker", "outcome"}),
		kernelSeconds: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "kernel_seconds_total",
			Help: "Kernel time reported by workers."}, byWorker),
		fetchSeconds: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "fetch_seconds_total",
			Help: "Shard fetch time reported by workers."}, byWorker),
		decodeSeconds: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "decode_seconds_total",
			Help: "Shard decode time reported by workers."}, byWorker),
		bytesServed: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "shard_bytes_served_total",
			Help: "Shard bytes sent to workers by FetchShard."}),
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "jobs_ended_total",
			Help: "Jobs ended, by final state."}, []string{"state"}),
		queued: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "subtasks_queued",
			Help: "Subtasks of running jobs waiting for a worker."}),
		running: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "attempts_running",
			Help: "Attempts out at workers."}),
		workers: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "workers",
			Help: "Connected workers."}),
		jobsActive: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "jobs_active",
			Help: "Jobs preparing, queued or running."}),
	}
	for _, c := range []prometheus.Collector{m.assigned, m.speculated, m.requeued, m.settled, m.reopened, m.faulty,
		m.ignored, m.results, m.kernelSeconds, m.fetchSeconds, m.decodeSeconds, m.bytesServed, m.jobs,
		m.queued, m.running, m.workers, m.jobsActive} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) decision(d scheduler.Decision) {
	switch d.Kind {
	case scheduler.DecideAssign:
		w := string(d.Worker)
		m.assigned.WithLabelValues(w).Inc()
		if d.Speculative {
			m.speculated.WithLabelValues(w).Inc()
		} else if d.Attempt > 1 {
			m.requeued.WithLabelValues(w).Inc()
		}
	case scheduler.DecideSubtaskDone:
		m.settled.Inc()
	case scheduler.DecideSubtaskReopened:
		m.reopened.Inc()
	case scheduler.DecideWorkerFaulty:
		m.faulty.Inc()
	case scheduler.DecideIgnore:
		m.ignored.Inc()
	}
}

func (m *metrics) result(r api.Result) {
	w := string(r.Worker)
	outcome := "counted"
	switch {
	case r.HandedBack:
		outcome = "handed_back"
	case r.Err != "":
		outcome = "failed"
	}
	m.results.WithLabelValues(w, outcome).Inc()
	m.kernelSeconds.WithLabelValues(w).Add(r.KernelTime.Seconds())
	m.fetchSeconds.WithLabelValues(w).Add(r.Fetch.Seconds())
	m.decodeSeconds.WithLabelValues(w).Add(r.Decode.Seconds())
}

func (m *metrics) jobEnded(state api.JobState) { m.jobs.WithLabelValues(state.String()).Inc() }

// gauges refreshes the gauges from the scheduler; Run goroutine only.
func (m *metrics) gauges(s *Server) {
	load := s.sched.Load()
	queued, active := 0, 0
	for _, id := range s.order {
		j := s.jobs[id]
		if j.state.Final() {
			continue
		}
		active++
		if n, ok := s.sched.Unsettled(id); ok {
			queued += n
		}
	}
	m.queued.Set(float64(max(queued-load.Running, 0)))
	m.running.Set(float64(load.Running))
	m.workers.Set(float64(load.Workers))
	m.jobsActive.Set(float64(active))
}
