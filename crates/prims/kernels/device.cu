// Device-wide reduce, scan, segmented reduce and compaction for one element
// type (one module per type).
//
// The host (crates/prims/src/cuda/device.rs) passes, from its own
// constants:
//   PRIMS_DEVICE_ELEM                 the element type (float, unsigned int, ...)
//   PRIMS_DEVICE_BLOCK                threads per block of reduce, segmented
//                                     reduce and compaction
//   PRIMS_DEVICE_THREAD_BYTES         input bytes per thread of a compaction tile
//   PRIMS_SCAN_BLOCK                  threads per scan block
//   PRIMS_SCAN_THREAD_BYTES           input bytes per thread of a scan tile
//   PRIMS_SCAN_STAGE_BYTES            the scan's dynamic shared memory
//   PRIMS_SELECT_NON_ZERO,            the predicate kinds of select_if_kernel
//   PRIMS_SELECT_GREATER_THAN,
//   PRIMS_SELECT_LESS_THAN
//
// Each kernel family is instantiated for the three operators as
// `<family>_sum`, `<family>_min`, `<family>_max`.
#include "lookback.cuh"

#if !defined(PRIMS_DEVICE_ELEM) || !defined(PRIMS_DEVICE_BLOCK) || !defined(PRIMS_DEVICE_THREAD_BYTES) || \
    !defined(PRIMS_SCAN_BLOCK) || !defined(PRIMS_SCAN_THREAD_BYTES) || !defined(PRIMS_SCAN_STAGE_BYTES) ||  \
    !defined(PRIMS_SELECT_NON_ZERO) || !defined(PRIMS_SELECT_GREATER_THAN) || !defined(PRIMS_SELECT_LESS_THAN)
#error "device.cu takes its element type, block sizes and predicate kinds from the host (PRIMS_DEVICE_*, PRIMS_SCAN_*, PRIMS_SELECT_*)"
#endif

typedef PRIMS_DEVICE_ELEM value_t;

// ---- operators and their identities --------------------------------------

__device__ __forceinline__ float min_of(float a, float b) { return fminf(a, b); }
__device__ __forceinline__ double min_of(double a, double b) { return fmin(a, b); }
__device__ __forceinline__ float max_of(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double max_of(double a, double b) { return fmax(a, b); }
template <class V> __device__ __forceinline__ V min_of(V a, V b) { return b < a ? b : a; }
template <class V> __device__ __forceinline__ V max_of(V a, V b) { return a < b ? b : a; }

__device__ __forceinline__ float highest(float) { return __int_as_float(0x7f800000); }
__device__ __forceinline__ double highest(double) { return __longlong_as_double(0x7ff0000000000000ll); }
__device__ __forceinline__ int highest(int) { return 0x7fffffff; }
__device__ __forceinline__ unsigned highest(unsigned) { return 0xffffffffu; }
__device__ __forceinline__ long long highest(long long) { return 0x7fffffffffffffffll; }
__device__ __forceinline__ unsigned long long highest(unsigned long long) { return ~0ull; }
__device__ __forceinline__ float lowest(float) { return __int_as_float((int)0xff800000u); }
__device__ __forceinline__ double lowest(double) { return __longlong_as_double((long long)0xfff0000000000000ull); }
__device__ __forceinline__ int lowest(int) { return (int)0x80000000u; }
__device__ __forceinline__ unsigned lowest(unsigned) { return 0u; }
__device__ __forceinline__ long long lowest(long long) { return (long long)0x8000000000000000ull; }
__device__ __forceinline__ unsigned long long lowest(unsigned long long) { return 0ull; }

struct OpSum {
    // Signed integers wrap, as in the warp-level operators.
    template <class V> __device__ __forceinline__ V operator()(V a, V b) const { return warpmc::detail::add(a, b); }
    template <class V> __device__ __forceinline__ static V identity() { return V(0); }
};
struct OpMin {
    template <class V> __device__ __forceinline__ V operator()(V a, V b) const { return min_of(a, b); }
    template <class V> __device__ __forceinline__ static V identity() { return highest(V()); }
};
struct OpMax {
    template <class V> __device__ __forceinline__ V operator()(V a, V b) const { return max_of(a, b); }
    template <class V> __device__ __forceinline__ static V identity() { return lowest(V()); }
};

// ---- shared tuning -----------------------------------------------------------

constexpr int BLOCK = PRIMS_DEVICE_BLOCK;
constexpr int WARPS = BLOCK / 32;
// Input bytes per thread per tile (16 floats or 8 doubles for 64 bytes):
// enough independent loads in flight to cover memory latency.
constexpr int ITEMS = PRIMS_DEVICE_THREAD_BYTES / sizeof(value_t);
constexpr int TILE = BLOCK * ITEMS;
// Elements of one 16-byte load.
constexpr int VEC = 16 / sizeof(value_t);
struct alignas(16) Vec16 {
    value_t v[VEC];
};

// A streaming 16-byte load (read once: no point keeping it in L1/L2).
__device__ __forceinline__ Vec16 load16(const Vec16 *p) {
    int4 raw = __ldcs(reinterpret_cast<const int4 *>(p));
    Vec16 v;
    memcpy(&v, &raw, 16);
    return v;
}

// Staging buffer index with one word of padding per 32, so that thread l
// reading its ITEMS consecutive elements (stride ITEMS across lanes) hits
// distinct banks.
__device__ __forceinline__ int padded(int k) { return k + k / 32; }
constexpr int STAGE = TILE + TILE / 32;

// ---- reduce ------------------------------------------------------------------

template <class Op>
__device__ __forceinline__ value_t block_reduce(value_t v, Op op) {
    __shared__ value_t s_warp[WARPS];
    v = warpmc::warp_reduce(v, op);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) s_warp[warp] = v;
    __syncthreads();
    v = threadIdx.x < WARPS ? s_warp[threadIdx.x] : Op::template identity<value_t>();
    if (warp == 0) v = warpmc::warp_reduce(v, op);
    return v;  // valid in thread 0
}

