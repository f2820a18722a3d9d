package pb

import (
	"errors"
	"fmt"
	"time"

	"github.com/trigrid/trigrid/api"
)

// This file converts between the wire messages and the Go types of package
// api. Encode* never fails: the sender's values are trusted to be in
// range (texts are cut to their bounds). Decode* validates every field
// against the bounds in api/limits.go and returns an error naming the
// message and field, so nothing beyond this file sees an unchecked value.

// ErrNil is returned when a required message is missing.
var ErrNil = errors.New("message is missing")

func fieldErr(msg, field string, err error) error {
	return fmt.Errorf("api/pb: %s.%s: %w", msg, field, err)
}

func checkRange(msg, field string, v, lo, hi int64) error {
	if v < lo || v > hi {
		return fieldErr(msg, field, fmt.Errorf("%d is out of range [%d, %d]", v, lo, hi))
	}
	return nil
}

func checkDuration(msg, field string, ns int64) (time.Duration, error) {
	if err := checkRange(msg, field, ns, 0, api.MaxDuration); err != nil {
		return 0, err
	}
	return time.Duration(ns), nil
}

// EncodeRef converts a subtask reference.
func EncodeRef(r api.SubtaskRef) *SubtaskRef {
	return &SubtaskRef{Job: string(r.Job), Index: int64(r.Index)}
}

// DecodeRef validates and converts a subtask reference.
func DecodeRef(m *SubtaskRef) (api.SubtaskRef, error) {
	if m == nil {
		return api.SubtaskRef{}, fieldErr("SubtaskRef", "", ErrNil)
	}
	if err := api.CheckID("job id", m.GetJob()); err != nil {
		return api.SubtaskRef{}, fieldErr("SubtaskRef", "job", err)
	}
	if err := checkRange("SubtaskRef", "index", m.GetIndex(), 0, api.MaxSubtasks-1); err != nil {
		return api.SubtaskRef{}, err
	}
	return api.SubtaskRef{Job: api.JobID(m.GetJob()), Index: int(m.GetIndex())}, nil
}

// EncodeHello converts a worker's hello; Protocol is set to api.Protocol.
func EncodeHello(h api.Hello) *Hello {
	m := &Hello{
		Protocol: api.Protocol,
		Worker:   string(h.Worker),
		Version:  api.TruncateText(h.Version, api.MaxNameLen),
		Kernels:  h.Kernels,
		Cores:    int32(h.Cores),
		Slots:    int32(h.Slots),
		Instance: h.Instance,
	}
	for _, d := range h.Devices {
		m.Devices = append(m.Devices, &Device{Kind: d.Kind, Name: api.TruncateText(d.Name, api.MaxNameLen), Memory: d.Memory})
	}
	return m
}

