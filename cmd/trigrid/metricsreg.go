package main

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// processRegistry is a registry holding the standard collectors of a
// process, for its /metrics: the Go runtime's (go_*) and the process's
// (process_*: CPU, memory, open files). The coordinator and the worker
// add their own series to it.
func processRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}