// Each block reduces a grid-strided share of x with 16-byte loads; partials[b]
// gets block b's result.
template <class Op>
__device__ void reduce_partial(const value_t *__restrict__ x, unsigned long long n, value_t *__restrict__ partials) {
    const Op op;
    value_t acc[VEC];
#pragma unroll
    for (int j = 0; j < VEC; ++j) acc[j] = Op::template identity<value_t>();
    const unsigned long long nvec = n / VEC;
    const Vec16 *xv = reinterpret_cast<const Vec16 *>(x);
    const unsigned long long stride = (unsigned long long)gridDim.x * BLOCK;
    unsigned long long i = (unsigned long long)blockIdx.x * BLOCK + threadIdx.x;
    // Four loads in flight per thread before any is used.
    for (; i + 3 * stride < nvec; i += 4 * stride) {
        Vec16 a = load16(&xv[i]), b = load16(&xv[i + stride]), c = load16(&xv[i + 2 * stride]),
              d = load16(&xv[i + 3 * stride]);
#pragma unroll
        for (int j = 0; j < VEC; ++j) acc[j] = op(acc[j], op(op(a.v[j], b.v[j]), op(c.v[j], d.v[j])));
    }
    for (; i < nvec; i += stride) {
        Vec16 a = load16(&xv[i]);
#pragma unroll
        for (int j = 0; j < VEC; ++j) acc[j] = op(acc[j], a.v[j]);
    }
    // The tail that does not fill a 16-byte load.
    unsigned long long t = nvec * VEC + (unsigned long long)blockIdx.x * BLOCK + threadIdx.x;
    if (t < n) acc[0] = op(acc[0], x[t]);
    value_t v = acc[0];
#pragma unroll
    for (int j = 1; j < VEC; ++j) v = op(v, acc[j]);
    v = block_reduce(v, op);
    if (threadIdx.x == 0) partials[blockIdx.x] = v;
}

// One block reduces the partials into out[0].
template <class Op>
__device__ void reduce_final(const value_t *__restrict__ partials, unsigned count, value_t *__restrict__ out) {
    const Op op;
    value_t v = Op::template identity<value_t>();
    for (unsigned i = threadIdx.x; i < count; i += BLOCK) v = op(v, partials[i]);
    v = block_reduce(v, op);
    if (threadIdx.x == 0) out[0] = v;
}

// ---- scan ----------------------------------------------------------------------

