// Package pipeline runs trigrid's work in one process: read -> clean ->
// orient for every command (Load, one statistics shape in Report), the
// whole-graph count (CountFile, with the device fast path of counters
// that are a kernels.Device), in-memory partitioning for
// `trigrid partition` (PartitionFile), and the in-process run of a
// partitioned count (CountFilePartitioned, CountShards): the coordinator's
// Scheduler wired to one local worker per device through the same
// api messages the network carries.
//
// Dependencies: pipeline imports coordinator and worker, which never
// import each other; nothing below imports pipeline.
package pipeline
