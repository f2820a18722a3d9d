package cluster

import (
	"encoding/json"
	"fmt"
	"net"

	"github.com/trigrid/trigrid/api"
)

// Role is what a member does in the cluster.
type Role string

const (
	RoleCoordinator Role = "coordinator"
	RoleWorker      Role = "worker"
)

// Meta is what a member tells the others about itself through gossip.
type Meta struct {
	Role Role `json:"r"`
	// GRPC is the member's gRPC address (host:port); the coordinator's is
	// where workers connect. "" for a worker that serves nothing.
	GRPC string `json:"g,omitempty"`
	// Devices are the member's counting devices.
	Devices []MetaDevice `json:"d,omitempty"`
	// Instance is a worker process's instance id (api.Hello.Instance),
	// so that news of one process is not taken for another of its name.
	Instance string `json:"i,omitempty"`
	// Leaving is set by Member.Leave just before the member goes, so the
	// others report Left rather than Dead (memberlist itself tells them
	// apart only internally).
	Leaving bool `json:"l,omitempty"`
}

// MetaDevice is a device in compact form: memberlist gives a node's
// metadata at most 512 bytes.
type MetaDevice struct {
	Kind   string `json:"k"`
	Memory int64  `json:"m,omitempty"`
}

// MetaDevices converts a worker's devices for its metadata.
func MetaDevices(ds []api.Device) []MetaDevice {
	out := make([]MetaDevice, len(ds))
	for i, d := range ds {
		out[i] = MetaDevice{Kind: d.Kind, Memory: d.Memory}
	}
	return out
}

// encode returns m's bytes, dropping trailing devices until it fits limit;
// it fails only when even the role and address do not fit.
func (m Meta) encode(limit int) ([]byte, error) {
	for {
		b, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		if len(b) <= limit {
			return b, nil
		}
		if len(m.Devices) == 0 {
			return nil, fmt.Errorf("cluster: node metadata is %d bytes (at most %d)", len(b), limit)
		}
		m.Devices = m.Devices[:len(m.Devices)-1]
	}
}

// maxMetaDevices bounds the devices decoded from a member's metadata.
const maxMetaDevices = 64

// DecodeMeta parses and validates a member's metadata as gossip delivered
// it: a known role, a host:port address, a bounded list of known device
// kinds.
func DecodeMeta(b []byte) (Meta, error) {
	var m Meta
	if len(b) > 512 {
		return Meta{}, fmt.Errorf("cluster: node metadata is %d bytes (at most 512)", len(b))
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return Meta{}, fmt.Errorf("cluster: node metadata: %w", err)
	}
	if m.Role != RoleCoordinator && m.Role != RoleWorker {
		return Meta{}, fmt.Errorf("cluster: node metadata: unknown role %q", api.TruncateText(string(m.Role), 32))
	}
	if m.GRPC != "" {
		if _, _, err := net.SplitHostPort(m.GRPC); err != nil || len(m.GRPC) > api.MaxNameLen {
			return Meta{}, fmt.Errorf("cluster: node metadata: gRPC address %q is not host:port", api.TruncateText(m.GRPC, 64))
		}
	}
	if m.Instance != "" {
		if err := api.CheckID("instance", m.Instance); err != nil || len(m.Instance) > 64 {
			return Meta{}, fmt.Errorf("cluster: node metadata: instance %q is not an instance id", api.TruncateText(m.Instance, 64))
		}
	}
	if len(m.Devices) > maxMetaDevices {
		return Meta{}, fmt.Errorf("cluster: node metadata: %d devices (at most %d)", len(m.Devices), maxMetaDevices)
	}
	for i, d := range m.Devices {
		if d.Kind != "gpu" && d.Kind != "cpu" || d.Memory < 0 {
			return Meta{}, fmt.Errorf("cluster: node metadata: device %d: kind %q, memory %d", i, api.TruncateText(d.Kind, 16), d.Memory)
		}
	}
	return m, nil
}
