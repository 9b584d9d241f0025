// shuffle_bench.cu: the timing experiments of "Shuffle: Tips and Tricks"
// (Julien Demouth, NVIDIA, GTC 2013), slides 7-21, as literal kernels.
//
// Self-contained on purpose (no warp.cuh): these are Demouth's
// experiments, written the way the slides write them, so that their
// timings mean what the slides' charts mean.
//
// Compiled once per element type; the host (crates/bench/src/shuffle.rs)
// passes the values it launches with:
//   BENCH_SHUFFLE_ELEM                    float, double or int
//   BENCH_SHUFFLE_BLOCK,                  threads per block and resident
//   BENCH_SHUFFLE_MIN_BLOCKS              blocks per SM of the one-word
//                                         experiments (1024 and 2)
//   BENCH_SHUFFLE_TRANSPOSE_BLOCK,        the same for the transpose (256
//   BENCH_SHUFFLE_TRANSPOSE_MIN_BLOCKS    and 8): as in the slides, enough
//                                         threads to fill an SM of 2048
//   BENCH_SHUFFLE_TRANSPOSE_WORDS         words per lane of the transpose (7)
//   BENCH_SHUFFLE_PREDICATE_SCAN          1: the predicate scan exists (0
//                                         for double: its PTX moves one
//                                         32-bit register)
//
// Protocol (slide 8): every thread reads its input once, applies the
// experiment's warp operation `reps` times in a loop whose every iteration
// takes the previous one's result, and writes the result once:
//
//     T x = input[tid];
//     for (int i = 0; i < reps; ++i) x = op(x);
//     output[tid] = x;
//
// Experiments (each kernel is <experiment>_<variant>):
//   neighbour   x = x of lane (lane+1)%32                        (slides 7-12)
//   broadcast   x = x + (c - 2*(x of lane 0))                    (slide 13)
//   reduce      x = x + (c - 2*m), m = (xor-butterfly sum)/32    (slide 14)
//   scan        x = (shfl_up inclusive scan of the warp) - b     (slides 15-16)
//   sort        x = -(bitonic sort of the warp's 32 keys)        (slides 17-19)
//   transpose   7 words per lane, coalesced -> per-lane struct   (slides 20-21)
// c and b are constants read once from `aux` (c: odd, the same for the 32
// lanes of a warp). They keep the values bounded and exactly representable
// in every type while making every iteration change them, so that the host
// knows the exact result of any iteration count and a wrong value cannot
// be forgotten by later iterations (a stale read, a lost iteration or an
// overflow shows):
//   neighbour: a rotation, period 32;
//   broadcast: lane 0 alternates a, c - a (c odd: never equal) and every
//     lane keeps its own history, period 2;
//   reduce: the warp mean alternates m, c - m in the same way, period 2;
//   scan: the host picks x = x* + d with b the exclusive scan of x* and d
//     non-zero in lanes 30 and 31 only, so lane 31 drifts by d[30] per
//     iteration and the rest stay put;
//   sort: ascending keys negated, then descending ones, period 2;
//   transpose: the permutation's own period.
// These cost at most three arithmetic instructions per iteration, the same
// in every variant; neighbour and transpose are the bare exchange.
//
// Variants, each exchange of one value between lanes written as
//   SMEM                 slot[lane] = x; __syncthreads(); y = slot[src]; __syncthreads();
//   SMEM (unsafe)        volatile slots, no barrier at all: the slides'
//                        "warp-synchronous" trick. Since Volta (independent
//                        thread scheduling) the lanes of a warp are not
//                        guaranteed to run in lockstep, and this is a data
//                        race; it is kept because the slides time it.
//   SMEM + __syncwarp()  __syncwarp() in place of both barriers: the correct
//                        modern form of the warp-synchronous version.
//   SHFL                 __shfl_sync / __shfl_xor_sync / __shfl_up_sync.
//   SHFL (predicate PTX) scan only, fp32 and int32: slide 16's inline PTX,
//                        shfl.sync.up.b32 r|p ...; @p add ... .
// The second barrier of SMEM is needed: without it a lane that runs ahead
// into the next exchange would overwrite its slot before a slower lane has
// read it. (Slide 9 writes SMEM as `smem[tid] = smem[32*warpid + src];
// __syncthreads();`, the value living in shared memory and one barrier per
// exchange; that form leans on the lanes of a warp loading before any of
// them stores, lockstep again, so here the value lives in a register and
// every exchange is store, barrier, load, barrier.)
// Every variant performs the same arithmetic in the same order (the smem
// exchanges follow the shuffle's lane pattern), so all give bit-identical
// results, which the host checks against a CPU emulation.
//
// All 32 lanes of every warp run every kernel to the end (the host launches
// exactly blocks x threads, a multiple of 32, and sizes the buffers to it),
// as the full-mask shuffles and the barriers require.