// Bytes of input per thread per scan tile, and the tile.
#define SCAN_THREAD_BYTES PRIMS_SCAN_THREAD_BYTES
#define SCAN_BLOCK PRIMS_SCAN_BLOCK
constexpr int SCAN_ITEMS = SCAN_THREAD_BYTES / sizeof(value_t);
constexpr int SCAN_WARPS = SCAN_BLOCK / 32;
constexpr int SCAN_TILE = SCAN_BLOCK * SCAN_ITEMS;
constexpr int SCAN_TILE_BYTES = SCAN_TILE * sizeof(value_t);
// The tile sits in shared memory with 16 bytes of padding after every 128:
// 16-byte chunks stay aligned for the asynchronous copies, and threads that
// each read their SCAN_ITEMS consecutive elements meet at most 2-way bank
// conflicts instead of 16-way ones.
constexpr int SCAN_STAGE_BYTES = SCAN_TILE_BYTES + SCAN_TILE_BYTES / 8;
static_assert(SCAN_STAGE_BYTES == PRIMS_SCAN_STAGE_BYTES, "the host's scan stage differs from the kernel's");
__device__ __forceinline__ int scan_pad(int byte) { return byte + 16 * (byte / 128); }

// Global → shared copies that need no registers while in flight (cp.async,
// sm_80+): a thread can have its whole share of the tile requested at once,
// and the block keeps few registers, so more blocks fit on an SM to hide
// the look-back's waits.
__device__ __forceinline__ void copy_async_16(void *smem, const void *gmem) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    // The L2::128B hint has L2 fetch whole 128-byte lines from memory at
    // once: faster than no hint and than L2::256B (docs/benchmarks/prims.md).
    asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
}


__device__ __forceinline__ void copy_async_wait_all() {
    asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
}

// Single pass: every element is read once and written once. A block takes a
// tile by ticket, copies it into shared memory (16-byte asynchronous copies,
// coalesced, no registers held while in flight), scans SCAN_ITEMS
// consecutive elements per thread there, and writes the result back out in
// coalesced 16-byte stores. (Persistent blocks that load their next tile
// while finishing the current one, guessing the tile from blockIdx.x while
// the ticket is on its way, and 512-thread blocks were all slower:
// docs/benchmarks/prims.md.)
template <class Op>
__device__ void scan(const value_t *__restrict__ x, value_t *__restrict__ y, unsigned long long n, int inclusive,
                     warpmc::lookback::State<value_t> st) {
    const Op op;
    const value_t id = Op::template identity<value_t>();
    // SCAN_STAGE_BYTES of dynamic shared memory (more than the 48 KB a
    // block may declare statically when SCAN_BLOCK is 512).
    extern __shared__ __align__(16) unsigned char s_tile[];
    __shared__ value_t s_warp[SCAN_WARPS];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    auto at = [&](int k) -> value_t * { return (value_t *)(s_tile + scan_pad(k * (int)sizeof(value_t))); };
    const unsigned tile = warpmc::lookback::take_ticket(st);
    const unsigned long long tile_base = (unsigned long long)tile * SCAN_TILE;
    const bool full = tile_base + SCAN_TILE <= n;
    if (full) {
        const unsigned char *src = (const unsigned char *)(x + tile_base);
        for (int c = threadIdx.x; c < SCAN_TILE_BYTES / 16; c += SCAN_BLOCK)
            copy_async_16(s_tile + scan_pad(16 * c), src + 16 * c);
        copy_async_wait_all();
    } else {
        for (int k = threadIdx.x; k < SCAN_TILE; k += SCAN_BLOCK) *at(k) = tile_base + k < n ? x[tile_base + k] : id;
    }
    __syncthreads();

    // Thread, then warp, then block. Each thread's SCAN_THREAD_BYTES are
    // one padded row of the stage, read and written in 16-byte accesses:
    // with the padding, every quarter-warp's accesses fall in distinct
    // banks (element-wise accesses met 4-way conflicts, and shared memory
    // then limited the scan). The row is read twice, 16 bytes at a time,
    // rather than held in registers, which would take so many registers
    // that fewer blocks fit on an SM.
    unsigned char *row = s_tile + scan_pad(threadIdx.x * SCAN_THREAD_BYTES);
    value_t run = id;
#pragma unroll
    for (int c = 0; c < SCAN_THREAD_BYTES / 16; ++c) {
        int4 r = *(const int4 *)(row + 16 * c);
        value_t v[VEC];
        memcpy(v, &r, 16);
#pragma unroll
        for (int j = 0; j < VEC; ++j) run = op(run, v[j]);
    }
    value_t incl = run;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        value_t o = warpmc::shfl_up(incl, (unsigned)d);
        if (lane >= d) incl = op(o, incl);
    }
    if (lane == 31) s_warp[warp] = incl;
    // Every lane must take part in the shuffle (full mask), lane 0 too.
    const value_t up = warpmc::shfl_up(incl, 1u);
    const value_t lane_excl = lane == 0 ? id : up;
    __syncthreads();
    value_t warp_prefix = id, block_total = id;
