// Swendsen–Wang sweeps of the q-state Potts model on a periodic W x H
// lattice of row-major byte spins (site i = y*W + x), bit-identical with
// the CPU reference in crates/potts/src/swendsen_wang.rs, which documents
// the rule that names every random number.
//
// One sweep is three launches:
//
//   sw_local    one block per tile of TILE_W x TILE_H sites: draws the
//               bonds, joins the tile's sites through the bonds inside it
//               (runs along rows by warp ballots, then union-find in shared
//               memory), and writes each site's label: the global index of
//               its tile-local root;
//   sw_merge    the bonds that leave a tile (its right column and bottom
//               row, wrap-around included) joined by lock-free union-find
//               on the global labels;
//   sw_update   one block per tile again: every cluster's root, its new
//               state drawn from the root's index, and every site's spin.
//
// Labelling as in Playne and Hawick (2018), block-local union-find then a
// global merge, and Komura and Okabe (2012) for Swendsen–Wang on GPUs.
// Every union hangs the larger root under the smaller (atomicMin), so a
// parent never exceeds its child and each tree's root is the smallest site
// index in it, whatever order threads run in: that root is the canonical
// label the new state is keyed by.
//
// Labels are u32 where the sites fit and u64 beyond (the template
// parameter L); within a tile they are u32 in shared memory.
#include "warpmc_rng.cuh"

using warpmc::rng::u32;
using warpmc::rng::u64;
using warpmc::rng::Words4;
typedef unsigned char u8;

// The tile shape and block size come from the Rust side (cuda_sw.rs,
// kernel_source), never as copies.
#if !defined(POTTS_SW_TILE_W) || !defined(POTTS_SW_TILE_H) || !defined(POTTS_SW_THREADS)
#error "potts_sw.cu is compiled through warpmc_potts::cuda_sw::kernel_source, which defines POTTS_SW_*"
#endif
#define TILE_W POTTS_SW_TILE_W
#define TILE_H POTTS_SW_TILE_H
#define TILE_SITES (TILE_W * TILE_H)
#if TILE_W % 2 != 0
#error "POTTS_SW_TILE_W must be even: a thread draws the bonds of two neighbouring sites"
#endif

// Words (right bond, lower bond) of site i from the Philox block of its
// pair ⌊i/2⌋.
__device__ __forceinline__ void pick(const Words4& b, u64 i, u32& right, u32& down) {
    right = (i & 1) ? b.w2 : b.w0;
    down = (i & 1) ? b.w3 : b.w1;
}

__device__ __forceinline__ Words4 pair_block(u64 seed, u64 bond_stream, u64 sweep, u64 pair) {
    return warpmc::rng::philox_block(seed, bond_stream, (sweep << 33) | pair);
}

// The new state of the cluster whose smallest site index is r.
__device__ __forceinline__ u8 cluster_state(u64 seed, u64 cluster_stream, u64 sweep, u64 r, u32 q) {
    const Words4 b = warpmc::rng::philox_block(seed, cluster_stream, (sweep << 32) | (r >> 2));
    const u32 k = (u32)(r & 3);
    const u32 w = k == 0 ? b.w0 : k == 1 ? b.w1 : k == 2 ? b.w2 : b.w3;
    return (u8)(((u64)w * q) >> 32);
}

// ---- Union-find --------------------------------------------------------------
//
// find halves the path on the way (plain stores of an ancestor: a racing
// store can only replace a parent by another ancestor, so trees keep their
// sites); union retries with the value atomicMin found when the presumed
// root got a parent meanwhile, so no join is lost.

template <typename L>
__device__ __forceinline__ L find_halving(volatile L* parent, L i) {
    L p = parent[i];
    while (p != i) {
        const L g = parent[p];
        if (g != p) parent[i] = g;
        i = p;
        p = g;
    }
    return i;
}