#if !defined(BENCH_SHUFFLE_ELEM) || !defined(BENCH_SHUFFLE_BLOCK) || !defined(BENCH_SHUFFLE_MIN_BLOCKS) ||         \
    !defined(BENCH_SHUFFLE_TRANSPOSE_BLOCK) || !defined(BENCH_SHUFFLE_TRANSPOSE_MIN_BLOCKS) ||                  \
    !defined(BENCH_SHUFFLE_TRANSPOSE_WORDS) || !defined(BENCH_SHUFFLE_PREDICATE_SCAN)
#error "shuffle_bench.cu takes its element type, launch shapes and variants from the host (BENCH_SHUFFLE_*)"
#endif

#define SHFL_BLOCK BENCH_SHUFFLE_BLOCK
#define SHFL_MINB BENCH_SHUFFLE_MIN_BLOCKS
#define SHFL_TBLOCK BENCH_SHUFFLE_TRANSPOSE_BLOCK
#define SHFL_TMINB BENCH_SHUFFLE_TRANSPOSE_MIN_BLOCKS

typedef BENCH_SHUFFLE_ELEM elem;

#define FULL_MASK 0xffffffffu
// Words per lane of the transpose experiment ("7*int32", slide 21).
#define WORDS BENCH_SHUFFLE_TRANSPOSE_WORDS
static_assert(WORDS == 7, "the shuffle transpose's rotations are written for 7 words per lane");

enum Exp { NEIGHBOUR, BROADCAST, REDUCE, SCAN, SORT };
// How the shared-memory exchanges synchronise.
enum Sync { SYNC_BLOCK, SYNC_NONE, SYNC_WARP };

// ---------------------------------------------------------------------------
// Exchanges: what a lane receives when every lane of the warp offers x.

struct Shfl {
    __device__ __forceinline__ elem idx(elem x, int src) const { return __shfl_sync(FULL_MASK, x, src); }
    __device__ __forceinline__ elem bfly(elem x, int mask) const { return __shfl_xor_sync(FULL_MASK, x, mask); }
    // Lanes below d get their own x back, as shfl.up does.
    __device__ __forceinline__ elem up(elem x, int d) const { return __shfl_up_sync(FULL_MASK, x, d); }
};

template <int S>
struct SlotType {
    typedef elem type;
};
template <>
struct SlotType<SYNC_NONE> {
    typedef volatile elem type;
};

template <int S>
__device__ __forceinline__ void exchange_sync() {
    if (S == SYNC_BLOCK) __syncthreads();
    if (S == SYNC_WARP) __syncwarp();
}

// Through this warp's 32 slots of shared memory.
template <int S>
struct Smem {
    typename SlotType<S>::type *slot;  // this warp's 32 slots
    int lane;

    __device__ __forceinline__ elem idx(elem x, int src) const {
        slot[lane] = x;
        exchange_sync<S>();
        elem y = slot[src];
        exchange_sync<S>();
        return y;
    }
    __device__ __forceinline__ elem bfly(elem x, int mask) const { return idx(x, lane ^ mask); }
    __device__ __forceinline__ elem up(elem x, int d) const { return idx(x, lane >= d ? lane - d : lane); }
};

// ---------------------------------------------------------------------------
// The operations.

// bfe(i, k): bit k of i, with the PTX instruction the slides name
// ("bfe dst, src, start, len").
__device__ __forceinline__ unsigned bfe(unsigned i, unsigned k) {
    unsigned r;
    asm("bfe.u32 %0, %1, %2, 1;" : "=r"(r) : "r"(i), "r"(k));
    return r;
}

