// Test kernels for warp.cuh, one module per element type. The host
// (crates/testkit/src/warp.rs) passes:
//   TESTKIT_WARP_ELEM              the element type (float, unsigned int, ...;
//                                  not a macro named T: warp.cuh's templates
//                                  call their parameter T)
//   TESTKIT_WARP_MAX_STRUCT_WORDS  the largest structure the structure
//                                  exchanges are instantiated for
//
// Every kernel works on `nwarps` whole warps (32 * nwarps lanes); lane g of
// the launch handles element g. Whole warps past the end return together,
// so every warp that calls a warp function is complete.
#include "warp.cuh"

#if !defined(TESTKIT_WARP_ELEM) || !defined(TESTKIT_WARP_MAX_STRUCT_WORDS)
#error "warp_test.cu takes its element type and largest structure from the host (TESTKIT_WARP_*)"
#endif

typedef TESTKIT_WARP_ELEM Elem;

// The global lane index, or false for a warp past the end (warp-uniform,
// since blocks are multiples of 32 threads).
__device__ __forceinline__ bool lane_of(unsigned nwarps, unsigned *g) {
    *g = blockIdx.x * blockDim.x + threadIdx.x;
    return *g / 32u < nwarps;
}

// ---- shuffles ---------------------------------------------------------------

// out[g] = x of lane src[g] of the same warp.
extern "C" __global__ void shfl_idx(const Elem *x, const unsigned *src, Elem *out, unsigned nwarps) {
    unsigned g;
    if (!lane_of(nwarps, &g)) return;
    out[g] = warpmc::shfl(x[g], (int)src[g]);
}

extern "C" __global__ void shfl_up(const Elem *x, Elem *out, unsigned delta, unsigned nwarps) {
    unsigned g;
    if (!lane_of(nwarps, &g)) return;
    out[g] = warpmc::shfl_up(x[g], delta);
}

extern "C" __global__ void shfl_down(const Elem *x, Elem *out, unsigned delta, unsigned nwarps) {
    unsigned g;
    if (!lane_of(nwarps, &g)) return;
    out[g] = warpmc::shfl_down(x[g], delta);
}

extern "C" __global__ void shfl_xor(const Elem *x, Elem *out, unsigned lane_mask, unsigned nwarps) {
    unsigned g;
    if (!lane_of(nwarps, &g)) return;
    out[g] = warpmc::shfl_xor(x[g], (int)lane_mask);
}

// ---- broadcasts -------------------------------------------------------------

// Warp w broadcasts from lane src[w].
extern "C" __global__ void broadcast(const Elem *x, const unsigned *src, Elem *out, unsigned nwarps) {
    unsigned g;
    if (!lane_of(nwarps, &g)) return;
    out[g] = warpmc::broadcast(x[g], (int)src[g / 32u]);
}

// found[w] is written by every lane of warp w (all must agree, and the
// host checks the value).
extern "C" __global__ void broadcast_last(const Elem *x, const unsigned *pred, Elem *out, unsigned *found,
                                          unsigned nwarps) {
    unsigned g;
    if (!lane_of(nwarps, &g)) return;
    bool f = false;
    out[g] = warpmc::broadcast_last(x[g], pred[g] != 0u, &f);
    // Lanes disagreeing would leave a mix; 2 marks "some lane said yes and
    // some no" through an atomic OR of 1 (no) and 2 (yes) bits.
    atomicOr(&found[g / 32u], f ? 2u : 1u);
}

// ---- reductions and scans (every lane writes its own result) ---------------

#define OP_KERNELS(name, Op)                                                                  \
    extern "C" __global__ void reduce_##name(const Elem *x, Elem *out, unsigned nwarps) {            \
        unsigned g;                                                                                  \
        if (!lane_of(nwarps, &g)) return;                                                            \
        out[g] = warpmc::warp_reduce(x[g], Op());                                                    \
    }                                                                                                \
    extern "C" __global__ void inclusive_scan_##name(const Elem *x, Elem *out, unsigned nwarps) {    \
        unsigned g;                                                                                  \
        if (!lane_of(nwarps, &g)) return;                                                            \
        out[g] = warpmc::warp_inclusive_scan(x[g], Op());                                            \
    }                                                                                                \
    /* Both overloads: out from the plain one, out_t and totals from  */                          \
    /* the one that also returns the warp's total.                    */                          \
    extern "C" __global__ void exclusive_scan_##name(const Elem *x, Elem *out, Elem *out_t,          \
                                                     Elem *totals, unsigned nwarps) {                \
        unsigned g;                                                                                  \
        if (!lane_of(nwarps, &g)) return;                                                            \
        Elem total;                                                                                  \
        out[g] = warpmc::warp_exclusive_scan(x[g], Op());                                            \
        out_t[g] = warpmc::warp_exclusive_scan(x[g], Op(), &total);                                  \
        totals[g] = total;                                                                           \
    }

OP_KERNELS(sum, warpmc::Sum)
OP_KERNELS(min, warpmc::Min)
OP_KERNELS(max, warpmc::Max)

extern "C" __global__ void scan_pred(const Elem *x, Elem *out, unsigned nwarps) {
    unsigned g;
    if (!lane_of(nwarps, &g)) return;
    out[g] = warpmc::warp_inclusive_scan_pred(x[g]);
}

// ---- sorting ----------------------------------------------------------------

