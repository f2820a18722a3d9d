// tg_profile.h: the measuring build, one switch for the whole library.
//
// `make PROFILE=1` compiles every file with -DTG_PROFILE, into build-profile/
// and libtrigrid_cuda_profile.so beside the shipped library (point
// TRIGRID_CUDA_LIB at it). That build writes to stderr:
// - tg_count_rows (rows.cu): when the context is destroyed, a line
//   "tg_count_rows trace: ..." with its calls, ranges and buffer
//   reallocations, the host seconds of its set-up, enqueueing, waiting,
//   launching and tail, and the GPU seconds of its copies (bytes and
//   rate), its kernels, its copies that ran beside its kernels and its
//   calls' GPU span; and for the first two calls of four ranges or more a
//   line "tg_count_rows timeline ..." of each range's copy and kernel, in
//   milliseconds from the call's start;
// - tg_ranges_count (ranges.cu): a line a range, "ranges-profile hb=...
//   rows=... cols=... bmwords=... entries=... all_ms=... count_ms=...
//   p0=... p7=...": the window's base, the range's sizes, its GPU time and
//   the count kernel's, and the items of each way an entry's tail is met
//   (p0-p2: lo items walked, searched, looked up in v's bitmap; p3-p6: hi
//   items walked, ANDed, looked up, searched; p7: tiles).
//
// The shipped build compiles none of it: TG_PROF(...) keeps its argument
// only in the measuring build, and a file's measuring state and helpers sit
// in one `#ifdef TG_PROFILE` block of that file.
#pragma once

#ifdef TG_PROFILE
#include <chrono>

#define TG_PROF(...) __VA_ARGS__

// Host seconds on a monotonic clock.
static inline double tg_prof_now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
#else
#define TG_PROF(...)
#endif

// A host timer: TG_PROF_AT(t) starts one named t, TG_PROF_ADD(sum, t) adds
// the seconds since t to sum.
#define TG_PROF_AT(var) TG_PROF(const double var = tg_prof_now())
#define TG_PROF_ADD(sum, since) TG_PROF((sum) += tg_prof_now() - (since))
