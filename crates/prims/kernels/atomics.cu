// Reduce by key into dense bins, and histograms, with plain, warp-aggregated
// and shared-memory-privatized atomics (device functions: atomics.cuh).
//
// Compiled once per value type, and once for histograms. The host
// (crates/prims/src/atomics) passes:
//   PRIMS_ATOMICS_HISTOGRAM   1 for the histogram module (u32 counts, no
//                             value array, and the peer_masks kernel), else 0
//   PRIMS_ATOMICS_SCALAR      float, double, unsigned or unsigned long long
//   PRIMS_ATOMICS_WIDTH       1..8: values per element (value modules only)
//   PRIMS_ATOMICS_PEERS_BALLOT, _MATCH, _RUNS: peer_masks' method numbers
//
// Kernels (every one in a hardware-atomic and a compare-and-swap flavour,
// the latter with the suffix _cas):
//   rbk_<strategy>(const unsigned *keys, const S *values, u64 n, S *bins, unsigned nbins)
//   hist_<strategy>(const unsigned *keys, u64 n, unsigned *bins, unsigned nbins)
// strategy: plain, ballot, match, runs, adaptive (global bins), shared,
// shared_runs (bins privatized per block in dynamic shared memory, nbins * W *
// sizeof(S) bytes, then added to the global bins). Keys >= nbins are ignored. The
// kernels add to `bins`, which the caller zeroes for a fresh result.
//
// Histogram module only: peer_masks(keys, n, nbins, method, out) writes each
// element's peer mask as the chosen method computes it (for tests).
//
// Launch: 1-D blocks of a multiple of 32 threads (the host uses 256), any
// grid; each warp takes 32 consecutive elements per step of a grid-stride
// loop. Whole warps run the loop together (the bound is the warp's first
// element), so the full-mask shuffles and votes always have every lane; the
// lanes past n take part as invalid lanes.
#include "atomics.cuh"

#if !defined(PRIMS_ATOMICS_HISTOGRAM) || !defined(PRIMS_ATOMICS_PEERS_BALLOT) || \
    !defined(PRIMS_ATOMICS_PEERS_MATCH) || !defined(PRIMS_ATOMICS_PEERS_RUNS)
#error "atomics.cu takes the module kind and the peer methods from the host (PRIMS_ATOMICS_*)"
#endif
#if PRIMS_ATOMICS_HISTOGRAM
#define PRIMS_ATOMICS_SCALAR unsigned
#define PRIMS_ATOMICS_WIDTH 1
#elif !defined(PRIMS_ATOMICS_SCALAR) || !defined(PRIMS_ATOMICS_WIDTH)
#error "a value module of atomics.cu needs PRIMS_ATOMICS_SCALAR and PRIMS_ATOMICS_WIDTH"
#endif