// DecodeHello validates and converts a worker's hello, refusing another
// protocol revision.
func DecodeHello(m *Hello) (api.Hello, error) {
	const msg = "Hello"
	if m == nil {
		return api.Hello{}, fieldErr(msg, "", ErrNil)
	}
	if m.GetProtocol() != api.Protocol {
		return api.Hello{}, fieldErr(msg, "protocol", fmt.Errorf("worker speaks protocol %d, this coordinator %d", m.GetProtocol(), api.Protocol))
	}
	if err := api.CheckID("worker id", m.GetWorker()); err != nil {
		return api.Hello{}, fieldErr(msg, "worker", err)
	}
	if err := api.CheckText("version", m.GetVersion(), api.MaxNameLen); err != nil {
		return api.Hello{}, fieldErr(msg, "version", err)
	}
	if n := len(m.GetDevices()); n > api.MaxDevices {
		return api.Hello{}, fieldErr(msg, "devices", fmt.Errorf("%d devices (at most %d)", n, api.MaxDevices))
	}
	if n := len(m.GetKernels()); n > api.MaxKernels {
		return api.Hello{}, fieldErr(msg, "kernels", fmt.Errorf("%d kernels (at most %d)", n, api.MaxKernels))
	}
	if err := checkRange(msg, "cores", int64(m.GetCores()), 1, 1<<20); err != nil {
		return api.Hello{}, err
	}
	if err := checkRange(msg, "slots", int64(m.GetSlots()), 1, api.MaxBatch); err != nil {
		return api.Hello{}, err
	}
	if in := m.GetInstance(); in != "" {
		if err := api.CheckID("instance", in); err != nil {
			return api.Hello{}, fieldErr(msg, "instance", err)
		}
	}
	h := api.Hello{
		Worker:   api.WorkerID(m.GetWorker()),
		Version:  m.GetVersion(),
		Cores:    int(m.GetCores()),
		Slots:    int(m.GetSlots()),
		Instance: m.GetInstance(),
	}
	for i, d := range m.GetDevices() {
		field := fmt.Sprintf("devices[%d]", i)
		if d == nil {
			return api.Hello{}, fieldErr(msg, field, ErrNil)
		}
		if d.GetKind() != "gpu" && d.GetKind() != "cpu" {
			return api.Hello{}, fieldErr(msg, field+".kind", fmt.Errorf("%q is not gpu or cpu", api.TruncateText(d.GetKind(), 32)))
		}
		if err := api.CheckText("device name", d.GetName(), api.MaxNameLen); err != nil {
			return api.Hello{}, fieldErr(msg, field+".name", err)
		}
		if d.GetMemory() < 0 {
			return api.Hello{}, fieldErr(msg, field+".memory", fmt.Errorf("%d is negative", d.GetMemory()))
		}
		h.Devices = append(h.Devices, api.Device{Kind: d.GetKind(), Name: d.GetName(), Memory: d.GetMemory()})
	}
	for i, k := range m.GetKernels() {
		if err := checkKernel(k); err != nil {
			return api.Hello{}, fieldErr(msg, fmt.Sprintf("kernels[%d]", i), err)
		}
		h.Kernels = append(h.Kernels, k)
	}
	return h, nil
}

// checkKernel checks a kernel name as a client or coordinator gives it:
// "" or a plain id ("auto", "wetric").
func checkKernel(k string) error {
	if k == "" {
		return nil
	}
	return api.CheckID("kernel", k)
}

// EncodeWelcome converts the coordinator's answer to a hello.
func EncodeWelcome(w api.Welcome) *Welcome {
	return &Welcome{Version: api.TruncateText(w.Version, api.MaxNameLen), HeartbeatNs: int64(w.Heartbeat), LeaseNs: int64(w.Lease)}
}

// DecodeWelcome validates and converts the coordinator's answer to a
// hello; the heartbeat interval must be positive and shorter than the
// lease.
func DecodeWelcome(m *Welcome) (api.Welcome, error) {
	const msg = "Welcome"
	if m == nil {
		return api.Welcome{}, fieldErr(msg, "", ErrNil)
	}
	if err := api.CheckText("version", m.GetVersion(), api.MaxNameLen); err != nil {
		return api.Welcome{}, fieldErr(msg, "version", err)
	}
	hb, err := checkDuration(msg, "heartbeat_ns", m.GetHeartbeatNs())
	if err != nil {
		return api.Welcome{}, err
	}
	lease, err := checkDuration(msg, "lease_ns", m.GetLeaseNs())
	if err != nil {
		return api.Welcome{}, err
	}
	if hb <= 0 || lease <= hb {
		return api.Welcome{}, fieldErr(msg, "heartbeat_ns", fmt.Errorf("heartbeat %v must be positive and shorter than the lease %v", hb, lease))
	}
	return api.Welcome{Version: m.GetVersion(), Heartbeat: hb, Lease: lease}, nil
}

// DecodePull validates a pull and returns how many assignments it asks
// for (1..api.MaxBatch).
func DecodePull(m *Pull) (int, error) {
	if m == nil {
		return 0, fieldErr("Pull", "", ErrNil)
	}
	if err := checkRange("Pull", "max", int64(m.GetMax()), 1, api.MaxBatch); err != nil {
		return 0, err
	}
	return int(m.GetMax()), nil
}

