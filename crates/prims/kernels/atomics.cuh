// atomics.cuh: warp-aggregated atomic reduction by key.
//
// Adding values into bins chosen by a key ("reduce by key" into a dense
// array, a histogram) with one atomic per element is slow where the lanes of
// a warp often share a key: the atomics on one address serialise (in the L2
// for global memory, in the SM for shared memory; a compare-and-swap loop
// even retries once per colliding lane). These functions first find the
// lanes of a warp that hold the same key ("peers"), add their values with
// shuffles, and let one lane per key do the atomic. After "Voting and
// Shuffling to Optimize Atomic Operations" (Elmar Westphal, NVIDIA, 2015).
//
// Every function here is full-warp: all 32 lanes call it together, in
// converged code. Lanes without an element (the tail past n, out-of-range
// keys) take part with `valid == false`; their peer mask is 0 and nothing
// is ever read from them.
//
// Contents:
//   peers_ballot      Westphal's loop: broadcast one unclaimed key, vote
//   peers_match       __match_any_sync (sm_70+; the ballot loop elsewhere)
//   run_end           contiguous runs of equal keys only: one shuffle, one vote
//   reduce_peers      Westphal's tree over interleaved peer groups
//   reduce_runs       segmented shift-down tree over contiguous runs
//   atomic_add_hw     atomicAdd (float, double, unsigned, unsigned long long)
//   atomic_add_cas    the compare-and-swap loop of the CUDA programming guide
//   atomic_add_value  W components; float4/float2 vector atomics on sm_90
//   Value<S, W>       W values of one element (W = 1..8), loaded as vectors
#pragma once

#include "warp.cuh"

namespace warpmc {

// Bit i set for every lane i above this one.
__device__ __forceinline__ unsigned lanemask_gt() {
    return ~(lanemask_lt() | (1u << lane_id()));
}

// ---------------------------------------------------------------------------
// Peers: which lanes hold the same key. Each returns, in a valid lane, the
// mask of the valid lanes whose key equals its own (its own bit included);
// in an invalid lane, 0. The lowest lane of a mask is the group's leader.

// Westphal's loop. The lowest lane not yet claimed broadcasts its key;
// the lanes that hold it vote, take the vote as their peer mask and leave
// the pool. One pass per distinct key in the warp: cheap for sorted keys,
// 32 passes for 32 distinct ones. `unclaimed` is the same in every lane, so
// the loop runs the same number of times in all of them and the warp stays
// converged for the full-mask shuffle and vote (Westphal lets each lane
// leave once it has its answer, which with *_sync intrinsics would need the
// mask of the lanes still looping).
template <class K>
__device__ __forceinline__ unsigned peers_ballot(K key, bool valid) {
    unsigned unclaimed = __ballot_sync(kFullMask, valid);
    unsigned peers = 0;
    while (unclaimed != 0) {
        const K probe = shfl(key, __ffs(unclaimed) - 1);
        const bool same = valid && key == probe;
        const unsigned group = __ballot_sync(kFullMask, same);
        if (same) peers = group;
        // The probing lane is in `group`, so every pass claims a lane.
        unclaimed &= ~group;
    }
    return peers;
}

// The same masks from one instruction. Every lane takes part (full mask),
// so invalid lanes must never hold a key equal to a valid lane's: the
// kernels below give them keys >= nbins, which no valid key equals.
// Before sm_70 (no match instruction) this falls back to the ballot loop.
template <class K>
__device__ __forceinline__ unsigned peers_match(K key, bool valid) {
#if __CUDA_ARCH__ >= 700
    const unsigned same = __match_any_sync(kFullMask, key);
    return valid ? same : 0u;
#else
    return peers_ballot(key, valid);
#endif
}

// Runs: only neighbouring lanes with equal keys are grouped, so a key that
// comes back after another key makes a second group (a second atomic). For
// sorted keys these are exactly the peer groups, found with one shuffle and
// one vote instead of a loop. Returns one past the last lane of this lane's
// run, and sets *head when this lane starts the run (its leader). Invalid
// lanes get their own lane index as the end (an empty run) and no head.
template <class K>
__device__ __forceinline__ unsigned run_end(K key, bool valid, bool *head) {
    const unsigned lane = lane_id();
    const K before = shfl_up(key, 1);
    // An invalid neighbour holds a key no valid lane holds, so a run also
    // starts right after one.
    const bool starts = valid && (lane == 0 || before != key);
    const unsigned heads = __ballot_sync(kFullMask, starts);
    const unsigned stops = heads | ~__ballot_sync(kFullMask, valid);
    // The run ends at the next lane above that starts a run or is invalid.
    const unsigned after = stops & lanemask_gt();
    *head = starts;
    return valid ? (after != 0 ? (unsigned)__ffs(after) - 1u : 32u) : lane;
}

// Bit mask of lanes [lo, hi), hi <= 32.
__device__ __forceinline__ unsigned lane_range(unsigned lo, unsigned hi) {
    const unsigned below_hi = hi >= 32 ? kFullMask : (1u << hi) - 1u;
    return below_hi & ~((1u << lo) - 1u);
}

// ---------------------------------------------------------------------------
// Values: W components of type S per element.

template <class S>
__device__ __forceinline__ S vadd(S a, S b) { return a + b; }

// The largest power of two up to 16 that divides the value's size: element
// i of an array starts at i * Bytes from a 256-byte aligned base, so it is
// that aligned, and the load can use vectors of that width (float4: RGBA).
template <int Bytes, int Scalar>
struct ValueAlign {
    static constexpr int value = Bytes % 16 == 0 ? 16 : Bytes % 8 == 0 ? 8 : Bytes % 4 == 0 ? 4 : Scalar;
};

template <class S, int W>
struct alignas(ValueAlign<(int)sizeof(S) * W, (int)sizeof(S)>::value) Value {
    S c[W];

