// Package clustertest holds the multi-process tests of a distributed run:
// a coordinator and worker processes of the real binary on 127.0.0.1,
// with faults injected (killed, stalled and late workers, a restarted
// coordinator, a wrong count, a corrupted shard, strangers without the
// token, certificate or gossip key), and network faults with every
// process in a network namespace of its own (netfault_test.go:
// blackholed, partitioned, downed and impaired links). Every count is
// checked against an independent whole-graph count. The binary is built
// once, with the test-only fault injection (-tags trigrid_faults), in
// TestMain.
package clustertest
