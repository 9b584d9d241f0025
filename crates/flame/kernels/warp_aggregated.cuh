// warp_aggregated.cuh: the chaos game's warp-aggregated accumulation (an
// Accumulator policy of iterate.cuh), apart because it needs warpmc-prims'
// atomics.cuh.
#pragma once

#include "atomics.cuh"
#include "iterate.cuh"

namespace flame {

// Lanes of a warp that hit the same cell add their colours first
// (warpmc-prims' match_any and tree over the peers, after Westphal,
// "Voting and Shuffling to Optimize Atomic Operations"), then one atomic
// per cell; hit counts go one atomic per sample.
struct WarpAggregated {
    template <class H>
    __device__ static __forceinline__ void init_shared(unsigned) {}

    template <class H>
    struct State {
        __device__ __forceinline__ void add(const H &h, bool valid, unsigned cell, float4 col, real vis) {
            typedef typename H::bucket bucket;
            warpmc::Value<bucket, 4> val;
            val.c[0] = (bucket)col.x;
            val.c[1] = (bucket)col.y;
            val.c[2] = (bucket)col.z;
            val.c[3] = (bucket)col.w;
            const unsigned peers = warpmc::peers_match(cell, valid);
            val = warpmc::reduce_peers(peers, val);
            if (valid && (peers & warpmc::lanemask_lt()) == 0) {
                warpmc::atomic_add_value<false, true>(h.values + 4ull * cell, val);
            }
            if (H::HAS_COUNT && valid) atomicAdd(h.count + cell, (bucket)floorf(255.0f * (float)vis));
        }

        __device__ __forceinline__ void finish(const H &, unsigned) {}
    };
};

}  // namespace flame
