// Package cluster is the plumbing the coordinator and workers share on the
// network: membership and failure detection over memberlist (gossip), with
// node metadata and an encryption key; mutual TLS for gRPC; a join token
// checked in constant time by gRPC interceptors; and the rule that a
// coordinator without TLS listens on loopback only.
//
// It knows nothing of jobs or subtasks: the coordinator turns Events into
// scheduler events, and a worker finds the coordinator's gRPC address in
// its Meta.
package cluster
