package coordinator

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/coordinator/scheduler"
)

// metrics are the coordinator's Prometheus metrics, all prefixed
// trigrid_coordinator_ (docs/metrics.md lists them). Labels are bounded:
// worker names and job ids, never subtasks; a job's series go when the
// scheduler forgets it (jobCollector).
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
	// attemptSeconds is assignment to result; resultSeconds a message of
	// results' arrival to the scheduler having taken them in;
	// commitSeconds one write transaction of the state database.
	attemptSeconds, resultSeconds prometheus.Histogram
	commitSeconds                 prometheus.Histogram

	// out holds when each attempt out at a worker was handed out, by job,
	// for attemptSeconds: an entry goes with its result, its cancel or its
	// job's end (an attempt lost with its worker stays until then).
	outMu sync.Mutex
	out   map[api.JobID]map[attemptKey]time.Time

	// byWorker holds each worker's resolved series (workerCounters), so
	// that an assignment or a result costs no label lookups. A worker's
	// series are never deleted, so the entries stay valid.
	byWorker sync.Map // string -> *workerCounters
}

// workerCounters are one worker's series.
type workerCounters struct {
	assigned, speculated, requeued prometheus.Counter
	results                        [3]prometheus.Counter // by resultOutcomes
	kernel, fetch, decode          prometheus.Counter
}

// worker returns w's series, made (at 0, so that rates and sums over
// workers hold from its first attempt on) the first time.
func (m *metrics) worker(w string) *workerCounters {
	if c, ok := m.byWorker.Load(w); ok {
		return c.(*workerCounters)
	}
	c := &workerCounters{assigned: m.assigned.WithLabelValues(w), speculated: m.speculated.WithLabelValues(w),
		requeued: m.requeued.WithLabelValues(w), kernel: m.kernelSeconds.WithLabelValues(w),
		fetch: m.fetchSeconds.WithLabelValues(w), decode: m.decodeSeconds.WithLabelValues(w)}
	for i, o := range resultOutcomes {
		c.results[i] = m.results.WithLabelValues(w, o)
	}
	got, _ := m.byWorker.LoadOrStore(w, c)
	return got.(*workerCounters)
}

type attemptKey struct {
	index, attempt int
}

// Histogram buckets, in seconds: attempts from a millisecond (a cached
// block on a GPU) to about 17 minutes (a large subtask on a CPU); result
// handling from 10 µs to about 2.6 s; a database commit (an fsync) from
// 100 µs to about 6.6 s.
var (
	attemptBuckets = prometheus.ExponentialBuckets(0.001, 4, 11)
	resultBuckets  = prometheus.ExponentialBuckets(1e-5, 4, 10)
	commitBuckets  = prometheus.ExponentialBuckets(1e-4, 4, 9)
)

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
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
		attemptSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "attempt_duration_seconds",
			Help: "Time from handing an attempt to a worker to receiving its result (counted, failed or handed back).", Buckets: attemptBuckets}),
		resultSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "result_handling_seconds",
			Help: "Time from a worker's message of results (one or a batch) arriving on its stream to the scheduler having taken them in, the wait for the coordinator's loop included.", Buckets: resultBuckets}),
		commitSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "state_commit_seconds",
			Help: "Time of each write transaction to the job database, synced to disk.", Buckets: commitBuckets}),
		out: map[api.JobID]map[attemptKey]time.Time{},
	}
	for _, c := range []prometheus.Collector{m.assigned, m.speculated, m.requeued, m.settled, m.reopened, m.faulty,
		m.ignored, m.results, m.kernelSeconds, m.fetchSeconds, m.decodeSeconds, m.bytesServed, m.jobs,
		m.queued, m.running, m.workers, m.jobsActive, m.attemptSeconds, m.resultSeconds, m.commitSeconds} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	for _, st := range []api.JobState{api.JobDone, api.JobFailed, api.JobCancelled} {
		m.jobs.WithLabelValues(st.String())
	}
	return m, nil
}

// resultOutcomes are the outcome label's values.
var resultOutcomes = []string{"counted", "failed", "handed_back"}

func (m *metrics) decision(d scheduler.Decision) {
	switch d.Kind {
	case scheduler.DecideAssign:
		m.handedOut(d.Assignment)
		c := m.worker(string(d.Worker))
		c.assigned.Inc()
		if d.Speculative {
			c.speculated.Inc()
		} else if d.Attempt > 1 {
			c.requeued.Inc()
		}
	case scheduler.DecideSubtaskDone:
		m.settled.Inc()
	case scheduler.DecideSubtaskReopened:
		m.reopened.Inc()
	case scheduler.DecideWorkerFaulty:
		m.faulty.Inc()
	case scheduler.DecideIgnore:
		m.ignored.Inc()
	case scheduler.DecideCancel:
		m.attemptEnded(d.Ref, d.Attempt)
	case scheduler.DecideJobDone, scheduler.DecideJobFailed, scheduler.DecideJobCancelled:
		m.outMu.Lock()
		delete(m.out, d.Job)
		m.outMu.Unlock()
	}
}

// handedOut notes when an attempt went out.
func (m *metrics) handedOut(a api.Assignment) {
	m.outMu.Lock()
	defer m.outMu.Unlock()
	byJob := m.out[a.Ref.Job]
	if byJob == nil {
		byJob = map[attemptKey]time.Time{}
		m.out[a.Ref.Job] = byJob
	}
	byJob[attemptKey{a.Ref.Index, a.Attempt}] = time.Now()
}

// attemptEnded forgets an attempt and returns how long it was out; false
// when it was not known to be (a result after its cancel or its job's
// end, a duplicate, or one handed out before a restart).
func (m *metrics) attemptEnded(ref api.SubtaskRef, attempt int) (time.Duration, bool) {
	m.outMu.Lock()
	defer m.outMu.Unlock()
	byJob := m.out[ref.Job]
	k := attemptKey{ref.Index, attempt}
	at, ok := byJob[k]
	if !ok {
		return 0, false
	}
	delete(byJob, k)
	if len(byJob) == 0 {
		delete(m.out, ref.Job)
	}
	return time.Since(at), true
}

// committed hears a state database write transaction's time.
func (m *metrics) committed(d time.Duration) { m.commitSeconds.Observe(d.Seconds()) }

// handling wraps the Run goroutine's handling of a message of results so
// that resultSeconds hears how long it took from now, its arrival.
func (m *metrics) handling(f func()) func() {
	arrived := time.Now()
	return func() {
		f()
		m.resultSeconds.Observe(time.Since(arrived).Seconds())
	}
}

func (m *metrics) result(r api.Result) {
	c := m.worker(string(r.Worker))
	outcome := 0 // resultOutcomes
	switch {
	case r.HandedBack:
		outcome = 2
	case r.Err != "":
		outcome = 1
	}
	c.results[outcome].Inc()
	if d, ok := m.attemptEnded(r.Ref, r.Attempt); ok {
		m.attemptSeconds.Observe(d.Seconds())
	}
	c.kernel.Add(r.KernelTime.Seconds())
	c.fetch.Add(r.Fetch.Seconds())
	c.decode.Add(r.Decode.Seconds())
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