template <typename L>
__device__ __forceinline__ void unite(L* parent, L a, L b) {
    for (;;) {
        a = find_halving<L>(parent, a);
        b = find_halving<L>(parent, b);
        if (a == b) return;
        if (a < b) {
            const L t = a;
            a = b;
            b = t;
        }
        // Hang root a under the smaller b.
        const L old = atomicMin(parent + a, b);
        if (old == a) return;
        a = old;
    }
}

// The root of i, reading only: for a pass whose results other threads read
// back from the parent array, where a halving store could replace a root
// just written by its owner with a mere ancestor.
__device__ __forceinline__ u32 find_reading(volatile u32* parent, u32 i) {
    for (u32 p = parent[i]; p != i; p = parent[i]) i = p;
    return i;
}

// Appends `value` to a block's shared work list where `want`, one atomic
// per warp; every lane of the warp must call it. The list's order depends
// on thread timing, so its work must not (unions and finds commute).
__device__ __forceinline__ void push(bool want, u32 value, u32* list, u32* count) {
    const u32 mask = __ballot_sync(0xffffffffu, want);
    if (!mask) return;
    const u32 lane = threadIdx.x & 31u, leader = __ffs(mask) - 1;
    u32 base = 0;
    if (lane == leader) base = atomicAdd(count, __popc(mask));
    base = __shfl_sync(0xffffffffu, base, leader);
    if (want) list[base + __popc(mask & ((1u << lane) - 1u))] = value;
}

// ---- The tile kernel ----------------------------------------------------------

// Tile t of a lattice tiles_x tiles wide: its corner and its clipped size.
struct Tile {
    u32 x0, y0, w, h;
};

__device__ __forceinline__ Tile tile_of(u32 t, u32 tiles_x, u32 W, u32 H) {
    Tile tile;
    tile.x0 = (u32)(t % tiles_x) * TILE_W;
    tile.y0 = (u32)(t / tiles_x) * TILE_H;
    tile.w = min((u32)TILE_W, W - tile.x0);
    tile.h = min((u32)TILE_H, H - tile.y0);
    return tile;
}

// Bit x of the result is bit x/2 of `even` for even x, of `odd` for odd x.
__device__ __forceinline__ u64 interleave(u32 even, u32 odd) {
    u64 a = even, b = odd;
    a = (a | a << 16) & 0x0000FFFF0000FFFFull;
    b = (b | b << 16) & 0x0000FFFF0000FFFFull;
    a = (a | a << 8) & 0x00FF00FF00FF00FFull;
    b = (b | b << 8) & 0x00FF00FF00FF00FFull;
    a = (a | a << 4) & 0x0F0F0F0F0F0F0F0Full;
    b = (b | b << 4) & 0x0F0F0F0F0F0F0F0Full;
    a = (a | a << 2) & 0x3333333333333333ull;
    b = (b | b << 2) & 0x3333333333333333ull;
    a = (a | a << 1) & 0x5555555555555555ull;
    b = (b | b << 1) & 0x5555555555555555ull;
    return a | (b << 1);
}

// The first column of the run of column x in a row whose right bonds are
// `right` (bit c: c and c + 1 joined): one past the last break below x.
__device__ __forceinline__ u32 run_start(u64 right, u32 x) {
    const u64 breaks = ~right & ((1ull << x) - 1ull);
    return breaks ? 64u - (u32)__clzll((long long)breaks) : 0u;
}

// The tile kernel. A warp draws a row of 64 sites at a time (a lane the two
// sites of one Philox block) and gathers the row's bonds with ballots: the
// sites joined by right bonds form runs, and each site's parent is its
// run's first site, with no union at all. Only the lower bonds then join
// runs by union-find, one union per pair of runs where several neighbouring
// columns join the same two: far fewer and shallower trees than a union per
// bond, whose long finds diverge within warps.
#if TILE_W != 64
#error "the tile kernel gives a warp's 32 lanes the 64 sites of a tile row: POTTS_SW_TILE_W must be 64"
#endif
// Sites of a tile each thread of a tile kernel serves: sites threadIdx.x +
// k * POTTS_SW_THREADS for k < SITES_PER_THREAD, the same count in every
// lane, so warp votes stay converged.
#define SITES_PER_THREAD (TILE_SITES / POTTS_SW_THREADS)
#if TILE_SITES % POTTS_SW_THREADS != 0 || POTTS_SW_THREADS % 32 != 0
#error "POTTS_SW_THREADS must be a multiple of 32 dividing the tile's sites"
#endif