namespace {

using namespace warpmc;

typedef PRIMS_ATOMICS_SCALAR S;
constexpr int W = PRIMS_ATOMICS_WIDTH;
typedef Value<S, W> V;
// The host's values are W packed scalars: no padding may creep in.
static_assert(sizeof(V) == sizeof(S) * W, "Value<S, W> must be W packed scalars");
typedef unsigned long long u64;

// How the lanes sharing a key are found before the atomics. PEERS_ADAPTIVE:
// runs or match_any, chosen from the keys (see by_key_adaptive).
enum Peers { PEERS_NONE, PEERS_BALLOT, PEERS_MATCH, PEERS_RUNS, PEERS_ADAPTIVE };

// Whether a warp's 32 keys, forming `runs` runs of equal neighbouring keys,
// look locally shuffled: keys that come back after others (a key in two
// runs costs run aggregation a second atomic, and with the compare-and-swap
// add a retry while the first one is in flight), so that __match_any_sync
// pays for itself. Sorted keys with a few elements per key make few runs
// (`warpmc bench atomics`' cells: 4 per warp); keys that are nearly all
// distinct make 28 to 32, where there is nothing to combine and match_any
// only costs time (its random cells: 32; its flame image: 26 to 32).
// Particles displaced a little after a sort make about 19 (nearly all of
// its partially sorted warps have 9 to 27).
__device__ __forceinline__ bool looks_shuffled(unsigned runs) { return runs >= 9u && runs <= 27u; }

// The first element of the calling warp (its lane 0's) in the grid-stride loop.
__device__ __forceinline__ u64 warp_start(unsigned lane) {
    return (u64)blockIdx.x * blockDim.x + (threadIdx.x - lane);
}

// Adds each run's sum (or count) to its bin with one atomic, by the run's
// first lane (`end`, `head`: from run_end).
template <bool Shared, bool Cas, bool Counts>
__device__ __forceinline__ void add_runs(unsigned end, bool head, V v, S *bin) {
    if constexpr (Counts) {
        v.c[0] = end - lane_id();
    } else {
        v = reduce_runs(end, v);
    }
    if (head) atomic_add_value<Cas, !Shared>(bin, v);
}

// Adds each peer group's sum (or count) to its bin with one atomic, by the
// group's lowest lane.
template <bool Shared, bool Cas, bool Counts>
__device__ __forceinline__ void add_peers(unsigned peers, bool valid, V v, S *bin) {
    const bool leader = valid && (peers & lanemask_lt()) == 0;
    if constexpr (Counts) {
        v.c[0] = __popc(peers);
    } else {
        v = reduce_peers(peers, v);
    }
    if (leader) atomic_add_value<Cas, !Shared>(bin, v);
}

// The grid-stride loop (see Launch above).
template <Peers P, bool Shared, bool Cas, bool Counts>
__device__ __forceinline__ void by_key_loop(const unsigned *__restrict__ keys, const S *__restrict__ values, u64 n,
                                            S *target, unsigned nbins) {
    const unsigned lane = lane_id();
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 base = warp_start(lane); base < n; base += stride) {
        const u64 i = base + lane;
        // Lanes past the end get key 0xffffffff, which is >= nbins (nbins
        // is at most 2^32 - 1): invalid keys never equal valid ones.
        const unsigned key = i < n ? keys[i] : 0xffffffffu;
        const bool valid = key < nbins;
        V v;
        if constexpr (Counts) {
            v.c[0] = S(1);
        } else {
            v = valid ? V::load(values, i) : V::zero();
        }
        // Only valid lanes touch their bin: the key is in range there.
        S *bin = target + (u64)(valid ? key : 0u) * W;

        if constexpr (P == PEERS_NONE) {
            if (valid) atomic_add_value<Cas, !Shared>(bin, v);
        } else if constexpr (P == PEERS_RUNS) {
            bool head;
            const unsigned end = run_end(key, valid, &head);
            add_runs<Shared, Cas, Counts>(end, head, v, bin);
        } else if constexpr (P == PEERS_ADAPTIVE) {
            // Decided at every step (the compare-and-swap flavour).
            bool head;
            const unsigned end = run_end(key, valid, &head);
            if (looks_shuffled(__popc(__ballot_sync(kFullMask, head)))) {
                add_peers<Shared, Cas, Counts>(peers_match(key, valid), valid, v, bin);
            } else {
                add_runs<Shared, Cas, Counts>(end, head, v, bin);
            }
        } else {
            const unsigned peers = P == PEERS_BALLOT ? peers_ballot(key, valid) : peers_match(key, valid);
            add_peers<Shared, Cas, Counts>(peers, valid, v, bin);
        }
    }
}

// Runs or match_any, whichever the keys call for, without a hint: close to
// the faster of the two on sorted, partially sorted and random keys
// (`warpmc bench atomics`; docs/benchmarks/atomics.md has the numbers).
//
// Hardware atomics: each warp counts the runs of its first 32 keys once and
// then loops with run aggregation or with match_any for all its steps (a
// warp's steps are spread over the whole input, one grid stride apart).
// Each loop is the plain runs or match loop. A decision at every step
// instead costs the issue slots of both shuffle-and-vote paths, which
// measured slower; the few partially sorted warps whose first step has few
// runs, and so run aggregation, cost little here.
//
// Compare-and-swap atomics: a decision at every step. Each warp's time is
// a chain of round trips to memory (load, swap, retry), and a warp that
// aggregates runs of shuffled keys retries its swaps where a key comes
// back: a straggler that alone holds up the launch, so deciding once per
// warp was much slower even with only a few warps in 10^4 misjudged. The
// per-step decision's few instructions hide behind the round trips.
template <bool Cas, bool Counts>
__device__ __forceinline__ void by_key_adaptive(const unsigned *__restrict__ keys, const S *__restrict__ values,
                                                u64 n, S *__restrict__ bins, unsigned nbins) {
    if constexpr (Cas) {
        by_key_loop<PEERS_ADAPTIVE, false, Cas, Counts>(keys, values, n, bins, nbins);
    } else {
        const unsigned lane = lane_id();
        const u64 start = warp_start(lane);
        if (start >= n) return;
        // The first step's keys, read again by the loop (from L1).
        const u64 i = start + lane;
        const unsigned key = i < n ? keys[i] : 0xffffffffu;
        bool head;
        run_end(key, key < nbins, &head);
        if (looks_shuffled(__popc(__ballot_sync(kFullMask, head)))) {
            by_key_loop<PEERS_MATCH, false, Cas, Counts>(keys, values, n, bins, nbins);
        } else {
            by_key_loop<PEERS_RUNS, false, Cas, Counts>(keys, values, n, bins, nbins);
        }
    }
}