#pragma unroll
    for (int w = 0; w < SCAN_WARPS; ++w) {
        if (w < warp) warp_prefix = op(warp_prefix, s_warp[w]);
        block_total = op(block_total, s_warp[w]);
    }
    // This thread's items come after earlier tiles, earlier warps and
    // earlier lanes of its warp.
    const value_t tile_prefix = warpmc::lookback::exclusive_prefix(st, tile, block_total, op, id);
    value_t acc = op(op(tile_prefix, warp_prefix), lane_excl);
#pragma unroll
    for (int c = 0; c < SCAN_THREAD_BYTES / 16; ++c) {
        int4 r = *(const int4 *)(row + 16 * c);
        value_t v[VEC];
        memcpy(v, &r, 16);
#pragma unroll
        for (int j = 0; j < VEC; ++j) {
            value_t next = op(acc, v[j]);
            v[j] = inclusive ? next : acc;
            acc = next;
        }
        memcpy(&r, v, 16);
        *(int4 *)(row + 16 * c) = r;
    }
    __syncthreads();

    if (full) {
        unsigned char *dst = (unsigned char *)(y + tile_base);
        for (int c = threadIdx.x; c < SCAN_TILE_BYTES / 16; c += SCAN_BLOCK) {
            // Plain stores: streaming ones (st.cs, evict-first) were
            // slower.
            *(int4 *)(dst + 16 * c) = *(const int4 *)(s_tile + scan_pad(16 * c));
        }
    } else {
        for (int k = threadIdx.x; k < SCAN_TILE; k += SCAN_BLOCK)
            if (tile_base + k < n) y[tile_base + k] = *at(k);
    }
}

// ---- segmented reduce -----------------------------------------------------------

// One warp per segment, grid-strided over segments: coalesced loads inside a
// segment, and no cross-warp cooperation for the many short segments that
// are the common case.
template <class Op>
__device__ void segmented_reduce(const value_t *__restrict__ x, const unsigned *__restrict__ offsets, unsigned nseg,
                                 value_t *__restrict__ out) {
    const Op op;
    const unsigned lane = threadIdx.x % 32;
    const unsigned long long warps = gridDim.x * (BLOCK / 32);
    // 64-bit counters: offsets reach 2^32 - 1, where a 32-bit i + 32 would
    // wrap and read the segment again.
    for (unsigned long long s = blockIdx.x * (BLOCK / 32) + threadIdx.x / 32; s < nseg; s += warps) {
        const unsigned long long begin = offsets[s], end = offsets[s + 1];
        value_t v = Op::template identity<value_t>();
        for (unsigned long long i = begin + lane; i < end; i += 32) v = op(v, x[i]);
        v = warpmc::warp_reduce(v, op);
        if (lane == 0) out[s] = v;
    }
}

// ---- compaction -------------------------------------------------------------------

__device__ __forceinline__ bool keeps(value_t v, unsigned kind, value_t threshold) {
    switch (kind) {
        case PRIMS_SELECT_NON_ZERO: return v != value_t(0);
        case PRIMS_SELECT_GREATER_THAN: return v > threshold;
        default: return v < threshold;  // PRIMS_SELECT_LESS_THAN
    }
}