// Levels of the row merge in a tile: rows y, y + 1 are joined at level
// ctz(y + 1) < log2(TILE_H).
#if TILE_H == 32
#define LEVELS 5u
#else
#error "POTTS_SW_TILE_H must be 32 (the tile kernel's merge levels)"
#endif

// Where level l's unions start in the work list: level l has at most
// TILE_W * TILE_H / 2^(l+1) of them (one per column of each of its row
// boundaries), levels packed one after another.
__device__ __forceinline__ u32 level_base(u32 level) {
    return TILE_SITES - (TILE_SITES >> level);
}

template <typename L>
__device__ void sw_local(const u8* __restrict__ spins, L* __restrict__ label, u32 W, u32 H, u32 tiles_x, u64 seed,
                         u64 bond_stream, u64 sweep, u32 threshold) {
    __shared__ u32 parent[TILE_SITES];
    __shared__ u32 work[TILE_SITES - TILE_W];  // the unions between rows, by level (level_base)
    __shared__ u32 starts[TILE_SITES];         // the first site of every run
    __shared__ u64 right_of_row[TILE_H];       // bit x: sites x and x + 1 joined (both in the tile)
    __shared__ u64 down_of_row[TILE_H];        // bit x: site x joined to the one below (in the tile)
    __shared__ u32 count[LEVELS + 1];          // entries of each level's unions, then of starts
    const Tile tile = tile_of(blockIdx.x, tiles_x, W, H);
    const u32 lane = threadIdx.x & 31u, warps = blockDim.x >> 5;
    const u32 lx = 2 * lane;
    if (threadIdx.x <= LEVELS) count[threadIdx.x] = 0;

    for (u32 ly = threadIdx.x >> 5; ly < TILE_H; ly += warps) {
        bool r0 = false, d0 = false, r1 = false, d1 = false;
        if (ly < tile.h && lx < tile.w) {
            const u64 i = (u64)(tile.y0 + ly) * W + tile.x0 + lx;
            const Words4 b0 = pair_block(seed, bond_stream, sweep, i >> 1);
            u32 wr0, wd0;
            pick(b0, i, wr0, wd0);
            const u8 s0 = spins[i];
            const bool below = ly + 1 < tile.h;
            r0 = lx + 1 < tile.w && wr0 < threshold && spins[i + 1] == s0;
            d0 = below && wd0 < threshold && spins[i + W] == s0;
            if (lx + 1 < tile.w) {
                const u64 i1 = i + 1;
                const Words4 b1 = (i & 1) ? pair_block(seed, bond_stream, sweep, i1 >> 1) : b0;
                u32 wr1, wd1;
                pick(b1, i1, wr1, wd1);
                const u8 s1 = spins[i1];
                r1 = lx + 2 < tile.w && wr1 < threshold && spins[i1 + 1] == s1;
                d1 = below && wd1 < threshold && spins[i1 + W] == s1;
            }
        }
        const u64 right = interleave(__ballot_sync(0xffffffffu, r0), __ballot_sync(0xffffffffu, r1));
        const u64 down = interleave(__ballot_sync(0xffffffffu, d0), __ballot_sync(0xffffffffu, d1));
        if (lane == 0) {
            right_of_row[ly] = right;
            down_of_row[ly] = down;
        }
        parent[ly * TILE_W + lx] = ly * TILE_W + run_start(right, lx);
        parent[ly * TILE_W + lx + 1] = ly * TILE_W + run_start(right, lx + 1);
    }
    __syncthreads();
    // The unions between rows, gathered first and then done by all threads
    // side by side (a union costs far more than the test for one, and done
    // where found it would hold up its whole warp), level by level: level l
    // joins the strips of 2^l rows pairwise, across the rows y, y + 1 with
    // y + 1 an odd multiple of 2^l, and then points every run's first site
    // at its root again. Done all at once, unions of a column of runs make
    // chains of roots as long as the tile is high, which every find then
    // walks; by levels a find takes a hop or two.
    for (u32 k = 0; k < SITES_PER_THREAD; ++k) {
        const u32 li = threadIdx.x + k * POTTS_SW_THREADS, ly = li / TILE_W, x = li % TILE_W;
        bool want = false;
        u32 pair = 0, level = 0;
        if (ly + 1 < TILE_H) {
            const u64 down = down_of_row[ly], above = right_of_row[ly], under = right_of_row[ly + 1];
            // Not when column x - 1 already joins the same two runs.
            want = ((down >> x) & 1) && !(x > 0 && ((down & above & under) >> (x - 1)) & 1);
            pair = (ly * TILE_W + run_start(above, x)) | (((ly + 1) * TILE_W + run_start(under, x)) << 16);
            level = __ffs(ly + 1) - 1;
        }
        // A warp's lanes share a row, hence a level.
        push(want, pair, work + level_base(level), &count[level]);
    }
    // The first site of every run, in the tile's own list.
    for (u32 k = 0; k < SITES_PER_THREAD; ++k) {
        const u32 li = threadIdx.x + k * POTTS_SW_THREADS, ly = li / TILE_W, x = li % TILE_W;
        const bool first = ly < tile.h && x < tile.w && (x == 0 || !((right_of_row[ly] >> (x - 1)) & 1));
        push(first, li, starts, &count[LEVELS]);
    }
    __syncthreads();
    const u32 n_starts = count[LEVELS];
    for (u32 level = 0; level < LEVELS; ++level) {
        const u32 n = count[level];
        const u32* pairs = work + level_base(level);
        for (u32 k = threadIdx.x; k < n; k += blockDim.x) unite<u32>(parent, pairs[k] & 0xffffu, pairs[k] >> 16);
        __syncthreads();
        // Read-only finds: see find_reading.
        for (u32 k = threadIdx.x; k < n_starts; k += blockDim.x) {
            const u32 li = starts[k];
            parent[li] = find_reading(parent, li);
        }
        __syncthreads();
    }
    // Every site's label: the global index of its tile root (the tile's
    // row-major order is the lattice's, so the tile-local minimum is the
    // global one).
    for (u32 k = 0; k < SITES_PER_THREAD; ++k) {
        const u32 li = threadIdx.x + k * POTTS_SW_THREADS, ly = li / TILE_W, x = li % TILE_W;
        if (ly >= tile.h || x >= tile.w) continue;
        const u32 r = parent[ly * TILE_W + run_start(right_of_row[ly], x)];
        label[(u64)(tile.y0 + ly) * W + tile.x0 + x] = (L)((u64)(tile.y0 + r / TILE_W) * W + tile.x0 + r % TILE_W);
    }
}

