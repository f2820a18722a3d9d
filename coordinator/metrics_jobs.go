package coordinator

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// jobCollector serves the per-job gauges, read from the scheduler when
// Prometheus scrapes: the jobs the scheduler holds (queued, running, and
// the last Config.KeepFinished finished ones), so a job's series go when
// it is forgotten. The label is job_id, not job, which Prometheus gives
// every series as the name of its scrape job.
type jobCollector struct {
	s                   *Server
	subtasks, triangles *prometheus.Desc
}

// jobScrapeTimeout bounds the wait for the Run goroutine during a scrape;
// a busier loop leaves the job series out of that scrape.
const jobScrapeTimeout = time.Second

func newJobCollector(s *Server) *jobCollector {
	const ns = "trigrid_coordinator"
	return &jobCollector{
		s: s,
		subtasks: prometheus.NewDesc(ns+"_job_subtasks",
			"Subtasks of a job by state: queued (waiting for a worker), running (an attempt out), done (settled); they add up to the job's subtasks.",
			[]string{"job_id", "state"}, nil),
		triangles: prometheus.NewDesc(ns+"_job_triangles",
			"Triangles of a job's settled subtasks so far: its exact count once it is done (a float64 sample, exact up to 2^53).",
			[]string{"job_id"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *jobCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.subtasks
	ch <- c.triangles
}

// jobSample is one job's gauges.
type jobSample struct {
	id                    string
	queued, running, done int
	triangles             uint64
}

// Collect implements prometheus.Collector.
func (c *jobCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), jobScrapeTimeout)
	defer cancel()
	var samples []jobSample
	if err := c.s.call(ctx, func() {
		for _, id := range c.s.order {
			if js, ok := c.s.sched.Job(id); ok {
				samples = append(samples, jobSample{id: string(id), queued: js.Queued, running: js.Running, done: js.Done, triangles: js.Sum})
			}
		}
	}); err != nil {
		return
	}
	for _, j := range samples {
		ch <- prometheus.MustNewConstMetric(c.subtasks, prometheus.GaugeValue, float64(j.queued), j.id, "queued")
		ch <- prometheus.MustNewConstMetric(c.subtasks, prometheus.GaugeValue, float64(j.running), j.id, "running")
		ch <- prometheus.MustNewConstMetric(c.subtasks, prometheus.GaugeValue, float64(j.done), j.id, "done")
		ch <- prometheus.MustNewConstMetric(c.triangles, prometheus.GaugeValue, float64(j.triangles), j.id)
	}
}
