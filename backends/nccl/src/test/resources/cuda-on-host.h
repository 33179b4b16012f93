// Just enough of CUDA's device environment for g++ to compile and run tensorbus's CUDA kernels on the host, one
// thread after another: the kernels' own code (the halves, the saturating casts, the reductions) runs exactly as
// written, with the CUDA intrinsics replaced by their host equivalents. Used only by CudaKernelSourceTest.
#include <math.h>
#include <cmath>
#include <cstring>
#include <cstddef>
#include <cstdio>
#include <cstdlib>

struct HostDim3 { unsigned int x, y, z; };
static HostDim3 blockIdx, blockDim, threadIdx;

#define __global__
#define __device__
#define __shared__ static

static inline void __syncthreads() {}
static inline float __uint_as_float(unsigned int b) { float f; std::memcpy(&f, &b, 4); return f; }
static inline unsigned int __float_as_uint(float f) { unsigned int b; std::memcpy(&b, &f, 4); return b; }
static inline float __double2float_rn(double v) { return (float) v; }
static inline float __ll2float_rn(long long v) { return (float) v; }
static inline double __ll2double_rn(long long v) { return (double) v; }
using std::isnan;
using std::signbit;

// Runs one launch of n threads in blocks of 256.
#define LAUNCH(n, call) \
    for (unsigned long t_ = 0; t_ < (unsigned long) (n); t_++) { \
        blockDim.x = 256; blockIdx.x = (unsigned int) (t_ / 256); threadIdx.x = (unsigned int) (t_ % 256); call; }

static void *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(2); }
    fseek(f, 0, SEEK_END);
    *size = (size_t) ftell(f);
    fseek(f, 0, SEEK_SET);
    void *p = malloc(*size + 1);
    if (fread(p, 1, *size, f) != *size) { perror(path); exit(2); }
    fclose(f);
    return p;
}

static void write_file(const char *path, const void *p, size_t size) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, size, f) != size) { perror(path); exit(2); }
    fclose(f);
}