// x/32 of a sum: exact for floats; an arithmetic shift for int (exact for the
// multiples of 32 that the host's inputs keep the warp sums at).
__device__ __forceinline__ float div32(float s) { return s * 0.03125f; }
__device__ __forceinline__ double div32(double s) { return s * 0.03125; }
__device__ __forceinline__ int div32(int s) { return s >> 5; }

// Slide 19's compare-exchange: keep the partner's key when (x < y) == dir.
template <class X>
__device__ __forceinline__ elem swap(const X &xc, elem x, int mask, unsigned dir) {
    elem y = xc.bfly(x, mask);
    return (x < y) == (dir != 0) ? y : x;
}

template <class X>
__device__ __forceinline__ elem bitonic_sort(const X &xc, elem x, unsigned lane) {
    x = swap(xc, x, 0x01, bfe(lane, 1) ^ bfe(lane, 0));  // 2
    x = swap(xc, x, 0x02, bfe(lane, 2) ^ bfe(lane, 1));  // 4
    x = swap(xc, x, 0x01, bfe(lane, 2) ^ bfe(lane, 0));
    x = swap(xc, x, 0x04, bfe(lane, 3) ^ bfe(lane, 2));  // 8
    x = swap(xc, x, 0x02, bfe(lane, 3) ^ bfe(lane, 1));
    x = swap(xc, x, 0x01, bfe(lane, 3) ^ bfe(lane, 0));
    x = swap(xc, x, 0x08, bfe(lane, 4) ^ bfe(lane, 3));  // 16
    x = swap(xc, x, 0x04, bfe(lane, 4) ^ bfe(lane, 2));
    x = swap(xc, x, 0x02, bfe(lane, 4) ^ bfe(lane, 1));
    x = swap(xc, x, 0x01, bfe(lane, 4) ^ bfe(lane, 0));
    x = swap(xc, x, 0x10, bfe(lane, 4));  // 32
    x = swap(xc, x, 0x08, bfe(lane, 3));
    x = swap(xc, x, 0x04, bfe(lane, 2));
    x = swap(xc, x, 0x02, bfe(lane, 1));
    x = swap(xc, x, 0x01, bfe(lane, 0));
    return x;
}

// One iteration of experiment E; a is this thread's constant from `aux`.
template <int E, class X>
__device__ __forceinline__ elem step(const X &xc, elem x, unsigned lane, elem a) {
    if constexpr (E == NEIGHBOUR) {
        return xc.idx(x, (lane + 1) & 31);
    } else if constexpr (E == BROADCAST) {
        const elem y = xc.idx(x, 0);
        return x + (a - (y + y));
    } else if constexpr (E == REDUCE) {
        elem s = x;
#pragma unroll
        for (int mask = 16; mask > 0; mask >>= 1) s += xc.bfly(s, mask);
        const elem m = div32(s);
        return x + (a - (m + m));
    } else if constexpr (E == SCAN) {
#pragma unroll
        for (int offset = 1; offset < 32; offset <<= 1) {
            elem y = xc.up(x, offset);
            if (lane >= offset) x += y;
        }
        return x - a;
    } else {
        return -bitonic_sort(xc, x, lane);
    }
}

// Slide 16: the scan step with the predicate that shfl.up sets when the
// source lane exists (lane >= offset); out of range, r0 is the lane's own x
// and the add is skipped.
__device__ __forceinline__ float scan_step_pred(float x, int offset) {
    asm volatile(
        "{\n\t"
        ".reg .f32 r0;\n\t"
        ".reg .pred p;\n\t"
        "shfl.sync.up.b32 r0|p, %0, %1, 0x0, 0xffffffff;\n\t"
        "@p add.f32 r0, r0, %0;\n\t"
        "mov.f32 %0, r0;\n\t"
        "}"
        : "+f"(x)
        : "r"(offset));
    return x;
}
__device__ __forceinline__ int scan_step_pred(int x, int offset) {
    asm volatile(
        "{\n\t"
        ".reg .s32 r0;\n\t"
        ".reg .pred p;\n\t"
        "shfl.sync.up.b32 r0|p, %0, %1, 0x0, 0xffffffff;\n\t"
        "@p add.s32 r0, r0, %0;\n\t"
        "mov.s32 %0, r0;\n\t"
        "}"
        : "+r"(x)
        : "r"(offset));
    return x;
}

