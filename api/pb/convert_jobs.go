package pb

import (
	"fmt"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/graph/edgeio"
)

// DecodeFetchShard validates a shard request: a job id and a plain file
// name (no directories, no "..", no hidden or temporary files).
func DecodeFetchShard(m *FetchShardRequest) (api.JobID, string, error) {
	const msg = "FetchShardRequest"
	if m == nil {
		return "", "", fieldErr(msg, "", ErrNil)
	}
	if err := api.CheckID("job id", m.GetJob()); err != nil {
		return "", "", fieldErr(msg, "job", err)
	}
	if err := api.CheckFileName("file name", m.GetName()); err != nil {
		return "", "", fieldErr(msg, "name", err)
	}
	return api.JobID(m.GetJob()), m.GetName(), nil
}

// CheckChunk validates one chunk of a FetchShard stream. first says
// whether it is the stream's first chunk, which must carry the file's size
// (0..api.MaxFileSize); later chunks must carry none. want is the offset
// the chunk must start at; the data must not run past size.
func CheckChunk(m *ShardChunk, first bool, want, size int64) error {
	const msg = "ShardChunk"
	if m == nil {
		return fieldErr(msg, "", ErrNil)
	}
	if first {
		if err := checkRange(msg, "size", m.GetSize(), 0, api.MaxFileSize); err != nil {
			return err
		}
		size = m.GetSize()
	} else if m.GetSize() != 0 || m.GetXxhash64() != 0 {
		return fieldErr(msg, "size", fmt.Errorf("set on a chunk after the first"))
	}
	if m.GetOffset() != want {
		return fieldErr(msg, "offset", fmt.Errorf("%d, want %d", m.GetOffset(), want))
	}
	n := int64(len(m.GetData()))
	if n > api.MaxChunk {
		return fieldErr(msg, "data", fmt.Errorf("%d bytes (at most %d)", n, api.MaxChunk))
	}
	if n > size-want {
		return fieldErr(msg, "data", fmt.Errorf("runs to byte %d of a %d-byte file", want+n, size))
	}
	return nil
}

// EncodeSubmit converts a job spec.
func EncodeSubmit(s api.JobSpec) *SubmitRequest {
	return &SubmitRequest{Graph: s.Graph, Shards: s.Shards, Partitions: int32(s.Partitions), Scheme: s.Scheme, Kernel: s.Kernel,
		PerVertex: s.PerVertex, PerEdge: s.PerEdge, Format: s.Format, SkipBadLines: s.SkipBadLines}
}

// DecodeSubmit validates and converts a job spec: exactly one of graph and
// shards, P in 0..api.MaxPartitions, a known scheme, a known format, and
// the reading options only with a graph.
func DecodeSubmit(m *SubmitRequest) (api.JobSpec, error) {
	const msg = "SubmitRequest"
	if m == nil {
		return api.JobSpec{}, fieldErr(msg, "", ErrNil)
	}
	if (m.GetGraph() == "") == (m.GetShards() == "") {
		return api.JobSpec{}, fieldErr(msg, "graph", fmt.Errorf("give exactly one of a graph file and a shard store"))
	}
	if err := api.CheckText("graph path", m.GetGraph(), api.MaxURLLen); err != nil {
		return api.JobSpec{}, fieldErr(msg, "graph", err)
	}
	if err := api.CheckText("store URL", m.GetShards(), api.MaxURLLen); err != nil {
		return api.JobSpec{}, fieldErr(msg, "shards", err)
	}
	if err := checkRange(msg, "partitions", int64(m.GetPartitions()), 0, api.MaxPartitions); err != nil {
		return api.JobSpec{}, err
	}
	switch m.GetScheme() {
	case "", "hash", "range":
	default:
		return api.JobSpec{}, fieldErr(msg, "scheme", fmt.Errorf("%q is not hash or range", api.TruncateText(m.GetScheme(), 32)))
	}
	if err := checkKernel(m.GetKernel()); err != nil {
		return api.JobSpec{}, fieldErr(msg, "kernel", err)
	}
	if m.GetFormat() != "" {
		if err := api.CheckText("format", m.GetFormat(), api.MaxNameLen); err != nil {
			return api.JobSpec{}, fieldErr(msg, "format", err)
		}
		if _, err := edgeio.ParseFormat(m.GetFormat()); err != nil {
			return api.JobSpec{}, fieldErr(msg, "format", err)
		}
	}
	if m.GetShards() != "" && (m.GetFormat() != "" || m.GetSkipBadLines()) {
		return api.JobSpec{}, fieldErr(msg, "format", fmt.Errorf("format and skip_bad_lines apply to a graph file; a shard store was read when it was partitioned"))
	}
	return api.JobSpec{Graph: m.GetGraph(), Shards: m.GetShards(), Partitions: int(m.GetPartitions()), Scheme: m.GetScheme(), Kernel: m.GetKernel(),
		PerVertex: m.GetPerVertex() || m.GetPerEdge(), PerEdge: m.GetPerEdge(), Format: m.GetFormat(), SkipBadLines: m.GetSkipBadLines()}, nil
}

