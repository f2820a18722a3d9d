// copybench: what moving blocks between host and device costs on this
// machine, the figures behind the out-of-core design (docs/gpu.md).
//
//   copybench [MiB] [threads]     (MiB 0: the first CUDA call only)
//
// Prints one line per measurement (median of 5 after a warm-up where it
// repeats): the first CUDA call after process start, host-to-device and
// device-to-host copies from pageable and pinned memory, the cost of
// pinning (cudaHostAlloc of fresh memory, cudaHostRegister of memory the
// host has touched), and host memcpy on one thread and on `threads`.
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <vector>

static double now() {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

#define CK(x)                                                                              \
    do {                                                                                   \
        cudaError_t e_ = (x);                                                              \
        if (e_ != cudaSuccess) {                                                           \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

struct span {
    char *dst;
    const char *src;
    size_t n;
};

static void *copy_span(void *arg) {
    span *s = (span *)arg;
    memcpy(s->dst, s->src, s->n);
    return NULL;
}

static void par_memcpy(char *dst, const char *src, size_t n, int threads) {
    std::vector<pthread_t> th(threads);
    std::vector<span> sp(threads);
    size_t per = (n + threads - 1) / threads;
    for (int i = 0; i < threads; i++) {
        size_t lo = std::min(n, per * i), hi = std::min(n, per * (i + 1));
        sp[i] = span{dst + lo, src + lo, hi - lo};
        pthread_create(&th[i], NULL, copy_span, &sp[i]);
    }
    for (int i = 0; i < threads; i++) pthread_join(th[i], NULL);
}

static void report(const char *what, size_t bytes, double s) {
    printf("%-44s %9.3f ms %8.2f GB/s\n", what, s * 1e3, bytes / s / 1e9);
}

int main(int argc, char **argv) {
    double t0 = now();
    size_t mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 512;
    int threads = argc > 2 ? atoi(argv[2]) : 16;
    size_t n = mib << 20;
    CK(cudaFree(0));
    printf("%-44s %9.3f ms\n", "first CUDA call (cudaFree(0))", (now() - t0) * 1e3);
    if (n == 0) return 0; // start-up alone: time the whole process from outside

    char *dev;
    CK(cudaMalloc(&dev, n));
    char *page = (char *)malloc(n);
    memset(page, 1, n);
    char *page2 = (char *)malloc(n);
    memset(page2, 2, n);
    const int runs = 5;
    std::vector<double> t;

    // Pageable copies (the driver stages them through its own pinned buffers).
    CK(cudaMemcpy(dev, page, n, cudaMemcpyHostToDevice));
    for (int r = 0; r < runs; r++) {
        double a = now();
        CK(cudaMemcpy(dev, page, n, cudaMemcpyHostToDevice));
        t.push_back(now() - a);
    }
    report("H2D pageable (touched)", n, median(t));
    t.clear();
    for (int r = 0; r < runs; r++) {
        double a = now();
        CK(cudaMemcpy(page2, dev, n, cudaMemcpyDeviceToHost));
        t.push_back(now() - a);
    }
    report("D2H pageable (touched)", n, median(t));
    t.clear();
    for (int r = 0; r < 3; r++) {
        char *fresh = (char *)malloc(n);
        double a = now();
        CK(cudaMemcpy(fresh, dev, n, cudaMemcpyDeviceToHost));
        t.push_back(now() - a);
        free(fresh);
    }
    report("D2H pageable (fresh malloc)", n, median(t));
    t.clear();

    // Pinning.
    for (int r = 0; r < 3; r++) {
        char *p;
        double a = now();
        CK(cudaHostAlloc((void **)&p, n, cudaHostAllocDefault));
        t.push_back(now() - a);
        CK(cudaFreeHost(p));
    }
    report("cudaHostAlloc", n, median(t));
    t.clear();
    for (int r = 0; r < 3; r++) {
        char *p;
        CK(cudaHostAlloc((void **)&p, n, cudaHostAllocDefault));
        double a = now();
        CK(cudaFreeHost(p));
        t.push_back(now() - a);
    }
    report("cudaFreeHost", n, median(t));
    t.clear();
    for (int r = 0; r < 3; r++) {
        double a = now();
        CK(cudaHostRegister(page, n, cudaHostRegisterDefault));
        t.push_back(now() - a);
        CK(cudaHostUnregister(page));
    }
    report("cudaHostRegister (touched)", n, median(t));
    t.clear();
    for (int r = 0; r < 3; r++) {
        CK(cudaHostRegister(page, n, cudaHostRegisterDefault));
        double a = now();
        CK(cudaHostUnregister(page));
        t.push_back(now() - a);
    }
    report("cudaHostUnregister", n, median(t));
    t.clear();

    // Pinned copies.
    char *pin;
    CK(cudaHostAlloc((void **)&pin, n, cudaHostAllocDefault));
    memset(pin, 3, n);
    for (int r = 0; r < runs; r++) {
        double a = now();
        CK(cudaMemcpy(dev, pin, n, cudaMemcpyHostToDevice));
        t.push_back(now() - a);
    }
    report("H2D pinned", n, median(t));
    t.clear();
    for (int r = 0; r < runs; r++) {
        double a = now();
        CK(cudaMemcpy(pin, dev, n, cudaMemcpyDeviceToHost));
        t.push_back(now() - a);
    }
    report("D2H pinned", n, median(t));
    t.clear();
    CK(cudaHostRegister(page, n, cudaHostRegisterDefault));
    for (int r = 0; r < runs; r++) {
        double a = now();
        CK(cudaMemcpy(dev, page, n, cudaMemcpyHostToDevice));
        t.push_back(now() - a);
    }
    report("H2D registered", n, median(t));
    t.clear();
    CK(cudaHostUnregister(page));

    // Staging through a pinned ring: parallel memcpy of chunk c+1 while chunk c copies.
    size_t chunk = 32 << 20;
    char *ring[2];
    CK(cudaHostAlloc((void **)&ring[0], chunk, cudaHostAllocDefault));
    CK(cudaHostAlloc((void **)&ring[1], chunk, cudaHostAllocDefault));
    cudaStream_t s;
    cudaEvent_t ev[2];
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&ev[0], cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&ev[1], cudaEventDisableTiming));
    for (int r = 0; r < runs; r++) {
        double a = now();
        int k = 0;
        for (size_t off = 0; off < n; off += chunk, k ^= 1) {
            size_t m = std::min(chunk, n - off);
            CK(cudaEventSynchronize(ev[k]));
            par_memcpy(ring[k], page + off, m, threads);
            CK(cudaMemcpyAsync(dev + off, ring[k], m, cudaMemcpyHostToDevice, s));
            CK(cudaEventRecord(ev[k], s));
        }
        CK(cudaStreamSynchronize(s));
        t.push_back(now() - a);
    }
    report("H2D staged, 2 x 32 MiB pinned ring", n, median(t));
    t.clear();

    for (int r = 0; r < runs; r++) {
        double a = now();
        memcpy(page2, page, n);
        t.push_back(now() - a);
    }
    report("host memcpy, 1 thread", n, median(t));
    t.clear();
    for (int r = 0; r < runs; r++) {
        double a = now();
        par_memcpy(page2, page, n, threads);
        t.push_back(now() - a);
    }
    char what[64];
    snprintf(what, sizeof what, "host memcpy, %d threads", threads);
    report(what, n, median(t));
    printf("%-44s %9.3f ms\n", "whole run before teardown", (now() - t0) * 1e3);
    return 0;
}
