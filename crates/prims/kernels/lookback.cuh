// warpmc/lookback.cuh: the cross-tile prefix of single-pass scans
// (decoupled look-back, Merrill & Garland 2016).
//
// A single-pass scan reads and writes every element once. Each block takes
// the next tile by an atomic ticket (so every earlier tile is already
// running or done: no deadlock whatever order the hardware schedules
// blocks in), reduces it, publishes the tile's aggregate at once, and then
// looks backwards over its predecessors' published values until it meets
// one that already knows its inclusive prefix. It then publishes its own
// inclusive prefix. The chain of dependencies therefore advances by whole
// windows of 32 tiles at a time instead of one tile after another.
//
// Floating-point sums: which predecessors have an inclusive value at the
// moment a tile looks is a matter of timing, so the grouping of additions
// (and the last bits of a float sum) can change from run to run. Integer
// sums, min and max are exact and repeatable.
#pragma once

namespace warpmc {
namespace lookback {

enum : unsigned { EMPTY = 0, AGGREGATE = 1, INCLUSIVE = 2 };

// The published state of every tile: zero-filled flags before the launch.
template <class V>
struct State {
    unsigned *flags;      // per tile: EMPTY, AGGREGATE or INCLUSIVE
    V *aggregate;         // per tile: the tile's own reduction
    V *inclusive;         // per tile: reduction of every tile up to it
    unsigned *ticket;     // next tile to hand out
};

// 32- or 64-bit values through 32-bit shuffles.
template <class V>
__device__ __forceinline__ V shfl_down(V v, int delta) {
    static_assert(sizeof(V) == 4 || sizeof(V) == 8, "4- or 8-byte values");
    if constexpr (sizeof(V) == 4) {
        unsigned u;
        memcpy(&u, &v, 4);
        u = __shfl_down_sync(0xffffffffu, u, delta);
        memcpy(&v, &u, 4);
    } else {
        unsigned long long u;
        memcpy(&u, &v, 8);
        unsigned lo = __shfl_down_sync(0xffffffffu, (unsigned)u, delta);
        unsigned hi = __shfl_down_sync(0xffffffffu, (unsigned)(u >> 32), delta);
        u = ((unsigned long long)hi << 32) | lo;
        memcpy(&v, &u, 8);
    }
    return v;
}

// Reduction over the warp; lane 0 holds the result.
template <class V, class Op>
__device__ __forceinline__ V warp_reduce_to_lane0(V v, Op op) {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) v = op(v, shfl_down(v, d));
    return v;
}

// Values written by other blocks must come from L2, not a stale L1 line.
template <class V>
__device__ __forceinline__ V load_l2(const V *p) {
    return __ldcg(p);
}

__device__ __forceinline__ unsigned load_flag(const unsigned *p) {
    return *(const volatile unsigned *)p;
}

// The block's tile number. Called by every thread.
template <class V>
__device__ __forceinline__ unsigned take_ticket(State<V> st) {
    __shared__ unsigned s_ticket;
    if (threadIdx.x == 0) s_ticket = atomicAdd(st.ticket, 1u);
    __syncthreads();
    unsigned t = s_ticket;
    __syncthreads();  // s_ticket may be reused by a later call
    return t;
}

// The reduction of every tile before `tile`; `aggregate` is this tile's own
// reduction (its value matters in thread 0 only). Called by every thread of
// the block; every thread gets the result. Publishes this tile's inclusive
// value on the way.
template <class V, class Op>
__device__ V exclusive_prefix(State<V> st, unsigned tile, V aggregate, Op op, V identity) {
    __shared__ V s_prefix;
    if (threadIdx.x < 32) {
        const int lane = threadIdx.x;
        if (tile == 0) {
            if (lane == 0) {
                __stcg(&st.inclusive[0], aggregate);
                __threadfence();
                atomicExch(&st.flags[0], (unsigned)INCLUSIVE);
                s_prefix = identity;
            }
        } else {
            if (lane == 0) {
                __stcg(&st.aggregate[tile], aggregate);
                __threadfence();
                atomicExch(&st.flags[tile], (unsigned)AGGREGATE);
            }
            V prefix = identity;
            long long window = (long long)tile - 1;  // lane j looks at tile window - j
            for (;;) {
                long long t = window - lane;
                unsigned f = INCLUSIVE;  // before tile 0: nothing, the identity
                V v = identity;
                if (t >= 0) {
                    do {
                        f = load_flag(&st.flags[t]);
                    } while (f == EMPTY);
                    __threadfence();
                    v = (f == INCLUSIVE) ? load_l2(&st.inclusive[t]) : load_l2(&st.aggregate[t]);
                }
                unsigned done = __ballot_sync(0xffffffffu, f == INCLUSIVE);
                // Tiles from this window's newest down to the nearest one
                // that knows its inclusive prefix; older ones are included in
                // that prefix already.
                int stop = done ? __ffs(done) - 1 : 31;
                V part = warp_reduce_to_lane0(lane <= stop ? v : identity, op);
                prefix = op(part, prefix);
                if (done) break;
                window -= 32;
            }
            if (lane == 0) {
                __stcg(&st.inclusive[tile], op(prefix, aggregate));
                __threadfence();
                atomicExch(&st.flags[tile], (unsigned)INCLUSIVE);
                s_prefix = prefix;
            }
        }
    }
    __syncthreads();
    V p = s_prefix;
    __syncthreads();  // s_prefix may be reused by a later call
    return p;
}

}  // namespace lookback
}  // namespace warpmc