// DecodeFetchCounts validates a counts request: a job id, and whether the
// per-edge rows are wanted.
func DecodeFetchCounts(m *FetchCountsRequest) (api.JobID, bool, error) {
	const msg = "FetchCountsRequest"
	if m == nil {
		return "", false, fieldErr(msg, "", ErrNil)
	}
	if err := api.CheckID("job id", m.GetJob()); err != nil {
		return "", false, fieldErr(msg, "job", err)
	}
	return api.JobID(m.GetJob()), m.GetEdges(), nil
}

// DecodeJobID validates the job id of a Status, Watch or Cancel request.
func DecodeJobID(msg, id string) (api.JobID, error) {
	if err := api.CheckID("job id", id); err != nil {
		return "", fieldErr(msg, "job", err)
	}
	return api.JobID(id), nil
}

var stateToPB = map[api.JobState]JobState{
	api.JobQueued:    JobState_JOB_STATE_QUEUED,
	api.JobPreparing: JobState_JOB_STATE_PREPARING,
	api.JobRunning:   JobState_JOB_STATE_RUNNING,
	api.JobDone:      JobState_JOB_STATE_DONE,
	api.JobFailed:    JobState_JOB_STATE_FAILED,
	api.JobCancelled: JobState_JOB_STATE_CANCELLED,
}

// EncodeStatus converts a job's status.
func EncodeStatus(s api.JobStatus) *JobStatus {
	m := &JobStatus{
		Job: string(s.Job), State: stateToPB[s.State], Source: api.TruncateText(s.Source, api.MaxURLLen),
		Partitions: int32(s.Partitions), Scheme: s.Scheme, Kernel: s.Kernel,
		Subtasks: s.Subtasks, Queued: s.Queued, Running: s.Running, Done: s.Done,
		Attempts: s.Attempts, Requeued: s.Requeued, Speculated: s.Speculated,
		Workers: int32(s.Workers), Triangles: s.Triangles,
		ElapsedNs: int64(s.Elapsed), Error: api.TruncateText(s.Err, api.MaxErrorLen), Recounted: s.Recounted,
		PerWorker: encodeWorkerStats(s.PerWorker), CoordinatorCpuNs: int64(s.CoordinatorCPU),
	}
	if !s.Created.IsZero() {
		m.CreatedUnixMs = s.Created.UnixMilli()
	}
	for i, f := range s.Faulty {
		if i == api.MaxBatch {
			break
		}
		m.Faulty = append(m.Faulty, &FaultyWorker{Worker: string(f.Worker), Reason: api.TruncateText(f.Reason, api.MaxErrorLen)})
	}
	return m
}

