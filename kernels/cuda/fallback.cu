// Weak stand-ins for kernels that live in files another build step may not
// have yet (trust.cu, wetric.cu). They report "not built" (cudaErrorNotSupported,
// which tg_count maps to TG_ERR_NOT_BUILT) and never a count; the real
// definitions, when linked, replace them.
#include "tg_internal.cuh"

__attribute__((weak)) cudaError_t tg_kernel_trust(const tg_dblock *, const tg_dblock *, const tg_dblock *,
                                                  tg_kernel_env *, unsigned long long *) {
    return cudaErrorNotSupported;
}

__attribute__((weak)) cudaError_t tg_kernel_wetric(const tg_dblock *, const tg_dblock *, const tg_dblock *,
                                                   tg_kernel_env *, unsigned long long *) {
    return cudaErrorNotSupported;
}

__attribute__((weak)) cudaError_t tg_kernel_wetric_local(const tg_dblock *, const tg_dblock *, const tg_dblock *,
                                                         tg_kernel_env *, unsigned long long *, const tg_local *) {
    return cudaErrorNotSupported;
}
