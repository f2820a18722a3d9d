package worker

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/trigrid/trigrid/api"
)

// DefaultName is the name of a worker started without one: unique among
// the workers of a host, so that several on one host (one per GPU, as a
// scheduler starts them) do not take each other's name. A worker given
// GPU indexes (devices) that are the host's own (cudaVisible, the
// CUDA_VISIBLE_DEVICES it was started with, is empty, so nothing numbers
// the GPUs anew) is host-gpuI (host-gpuI_J for several); any other is
// host-pidPID. Characters a worker id cannot hold become '-'.
func DefaultName(host string, devices []int, cudaVisible string, pid int) api.WorkerID {
	h := sanitizeName(host)
	if h == "" {
		h = "worker"
	}
	if len(devices) > 0 && strings.TrimSpace(cudaVisible) == "" {
		idx := make([]string, len(devices))
		for i, d := range devices {
			idx[i] = strconv.Itoa(d)
		}
		return api.WorkerID(h + "-gpu" + strings.Join(idx, "_"))
	}
	return api.WorkerID(fmt.Sprintf("%s-pid%d", h, pid))
}

// sanitizeName keeps the characters api.CheckID allows and replaces the
// others with '-', leaving room for DefaultName's suffix.
func sanitizeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte(".-_:@", c) >= 0:
		default:
			b[i] = '-'
		}
	}
	if len(b) > api.MaxNameLen-64 {
		b = b[:api.MaxNameLen-64]
	}
	return string(b)
}

// NewInstance returns a fresh instance id for a worker process (see
// api.Hello.Instance): 16 random hex digits.
func NewInstance() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