// ---------------------------------------------------------------------------
// The loop of slide 8.

template <int E, class X>
__device__ __forceinline__ void run(const X &xc, const elem *__restrict__ in, const elem *__restrict__ aux,
                                    elem *__restrict__ out, int reps) {
    const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned lane = threadIdx.x & 31;
    elem x = in[tid];
    const elem a = aux[tid];
    for (int i = 0; i < reps; ++i) x = step<E>(xc, x, lane, a);
    out[tid] = x;
}

#define SHFL_ARGS const elem *__restrict__ in, const elem *__restrict__ aux, elem *__restrict__ out, int reps

#define SMEM_KERNEL(NAME, E, S)                                                          \
    extern "C" __global__ void __launch_bounds__(SHFL_BLOCK, SHFL_MINB) NAME(SHFL_ARGS) { \
        __shared__ elem slots[SHFL_BLOCK];                                               \
        Smem<S> xc;                                                                      \
        xc.slot = slots + (threadIdx.x & ~31u);                                          \
        xc.lane = threadIdx.x & 31;                                                      \
        run<E>(xc, in, aux, out, reps);                                                  \
    }

#define EXPERIMENT(NAME, E)                                                                            \
    SMEM_KERNEL(NAME##_smem, E, SYNC_BLOCK)                                                            \
    SMEM_KERNEL(NAME##_smem_unsafe, E, SYNC_NONE)                                                      \
    SMEM_KERNEL(NAME##_smem_syncwarp, E, SYNC_WARP)                                                    \
    extern "C" __global__ void __launch_bounds__(SHFL_BLOCK, SHFL_MINB) NAME##_shfl(SHFL_ARGS) { \
        run<E>(Shfl(), in, aux, out, reps);                                                            \
    }

EXPERIMENT(neighbour, NEIGHBOUR)
EXPERIMENT(broadcast, BROADCAST)
EXPERIMENT(reduce, REDUCE)
EXPERIMENT(scan, SCAN)
EXPERIMENT(sort, SORT)

// Slide 16's "with predicate" scan (the PTX above exists for 32-bit types:
// fp32 and int32).
#if BENCH_SHUFFLE_PREDICATE_SCAN
extern "C" __global__ void __launch_bounds__(SHFL_BLOCK, SHFL_MINB) scan_shfl_pred(SHFL_ARGS) {
    const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    elem x = in[tid];
    const elem b = aux[tid];
    for (int i = 0; i < reps; ++i) {
#pragma unroll
        for (int offset = 1; offset < 32; offset <<= 1) x = scan_step_pred(x, offset);
        x = x - b;
    }
    out[tid] = x;
}
#endif

// ---------------------------------------------------------------------------
// Transpose (slides 20-21): each lane holds WORDS = 7 registers. Before: the
// layout of a coalesced load, register j of lane l holds word 32*j + l of the
// warp's 32 structures of 7 words (224 words). After: lane l holds its own
// structure, register j = word 7*l + j. The loop applies this same
// permutation again and again (the data cycle through the permutation's
// orbits), and the kernel reads and writes in the coalesced layout:
// in[warp*224 + 32*j + lane] and out[warp*224 + 32*j + lane].

template <int S>
__device__ __forceinline__ void run_transpose_smem(const elem *__restrict__ in, elem *__restrict__ out, int reps) {
    __shared__ elem words[SHFL_TBLOCK * WORDS];
    const unsigned lane = threadIdx.x & 31;
    const unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    typename SlotType<S>::type *w = words + (threadIdx.x & ~31u) * WORDS;  // this warp's 224 words
    elem x[WORDS];
#pragma unroll
    for (int j = 0; j < WORDS; ++j) x[j] = in[warp * (32 * WORDS) + 32 * j + lane];
    for (int i = 0; i < reps; ++i) {
        // Coalesced layout in (conflict-free: consecutive lanes, consecutive
        // words), structure layout out (stride 7, odd: conflict-free too).
#pragma unroll
        for (int j = 0; j < WORDS; ++j) w[32 * j + lane] = x[j];
        exchange_sync<S>();
#pragma unroll
        for (int j = 0; j < WORDS; ++j) x[j] = w[WORDS * lane + j];
        exchange_sync<S>();
    }
#pragma unroll
    for (int j = 0; j < WORDS; ++j) out[warp * (32 * WORDS) + 32 * j + lane] = x[j];
}

// u <- u rotated right by C (u[k] = old u[(k - C) mod 7]) where p holds:
// after unrolling, 7 selects with static register indices. Written in place
// along the rotation's single cycle (C and 7 are coprime), so that only one
// old value is kept aside: fp64 then fits the 32 registers that 2048
// resident threads per SM allow.
template <int C>
__device__ __forceinline__ void rotate_right_if(elem (&u)[WORDS], bool p) {
    const elem first = u[0];
    int k = 0;
#pragma unroll
    for (int n = 0; n < WORDS - 1; ++n) {
        const int from = (k - C + WORDS) % WORDS;
        u[k] = p ? u[from] : u[k];
        k = from;
    }
    u[k] = p ? first : u[k];
}

// The shuffle transpose (the decomposition of Catanzaro, Keller and Garland
// that trove uses, specialised to 7 x 32). Word w = 32*R + s (lane s,
// register R before) = 7*L + J (lane L, register J after). Round k of 7
// moves the words with J = k: lane L receives word 7L + k from lane
// s = (7L + k) % 32, and that sender offers its register R = 2(k - s) mod 7
// (32 = 4 mod 7 and 4*2 = 1 mod 7). Sender side: a static renaming
// v[k] = x[2k mod 7] and a rotation right by s mod 7 (three conditional
// rotations by 1, 2, 4) put that register at index k, so every round is
// one shuffle of register k: 7 shuffles and 21 selects per transpose.
__device__ __forceinline__ void run_transpose_shfl(const elem *__restrict__ in, elem *__restrict__ out, int reps) {
    const unsigned lane = threadIdx.x & 31;
    const unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const unsigned rot = lane % WORDS;
    elem x[WORDS];
#pragma unroll
    for (int j = 0; j < WORDS; ++j) x[j] = in[warp * (32 * WORDS) + 32 * j + lane];
    for (int i = 0; i < reps; ++i) {
        elem u[WORDS];
#pragma unroll
        for (int k = 0; k < WORDS; ++k) u[k] = x[(2 * k) % WORDS];
        rotate_right_if<1>(u, rot & 1);
        rotate_right_if<2>(u, rot & 2);
        rotate_right_if<4>(u, rot & 4);
#pragma unroll
        for (int k = 0; k < WORDS; ++k) x[k] = __shfl_sync(FULL_MASK, u[k], (WORDS * lane + k) & 31);
    }
#pragma unroll
    for (int j = 0; j < WORDS; ++j) out[warp * (32 * WORDS) + 32 * j + lane] = x[j];
}

// `aux` is unused by the transposes; the parameter keeps one signature for
// every kernel of this file.
#define TRANSPOSE_SMEM_KERNEL(NAME, S)                                                     \
    extern "C" __global__ void __launch_bounds__(SHFL_TBLOCK, SHFL_TMINB) NAME(SHFL_ARGS) { \
        (void)aux;                                                                         \
        run_transpose_smem<S>(in, out, reps);                                              \
    }

TRANSPOSE_SMEM_KERNEL(transpose_smem, SYNC_BLOCK)
TRANSPOSE_SMEM_KERNEL(transpose_smem_unsafe, SYNC_NONE)
TRANSPOSE_SMEM_KERNEL(transpose_smem_syncwarp, SYNC_WARP)

extern "C" __global__ void __launch_bounds__(SHFL_TBLOCK, SHFL_TMINB) transpose_shfl(SHFL_ARGS) {
    (void)aux;
    run_transpose_shfl(in, out, reps);
}
