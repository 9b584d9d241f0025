// warp.cuh: warp-level primitives built on shuffles and votes.
//
// Everything here is a __device__ __forceinline__ function with full-warp
// semantics: all 32 lanes of the warp must call it together, with the same
// template arguments, in converged code (the *_sync intrinsics are given the
// full mask 0xffffffff). A kernel whose thread count is not a multiple of 32
// must keep its tail lanes alive through these calls (load an identity
// instead of returning early).
//
// Element types: any 4- or 8-byte type. int, unsigned, long long,
// unsigned long long, float and double have explicit bit views (the
// __float_as_uint family); other types of those sizes go through memcpy,
// which the compiler turns into register moves. A shuffle moves 32 bits,
// so an 8-byte value costs two shuffles (low and high half), as in the
// "Shuffle: Tips and Tricks" slides (Demouth, GTC 2013).
//
// Contents:
//   lane_id, lanemask_lt
//   Sum, Min, Max                      operators with identity<T>()
//   shfl, shfl_up, shfl_down, shfl_xor
//   broadcast, broadcast_last
//   warp_reduce
//   warp_inclusive_scan, warp_exclusive_scan, warp_inclusive_scan_pred
//   bitonic_sort, bitonic_sort_pairs
//   warp_c2r, warp_r2c, warp_load_structs, warp_store_structs
//   CompactSlot, warp_slot, warp_compact, warp_append
#pragma once

namespace warpmc {

constexpr int kWarpSize = 32;
constexpr unsigned kFullMask = 0xffffffffu;

// %laneid rather than threadIdx.x % 32: correct for any block shape.
__device__ __forceinline__ unsigned lane_id() {
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}

// Bit i set for every lane i below this one.
__device__ __forceinline__ unsigned lanemask_lt() {
    unsigned mask;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(mask));
    return mask;
}

