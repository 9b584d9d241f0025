// lookback.cuh: the cross-tile prefix of single-pass scans
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

#include "warp.cuh"

namespace warpmc {
namespace lookback {

enum : unsigned { EMPTY = 0, AGGREGATE = 1, INCLUSIVE = 2 };


// The published state of every tile: zero-filled flags before the launch.
// Per tile, its flag (EMPTY, AGGREGATE: the tile's own reduction,
// INCLUSIVE: the reduction of every tile up to it) with the value, packed
// in one 8-byte word (4-byte values) or two (8-byte values); zero-filled
// before the launch.
//
// Nothing is zeroed between launches: the flag field (the low 32 bits of a
// word) is epoch << 2 | state, and a word from an earlier launch (another
// epoch) reads as not published yet. Tickets likewise keep counting across
// launches; a launch's tiles are its tickets minus `ticket_base`. The host
// zeroes both only when it allocates them or the counters would wrap (two
// memsets per launch cost a large scan measurable time:
// docs/benchmarks/prims.md).
template <class V>
struct State {
    unsigned long long *packed;   // 8 or 16 bytes per tile
    unsigned *ticket;             // tickets handed out so far, all launches
    unsigned ticket_base;         // the ticket of this launch's tile 0
    unsigned epoch;               // this launch's epoch, >= 1
};

// The block's tile number. Called by every thread, once per block (a second
// call would race with the first's readers of s_ticket). (Using blockIdx.x
// instead, as if blocks started in launch order, is a little faster, but
// nothing guarantees that order, and a block waiting on one that cannot
// start would hang the GPU.)
template <class V>
__device__ __forceinline__ unsigned take_ticket(State<V> st) {
    __shared__ unsigned s_ticket;
    if (threadIdx.x == 0) s_ticket = atomicAdd(st.ticket, 1u) - st.ticket_base;
    __syncthreads();
    return s_ticket;
}

// Publishing and reading one tile's (flag, value).
//
// The flag travels with the value in 8-byte words, each written and read in
// one access (PTX guarantees that aligned 8-byte accesses are not torn), so
// a reader that sees a flag sees its value: no fences, one round trip to L2.
// A 4-byte value takes one word (value << 32 | flag). An 8-byte value takes
// two, each half with its own copy of the flag; the reader accepts them once
// both carry the same non-empty flag (each flag is published once per tile,
// so equal flags mean the same publication). Two tried alternatives: a
// separate flag with a fence between value and flag was much slower; one
// 16-byte word written and read with 16-byte vector accesses (CUB's way)
// gave torn reads on an H200 — a flag with a zero value — and wrong results
// (docs/benchmarks/prims.md, "the scan").
template <class V>
__device__ __forceinline__ void publish(State<V> st, unsigned long long tile, unsigned state, V v) {
    const unsigned flag = st.epoch << 2 | state;
    if constexpr (sizeof(V) == 4) {
        unsigned bits;
        memcpy(&bits, &v, 4);
        atomicExch(&st.packed[tile], ((unsigned long long)bits << 32) | flag);
    } else {
        unsigned long long bits;
        memcpy(&bits, &v, 8);
        atomicExch(&st.packed[2 * tile], (bits << 32) | flag);
        atomicExch(&st.packed[2 * tile + 1], (bits & 0xffffffff00000000ull) | flag);
    }
}

// Waits until `tile` has published something in this launch; returns its
// state and value.
template <class V>
__device__ __forceinline__ unsigned wait_for(State<V> st, unsigned long long tile, V *v) {
    const volatile unsigned long long *p = st.packed;
    if constexpr (sizeof(V) == 4) {
        unsigned long long w;
        do {
            w = p[tile];
        } while ((unsigned)w >> 2 != st.epoch);
        unsigned bits = (unsigned)(w >> 32);
        memcpy(v, &bits, 4);
        return (unsigned)w & 3u;
    } else {
        unsigned long long lo, hi;
        do {
            lo = p[2 * tile];
            hi = p[2 * tile + 1];
        } while ((unsigned)lo >> 2 != st.epoch || (unsigned)lo != (unsigned)hi);
        unsigned long long bits = (hi & 0xffffffff00000000ull) | (lo >> 32);
        memcpy(v, &bits, 8);
        return (unsigned)lo & 3u;
    }
}

// The reduction of every tile before `tile`; `aggregate` is this tile's own
// reduction (its value matters in thread 0 only). Called by every thread of
// the block, once per block; every thread gets the result. Publishes this tile's inclusive
// value on the way.
template <class V, class Op>
__device__ V exclusive_prefix(State<V> st, unsigned tile, V aggregate, Op op, V identity) {
    __shared__ V s_prefix;
    if (threadIdx.x < 32) {
        const int lane = threadIdx.x;
        if (tile == 0) {
            if (lane == 0) {
                publish(st, 0, INCLUSIVE, aggregate);
                s_prefix = identity;
            }
        } else {
            if (lane == 0) publish(st, tile, AGGREGATE, aggregate);
            // Lane j inspects tile window - j: 32 predecessors per round,
            // from the nearest, until one knows its inclusive prefix.
            // (Windows of 4 tiles per lane are slower: each lane's loads
            // then form a dependent chain.)
            V prefix = identity;
            long long window = (long long)tile - 1;
            for (;;) {
                long long t = window - lane;
                V v = identity;
                unsigned f = t >= 0 ? wait_for(st, (unsigned long long)t, &v) : INCLUSIVE;  // before tile 0: identity
                unsigned done = __ballot_sync(0xffffffffu, f == INCLUSIVE);
                // Lanes beyond the nearest one that found an inclusive value
                // hold tiles already counted in it.
                int stop = done ? __ffs(done) - 1 : 31;
                V part = warpmc::warp_reduce(lane <= stop ? v : identity, op);
                prefix = op(part, prefix);
                if (done) break;
                window -= 32;
            }
            if (lane == 0) {
                publish(st, tile, INCLUSIVE, op(prefix, aggregate));
                s_prefix = prefix;
            }
        }
    }
    __syncthreads();
    return s_prefix;
}

}  // namespace lookback
}  // namespace warpmc