extern "C" __global__ void bitonic_sort(const Elem *keys, Elem *out, unsigned nwarps) {
    unsigned g;
    if (!lane_of(nwarps, &g)) return;
    out[g] = warpmc::bitonic_sort(keys[g]);
}

template <class V>
__device__ __forceinline__ void sort_pairs(const Elem *keys, const V *values, Elem *keys_out, V *values_out,
                                           unsigned nwarps) {
    unsigned g;
    if (!lane_of(nwarps, &g)) return;
    Elem k = keys[g];
    V v = values[g];
    warpmc::bitonic_sort_pairs(k, v);
    keys_out[g] = k;
    values_out[g] = v;
}

// bitonic_sort_pairs_<value type>, value types named as in Rust.
#define PAIRS_KERNEL(vname, V)                                                                    \
    extern "C" __global__ void bitonic_sort_pairs_##vname(const Elem *keys, const V *values, Elem *keys_out, \
                                                          V *values_out, unsigned nwarps) {              \
        sort_pairs<V>(keys, values, keys_out, values_out, nwarps);                                       \
    }

PAIRS_KERNEL(i32, int)
PAIRS_KERNEL(u32, unsigned)
PAIRS_KERNEL(i64, long long)
PAIRS_KERNEL(u64, unsigned long long)
PAIRS_KERNEL(f32, float)
PAIRS_KERNEL(f64, double)

// ---- structure exchange -----------------------------------------------------
//
// n = 32 * nwarps structures of M words; warp w's structures start at
// aos + 32*M*w. "soa" is the structure-of-arrays view: soa[i*n + g] is word
// i of structure g.

// Coalesced load and c2r; each lane then writes its registers to the SoA
// view, so the host sees which words each lane ended with.
template <int M>
__device__ __forceinline__ void load_structs(const Elem *aos, Elem *soa, unsigned nwarps) {
    unsigned g;
    if (!lane_of(nwarps, &g)) return;
    const unsigned n = 32u * nwarps;
    Elem r[M];
    warpmc::warp_load_structs<M>(aos + (g / 32u) * 32u * M, r);
#pragma unroll
    for (int i = 0; i < M; ++i) soa[i * n + g] = r[i];
}

// Each lane reads its structure from the SoA view, then r2c and a coalesced
// store write the warp's structures.
template <int M>
__device__ __forceinline__ void store_structs(const Elem *soa, Elem *aos, unsigned nwarps) {
    unsigned g;
    if (!lane_of(nwarps, &g)) return;
    const unsigned n = 32u * nwarps;
    Elem r[M];
#pragma unroll
    for (int i = 0; i < M; ++i) r[i] = soa[i * n + g];
    warpmc::warp_store_structs<M>(aos + (g / 32u) * 32u * M, r);
}

// Load, then store: registers only in between (c2r then r2c).
template <int M>
__device__ __forceinline__ void roundtrip_structs(const Elem *aos, Elem *out, unsigned nwarps) {
    unsigned g;
    if (!lane_of(nwarps, &g)) return;
    const unsigned off = (g / 32u) * 32u * M;
    Elem r[M];
    warpmc::warp_load_structs<M>(aos + off, r);
    warpmc::warp_store_structs<M>(out + off, r);
}

#define STRUCT_KERNELS(M)                                                                          \
    extern "C" __global__ void load_structs_m##M(const Elem *aos, Elem *soa, unsigned nwarps) {           \
        load_structs<M>(aos, soa, nwarps);                                                                \
    }                                                                                                     \
    extern "C" __global__ void store_structs_m##M(const Elem *soa, Elem *aos, unsigned nwarps) {          \
        store_structs<M>(soa, aos, nwarps);                                                               \
    }                                                                                                     \
    extern "C" __global__ void roundtrip_structs_m##M(const Elem *aos, Elem *out, unsigned nwarps) {      \
        roundtrip_structs<M>(aos, out, nwarps);                                                           \
    }

STRUCT_KERNELS(1)
STRUCT_KERNELS(2)
STRUCT_KERNELS(3)
STRUCT_KERNELS(4)
STRUCT_KERNELS(5)
STRUCT_KERNELS(6)
STRUCT_KERNELS(7)
STRUCT_KERNELS(8)
static_assert(TESTKIT_WARP_MAX_STRUCT_WORDS == 8, "the structure kernels are instantiated for 1 to 8 words");

// ---- compaction ---------------------------------------------------------------

// Warp w compacts into out[32w ..); slots[g] is lane g's slot, counts[w] the
// warp's count (written by lane 0).
extern "C" __global__ void compact(const Elem *x, const unsigned *pred, Elem *out, unsigned *slots,
                                   unsigned *counts, unsigned nwarps) {
    unsigned g;
    if (!lane_of(nwarps, &g)) return;
    const unsigned w = g / 32u;
    const warpmc::CompactSlot s = warpmc::warp_compact(x[g], pred[g] != 0u, out + 32u * w);
    slots[g] = s.slot;
    if (g % 32u == 0u) counts[w] = s.count;
}

// All warps append to one list; src[i] records which lane wrote out[i].
extern "C" __global__ void append(const Elem *x, const unsigned *pred, Elem *out, unsigned *src,
                                  unsigned *counter, unsigned nwarps) {
    unsigned g;
    if (!lane_of(nwarps, &g)) return;
    const unsigned at = warpmc::warp_append(out, counter, x[g], pred[g] != 0u);
    if (at != 0xffffffffu) src[at] = g;
}