// ---- The global merge ---------------------------------------------------------

// Slot k of a tile: k < TILE_H the right bond of row k of its last column,
// else the lower bond of column k - TILE_H of its last row.
template <typename L>
__device__ void sw_merge(const u8* __restrict__ spins, L* label, u32 W, u32 H, u32 tiles_x, u64 tiles, u64 seed,
                         u64 bond_stream, u64 sweep, u32 threshold) {
    const u64 slots = tiles * (TILE_W + TILE_H);
    for (u64 s = (u64)blockIdx.x * blockDim.x + threadIdx.x; s < slots; s += (u64)gridDim.x * blockDim.x) {
        const u32 t = (u32)(s / (TILE_W + TILE_H));  // tiles < 2^31: one per block of sw_local
        const u32 k = (u32)(s - (u64)t * (TILE_W + TILE_H));
        const Tile tile = tile_of(t, tiles_x, W, H);
        u32 x, y;
        bool right;
        if (k < TILE_H) {
            if (k >= tile.h) continue;
            x = tile.x0 + tile.w - 1;
            y = tile.y0 + k;
            right = true;
        } else {
            if (k - TILE_H >= tile.w) continue;
            x = tile.x0 + (k - TILE_H);
            y = tile.y0 + tile.h - 1;
            right = false;
        }
        const u64 i = (u64)y * W + x;
        const u64 j = right ? (x + 1 == W ? i - x : i + 1) : (y + 1 == H ? (u64)x : i + W);
        u32 r, d;
        pick(pair_block(seed, bond_stream, sweep, i >> 1), i, r, d);
        if ((right ? r : d) < threshold && spins[i] == spins[j]) unite<L>(label, (L)i, (L)j);
    }
}

