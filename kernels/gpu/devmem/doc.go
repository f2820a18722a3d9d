// Package devmem manages the memory a GPU count moves through: the block
// slots of a device context as a cache (Slots: a block passed again is not
// uploaded again; the slot given up is the one whose block the known next
// subtasks need furthest ahead; the next subtasks' blocks are uploaded
// ahead of them), host memory page-locked in place for the copies (Pins,
// shared by every context of a library, and Register), the host arenas a
// count lists into (Arena, Prefault), and the byte model of the library's
// allocations (BlockBytes, SubtaskMinBytes, PreprocessMinBytes), by which
// every count and the choice of P are sized.
//
// It sits between the strategies (kernels/gpu) and the binding
// (kernels/gpu/abi): it decides where blocks live, never how a subtask is
// counted.
package devmem