template <Peers P, bool Shared, bool Cas, bool Counts>
__device__ __forceinline__ void by_key(const unsigned *__restrict__ keys, const S *__restrict__ values, u64 n,
                                       S *__restrict__ bins, unsigned nbins) {
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    S *target = bins;
    if constexpr (Shared) {
        S *local = reinterpret_cast<S *>(shared_bytes);
        const unsigned words = nbins * (unsigned)W;
        for (unsigned j = threadIdx.x; j < words; j += blockDim.x) local[j] = S(0);
        __syncthreads();
        target = local;
    }

    if constexpr (P == PEERS_ADAPTIVE) {
        static_assert(!Shared, "adaptive aggregation is for global bins");
        by_key_adaptive<Cas, Counts>(keys, values, n, target, nbins);
    } else {
        by_key_loop<P, Shared, Cas, Counts>(keys, values, n, target, nbins);
    }

    if constexpr (Shared) {
        __syncthreads();
        const S *local = target;
        const unsigned words = nbins * (unsigned)W;
        for (unsigned j = threadIdx.x; j < words; j += blockDim.x) {
            const S s = local[j];
            // Bins this block never touched stay zero: no atomic for them.
            if (s != S(0)) atomic_add<Cas>(bins + j, s);
        }
    }
}

}  // namespace

#define RBK_KERNEL(name, P, SHARED, CAS)                                                                  \
    extern "C" __global__ void rbk_##name(const unsigned *keys, const S *values, u64 n, S *bins,          \
                                          unsigned nbins) {                                               \
        by_key<P, SHARED, CAS, false>(keys, values, n, bins, nbins);                                      \
    }
#define HIST_KERNEL(name, P, SHARED, CAS)                                                          \
    extern "C" __global__ void hist_##name(const unsigned *keys, u64 n, S *bins, unsigned nbins) {        \
        by_key<P, SHARED, CAS, true>(keys, nullptr, n, bins, nbins);                                      \
    }

#if PRIMS_ATOMICS_HISTOGRAM
#define ATOMICS_KERNEL HIST_KERNEL
#else
#define ATOMICS_KERNEL RBK_KERNEL
#endif

ATOMICS_KERNEL(plain, PEERS_NONE, false, false)
ATOMICS_KERNEL(ballot, PEERS_BALLOT, false, false)
ATOMICS_KERNEL(match, PEERS_MATCH, false, false)
ATOMICS_KERNEL(runs, PEERS_RUNS, false, false)
ATOMICS_KERNEL(adaptive, PEERS_ADAPTIVE, false, false)
ATOMICS_KERNEL(shared, PEERS_NONE, true, false)
ATOMICS_KERNEL(shared_runs, PEERS_RUNS, true, false)
ATOMICS_KERNEL(plain_cas, PEERS_NONE, false, true)
ATOMICS_KERNEL(ballot_cas, PEERS_BALLOT, false, true)
ATOMICS_KERNEL(match_cas, PEERS_MATCH, false, true)
ATOMICS_KERNEL(runs_cas, PEERS_RUNS, false, true)
ATOMICS_KERNEL(adaptive_cas, PEERS_ADAPTIVE, false, true)
ATOMICS_KERNEL(shared_cas, PEERS_NONE, true, true)
ATOMICS_KERNEL(shared_runs_cas, PEERS_RUNS, true, true)

#if PRIMS_ATOMICS_HISTOGRAM
// Each element's peer mask by `method` (PRIMS_ATOMICS_PEERS_BALLOT: the
// ballot loop, _MATCH: match_any, _RUNS: runs, as the mask of lanes
// [head, end)); 0 for invalid lanes. Warp w of
// the launch covers elements 32w .. 32w + 31, as in the kernels above.
extern "C" __global__ void peer_masks(const unsigned *keys, u64 n, unsigned nbins, unsigned method,
                                      unsigned *out) {
    const unsigned lane = lane_id();
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 base = (u64)blockIdx.x * blockDim.x + (threadIdx.x - lane); base < n; base += stride) {
        const u64 i = base + lane;
        const unsigned key = i < n ? keys[i] : 0xffffffffu;
        const bool valid = key < nbins;
        unsigned mask;
        if (method == PRIMS_ATOMICS_PEERS_BALLOT) {
            mask = peers_ballot(key, valid);
        } else if (method == PRIMS_ATOMICS_PEERS_MATCH) {
            mask = peers_match(key, valid);
        } else {
            bool head;
            const unsigned end = run_end(key, valid, &head);
            // The run's first lane: the highest head at or below this lane.
            const unsigned heads = __ballot_sync(kFullMask, head);
            const unsigned at_or_below = heads & (lanemask_lt() | (1u << lane));
            const unsigned first = at_or_below != 0 ? 31u - __clz(at_or_below) : lane;
            mask = valid ? lane_range(first, end) : 0u;
        }
        if (i < n) out[i] = mask;
    }
}
#endif