namespace detail {

// ---------------------------------------------------------------------------
// Bit views: a value as the unsigned integer of its size, and back. Shuffles
// move raw bits, so no conversion may round or reinterpret a value.

template <class T, int Size = sizeof(T)>
struct Bits {
    static_assert(Size == 4 || Size == 8, "warpmc warp functions take 4- or 8-byte types");
};

template <class T>
struct Bits<T, 4> {
    typedef unsigned U;
    static __device__ __forceinline__ U to(T x) {
        U u;
        memcpy(&u, &x, 4);
        return u;
    }
    static __device__ __forceinline__ T from(U u) {
        T x;
        memcpy(&x, &u, 4);
        return x;
    }
};

template <class T>
struct Bits<T, 8> {
    typedef unsigned long long U;
    static __device__ __forceinline__ U to(T x) {
        U u;
        memcpy(&u, &x, 8);
        return u;
    }
    static __device__ __forceinline__ T from(U u) {
        T x;
        memcpy(&x, &u, 8);
        return x;
    }
};

// The element types of the crate get intrinsics, which say plainly that
// nothing but a reinterpretation happens.
template <>
struct Bits<int, 4> {
    typedef unsigned U;
    static __device__ __forceinline__ U to(int x) { return (U)x; }
    static __device__ __forceinline__ int from(U u) { return (int)u; }
};
template <>
struct Bits<unsigned, 4> {
    typedef unsigned U;
    static __device__ __forceinline__ U to(unsigned x) { return x; }
    static __device__ __forceinline__ unsigned from(U u) { return u; }
};
template <>
struct Bits<float, 4> {
    typedef unsigned U;
    static __device__ __forceinline__ U to(float x) { return __float_as_uint(x); }
    static __device__ __forceinline__ float from(U u) { return __uint_as_float(u); }
};
template <>
struct Bits<long long, 8> {
    typedef unsigned long long U;
    static __device__ __forceinline__ U to(long long x) { return (U)x; }
    static __device__ __forceinline__ long long from(U u) { return (long long)u; }
};
template <>
struct Bits<unsigned long long, 8> {
    typedef unsigned long long U;
    static __device__ __forceinline__ U to(unsigned long long x) { return x; }
    static __device__ __forceinline__ unsigned long long from(U u) { return u; }
};
template <>
struct Bits<double, 8> {
    typedef unsigned long long U;
    static __device__ __forceinline__ U to(double x) { return (U)__double_as_longlong(x); }
    static __device__ __forceinline__ double from(U u) { return __longlong_as_double((long long)u); }
};

// ---------------------------------------------------------------------------
// Raw 32-bit shuffles by mode, and the 64-bit version as two of them.

enum ShflMode { SHFL_IDX, SHFL_UP, SHFL_DOWN, SHFL_XOR };

template <ShflMode Mode>
__device__ __forceinline__ unsigned shfl_word(unsigned w, int arg, int width) {
    if constexpr (Mode == SHFL_IDX) {
        return __shfl_sync(kFullMask, w, arg, width);
    } else if constexpr (Mode == SHFL_UP) {
        return __shfl_up_sync(kFullMask, w, (unsigned)arg, width);
    } else if constexpr (Mode == SHFL_DOWN) {
        return __shfl_down_sync(kFullMask, w, (unsigned)arg, width);
    } else {
        return __shfl_xor_sync(kFullMask, w, arg, width);
    }
}

template <ShflMode Mode>
__device__ __forceinline__ unsigned long long shfl_word(unsigned long long w, int arg, int width) {
    // Both halves use the same source lane, so they stay one value; the
    // split and the join are register renames, not instructions.
    const unsigned lo = shfl_word<Mode>((unsigned)w, arg, width);
    const unsigned hi = shfl_word<Mode>((unsigned)(w >> 32), arg, width);
    return ((unsigned long long)hi << 32) | lo;
}

template <ShflMode Mode, class T>
__device__ __forceinline__ T shfl_any(T x, int arg, int width) {
    typedef Bits<T> B;
    return B::from(shfl_word<Mode>(B::to(x), arg, width));
}

// ---------------------------------------------------------------------------
// Arithmetic of the operators. Signed integer sums wrap (two's complement,
// like Rust's wrapping_add) instead of being undefined on overflow.

template <class T>
__device__ __forceinline__ T add(T a, T b) { return a + b; }
__device__ __forceinline__ int add(int a, int b) { return (int)((unsigned)a + (unsigned)b); }
__device__ __forceinline__ long long add(long long a, long long b) {
    return (long long)((unsigned long long)a + (unsigned long long)b);
}

// fminf/fmaxf/fmin/fmax return the other operand when one is NaN (IEEE
// minNum/maxNum, like Rust's f32::min); a plain compare would let a NaN
// win or lose depending on the operand order.
template <class T>
__device__ __forceinline__ T min_of(T a, T b) { return b < a ? b : a; }
template <class T>
__device__ __forceinline__ T max_of(T a, T b) { return a < b ? b : a; }
__device__ __forceinline__ float min_of(float a, float b) { return fminf(a, b); }
__device__ __forceinline__ float max_of(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double min_of(double a, double b) { return fmin(a, b); }
__device__ __forceinline__ double max_of(double a, double b) { return fmax(a, b); }

// Type limits, without <climits>/<cfloat> (NVRTC has no standard headers).
// For floats the "largest" value is +infinity, so it is an identity of min
// even for inputs that are infinite.
template <class T> struct Limits;
template <> struct Limits<int> {
    static __device__ __forceinline__ int lowest() { return -2147483647 - 1; }
    static __device__ __forceinline__ int highest() { return 2147483647; }
};
template <> struct Limits<unsigned> {
    static __device__ __forceinline__ unsigned lowest() { return 0u; }
    static __device__ __forceinline__ unsigned highest() { return 0xffffffffu; }
};
template <> struct Limits<long long> {
    static __device__ __forceinline__ long long lowest() { return -9223372036854775807LL - 1; }
    static __device__ __forceinline__ long long highest() { return 9223372036854775807LL; }
};
template <> struct Limits<unsigned long long> {
    static __device__ __forceinline__ unsigned long long lowest() { return 0ull; }
    static __device__ __forceinline__ unsigned long long highest() { return 0xffffffffffffffffull; }
};
template <> struct Limits<float> {
    static __device__ __forceinline__ float lowest() { return __uint_as_float(0xff800000u); }
    static __device__ __forceinline__ float highest() { return __uint_as_float(0x7f800000u); }
};
template <> struct Limits<double> {
    static __device__ __forceinline__ double lowest() { return __longlong_as_double((long long)0xfff0000000000000ull); }
    static __device__ __forceinline__ double highest() { return __longlong_as_double(0x7ff0000000000000ll); }
};

}  // namespace detail

// ---------------------------------------------------------------------------
// Operators. Each is associative and commutative, so a butterfly gives every
// lane the same bits; identity<T>() is what an empty range reduces to and
// what lane 0 gets from an exclusive scan.

struct Sum {
    template <class T>
    __device__ __forceinline__ T operator()(T a, T b) const { return detail::add(a, b); }
    template <class T>
    static __device__ __forceinline__ T identity() { return T(0); }
};

struct Min {
    template <class T>
    __device__ __forceinline__ T operator()(T a, T b) const { return detail::min_of(a, b); }
    template <class T>
    static __device__ __forceinline__ T identity() { return detail::Limits<T>::highest(); }
};

struct Max {
    template <class T>
    __device__ __forceinline__ T operator()(T a, T b) const { return detail::max_of(a, b); }
    template <class T>
    static __device__ __forceinline__ T identity() { return detail::Limits<T>::lowest(); }
};

// ---------------------------------------------------------------------------
// Shuffles of any 4- or 8-byte type. `width` (a power of two up to 32)
// splits the warp into independent segments, as in the CUDA intrinsics.

// x from lane `src_lane` (taken modulo width).
template <class T>
__device__ __forceinline__ T shfl(T x, int src_lane, int width = kWarpSize) {
    return detail::shfl_any<detail::SHFL_IDX>(x, src_lane, width);
}

// x from lane - delta; lanes below delta keep their own x. delta < width
// (the hardware reads only its low five bits).
template <class T>
__device__ __forceinline__ T shfl_up(T x, unsigned delta, int width = kWarpSize) {
    return detail::shfl_any<detail::SHFL_UP>(x, (int)delta, width);
}

// x from lane + delta; lanes with lane + delta >= width keep their own x.
// delta < width, as for shfl_up.
template <class T>
__device__ __forceinline__ T shfl_down(T x, unsigned delta, int width = kWarpSize) {
    return detail::shfl_any<detail::SHFL_DOWN>(x, (int)delta, width);
}

// x from lane ^ lane_mask (the butterfly of reductions and sorting networks).
template <class T>
__device__ __forceinline__ T shfl_xor(T x, int lane_mask, int width = kWarpSize) {
    return detail::shfl_any<detail::SHFL_XOR>(x, lane_mask, width);
}

// ---------------------------------------------------------------------------
// Broadcasts.

// Every lane gets lane `src_lane`'s x.
template <class T>
__device__ __forceinline__ T broadcast(T x, int src_lane) {
    return shfl(x, src_lane);
}

// Every lane gets x of the highest lane whose `pred` holds (the "last"
// match, e.g. the last element of a run that passes a test). If no lane's
// pred holds, each lane keeps its own x and *found is false. `found` may be
// null.
template <class T>
__device__ __forceinline__ T broadcast_last(T x, bool pred, bool *found) {
    const unsigned vote = __ballot_sync(kFullMask, pred);
    if (found) *found = vote != 0u;
    // The vote is the same in every lane, so this branch never diverges and
    // the shuffle below still has the whole warp.
    if (vote == 0u) return x;
    // bfind gives the position of the most significant set bit; on an
    // empty vote it would give 0xffffffff, hence the test above.
    unsigned last;
    asm("bfind.u32 %0, %1;" : "=r"(last) : "r"(vote));
    return shfl(x, (int)last);
}

// ---------------------------------------------------------------------------
// Reduction: a butterfly (xor 16, 8, 4, 2, 1). Unlike the shift-down tree,
// every lane ends with the full result, which callers usually want next
// (a normalisation, a broadcast of a total), and it costs the same five
// shuffles. Lane l computes op(own, partner) and its partner op(partner,
// own); the operators are commutative, so the bits agree across lanes
// (float min/max of -0 and +0 aside, where IEEE leaves the choice open).
template <class T, class Op>
__device__ __forceinline__ T warp_reduce(T x, Op op) {
#pragma unroll
    for (int mask = kWarpSize / 2; mask > 0; mask >>= 1) x = op(x, shfl_xor(x, mask));
    return x;
}

// ---------------------------------------------------------------------------
// Scans (Hillis-Steele over shfl_up: five steps, log2(32)). The earlier
// prefix is always the left operand, so the scans would also be right for
// an associative operator that does not commute.

// Lane l gets x[0] op x[1] op ... op x[l].
template <class T, class Op>
__device__ __forceinline__ T warp_inclusive_scan(T x, Op op) {
    const unsigned lane = lane_id();
#pragma unroll
    for (unsigned offset = 1; offset < kWarpSize; offset <<= 1) {
        const T y = shfl_up(x, offset);
        if (lane >= offset) x = op(y, x);
    }
    return x;
}

// Lane l gets x[0] op ... op x[l-1]; lane 0 gets Op's identity. One more
// shuffle than the inclusive scan: the inclusive result moved up one lane.
template <class T, class Op>
__device__ __forceinline__ T warp_exclusive_scan(T x, Op op) {
    const T inclusive = warp_inclusive_scan(x, op);
    const T before = shfl_up(inclusive, 1);
    return lane_id() == 0 ? Op::template identity<T>() : before;
}

// As above, and every lane also gets the warp's total (lane 31's inclusive
// value), which block-level scans need for their warp offsets.
template <class T, class Op>
__device__ __forceinline__ T warp_exclusive_scan(T x, Op op, T *total) {
    const T inclusive = warp_inclusive_scan(x, op);
    *total = shfl(inclusive, kWarpSize - 1);
    const T before = shfl_up(inclusive, 1);
    return lane_id() == 0 ? Op::template identity<T>() : before;
}

// Inclusive sum scan with the predicate output of shfl (the slides' "scan
// with predicate"): shfl.up sets p only where the source lane exists
// (lane >= offset), so the add is predicated on p instead of on a compare
// of the lane id, which saves the compare and the select in each of the
// five steps. The additions happen in the same order as in
// warp_inclusive_scan(x, Sum()), so the two give the same bits. The asm is
// volatile so that the compiler cannot move a collective shuffle into
// divergent code or merge it with another.
__device__ __forceinline__ float warp_inclusive_scan_pred(float x) {
#pragma unroll
    for (unsigned offset = 1; offset < kWarpSize; offset <<= 1) {
        asm volatile(
            "{\n\t"
            ".reg .f32 wy;\n\t"
            ".reg .pred wp;\n\t"
            "shfl.sync.up.b32 wy|wp, %0, %1, 0x0, 0xffffffff;\n\t"
            "@wp add.f32 %0, wy, %0;\n\t"
            "}"
            : "+f"(x)
            : "r"(offset));
    }
    return x;
}

__device__ __forceinline__ int warp_inclusive_scan_pred(int x) {
#pragma unroll
    for (unsigned offset = 1; offset < kWarpSize; offset <<= 1) {
        asm volatile(
            "{\n\t"
            ".reg .b32 wy;\n\t"
            ".reg .pred wp;\n\t"
            "shfl.sync.up.b32 wy|wp, %0, %1, 0x0, 0xffffffff;\n\t"
            "@wp add.s32 %0, wy, %0;\n\t"
            "}"
            : "+r"(x)
            : "r"(offset));
    }
    return x;
}

__device__ __forceinline__ unsigned warp_inclusive_scan_pred(unsigned x) {
#pragma unroll
    for (unsigned offset = 1; offset < kWarpSize; offset <<= 1) {
        asm volatile(
            "{\n\t"
            ".reg .b32 wy;\n\t"
            ".reg .pred wp;\n\t"
            "shfl.sync.up.b32 wy|wp, %0, %1, 0x0, 0xffffffff;\n\t"
            "@wp add.u32 %0, wy, %0;\n\t"
            "}"
            : "+r"(x)
            : "r"(offset));
    }
    return x;
}

// 64-bit versions: the two halves travel in two shuffles with the same
// source lane, so the predicate of the first one serves both.
__device__ __forceinline__ long long warp_inclusive_scan_pred(long long x) {
#pragma unroll
    for (unsigned offset = 1; offset < kWarpSize; offset <<= 1) {
        asm volatile(
            "{\n\t"
            ".reg .b32 wlo, whi;\n\t"
            ".reg .b64 wy;\n\t"
            ".reg .pred wp;\n\t"
            "mov.b64 {wlo, whi}, %0;\n\t"
            "shfl.sync.up.b32 wlo|wp, wlo, %1, 0x0, 0xffffffff;\n\t"
            "shfl.sync.up.b32 whi, whi, %1, 0x0, 0xffffffff;\n\t"
            "mov.b64 wy, {wlo, whi};\n\t"
            "@wp add.s64 %0, wy, %0;\n\t"
            "}"
            : "+l"(x)
            : "r"(offset));
    }
    return x;
}

__device__ __forceinline__ unsigned long long warp_inclusive_scan_pred(unsigned long long x) {
#pragma unroll
    for (unsigned offset = 1; offset < kWarpSize; offset <<= 1) {
        asm volatile(
            "{\n\t"
            ".reg .b32 wlo, whi;\n\t"
            ".reg .b64 wy;\n\t"
            ".reg .pred wp;\n\t"
            "mov.b64 {wlo, whi}, %0;\n\t"
            "shfl.sync.up.b32 wlo|wp, wlo, %1, 0x0, 0xffffffff;\n\t"
            "shfl.sync.up.b32 whi, whi, %1, 0x0, 0xffffffff;\n\t"
            "mov.b64 wy, {wlo, whi};\n\t"
            "@wp add.u64 %0, wy, %0;\n\t"
            "}"
            : "+l"(x)
            : "r"(offset));
    }
    return x;
}

__device__ __forceinline__ double warp_inclusive_scan_pred(double x) {
#pragma unroll
    for (unsigned offset = 1; offset < kWarpSize; offset <<= 1) {
        asm volatile(
            "{\n\t"
            ".reg .b32 wlo, whi;\n\t"
            ".reg .f64 wy;\n\t"
            ".reg .pred wp;\n\t"
            "mov.b64 {wlo, whi}, %0;\n\t"
            "shfl.sync.up.b32 wlo|wp, wlo, %1, 0x0, 0xffffffff;\n\t"
            "shfl.sync.up.b32 whi, whi, %1, 0x0, 0xffffffff;\n\t"
            "mov.b64 wy, {wlo, whi};\n\t"
            "@wp add.f64 %0, wy, %0;\n\t"
            "}"
            : "+d"(x)
            : "r"(offset));
    }
    return x;
}

// ---------------------------------------------------------------------------
// Bitonic sort of one key per lane (15 compare-exchange steps, each one
// shfl_xor).

namespace detail {

// Sort keys as integers whose order is the wanted one. Floats are mapped to
// signed integers in IEEE 754 total order (-NaN < -inf < ... < -0 < +0 <
// ... < +inf < +NaN, Rust's total_cmp): flipping the magnitude bits of
// negative numbers makes larger magnitudes smaller. The map is its own
// inverse and keeps every bit, so keys come back exactly, NaN payloads
// included. Compares of NaNs would otherwise be false both ways, and the
// network would still permute but no longer sort.
template <class T>
struct SortOrder {
    typedef T K;
    static __device__ __forceinline__ K to(T x) { return x; }
    static __device__ __forceinline__ T from(K k) { return k; }
};
template <>
struct SortOrder<float> {
    typedef int K;
    static __device__ __forceinline__ K flip(K i) { return i ^ ((i >> 31) & 0x7fffffff); }
    static __device__ __forceinline__ K to(float x) { return flip(__float_as_int(x)); }
    static __device__ __forceinline__ float from(K k) { return __int_as_float(flip(k)); }
};
template <>
struct SortOrder<double> {
    typedef long long K;
    static __device__ __forceinline__ K flip(K i) { return i ^ ((i >> 63) & 0x7fffffffffffffffll); }
    static __device__ __forceinline__ K to(double x) { return flip(__double_as_longlong(x)); }
    static __device__ __forceinline__ double from(K k) { return __longlong_as_double(flip(k)); }
};

// Whether this lane keeps the larger key of the pair (lane, lane ^ stride)
// in the merge of blocks of `size` lanes. The slides'
// bfe(lane, log2 size) ^ bfe(lane, log2 stride), written as mask tests
// because sm_70+ has no BFE instruction (ptxas expands bfe to shifts).
// Blocks with the size bit set are sorted descending, which makes each
// pair of blocks a bitonic sequence for the next merge; at size 32 the
// size bit is 0 for every lane, so the last merge is ascending.
__device__ __forceinline__ bool keeps_max(unsigned lane, unsigned size, unsigned stride) {
    return ((lane & size) != 0u) != ((lane & stride) != 0u);
}

// Whether to take the partner's key. With x = own and y = partner, the lane
// keeping the max swaps iff x < y and the lane keeping the min iff y < x.
// Both are the one strict compare "the max-keeping lane's key < the
// min-keeping lane's key", evaluated from either end of the pair, so both
// lanes swap or neither does: the step is a permutation even when keys tie,
// which the pairs sort relies on. (The slides' `(x < y) == dir ? y : x` has
// both lanes take the same key on a tie: harmless for keys alone, a lost
// value for pairs.)
template <class K>
__device__ __forceinline__ bool take_partner(K own, K partner, bool want_max) {
    return want_max ? own < partner : partner < own;
}

}  // namespace detail

// The warp's 32 keys sorted ascending: lane l gets the l-th smallest.
// Integers by value, floats in IEEE total order (-0 before +0, NaNs at the
// ends by sign). Equal keys are indistinguishable, so their order is moot.
template <class T>
__device__ __forceinline__ T bitonic_sort(T key) {
    typedef detail::SortOrder<T> O;
    typename O::K k = O::to(key);
    const unsigned lane = lane_id();
#pragma unroll
    for (unsigned size = 2; size <= kWarpSize; size <<= 1) {
#pragma unroll
        for (unsigned stride = size / 2; stride > 0; stride >>= 1) {
            const typename O::K other = shfl_xor(k, (int)stride);
            if (detail::take_partner(k, other, detail::keeps_max(lane, size, stride))) k = other;
        }
    }
    return O::from(k);
}

// Sorts the warp's 32 (key, value) pairs by key, ascending (key order as in
// bitonic_sort); value may be any 4- or 8-byte type and moves with its key.
// NOT stable: pairs with equal keys come out in an order fixed by the
// network, not by their lanes. Costs one extra shuffle per step for the
// value (two for an 8-byte value).
template <class K, class V>
__device__ __forceinline__ void bitonic_sort_pairs(K &key, V &value) {
    typedef detail::SortOrder<K> O;
    typename O::K k = O::to(key);
    const unsigned lane = lane_id();
#pragma unroll
    for (unsigned size = 2; size <= kWarpSize; size <<= 1) {
#pragma unroll
        for (unsigned stride = size / 2; stride > 0; stride >>= 1) {
            const typename O::K other = shfl_xor(k, (int)stride);
            const V other_value = shfl_xor(value, (int)stride);
            if (detail::take_partner(k, other, detail::keeps_max(lane, size, stride))) {
                k = other;
                value = other_value;
            }
        }
    }
    key = O::from(k);
}

// ---------------------------------------------------------------------------
// Register transposes between arrays of structures and lanes (in the
// manner of trove, Catanzaro et al.). A warp's 32 structures of M words
// occupy 32*M consecutive words w = 0 .. 32M-1; structure l is words
// l*M .. l*M+M-1.
//
//   coalesced layout: lane s, register j holds word s + 32*j
//                     (what M fully coalesced loads produce)
//   structure layout: lane l, register i holds word l*M + i
//                     (lane l holds structure l)
//
// warp_c2r turns the first into the second, warp_r2c back. For every M,
// odd or even, both use exactly M shuffles of W (one per register; 2M
// 32-bit shuffles for 8-byte words), the minimum for moving 32M words, and
// no shared memory. The lane-dependent register permutations around the
// shuffles are barrel shifters of ceil(log2 M) stages of M selects each:
// one barrel shifter for odd M, two for even M (gcd(M, 32) > 1), plus a
// few integer operations per shuffle for the source lane. Every register
// index is a compile-time constant after unrolling (indexing a register
// array with a run-time value would put it in local memory); with NVRTC
// 13.0 for sm_90 the test kernels have no stack frame for M = 1..8.
//
// The schedule. Colour each word w with c(w) = (w + t(w)) mod M, where
// t(w) = floor(w * g / (32 M)) and g = gcd(M, 32). Then:
//  (a) a source lane s holds words s + 32j, j < M, whose colours are all
//      different: 32j mod M runs through the multiples of g, each once per
//      block of M/g consecutive j, and t = floor(j*g/M) counts the blocks;
//  (b) a destination lane l receives words l*M + i, i < M, which all share
//      t_l = floor(l * g / 32) (32M/g is a multiple of M), so their colours
//      c = (i + t_l) mod M are all different too.
// So the words of one colour have 32 distinct sources and 32 distinct
// destinations: each colour is one shuffle. The steps of c2r:
//  1. lane s moves register j to register (s + sigma(j)) mod M, sigma(j) =
//     (32j + floor(j*g/M)) mod M: a compile-time permutation (sigma) then a
//     rotation by s mod M (barrel shifter). Register c now holds the word of
//     colour c.
//  2. for each c: lane l takes register c from the lane that holds its
//     colour-c word, i = (c - t_l) mod M, source lane (l*M + i) mod 32.
//  3. lane l rotates back by t_l, so word l*M + i lands in register i.
// For odd M (g = 1) t is always 0 and step 3 vanishes: colour = w mod M,
// by the Chinese remainder theorem the source lane s = (l*M + c) mod 32 of
// step c supplies its register r = 32^{-1} (c - s) mod M, and step 1 is the
// rotation that puts that register at index c. For M = 2, 4, 8, sigma is
// the identity and step 1 is a plain rotation by s mod M.
// warp_r2c runs the same three steps backwards; in step 2 the receiving
// lane s works out which lane holds its colour-c word from the inverse of
// sigma (a few integer operations with constant divisors).

namespace detail {

__host__ __device__ constexpr int gcd_with_warp(int m) {
    // gcd(m, 32) is the lowest set bit of m, at most 32.
    return (m & -m) < kWarpSize ? (m & -m) : kWarpSize;
}

__host__ __device__ constexpr int inverse_mod(int a, int m) {
    // Brute force: m is at most 32 and this runs in the compiler.
    for (int v = 0; v < m; ++v)
        if ((a * v) % m == 1 % m) return v;
    return 0;
}

// Where step 1 puts register j (before the rotation by the lane).
template <int M>
__host__ __device__ constexpr int transpose_sigma(int j) {
    return (kWarpSize * j + j * gcd_with_warp(M) / M) % M;
}

// The j with transpose_sigma<M>(j) == x, for a run-time x in [0, M).
// Writing j = u + (M/g) t: sigma(j) = (32u mod M) + t, where 32u mod M is
// g times (32/g) u mod (M/g); so t = x mod g and u = (x / g) times the
// inverse of 32/g, modulo M/g.
template <int M>
__device__ __forceinline__ unsigned transpose_sigma_inv(unsigned x) {
    constexpr unsigned G = gcd_with_warp(M);
    constexpr unsigned MG = M / G;
    constexpr unsigned INV = inverse_mod((kWarpSize / G) % MG, MG);
    const unsigned t = x % G;
    const unsigned u = ((x / G) * INV) % MG;
    return u + MG * t;
}

// (a - b) mod M for a, b in [0, M): a mask when M is a power of two, else
// one conditional subtraction (cheaper than a remainder by a constant).
template <int M>
__device__ __forceinline__ unsigned sub_mod(unsigned a, unsigned b) {
    if constexpr ((M & (M - 1)) == 0) {
        return (a - b) & (unsigned)(M - 1);
    } else {
        const unsigned d = a + (unsigned)M - b;
        return d >= (unsigned)M ? d - (unsigned)M : d;
    }
}

// r[(j + a) mod M] = old r[j] for a run-time a in [0, M): one stage per bit
// of a, each a select between r and r rotated by a compile-time amount.
template <int M, class W>
__device__ __forceinline__ void rotate_right(W (&r)[M], unsigned a) {
#pragma unroll
    for (int b = 1; b < M; b <<= 1) {
        const bool on = (a & (unsigned)b) != 0u;
        W t[M];
#pragma unroll
        for (int j = 0; j < M; ++j) t[j] = on ? r[(j - b + M) % M] : r[j];
#pragma unroll
        for (int j = 0; j < M; ++j) r[j] = t[j];
    }
}

}  // namespace detail

// Coalesced layout to structure layout (see above), in registers.
template <int M, class W>
__device__ __forceinline__ void warp_c2r(W (&r)[M]) {
    static_assert(M >= 1 && M <= 32, "warp_c2r: M must be in 1..32");
    constexpr int G = detail::gcd_with_warp(M);
    const unsigned lane = lane_id();
    // Step 1: register c gets the word of colour c.
    W u[M];
#pragma unroll
    for (int j = 0; j < M; ++j) u[detail::transpose_sigma<M>(j)] = r[j];
    detail::rotate_right<M>(u, lane % M);
    // Step 2: one shuffle per colour.
    const unsigned t = G == 1 ? 0u : lane / (kWarpSize / G);
#pragma unroll
    for (int c = 0; c < M; ++c) {
        const unsigned i = detail::sub_mod<M>((unsigned)c, t);
        r[c] = shfl(u[c], (int)((lane * M + i) % kWarpSize));
    }
    // Step 3: undo the colour offset t (rotate left by t).
    if (G > 1) detail::rotate_right<M>(r, (M - t) % M);
}

// Structure layout to coalesced layout, in registers: warp_c2r's inverse.
template <int M, class W>
__device__ __forceinline__ void warp_r2c(W (&r)[M]) {
    static_assert(M >= 1 && M <= 32, "warp_r2c: M must be in 1..32");
    constexpr int G = detail::gcd_with_warp(M);
    const unsigned lane = lane_id();
    // Step 3 backwards: word l*M + i to register (i + t) mod M, its colour.
    if (G > 1) detail::rotate_right<M>(r, lane / (kWarpSize / G));
    // Step 2 backwards: lane s fetches its colour-c word, s + 32j with
    // sigma(j) = (c - s) mod M, from the lane whose structure holds it.
    const unsigned s_mod = lane % M;
    W u[M];
#pragma unroll
    for (int c = 0; c < M; ++c) {
        const unsigned j = detail::transpose_sigma_inv<M>(detail::sub_mod<M>((unsigned)c, s_mod));
        u[c] = shfl(r[c], (int)((lane + kWarpSize * j) / M));
    }
    // Step 1 backwards: rotate left by s mod M, then undo sigma.
    detail::rotate_right<M>(u, (M - s_mod) % M);
#pragma unroll
    for (int j = 0; j < M; ++j) r[j] = u[detail::transpose_sigma<M>(j)];
}

// Lane l gets structure l of the 32 structures of M words at `base`
// (base[l*M .. l*M+M)). The loads are coalesced: load j reads words
// 32j .. 32j+31, one per lane, instead of each lane reading its own
// structure with M strided loads. `base` must be valid for 32*M words.
template <int M, class W>
__device__ __forceinline__ void warp_load_structs(const W *base, W (&r)[M]) {
    const unsigned lane = lane_id();
#pragma unroll
    for (int j = 0; j < M; ++j) r[j] = base[lane + kWarpSize * j];
    warp_c2r<M>(r);
}

// Lane l writes its structure r[0..M) to base[l*M .. l*M+M), through
// warp_r2c and M coalesced stores.
template <int M, class W>
__device__ __forceinline__ void warp_store_structs(W *base, const W (&r)[M]) {
    const unsigned lane = lane_id();
    W t[M];
#pragma unroll
    for (int j = 0; j < M; ++j) t[j] = r[j];
    warp_r2c<M>(t);
#pragma unroll
    for (int j = 0; j < M; ++j) base[lane + kWarpSize * j] = t[j];
}

// ---------------------------------------------------------------------------
// Ballot-based compaction: the lanes whose predicate holds write to
// consecutive slots, in lane order, with one vote and two popcounts instead
// of a scan.

struct CompactSlot {
    unsigned slot;   // selected lanes below this one (this lane's slot if selected)
    unsigned count;  // selected lanes in the warp
};

__device__ __forceinline__ CompactSlot warp_slot(bool pred) {
    const unsigned vote = __ballot_sync(kFullMask, pred);
    CompactSlot s;
    s.slot = __popc(vote & lanemask_lt());
    s.count = __popc(vote);
    return s;
}

// Writes `value` to out[slot] in the lanes whose pred holds; the slots are
// 0 .. count-1 in lane order. Returns the slot and the warp's count (the
// same in every lane), so the caller can advance `out` by count.
template <class T>
__device__ __forceinline__ CompactSlot warp_compact(T value, bool pred, T *out) {
    const CompactSlot s = warp_slot(pred);
    if (pred) out[s.slot] = value;
    return s;
}

// Appends the selected lanes' values to the list out[0 .. *counter), in lane
// order, with one atomicAdd per warp rather than one per lane: lane 0
// reserves the warp's count and shares the base with a shuffle. Returns the
// index written, or 0xffffffff in lanes whose pred is false. Warps append in
// whatever order their atomics land, so only each warp's run is ordered.
template <class T>
__device__ __forceinline__ unsigned warp_append(T *out, unsigned *counter, T value, bool pred) {
    const CompactSlot s = warp_slot(pred);
    unsigned base = 0;
    if (lane_id() == 0 && s.count != 0u) base = atomicAdd(counter, s.count);
    base = __shfl_sync(kFullMask, base, 0);
    if (!pred) return 0xffffffffu;
    out[base + s.slot] = value;
    return base + s.slot;
}

}  // namespace warpmc