// ---- New states ----------------------------------------------------------------

// The new states, tile by tile: a site whose label points outside the tile
// or at itself (a "tile root") finds its cluster's root r in the global
// labels and draws the state keyed by r; every other site follows labels
// inside the tile, in shared memory, to a tile root and takes its state.
// So only tile roots walk the global trees and draw (gathered into a list
// first, so that they do not hold up warps of other sites), and no pass
// over the whole lattice is spent on the roots alone.
#define OUTSIDE 0xffffffffu

// n / W for 32-bit labels by a multiply-high with inverse = ⌈2^64 / W⌉,
// exact for every 32-bit n and W ≥ 2 (Lemire, Kaser and Kurz 2019); the
// Rust side passes 0 for W = 1. 64-bit labels divide.
__device__ __forceinline__ u32 divide(u32 n, u32 W, u64 inverse) {
    return W == 1 ? n : (u32)__umul64hi(inverse, (u64)n);
}
__device__ __forceinline__ u64 divide(u64 n, u32 W, u64) { return n / W; }

template <typename L>
__device__ void sw_update(u8* __restrict__ spins, L* label, u32 W, u32 H, u32 tiles_x, u64 w_inverse, u32 q,
                          u64 seed, u64 cluster_stream, u64 sweep) {
    __shared__ u32 local[TILE_SITES];  // the site's label as a tile index, or OUTSIDE
    __shared__ u32 roots[TILE_SITES];  // the tile roots, compacted
    __shared__ u8 state[TILE_SITES];   // a tile root's new state
    __shared__ u32 count;
    const Tile tile = tile_of(blockIdx.x, tiles_x, W, H);
    if (threadIdx.x == 0) count = 0;
    __syncthreads();
    for (u32 k = 0; k < SITES_PER_THREAD; ++k) {
        const u32 li = threadIdx.x + k * POTTS_SW_THREADS, ly = li / TILE_W, x = li % TILE_W;
        const bool in = ly < tile.h && x < tile.w;
        u32 at = li;
        if (in) {
            const L i = (L)((u64)(tile.y0 + ly) * W + tile.x0 + x);
            const L l = label[i];
            if (l != i) {
                // Labels never exceed their site, so l lies at or above row y.
                const L ry = divide(l, W, w_inverse), rx = l - ry * W;
                const bool inside = ry >= tile.y0 && rx >= tile.x0 && rx < tile.x0 + tile.w;
                at = inside ? (u32)(ry - tile.y0) * TILE_W + (u32)(rx - tile.x0) : OUTSIDE;
            }
            local[li] = at;
        }
        push(in && (at == li || at == OUTSIDE), li, roots, &count);
    }
    __syncthreads();
    const u32 n = count;
    for (u32 k = threadIdx.x; k < n; k += blockDim.x) {
        const u32 li = roots[k];
        const L i = (L)((u64)(tile.y0 + li / TILE_W) * W + tile.x0 + li % TILE_W);
        const L r = local[li] == li ? i : find_halving<L>(label, i);
        state[li] = cluster_state(seed, cluster_stream, sweep, (u64)r, q);
    }
    __syncthreads();
    for (u32 k = 0; k < SITES_PER_THREAD; ++k) {
        const u32 li = threadIdx.x + k * POTTS_SW_THREADS, ly = li / TILE_W, x = li % TILE_W;
        if (ly >= tile.h || x >= tile.w) continue;
        u32 at = li;
        for (u32 next = local[at]; next != at && next != OUTSIDE; next = local[at]) at = next;
        spins[(u64)(tile.y0 + ly) * W + tile.x0 + x] = state[at];
    }
}