// EncodeAssignment converts one assignment.
func EncodeAssignment(a api.Assignment) *Assignment {
	return &Assignment{
		Ref: EncodeRef(a.Ref), Attempt: int32(a.Attempt),
		I: int32(a.I), J: int32(a.J), K: int32(a.K),
		Clip: a.Clip, TailOffset: a.TailOffset, Edges: a.Edges, Work: a.Work,
		Store: a.Store, Kernel: a.Kernel, PerVertex: a.PerVertex, PerEdge: a.PerEdge,
	}
}

// DecodeAssignment validates and converts one assignment.
func DecodeAssignment(m *Assignment) (api.Assignment, error) {
	const msg = "Assignment"
	if m == nil {
		return api.Assignment{}, fieldErr(msg, "", ErrNil)
	}
	ref, err := DecodeRef(m.GetRef())
	if err != nil {
		return api.Assignment{}, fmt.Errorf("api/pb: Assignment.ref: %w", err)
	}
	if err := checkRange(msg, "attempt", int64(m.GetAttempt()), 1, api.MaxAttempt); err != nil {
		return api.Assignment{}, err
	}
	for _, c := range []struct {
		name string
		v    int32
	}{{"i", m.GetI()}, {"j", m.GetJ()}, {"k", m.GetK()}} {
		if err := checkRange(msg, c.name, int64(c.v), 0, api.MaxPartitions-1); err != nil {
			return api.Assignment{}, err
		}
	}
	for _, c := range []struct {
		name string
		v    int64
	}{{"edges", m.GetEdges()}, {"work", m.GetWork()}} {
		if c.v < 0 {
			return api.Assignment{}, fieldErr(msg, c.name, fmt.Errorf("%d is negative", c.v))
		}
	}
	// The clip offset is negative for many subtasks; partition keeps it
	// within ±2^33.
	if err := checkRange(msg, "tail_offset", m.GetTailOffset(), -1<<34, 1<<34); err != nil {
		return api.Assignment{}, err
	}
	if err := api.CheckText("store URL", m.GetStore(), api.MaxURLLen); err != nil {
		return api.Assignment{}, fieldErr(msg, "store", err)
	}
	if err := checkKernel(m.GetKernel()); err != nil {
		return api.Assignment{}, fieldErr(msg, "kernel", err)
	}
	return api.Assignment{
		Ref: ref, Attempt: int(m.GetAttempt()),
		I: int(m.GetI()), J: int(m.GetJ()), K: int(m.GetK()),
		Clip: m.GetClip(), TailOffset: m.GetTailOffset(), Edges: m.GetEdges(), Work: m.GetWork(),
		Store: m.GetStore(), Kernel: m.GetKernel(),
		PerVertex: m.GetPerVertex() || m.GetPerEdge(), PerEdge: m.GetPerEdge(),
	}, nil
}

// EncodeAssignments converts a batch of assignments.
func EncodeAssignments(as []api.Assignment) *Assignments {
	m := &Assignments{Items: make([]*Assignment, len(as))}
	for i, a := range as {
		m.Items[i] = EncodeAssignment(a)
	}
	return m
}

// DecodeAssignments validates and converts a batch of 1..api.MaxBatch
// assignments.
func DecodeAssignments(m *Assignments) ([]api.Assignment, error) {
	if m == nil {
		return nil, fieldErr("Assignments", "", ErrNil)
	}
	if err := checkRange("Assignments", "items", int64(len(m.GetItems())), 1, api.MaxBatch); err != nil {
		return nil, err
	}
	out := make([]api.Assignment, len(m.GetItems()))
	for i, it := range m.GetItems() {
		a, err := DecodeAssignment(it)
		if err != nil {
			return nil, fmt.Errorf("api/pb: Assignments.items[%d]: %w", i, err)
		}
		out[i] = a
	}
	return out, nil
}

// EncodeResult converts a result, cutting its kernel name and error text
// to their bounds.
func EncodeResult(r api.Result) *Result {
	return &Result{
		Ref: EncodeRef(r.Ref), Attempt: int32(r.Attempt), Worker: string(r.Worker),
		Triangles: r.Triangles, Kernel: api.TruncateText(r.Kernel, api.MaxNameLen),
		FetchNs: int64(r.Fetch), DecodeNs: int64(r.Decode), KernelNs: int64(r.KernelTime),
		UploadNs: int64(r.Upload), BusyNs: int64(r.Busy), Device: int32(r.Device),
		Error: api.TruncateText(r.Err, api.MaxErrorLen), HandedBack: r.HandedBack,
		Partial: encodePartial(r.Partial),
	}
}

