// Swendsen–Wang sweeps of the q-state Potts model on a periodic W x H
// lattice of row-major byte spins (site i = y*W + x), bit-identical with
// the CPU reference in crates/potts/src/swendsen_wang.rs, which documents
// the rule that names every random number.
//
// The lattice is cut into tiles of TILE_W x TILE_H sites. One sweep is
// three launches:
//
//   sw_local    one block per tile: draws the bonds, joins the tile's sites
//               through the bonds inside it, and writes for every site its
//               tile root (the smallest site of its component within the
//               tile) as a tile index, `root_in_tile` (u16), and for every
//               tile root r its parent in the global union-find,
//               parent[r] = r;
//   sw_merge    the bonds that leave a tile (its right column and bottom
//               row, wrap-around included) join tile roots by lock-free
//               union-find on `parent`;
//   sw_update   one block per tile again: each tile root finds its
//               cluster's root and draws the state keyed by it, and every
//               site takes its tile root's state.
//
// Labelling as in Playne and Hawick (2018), block-local union-find then a
// global merge, and Komura and Okabe (2012) for Swendsen–Wang on GPUs.
// Every union hangs the larger root under the smaller (atomicMin), so a
// parent never exceeds its child and each tree's root is the smallest site
// index in it, whatever order threads run in: that root is the canonical
// label the new state is keyed by. Only tile roots ever enter the global
// trees, so `parent` is written and read at tile roots only, and a site's
// way to its cluster's root is one lookup in its tile plus the walk from
// its tile root.
//
// Within a tile, a warp takes a row of 64 sites at a time, a lane the two
// sites of one Philox block. The sites joined by right bonds form runs,
// found from the row's bonds gathered by ballots, with no union at all;
// union-find in shared memory then joins runs through the lower bonds, one
// union for each stretch of columns joining the same two runs.
//
// Parents are u32 where the sites fit and u64 beyond (the template
// parameter L); within a tile they are u32 in shared memory.
#include "warpmc_rng.cuh"

using warpmc::rng::u32;
using warpmc::rng::u64;
using warpmc::rng::Words4;
typedef unsigned char u8;
typedef unsigned short u16;

// The tile shape and block size come from the Rust side (cuda_sw.rs,
// kernel_source), never as copies.
#if !defined(POTTS_SW_TILE_W) || !defined(POTTS_SW_TILE_H) || !defined(POTTS_SW_THREADS)
#error "potts_sw.cu is compiled through warpmc_potts::cuda_sw::kernel_source, which defines POTTS_SW_*"
#endif
#define TILE_W POTTS_SW_TILE_W
#define TILE_H POTTS_SW_TILE_H
#define TILE_SITES (TILE_W * TILE_H)
#if TILE_W != 64
#error "a warp's 32 lanes take the 64 sites of a tile row: POTTS_SW_TILE_W must be 64"
#endif
#if POTTS_SW_THREADS % 32 != 0 || TILE_SITES > 65536 || (TILE_H & (TILE_H - 1)) != 0
#error "POTTS_SW_THREADS must be whole warps; tile indices must fit in 16 bits; TILE_H a power of two"
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

// ---- Tiles -----------------------------------------------------------------------

// Tile t of a lattice tiles_x tiles wide: its corner and its clipped size.
struct Tile {
    u32 x0, y0, w, h;
};

__device__ __forceinline__ Tile tile_of(u32 t, u32 tiles_x, u32 W, u32 H) {
    Tile tile;
    tile.x0 = (t % tiles_x) * TILE_W;
    tile.y0 = (t / tiles_x) * TILE_H;
    tile.w = min((u32)TILE_W, W - tile.x0);
    tile.h = min((u32)TILE_H, H - tile.y0);
    return tile;
}

