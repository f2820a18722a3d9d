// Package gpu counts triangles on NVIDIA GPUs through libtrigrid_cuda.so,
// loaded at run time without cgo; when the library or a GPU is missing,
// Select falls back to the CPU kernels with a logged reason.
//
// # Three layers, one way down
//
// The package is the top of three, each importing only the ones below it
// (deps_test.go holds it):
//
//	kernels/gpu          the strategies: how a subtask, a forward graph or an
//	                     edge list goes through the device (this package)
//	kernels/gpu/devmem   device and host memory: the context's slots as a
//	                     cache of blocks (Slots: reuse, eviction, uploads
//	                     ahead), host memory pinned in place (Pins), host
//	                     arenas, and the byte model of the library's
//	                     allocations that sizes every count (BlockBytes)
//	kernels/gpu/abi      the binding of kernels/cuda/trigrid.h: symbol
//	                     loading, the version check, one typed method an
//	                     entry point, errors mapped to sentinels
//
// The library itself is the .cu files of kernels/cuda, or the plain-C
// reference library kernels/cuda/ref, which implements the same ABI on the
// CPU and is what every test here runs against where there is no GPU.
//
// # How one count runs
//
// Select (select.go) opens the Library (library.go: abi.Open, the
// Library's devmem.Pins shared by its counters) and makes a Counter per
// GPU (counter.go): an abi.Ctx on the device and the devmem.Slots of that
// context. The pipeline's plan then drives the counter through one of the
// count strategies, or first through the device's own preparation of the
// graph:
//
//   - Count (counter.go) of one subtask: countWhole (whole.go) makes its
//     three blocks resident (Slots.Ready: blocks already held are reused,
//     the others uploaded from their own memory pinned in place, the next
//     subtasks' blocks uploaded ahead) and runs one kernel on them
//     (tg_count). A counter set to stream rows (stream.go) keeps only JK
//     resident and streams IJ and IK through the device in row ranges,
//     for every next subtask sharing that JK (tg_count_rows); when JK
//     itself leaves no room, JK is counted in chunks of its rows, each with
//     its part of IJ (chunks.go, tg_count_rows). A subtask that fits none
//     of these is counted in halves of its rows (split.go) until a single
//     row, the error of which gives the least memory it needs.
//   - CountLocal (local.go): countWhole and its halves with the kernels'
//     per-vertex mode (tg_count_local).
//   - CountInRanges (ranges.go, rangesetup.go): a forward graph larger
//     than the device stays in pinned host memory and is counted a range
//     of rows at a time, the host listing the next range while the device
//     counts this one (tg_ranges_*).
//
// The preparation steps of kernels.Device, which leave the forward graph
// on the device or hand it back: PrepareResident and CountResident
// (preprocess.go, resident.go; tg_preprocess), PrepareResidentIDs from the
// input's own ids (prepids.go; tg_prep_ids, from host memory or from the
// input staged while read, stage.go: tg_input_*), OrientOnDevice
// (orient.go: tg_preprocess with copy-back, or in pieces when the pairs do
// not fit, pieces.go, rope.go and piecesprep.go: tg_pieces_*, each result
// written back over the host memory it came from), OrientMarkedOnDevice
// and OrientSpanOnDevice (orient.go: in pieces, the ids mapped through the
// host's numbering, or numbered on the device), OrientIDsOnDevice
// (orientids.go; tg_prep_ids with copy-back) and KeepIDsOnDevice,
// SplitOnDevice and ForwardOut (devsplit.go; tg_split_blocks,
// tg_block_out). The GPU `auto` kernel is chosen per subtask by a pure
// rule (choose.go, auto.go); Bench (bench.go) times the kernels.
//
// # The ABI by caller
//
// Every entry point of trigrid.h has one method on abi.Lib or abi.Ctx, and
// each is called from the files below; none is called only by tests.
// kernels/cuda/tools/tgdrv (the C driver) calls tg_abi_version,
// tg_device_count, tg_device_info, tg_ctx_create, tg_ctx_destroy,
// tg_load_block, tg_count, tg_count_local and tg_preprocess.
//
//	tg_abi_version, tg_device_count, tg_device_info   abi.Open, Library.Devices
//	tg_ctx_create, tg_ctx_destroy                      library.go, counter.go
//	tg_settings_default, tg_ctx_set_settings           settings.go
//	tg_mem_usage                                       devmem (Slots.Prefetch), every strategy's sizing
//	tg_load_block, tg_load_wait, tg_free_block         devmem.Slots, for every strategy
//	tg_host_register, tg_host_unregister               devmem.Pins, and the strategies' own host arrays
//	tg_count                                           whole.go (and CountResident)
//	tg_count_local                                     local.go, through whole.go
//	tg_count_rows                                      stream.go, chunks.go
//	tg_ranges_begin, _count, _end                      ranges.go
//	tg_preprocess                                      preprocess.go (PrepareResident, OrientOnDevice)
//	tg_prep_ids                                        prepids.go (PrepareResidentIDs, OrientIDsOnDevice, KeepIDsOnDevice)
//	tg_input_alloc, _copy_async, _free                 stage.go
//	tg_pieces_begin, _sort, _csr, _vertices, _rank, _end pieces.go, piecesprep.go
//	tg_split_blocks, tg_block_out                      devsplit.go
package gpu