// EncodeResults converts a batch of results and a pull of more
// assignments (0: none) into one message.
func EncodeResults(rs []api.Result, pull int) *Results {
	m := &Results{Items: make([]*Result, len(rs)), Pull: int32(pull)}
	for i, r := range rs {
		m.Items[i] = EncodeResult(r)
	}
	return m
}

// DecodeResults validates and converts a batch of 1..api.MaxBatch results
// and the pull that comes with it (0..api.MaxBatch).
func DecodeResults(m *Results) ([]api.Result, int, error) {
	if m == nil {
		return nil, 0, fieldErr("Results", "", ErrNil)
	}
	if err := checkRange("Results", "items", int64(len(m.GetItems())), 1, api.MaxBatch); err != nil {
		return nil, 0, err
	}
	if err := checkRange("Results", "pull", int64(m.GetPull()), 0, api.MaxBatch); err != nil {
		return nil, 0, err
	}
	out := make([]api.Result, len(m.GetItems()))
	for i, it := range m.GetItems() {
		r, err := DecodeResult(it)
		if err != nil {
			return nil, 0, fmt.Errorf("api/pb: Results.items[%d]: %w", i, err)
		}
		out[i] = r
	}
	return out, int(m.GetPull()), nil
}

func encodePartial(p *api.Partial) *Partial {
	if p == nil {
		return nil
	}
	return &Partial{Vi: p.VI, Vj: p.VJ, Vk: p.VK, Eij: p.EIJ, Eik: p.EIK, Ejk: p.EJK}
}

// decodePartial converts a partial. Protobuf sends an empty list as an
// absent one, so per-edge counts of an empty block arrive as nothing:
// when any per-edge slice is present, the absent ones become empty
// slices, and the coordinator, which knows every block's size, checks
// each length (an absent list for a block with edges is refused there).
// Lengths are bounded by the message size limit of the transport.
func decodePartial(m *Partial) (*api.Partial, error) {
	if m == nil {
		return nil, nil
	}
	p := &api.Partial{VI: m.GetVi(), VJ: m.GetVj(), VK: m.GetVk(), EIJ: m.GetEij(), EIK: m.GetEik(), EJK: m.GetEjk()}
	if p.EIJ != nil || p.EIK != nil || p.EJK != nil {
		for _, e := range []*[]uint64{&p.EIJ, &p.EIK, &p.EJK} {
			if *e == nil {
				*e = []uint64{}
			}
		}
	}
	return p, nil
}