// ---- Census ----------------------------------------------------------------------

// out[0] += equal-neighbour bonds, out[1 + s] += sites in state s; rows
// grid-strided over blocks, columns over threads.
extern "C" __global__ void sw_census(const u8* __restrict__ spins, u32 W, u32 H, u32 q, u64* out) {
    __shared__ u32 counts[256];
    __shared__ u64 bonds_of_warp[32];
    for (u32 k = threadIdx.x; k < q; k += blockDim.x) counts[k] = 0;
    __syncthreads();
    u64 bonds = 0;
    for (u32 y = blockIdx.x; y < H; y += gridDim.x) {
        const u8* row = spins + (u64)y * W;
        const u8* next = spins + (u64)(y + 1 == H ? 0 : y + 1) * W;
        u32 run = 0;
        for (u32 x = threadIdx.x; x < W; x += blockDim.x) {
            const u8 s = row[x];
            run += (s == row[x + 1 == W ? 0 : x + 1]) + (s == next[x]);
            atomicAdd(&counts[s], 1u);
        }
        bonds += run;
    }
    for (int o = 16; o > 0; o >>= 1) bonds += __shfl_down_sync(0xffffffffu, bonds, o);
    if ((threadIdx.x & 31) == 0) bonds_of_warp[threadIdx.x >> 5] = bonds;
    __syncthreads();
    if (threadIdx.x == 0) {
        u64 sum = 0;
        for (u32 w = 0; w < blockDim.x / 32; ++w) sum += bonds_of_warp[w];
        atomicAdd(out, sum);
    }
    for (u32 k = threadIdx.x; k < q; k += blockDim.x) {
        if (counts[k]) atomicAdd(out + 1 + k, (u64)counts[k]);
    }
}

// ---- Entry points, one per label width ------------------------------------------

#define SW_ENTRY_POINTS(L, SUFFIX)                                                                                   \
    extern "C" __global__ void __launch_bounds__(POTTS_SW_THREADS)                                                   \
        sw_local_##SUFFIX(const u8* spins, L* label, u32 W, u32 H, u32 tiles_x, u64 seed, u64 bond_stream,          \
                          u64 sweep, u32 threshold) {                                                               \
        sw_local<L>(spins, label, W, H, tiles_x, seed, bond_stream, sweep, threshold);                              \
    }                                                                                                                \
    extern "C" __global__ void sw_merge_##SUFFIX(const u8* spins, L* label, u32 W, u32 H, u32 tiles_x, u64 tiles,   \
                                                 u64 seed, u64 bond_stream, u64 sweep, u32 threshold) {             \
        sw_merge<L>(spins, label, W, H, tiles_x, tiles, seed, bond_stream, sweep, threshold);                       \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(POTTS_SW_THREADS)                                                   \
        sw_update_##SUFFIX(u8* spins, L* label, u32 W, u32 H, u32 tiles_x, u64 w_inverse, u32 q, u64 seed,          \
                           u64 cluster_stream, u64 sweep) {                                                         \
        sw_update<L>(spins, label, W, H, tiles_x, w_inverse, q, seed, cluster_stream, sweep);                       \
    }

SW_ENTRY_POINTS(u32, u32)
SW_ENTRY_POINTS(u64, u64)