// DecodeStatus validates and converts a job's status.
func DecodeStatus(m *JobStatus) (api.JobStatus, error) {
	const msg = "JobStatus"
	if m == nil {
		return api.JobStatus{}, fieldErr(msg, "", ErrNil)
	}
	if err := api.CheckID("job id", m.GetJob()); err != nil {
		return api.JobStatus{}, fieldErr(msg, "job", err)
	}
	var state api.JobState
	for s, p := range stateToPB {
		if p == m.GetState() {
			state = s
		}
	}
	if state == api.JobUnknown {
		return api.JobStatus{}, fieldErr(msg, "state", fmt.Errorf("unknown state %d", m.GetState()))
	}
	for _, t := range []struct {
		field, v string
		max      int
	}{{"source", m.GetSource(), api.MaxURLLen}, {"scheme", m.GetScheme(), api.MaxNameLen}, {"kernel", m.GetKernel(), api.MaxNameLen}, {"error", m.GetError(), api.MaxErrorLen}} {
		if err := api.CheckText(t.field, t.v, t.max); err != nil {
			return api.JobStatus{}, fieldErr(msg, t.field, err)
		}
	}
	if err := checkRange(msg, "partitions", int64(m.GetPartitions()), 0, api.MaxPartitions); err != nil {
		return api.JobStatus{}, err
	}
	for _, c := range []struct {
		field string
		v     int64
	}{{"subtasks", m.GetSubtasks()}, {"queued", m.GetQueued()}, {"running", m.GetRunning()}, {"done", m.GetDone()},
		{"attempts", m.GetAttempts()}, {"requeued", m.GetRequeued()}, {"speculated", m.GetSpeculated()},
		{"workers", int64(m.GetWorkers())}, {"created_unix_ms", m.GetCreatedUnixMs()}, {"recounted", m.GetRecounted()}} {
		if c.v < 0 {
			return api.JobStatus{}, fieldErr(msg, c.field, fmt.Errorf("%d is negative", c.v))
		}
	}
	if m.GetSubtasks() > api.MaxSubtasks || m.GetQueued()+m.GetRunning()+m.GetDone() > m.GetSubtasks() {
		return api.JobStatus{}, fieldErr(msg, "subtasks", fmt.Errorf("queued %d + running %d + done %d exceed subtasks %d", m.GetQueued(), m.GetRunning(), m.GetDone(), m.GetSubtasks()))
	}
	elapsed, err := checkDuration(msg, "elapsed_ns", m.GetElapsedNs())
	if err != nil {
		return api.JobStatus{}, err
	}
	if err := checkRange(msg, "faulty", int64(len(m.GetFaulty())), 0, api.MaxBatch); err != nil {
		return api.JobStatus{}, err
	}
	cpu, err := checkDuration(msg, "coordinator_cpu_ns", m.GetCoordinatorCpuNs())
	if err != nil {
		return api.JobStatus{}, err
	}
	perWorker, err := decodeWorkerStats(m.GetPerWorker())
	if err != nil {
		return api.JobStatus{}, err
	}
	s := api.JobStatus{
		Job: api.JobID(m.GetJob()), State: state, Source: m.GetSource(),
		Partitions: int(m.GetPartitions()), Scheme: m.GetScheme(), Kernel: m.GetKernel(),
		Subtasks: m.GetSubtasks(), Queued: m.GetQueued(), Running: m.GetRunning(), Done: m.GetDone(),
		Attempts: m.GetAttempts(), Requeued: m.GetRequeued(), Speculated: m.GetSpeculated(),
		Workers: int(m.GetWorkers()), Triangles: m.GetTriangles(), Elapsed: elapsed, Err: m.GetError(),
		Recounted: m.GetRecounted(), PerWorker: perWorker, CoordinatorCPU: cpu,
	}
	if ms := m.GetCreatedUnixMs(); ms != 0 {
		s.Created = time.UnixMilli(ms)
	}
	for i, f := range m.GetFaulty() {
		field := fmt.Sprintf("faulty[%d]", i)
		if f == nil {
			return api.JobStatus{}, fieldErr(msg, field, ErrNil)
		}
		if err := api.CheckID("worker id", f.GetWorker()); err != nil {
			return api.JobStatus{}, fieldErr(msg, field+".worker", err)
		}
		if err := api.CheckText("reason", f.GetReason(), api.MaxErrorLen); err != nil {
			return api.JobStatus{}, fieldErr(msg, field+".reason", err)
		}
		s.Faulty = append(s.Faulty, api.FaultyWorker{Worker: api.WorkerID(f.GetWorker()), Reason: f.GetReason()})
	}
	return s, nil
}
