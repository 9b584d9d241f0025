// Swendsen–Wang sweeps of the q-state Potts model on a periodic W x H
// lattice of row-major byte spins (site i = y*W + x), bit-identical with
// the CPU reference in crates/potts/src/swendsen_wang.rs, which documents
// the rule that names every random number.
//
// One sweep is four launches:
//
//   sw_local    one block per tile of TILE_W x TILE_H sites: draws the
//               bonds, joins the tile's sites through the bonds inside it
//               by union-find in shared memory, and writes each site's
//               label: the global index of its tile-local root;
//   sw_merge    the bonds that leave a tile (its right column and bottom
//               row, wrap-around included) joined by lock-free union-find
//               on the global labels;
//   sw_roots    every root draws its cluster's new state into its own spin;
//   sw_relabel  every other site follows its labels to the root and takes
//               the root's spin.
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

// ---- The tile kernel ----------------------------------------------------------

// Tile t of a lattice tiles_x tiles wide: its corner and its clipped size.
struct Tile {
    u32 x0, y0, w, h;
};

__device__ __forceinline__ Tile tile_of(u64 t, u32 tiles_x, u32 W, u32 H) {
    Tile tile;
    tile.x0 = (u32)(t % tiles_x) * TILE_W;
    tile.y0 = (u32)(t / tiles_x) * TILE_H;
    tile.w = min((u32)TILE_W, W - tile.x0);
    tile.h = min((u32)TILE_H, H - tile.y0);
    return tile;
}

template <typename L>
__device__ void sw_local(const u8* __restrict__ spins, L* __restrict__ label, u32 W, u32 H, u32 tiles_x, u64 seed,
                         u64 bond_stream, u64 sweep, u32 threshold) {
    __shared__ u32 parent[TILE_SITES];
    __shared__ u8 mask[TILE_SITES];  // bit 0: right bond active inside the tile, bit 1: lower bond
    const Tile tile = tile_of(blockIdx.x, tiles_x, W, H);

    // Bonds: thread k serves pairs (2j, 2j + 1) of tile columns.
    for (u32 k = threadIdx.x; k < TILE_SITES / 2; k += blockDim.x) {
        const u32 ly = k / (TILE_W / 2);
        const u32 lx = 2 * (k % (TILE_W / 2));
        const u32 li = ly * TILE_W + lx;
        parent[li] = li;
        parent[li + 1] = li + 1;
        mask[li] = 0;
        mask[li + 1] = 0;
        if (ly >= tile.h || lx >= tile.w) continue;
        const u32 x = tile.x0 + lx, y = tile.y0 + ly;
        const u64 i = (u64)y * W + x;
        const bool second = lx + 1 < tile.w;
        const Words4 b0 = pair_block(seed, bond_stream, sweep, i >> 1);
        u32 r0, d0;
        pick(b0, i, r0, d0);
        const u8 s0 = spins[i];
        const u64 below = i + W;  // read only when row y + 1 is in the tile
        u8 m0 = 0;
        if (lx + 1 < tile.w && r0 < threshold && spins[i + 1] == s0) m0 |= 1;
        if (ly + 1 < tile.h && d0 < threshold && spins[below] == s0) m0 |= 2;
        mask[li] = m0;
        if (second) {
            const u64 i1 = i + 1;
            const Words4 b1 = (i & 1) ? pair_block(seed, bond_stream, sweep, i1 >> 1) : b0;
            u32 r1, d1;
            pick(b1, i1, r1, d1);
            const u8 s1 = spins[i1];
            u8 m1 = 0;
            if (lx + 2 < tile.w && r1 < threshold && spins[i1 + 1] == s1) m1 |= 1;
            if (ly + 1 < tile.h && d1 < threshold && spins[below + 1] == s1) m1 |= 2;
            mask[li + 1] = m1;
        }
    }
    __syncthreads();
    for (u32 li = threadIdx.x; li < TILE_SITES; li += blockDim.x) {
        const u8 m = mask[li];
        if (m & 1) unite<u32>(parent, li, li + 1);
        if (m & 2) unite<u32>(parent, li, li + TILE_W);
    }
    __syncthreads();
    // Every site's label: the global index of its tile root (the tile's
    // row-major order is the lattice's, so the tile-local minimum is the
    // global one).
    for (u32 li = threadIdx.x; li < TILE_SITES; li += blockDim.x) {
        const u32 ly = li / TILE_W, lx = li % TILE_W;
        if (ly >= tile.h || lx >= tile.w) continue;
        const u32 r = find_halving<u32>(parent, li);
        const u32 ry = r / TILE_W, rx = r % TILE_W;
        label[(u64)(tile.y0 + ly) * W + tile.x0 + lx] = (L)((u64)(tile.y0 + ry) * W + tile.x0 + rx);
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
        const u64 t = s / (TILE_W + TILE_H);
        const u32 k = (u32)(s - t * (TILE_W + TILE_H));
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

template <typename L>
__device__ void sw_roots(u8* __restrict__ spins, const L* __restrict__ label, u64 n, u32 q, u64 seed,
                         u64 cluster_stream, u64 sweep) {
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        if (label[i] == (L)i) spins[i] = cluster_state(seed, cluster_stream, sweep, i, q);
    }
}

// Roots keep the state sw_roots gave them; every other site reads its
// root's spin (a root's spin is never written here).
template <typename L>
__device__ void sw_relabel(u8* spins, L* label, u64 n) {
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        const L r = find_halving<L>(label, (L)i);
        if (r != (L)i) spins[i] = spins[r];
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
    extern "C" __global__ void sw_roots_##SUFFIX(u8* spins, const L* label, u64 n, u32 q, u64 seed,                 \
                                                 u64 cluster_stream, u64 sweep) {                                   \
        sw_roots<L>(spins, label, n, q, seed, cluster_stream, sweep);                                               \
    }                                                                                                                \
    extern "C" __global__ void sw_relabel_##SUFFIX(u8* spins, L* label, u64 n) { sw_relabel<L>(spins, label, n); }

SW_ENTRY_POINTS(u32, u32)
SW_ENTRY_POINTS(u64, u64)