// The global index of tile index li of the tile with corner (x0, y0).
__device__ __forceinline__ u64 global_index(u32 x0, u32 y0, u32 W, u32 li) {
    return (u64)(y0 + li / TILE_W) * W + x0 + li % TILE_W;
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

// A row's bonds, gathered from lanes that hold sites 2l and 2l + 1 (the
// two sites of a Philox block): `bits` has bit 0 the right and bit 2 the
// lower bond of site 2l, bits 1 and 3 those of site 2l + 1. Returns the
// row's masks (bit x: the bond of site x): each lane fetches sites l and
// l + 32 from their owners, and two ballots per mask gather them.
__device__ __forceinline__ void row_masks(u32 bits, u64& right, u64& down) {
    const u32 lane = threadIdx.x & 31u;
    const u32 lo = __shfl_sync(0xffffffffu, bits, lane >> 1) >> (lane & 1);
    const u32 hi = __shfl_sync(0xffffffffu, bits, 16 + (lane >> 1)) >> (lane & 1);
    right = __ballot_sync(0xffffffffu, lo & 1u) | (u64)__ballot_sync(0xffffffffu, hi & 1u) << 32;
    down = __ballot_sync(0xffffffffu, lo & 4u) | (u64)__ballot_sync(0xffffffffu, hi & 4u) << 32;
}

// The first column of the run of column x in a row whose right bonds are
// `right` (bit c: c and c + 1 joined): one past the last break below x.
__device__ __forceinline__ u32 run_start(u64 right, u32 x) {
    const u64 breaks = ~right & ((1ull << x) - 1ull);
    return breaks ? 64u - (u32)__clzll((long long)breaks) : 0u;
}

// Reserves, for a warp, one place in a shared list for each set bit of the
// warp-uniform `mask`; every lane gets the first place. The list's order
// depends on thread timing, so its work must not (unions and finds
// commute).
__device__ __forceinline__ u32 reserve(u64 mask, u32* count) {
    u32 base = 0;
    if ((threadIdx.x & 31u) == 0 && mask) base = atomicAdd(count, (u32)__popcll((long long)mask));
    return __shfl_sync(0xffffffffu, base, 0);
}

// The place of bit x among the set bits of mask.
__device__ __forceinline__ u32 rank(u64 mask, u32 x) {
    return (u32)__popcll((long long)(mask & ((1ull << x) - 1ull)));
}

// Columns of a tile row that lie in the lattice.
__device__ __forceinline__ u64 columns(const Tile& tile) {
    return tile.w == 64 ? ~0ull : (1ull << tile.w) - 1ull;
}

// ---- The tile kernel ----------------------------------------------------------------

template <typename L>
__device__ void sw_local(const u8* __restrict__ spins, u16* __restrict__ root_in_tile, L* __restrict__ parent_g,
                         u32 W, u32 H, u32 tiles_x, u64 seed, u64 bond_stream, u64 sweep, u32 threshold) {
    __shared__ u32 parent[TILE_SITES];    // read and written at runs' first sites only
    __shared__ u32 unions[TILE_SITES];    // pairs of first sites (a | b << 16) to join
    __shared__ u32 starts[TILE_SITES];    // the first site of every run
    __shared__ u64 right_of_row[TILE_H];  // bit x: sites x and x + 1 joined (both in the tile)
    __shared__ u64 down_of_row[TILE_H];   // bit x: site x joined to the one below (in the tile)
    __shared__ u32 n_unions, n_starts;
    const Tile tile = tile_of(blockIdx.x, tiles_x, W, H);
    const u32 lane = threadIdx.x & 31u, warps = blockDim.x >> 5;
    const u32 lx = 2 * lane;
    const u64 in_row = columns(tile);
    if (threadIdx.x == 0) n_unions = n_starts = 0;
    __syncthreads();

    // Bonds, rows' masks, and the runs' first sites.
    for (u32 ly = threadIdx.x >> 5; ly < tile.h; ly += warps) {
        bool r0 = false, d0 = false, r1 = false, d1 = false;
        if (lx < tile.w) {
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
        u64 right, down;
        row_masks((u32)r0 | (u32)r1 << 1 | (u32)d0 << 2 | (u32)d1 << 3, right, down);
        if (lane == 0) {
            right_of_row[ly] = right;
            down_of_row[ly] = down;
        }
        // From here on a lane serves columns l and l + 32.
        const u64 firsts = in_row & ~(right << 1);
        const u32 base = reserve(firsts, &n_starts);
        for (u32 x = lane; x < TILE_W; x += 32) {
            if ((firsts >> x) & 1) {
                starts[base + rank(firsts, x)] = ly * TILE_W + x;
                parent[ly * TILE_W + x] = ly * TILE_W + x;
            }
        }
    }
    __syncthreads();
    // The unions between rows: in each row, one per stretch of columns whose
    // lower bonds join the same two runs (column x - 1 joins them already
    // when it has a lower bond and both rows join x - 1 to x).
    for (u32 ly = threadIdx.x >> 5; ly + 1 < tile.h; ly += warps) {
        const u64 down = down_of_row[ly], above = right_of_row[ly], under = right_of_row[ly + 1];
        const u64 joins = down & ~((down & above & under) << 1);
        const u32 base = reserve(joins, &n_unions);
        for (u32 x = lane; x < TILE_W; x += 32) {
            if ((joins >> x) & 1) {
                unions[base + rank(joins, x)] =
                    (ly * TILE_W + run_start(above, x)) | (((ly + 1) * TILE_W + run_start(under, x)) << 16);
            }
        }
    }
    __syncthreads();
    for (u32 k = threadIdx.x; k < n_unions; k += blockDim.x) unite<u32>(parent, unions[k] & 0xffffu, unions[k] >> 16);
    __syncthreads();
    for (u32 k = threadIdx.x; k < n_starts; k += blockDim.x) {
        const u32 s = starts[k];
        parent[s] = find_reading(parent, s);
    }
    __syncthreads();
    // Every site's tile root; every tile root starts a global tree.
    for (u32 ly = threadIdx.x >> 5; ly < tile.h; ly += warps) {
        const u64 right = right_of_row[ly];
        const u64 row = (u64)(tile.y0 + ly) * W + tile.x0;
        for (u32 x = lane; x < tile.w; x += 32) {
            const u32 r = parent[ly * TILE_W + run_start(right, x)];
            root_in_tile[row + x] = (u16)r;
            if (r == ly * TILE_W + x) parent_g[row + x] = (L)(row + x);
        }
    }
}

// ---- The global merge ---------------------------------------------------------

// The tile root of site (x, y), as a global index.
template <typename L>
__device__ __forceinline__ L tile_root(const u16* root_in_tile, u32 W, u32 x, u32 y) {
    return (L)global_index(x - x % TILE_W, y - y % TILE_H, W, root_in_tile[(u64)y * W + x]);
}

// Slot k of a tile: k < TILE_H the right bond of row k of its last column,
// else the lower bond of column k - TILE_H of its last row.
template <typename L>
__device__ void sw_merge(const u8* __restrict__ spins, const u16* __restrict__ root_in_tile, L* parent, u32 W, u32 H,
                         u32 tiles_x, u64 tiles, u64 seed, u64 bond_stream, u64 sweep, u32 threshold) {
    const u64 slots = tiles * (TILE_W + TILE_H);
    for (u64 s = (u64)blockIdx.x * blockDim.x + threadIdx.x; s < slots; s += (u64)gridDim.x * blockDim.x) {
        const u32 t = (u32)(s / (TILE_W + TILE_H));  // tiles < 2^31: one per block of sw_local
        const u32 k = (u32)(s - (u64)t * (TILE_W + TILE_H));
        const Tile tile = tile_of(t, tiles_x, W, H);
        u32 x, y, xn, yn;
        bool right;
        if (k < TILE_H) {
            if (k >= tile.h) continue;
            x = tile.x0 + tile.w - 1;
            y = tile.y0 + k;
            xn = x + 1 == W ? 0 : x + 1;
            yn = y;
            right = true;
        } else {
            if (k - TILE_H >= tile.w) continue;
            x = tile.x0 + (k - TILE_H);
            y = tile.y0 + tile.h - 1;
            xn = x;
            yn = y + 1 == H ? 0 : y + 1;
            right = false;
        }
        const u64 i = (u64)y * W + x;
        u32 r, d;
        pick(pair_block(seed, bond_stream, sweep, i >> 1), i, r, d);
        if ((right ? r : d) < threshold && spins[i] == spins[(u64)yn * W + xn]) {
            unite<L>(parent, tile_root<L>(root_in_tile, W, x, y), tile_root<L>(root_in_tile, W, xn, yn));
        }
    }
}

// ---- New states ----------------------------------------------------------------

// The new states, tile by tile: each tile root (gathered into a list first,
// so that the few do not hold up warps of the many) walks the global trees
// to its cluster's root r and draws the state keyed by r; every site then
// takes its tile root's state.
template <typename L>
__device__ void sw_update(u8* __restrict__ spins, const u16* __restrict__ root_in_tile, L* parent, u32 W, u32 H,
                          u32 tiles_x, u32 q, u64 seed, u64 cluster_stream, u64 sweep) {
    __shared__ u32 roots[TILE_SITES];  // the tile roots, as tile indices
    __shared__ u8 state[TILE_SITES];   // a tile root's new state
    __shared__ u32 n_roots;
    const Tile tile = tile_of(blockIdx.x, tiles_x, W, H);
    const u32 lane = threadIdx.x & 31u, warps = blockDim.x >> 5;
    const u32 lx = 2 * lane;
    const u64 in_row = columns(tile);
    if (threadIdx.x == 0) n_roots = 0;
    __syncthreads();
    for (u32 ly = threadIdx.x >> 5; ly < tile.h; ly += warps) {
        const u64 i = (u64)(tile.y0 + ly) * W + tile.x0 + lx;
        const bool root0 = lx < tile.w && root_in_tile[i] == ly * TILE_W + lx;
        const bool root1 = lx + 1 < tile.w && root_in_tile[i + 1] == ly * TILE_W + lx + 1;
        const u64 is_root = in_row & interleave(__ballot_sync(0xffffffffu, root0), __ballot_sync(0xffffffffu, root1));
        const u32 base = reserve(is_root, &n_roots);
        for (u32 x = lx; x < lx + 2; ++x) {
            if ((is_root >> x) & 1) roots[base + rank(is_root, x)] = ly * TILE_W + x;
        }
    }
    __syncthreads();
    for (u32 k = threadIdx.x; k < n_roots; k += blockDim.x) {
        const u32 li = roots[k];
        const L r = find_halving<L>(parent, (L)global_index(tile.x0, tile.y0, W, li));
        state[li] = cluster_state(seed, cluster_stream, sweep, (u64)r, q);
    }
    __syncthreads();
    for (u32 ly = threadIdx.x >> 5; ly < tile.h; ly += warps) {
        const u64 i = (u64)(tile.y0 + ly) * W + tile.x0 + lx;
        if (lx + 1 < tile.w && (i & 1) == 0) {
            const u32 r = *(const u32*)(root_in_tile + i);
            *(u16*)(spins + i) = (u16)(state[r & 0xffffu] | (state[r >> 16] << 8));
        } else {
            if (lx < tile.w) spins[i] = state[root_in_tile[i]];
            if (lx + 1 < tile.w) spins[i + 1] = state[root_in_tile[i + 1]];
        }
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


// ---- Entry points, one per parent width ------------------------------------------

#define SW_ENTRY_POINTS(L, SUFFIX)                                                                                   \
    extern "C" __global__ void __launch_bounds__(POTTS_SW_THREADS)                                                   \
        sw_local_##SUFFIX(const u8* spins, u16* root_in_tile, L* parent, u32 W, u32 H, u32 tiles_x, u64 seed,       \
                          u64 bond_stream, u64 sweep, u32 threshold) {                                              \
        sw_local<L>(spins, root_in_tile, parent, W, H, tiles_x, seed, bond_stream, sweep, threshold);               \
    }                                                                                                                \
    extern "C" __global__ void sw_merge_##SUFFIX(const u8* spins, const u16* root_in_tile, L* parent, u32 W, u32 H, \
                                                 u32 tiles_x, u64 tiles, u64 seed, u64 bond_stream, u64 sweep,       \
                                                 u32 threshold) {                                                    \
        sw_merge<L>(spins, root_in_tile, parent, W, H, tiles_x, tiles, seed, bond_stream, sweep, threshold);        \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(POTTS_SW_THREADS)                                                   \
        sw_update_##SUFFIX(u8* spins, const u16* root_in_tile, L* parent, u32 W, u32 H, u32 tiles_x, u32 q,         \
                           u64 seed, u64 cluster_stream, u64 sweep) {                                               \
        sw_update<L>(spins, root_in_tile, parent, W, H, tiles_x, q, seed, cluster_stream, sweep);                   \
    }

SW_ENTRY_POINTS(u32, u32)
SW_ENTRY_POINTS(u64, u64)