// DecodeResult validates and converts a result. A failed attempt (error
// set) must carry no count.
func DecodeResult(m *Result) (api.Result, error) {
	const msg = "Result"
	if m == nil {
		return api.Result{}, fieldErr(msg, "", ErrNil)
	}
	ref, err := DecodeRef(m.GetRef())
	if err != nil {
		return api.Result{}, fmt.Errorf("api/pb: Result.ref: %w", err)
	}
	if err := checkRange(msg, "attempt", int64(m.GetAttempt()), 1, api.MaxAttempt); err != nil {
		return api.Result{}, err
	}
	if err := api.CheckID("worker id", m.GetWorker()); err != nil {
		return api.Result{}, fieldErr(msg, "worker", err)
	}
	if err := api.CheckText("kernel", m.GetKernel(), api.MaxNameLen); err != nil {
		return api.Result{}, fieldErr(msg, "kernel", err)
	}
	if err := api.CheckText("error", m.GetError(), api.MaxErrorLen); err != nil {
		return api.Result{}, fieldErr(msg, "error", err)
	}
	if m.GetHandedBack() && m.GetError() == "" {
		return api.Result{}, fieldErr(msg, "error", fmt.Errorf("an attempt handed back says no why"))
	}
	if m.GetError() != "" && (m.GetTriangles() != 0 || m.GetPartial() != nil) {
		return api.Result{}, fieldErr(msg, "triangles", fmt.Errorf("a failed attempt carries a count (%d)", m.GetTriangles()))
	}
	partial, err := decodePartial(m.GetPartial())
	if err != nil {
		return api.Result{}, fmt.Errorf("api/pb: Result.partial: %w", err)
	}
	fetch, err := checkDuration(msg, "fetch_ns", m.GetFetchNs())
	if err != nil {
		return api.Result{}, err
	}
	decode, err := checkDuration(msg, "decode_ns", m.GetDecodeNs())
	if err != nil {
		return api.Result{}, err
	}
	kernel, err := checkDuration(msg, "kernel_ns", m.GetKernelNs())
	if err != nil {
		return api.Result{}, err
	}
	upload, err := checkDuration(msg, "upload_ns", m.GetUploadNs())
	if err != nil {
		return api.Result{}, err
	}
	busy, err := checkDuration(msg, "busy_ns", m.GetBusyNs())
	if err != nil {
		return api.Result{}, err
	}
	if err := checkRange(msg, "device", int64(m.GetDevice()), 0, api.MaxDevices-1); err != nil {
		return api.Result{}, err
	}
	return api.Result{
		Ref: ref, Attempt: int(m.GetAttempt()), Worker: api.WorkerID(m.GetWorker()),
		Triangles: m.GetTriangles(), Kernel: m.GetKernel(),
		Fetch: fetch, Decode: decode, KernelTime: kernel, Upload: upload, Busy: busy, Device: int(m.GetDevice()),
		Err: m.GetError(), HandedBack: m.GetHandedBack(), Partial: partial,
	}, nil
}

// EncodeHeartbeat converts a heartbeat.
func EncodeHeartbeat(h api.Heartbeat) *Heartbeat {
	m := &Heartbeat{Worker: string(h.Worker), Running: make([]*SubtaskRef, len(h.Running))}
	for i, r := range h.Running {
		m.Running[i] = EncodeRef(r)
	}
	return m
}

// DecodeHeartbeat validates and converts a heartbeat of at most
// api.MaxBatch running attempts.
func DecodeHeartbeat(m *Heartbeat) (api.Heartbeat, error) {
	const msg = "Heartbeat"
	if m == nil {
		return api.Heartbeat{}, fieldErr(msg, "", ErrNil)
	}
	if err := api.CheckID("worker id", m.GetWorker()); err != nil {
		return api.Heartbeat{}, fieldErr(msg, "worker", err)
	}
	if err := checkRange(msg, "running", int64(len(m.GetRunning())), 0, api.MaxBatch); err != nil {
		return api.Heartbeat{}, err
	}
	h := api.Heartbeat{Worker: api.WorkerID(m.GetWorker())}
	for i, r := range m.GetRunning() {
		ref, err := DecodeRef(r)
		if err != nil {
			return api.Heartbeat{}, fmt.Errorf("api/pb: Heartbeat.running[%d]: %w", i, err)
		}
		h.Running = append(h.Running, ref)
	}
	return h, nil
}

// EncodeCancel converts a cancel of one attempt.
func EncodeCancel(c api.Cancel) *CancelAttempt {
	return &CancelAttempt{Ref: EncodeRef(c.Ref), Attempt: int32(c.Attempt), Reason: api.TruncateText(c.Reason, api.MaxErrorLen)}
}

// DecodeCancel validates and converts a cancel of one attempt.
func DecodeCancel(m *CancelAttempt) (api.Cancel, error) {
	const msg = "CancelAttempt"
	if m == nil {
		return api.Cancel{}, fieldErr(msg, "", ErrNil)
	}
	ref, err := DecodeRef(m.GetRef())
	if err != nil {
		return api.Cancel{}, fmt.Errorf("api/pb: CancelAttempt.ref: %w", err)
	}
	if err := checkRange(msg, "attempt", int64(m.GetAttempt()), 1, api.MaxAttempt); err != nil {
		return api.Cancel{}, err
	}
	if err := api.CheckText("reason", m.GetReason(), api.MaxErrorLen); err != nil {
		return api.Cancel{}, fieldErr(msg, "reason", err)
	}
	return api.Cancel{Ref: ref, Attempt: int(m.GetAttempt()), Reason: m.GetReason()}, nil
}
