// The degree order's device kernels, shared by tg_preprocess and
// tg_pieces_rank: vertices ranked by (degree, id) ascending through one
// radix sort of the keys (degree << 32) | id.
#pragma once

#include <cstdint>

namespace {

// keys[v] = (deg[v] << 32) | v; adds each vertex's wedges (d(d-1)/2) to
// *wedges and raises *maxdeg to the largest degree.
__global__ void degree_keys(const uint32_t *__restrict__ deg, int64_t n, uint64_t *keys, unsigned long long *wedges,
                            unsigned long long *maxdeg) {
    unsigned long long w = 0, mx = 0;
    for (int64_t v = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; v < n; v += (int64_t)gridDim.x * blockDim.x) {
        const unsigned long long d = deg[v];
        keys[v] = (d << 32) | (uint64_t)v;
        w += d * (d - (d > 0)) / 2;
        mx = max(mx, d);
    }
    for (int o = 16; o > 0; o >>= 1) {
        w += __shfl_down_sync(0xffffffffu, w, o);
        mx = max(mx, __shfl_down_sync(0xffffffffu, mx, o));
    }
    if ((threadIdx.x & 31) == 0) {
        if (w) atomicAdd(wedges, w);
        if (mx) atomicMax(maxdeg, mx);
    }
}

// rank[v] = i for the sorted keys' i-th vertex v.
__global__ void scatter_rank(const uint64_t *__restrict__ sorted, int64_t n, uint32_t *rank) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        rank[(uint32_t)sorted[i]] = (uint32_t)i;
}

} // namespace