// Single pass, stable: tile-local counts and offsets, the tile's output
// offset by look-back over the counts, then the kept elements are packed in
// shared memory and written contiguously. The tile numbered last writes the
// total count.
__device__ void select_if(const value_t *__restrict__ x, unsigned long long n, unsigned kind, value_t threshold,
                          value_t *__restrict__ out, warpmc::lookback::State<unsigned> st,
                          unsigned long long ntiles, unsigned *__restrict__ total) {
    const OpSum sum;
    __shared__ value_t s_stage[STAGE];
    __shared__ unsigned s_warp[WARPS];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const unsigned tile = warpmc::lookback::take_ticket(st);
    const unsigned long long tile_base = (unsigned long long)tile * TILE;
    const unsigned long long base = tile_base + (unsigned long long)warp * 32 * ITEMS;
    const int wbase = warp * 32 * ITEMS;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        unsigned long long g = base + i * 32 + lane;
        s_stage[padded(wbase + i * 32 + lane)] = g < n ? __ldcs(&x[g]) : value_t(0);
    }
    __syncwarp();
    value_t v[ITEMS];
    unsigned mask = 0, count = 0;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        v[i] = s_stage[padded(wbase + lane * ITEMS + i)];
        unsigned long long g = base + lane * ITEMS + i;
        bool k = g < n && keeps(v[i], kind, threshold);
        mask |= (unsigned)k << i;
        count += k;
    }
    unsigned incl = count;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        unsigned o = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d) incl += o;
    }
    if (lane == 31) s_warp[warp] = incl;
    __syncthreads();
    unsigned warp_prefix = 0, block_total = 0;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) {
        if (w < warp) warp_prefix += s_warp[w];
        block_total += s_warp[w];
    }
    const unsigned tile_prefix = warpmc::lookback::exclusive_prefix(st, tile, block_total, sum, 0u);
    // Pack the tile's kept elements in order at the front of the stage.
    __syncthreads();  // every warp has finished reading the stage
    unsigned pos = warp_prefix + incl - count;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i)
        if (mask >> i & 1) s_stage[padded(pos++)] = v[i];
    __syncthreads();
    for (unsigned k = threadIdx.x; k < block_total; k += BLOCK) out[tile_prefix + k] = s_stage[padded(k)];
    if (tile == ntiles - 1 && threadIdx.x == 0) *total = tile_prefix + block_total;
}

// ---- entry points ---------------------------------------------------------------

// The look-back state: `ticket` (one counter) and `status` (16 bytes per
// tile), kept by the host between launches (see lookback.cuh's State).
template <class V>
__device__ __forceinline__ warpmc::lookback::State<V> lookback_state(unsigned *ticket, void *status,
                                                                     unsigned ticket_base, unsigned epoch) {
    return warpmc::lookback::State<V>{(unsigned long long *)status, ticket, ticket_base, epoch};
}

#define DEVICE_OPS(name, Op)                                                                                   \
    extern "C" __global__ void __launch_bounds__(BLOCK) reduce_partial_##name(                                      \
        const value_t *x, unsigned long long n, value_t *partials) {                                                  \
        reduce_partial<Op>(x, n, partials);                                                                           \
    }                                                                                                                 \
    extern "C" __global__ void __launch_bounds__(BLOCK) reduce_final_##name(const value_t *partials, unsigned count,  \
                                                                             value_t *out) {                          \
        reduce_final<Op>(partials, count, out);                                                                       \
    }                                                                                                                 \
    extern "C" __global__ void __launch_bounds__(SCAN_BLOCK, 1536 / SCAN_BLOCK) scan_##name(const value_t *x, value_t *y,                   \
                                                                     unsigned long long n, int inclusive,             \
                                                                     unsigned *ticket, void *status,                  \
                                                                     unsigned ticket_base, unsigned epoch) {          \
        scan<Op>(x, y, n, inclusive, lookback_state<value_t>(ticket, status, ticket_base, epoch));                    \
    }                                                                                                                 \
    extern "C" __global__ void __launch_bounds__(BLOCK) segmented_reduce_##name(                                    \
        const value_t *x, const unsigned *offsets, unsigned nseg, value_t *out) {                                     \
        segmented_reduce<Op>(x, offsets, nseg, out);                                                                  \
    }

DEVICE_OPS(sum, OpSum)
DEVICE_OPS(min, OpMin)
DEVICE_OPS(max, OpMax)

extern "C" __global__ void __launch_bounds__(BLOCK)
    select_if_kernel(const value_t *x, unsigned long long n, unsigned kind, value_t threshold, value_t *out,
                     unsigned *ticket, void *status, unsigned ticket_base, unsigned epoch,
                     unsigned long long ntiles, unsigned *total) {
    select_if(x, n, kind, threshold, out, lookback_state<unsigned>(ticket, status, ticket_base, epoch), ntiles,
              total);
}