    static __device__ __forceinline__ Value zero() {
        Value v;
#pragma unroll
        for (int k = 0; k < W; ++k) v.c[k] = S(0);
        return v;
    }
    static __device__ __forceinline__ Value load(const S *__restrict__ values, unsigned long long i) {
        return reinterpret_cast<const Value *>(values)[i];
    }
    __device__ __forceinline__ void add(const Value &o) {
#pragma unroll
        for (int k = 0; k < W; ++k) c[k] = vadd(c[k], o.c[k]);
    }
};

template <class S, int W>
__device__ __forceinline__ Value<S, W> shfl_value(const Value<S, W> &v, int src) {
    Value<S, W> r;
#pragma unroll
    for (int k = 0; k < W; ++k) r.c[k] = shfl(v.c[k], src);
    return r;
}

template <class S, int W>
__device__ __forceinline__ Value<S, W> shfl_down_value(const Value<S, W> &v, unsigned delta) {
    Value<S, W> r;
#pragma unroll
    for (int k = 0; k < W; ++k) r.c[k] = shfl_down(v.c[k], delta);
    return r;
}

// ---------------------------------------------------------------------------
// Sums within groups.

// Westphal's tree reduction, over all peer groups at once. A lane's rank
// is its position in its group counted from the leader. In round r every
// lane adds the partial sum of the next lane of its group above it that is
// still live; that lane has rank + 2^r, because all ranks in between were
// retired earlier. Then the lanes whose rank has bit r set retire (their sum
// has just been taken) and drop out of everyone's `pending` mask. After
// ceil(log2(largest group)) rounds each leader holds its group's total;
// other lanes hold partial sums. Retired lanes go on shuffling and adding
// (nobody reads them again) because every lane must join the shuffles.
template <class S, int W>
__device__ __forceinline__ Value<S, W> reduce_peers(unsigned peers, Value<S, W> x) {
    unsigned rank = __popc(peers & lanemask_lt());
    unsigned pending = peers & lanemask_gt();
    while (__any_sync(kFullMask, pending != 0)) {
        const int src = __ffs(pending) - 1;  // -1: nothing left to take
        const Value<S, W> t = shfl_value(x, src < 0 ? (int)lane_id() : src);
        if (src >= 0) x.add(t);
        pending &= ~__ballot_sync(kFullMask, (rank & 1u) != 0);
        rank >>= 1;
    }
    return x;
}

// Contiguous runs: a segmented shift-down tree. After the round with offset
// o, lane l holds the sum of lanes [l, min(l + 2o, end)); the run's first
// lane holds the run's total once 2o reaches the run's length. Rounds:
// ceil(log2(longest run)), none when every run is a single lane.
template <class S, int W>
__device__ __forceinline__ Value<S, W> reduce_runs(unsigned end, Value<S, W> x) {
    const unsigned lane = lane_id();
    for (unsigned offset = 1; __any_sync(kFullMask, lane + offset < end); offset <<= 1) {
        const Value<S, W> t = shfl_down_value(x, offset);
        if (lane + offset < end) x.add(t);
    }
    return x;
}

// ---------------------------------------------------------------------------
// Atomic adds, into global or shared memory.

// Hardware atomics (a RED instruction, as the result is unused). Doubles
// need sm_60+.
__device__ __forceinline__ void atomic_add_hw(float *p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add_hw(double *p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add_hw(unsigned *p, unsigned v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add_hw(unsigned long long *p, unsigned long long v) { atomicAdd(p, v); }

// The compare-and-swap loop, the only double atomicAdd before sm_60 and the
// one Westphal measured: read the word, compute the sum, swap it in if
// the word is unchanged, else retry with the word the swap returned. Lanes
// that hit the same address succeed one per round, so a warp whose lanes
// share a key loops once per sharing lane.
template <class S>
__device__ __forceinline__ void atomic_add_cas(S *p, S v) {
    typedef typename detail::Bits<S>::U U;
    U *word = reinterpret_cast<U *>(p);
    U seen = *reinterpret_cast<volatile U *>(word);
    while (true) {
        const U sum = detail::Bits<S>::to(vadd(detail::Bits<S>::from(seen), v));
        const U before = atomicCAS(word, seen, sum);
        if (before == seen) break;
        seen = before;
    }
}

template <bool Cas, class S>
__device__ __forceinline__ void atomic_add(S *p, S v) {
    if constexpr (Cas) {
        atomic_add_cas(p, v);
    } else {
        atomic_add_hw(p, v);
    }
}

template <class S> struct IsFloat { static constexpr bool value = false; };
template <> struct IsFloat<float> { static constexpr bool value = true; };

// Adds the W components of v to bin[0..W). `Global`: bin is in global
// memory, where sm_90 has vector atomics for floats (atomicAdd on float4 and
// float2: one atomic for four or two components). The bins of a value of W
// floats start at multiples of 4W bytes, so for W a multiple of 4 (of 2)
// they are 16-byte (8-byte) aligned, as those need.
template <bool Cas, bool Global, class S, int W>
__device__ __forceinline__ void atomic_add_value(S *bin, const Value<S, W> &v) {
#if __CUDA_ARCH__ >= 900
    if constexpr (!Cas && Global && IsFloat<S>::value && W % 4 == 0) {
#pragma unroll
        for (int k = 0; k < W; k += 4) {
            atomicAdd(reinterpret_cast<float4 *>(bin + k), make_float4(v.c[k], v.c[k + 1], v.c[k + 2], v.c[k + 3]));
        }
        return;
    } else if constexpr (!Cas && Global && IsFloat<S>::value && W % 2 == 0) {
#pragma unroll
        for (int k = 0; k < W; k += 2) atomicAdd(reinterpret_cast<float2 *>(bin + k), make_float2(v.c[k], v.c[k + 1]));
        return;
    }
#endif
#pragma unroll
    for (int k = 0; k < W; ++k) atomic_add<Cas>(bin + k, v.c[k]);
}

}  // namespace warpmc
