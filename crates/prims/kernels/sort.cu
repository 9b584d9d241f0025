// LSD radix sort, Onesweep style (Adinets & Merrill, "Onesweep: a faster
// least significant digit radix sort for GPUs", 2022), 8-bit digits.
//
// One module per (key width, key transform, value width). The host
// (crates/prims/src/cuda/sort.rs) passes, from its own constants:
//   PRIMS_SORT_KEY_BITS       32 or 64
//   PRIMS_SORT_KEY_TRANSFORM  0 = unsigned as is, 1 = flip the sign bit
//                             (signed ints), 2 = IEEE total order (floats:
//                             negative -> flip every bit, positive -> set
//                             the sign bit)
//   PRIMS_SORT_VALUE_BYTES    0 (keys only), 4 or 8 (values are moved as
//                             raw bits)
//   PRIMS_SORT_BLOCK          threads per block, one per digit (256)
//   PRIMS_SORT_ITEMS          keys per thread of a tile (16)
//   PRIMS_SORT_RADIX_BITS     bits per digit (8)
//   PRIMS_SORT_MAX_PASSES     passes of the widest key (8): the layout of
//                             `hist`
//
// A sort is: one histogram kernel reading every key once and counting the
// digits of every pass, then one `sort_onesweep` launch per pass (4 for
// 32-bit keys, 8 for 64-bit: always even, so the result ends in the
// caller's buffer). A pass reads each key once and writes it once; the
// per-digit offsets of a tile come from a decoupled look-back over the
// tiles before it (one status word per tile and digit), so no second read
// of the keys is needed as in a reduce-then-scan pass.
//
// Host-side layout of `hist` (unsigned words, zeroed before the histogram
// kernel): [MAX_PASSES * RADIX digit counts][MAX_PASSES tile counters].
//
// Status words (one per tile and digit, zero before the pass):
//   0                       not published yet
//   1 .. 0x7fffffff         the tile's own count of the digit, plus 1
//   0x80000000 | x          x = count of the digit in this tile and all
//                           tiles before it (inclusive prefix)
// Flag and value share one 32-bit word, so a single store publishes both
// and a reader can never see a flag without its value. Prefixes fit in 31
// bits because the host refuses more than 2^31 - 1 keys.

#if !defined(PRIMS_SORT_KEY_BITS) || !defined(PRIMS_SORT_KEY_TRANSFORM) || !defined(PRIMS_SORT_VALUE_BYTES) || \
    !defined(PRIMS_SORT_BLOCK) || !defined(PRIMS_SORT_ITEMS) || !defined(PRIMS_SORT_RADIX_BITS) ||               \
    !defined(PRIMS_SORT_MAX_PASSES)
#error "sort.cu takes its key and value widths, key transform and tile geometry from the host (PRIMS_SORT_*)"
#endif

#define KEY_BITS PRIMS_SORT_KEY_BITS
#define KEY_TRANSFORM PRIMS_SORT_KEY_TRANSFORM
#define VAL_BYTES PRIMS_SORT_VALUE_BYTES

#if KEY_BITS == 32
typedef unsigned int sort_key_t;
#elif KEY_BITS == 64
typedef unsigned long long sort_key_t;
#else
#error "KEY_BITS must be 32 or 64"
#endif

#if VAL_BYTES == 8
typedef unsigned long long sort_val_t;
#else
// Also the (unused) type of the value pointers of a keys-only module.
typedef unsigned int sort_val_t;
#endif

#define RADIX_BITS PRIMS_SORT_RADIX_BITS
#define RADIX (1 << RADIX_BITS)
#define MAX_PASSES PRIMS_SORT_MAX_PASSES
#define PASSES (KEY_BITS / RADIX_BITS)
// One thread per digit in the per-digit phases: BLOCK must equal RADIX.
#define BLOCK PRIMS_SORT_BLOCK
static_assert(BLOCK == RADIX, "sort.cu runs one thread per digit");
#define WARPS (BLOCK / 32)
#define ITEMS PRIMS_SORT_ITEMS
#define TILE (BLOCK * ITEMS)
#define WARP_TILE (32 * ITEMS)

#define ST_PREFIX 0x80000000u

// The staging buffer holds a tile of keys, later a tile of values.
#if VAL_BYTES > KEY_BITS / 8
#define STAGE_BYTES VAL_BYTES
#else
#define STAGE_BYTES (KEY_BITS / 8)
#endif

// Blocks per SM the register allocation must allow. ptxas (CUDA 13.0,
// sm_90) fits 32-bit keys alone in 80 registers without spilling (3 blocks,
// 24 warps per SM; at 64 registers, 4 blocks, it spills), and every other
// combination in at most 128 (2 blocks).
#if KEY_BITS == 32 && VAL_BYTES == 0
#define MIN_BLOCKS 3
#else
#define MIN_BLOCKS 2
#endif

// The key's radix bits: an unsigned integer ordered as the keys are.
__device__ __forceinline__ sort_key_t radix_bits(sort_key_t k) {
#if KEY_TRANSFORM == 0
    return k;
#elif KEY_TRANSFORM == 1
    return k ^ ((sort_key_t)1 << (KEY_BITS - 1));
#elif KEY_TRANSFORM == 2
    // All ones when the sign bit is set (flip everything: a larger
    // magnitude sorts first), else just the sign bit (above all negatives).
    const sort_key_t neg = (sort_key_t)0 - (k >> (KEY_BITS - 1));
    return k ^ (neg | ((sort_key_t)1 << (KEY_BITS - 1)));
#else
#error "KEY_TRANSFORM must be 0, 1 or 2"
#endif
}

__device__ __forceinline__ unsigned digit_of(sort_key_t k, unsigned shift) {
    return (unsigned)(radix_bits(k) >> shift) & (RADIX - 1);
}

__device__ __forceinline__ unsigned load_volatile(const unsigned *p) {
    return *(const volatile unsigned *)p;
}

__device__ __forceinline__ void store_volatile(unsigned *p, unsigned v) {
    *(volatile unsigned *)p = v;
}

// ---------------------------------------------------------------------------
// Histogram of every pass's digits, and zeroing of the first pass's status.

struct __align__(16) KeyVec {
    sort_key_t k[16 / sizeof(sort_key_t)];
};

// Counts the digits of one key per lane into the block's histograms. The
// whole warp must call it (it votes); `ok` is false for lanes past the end.
__device__ __forceinline__ void count_key(bool ok, sort_key_t k, unsigned *s_hist, unsigned lane) {
    const sort_key_t b = radix_bits(k);
#pragma unroll
    for (int p = 0; p < PASSES; ++p) {
        const unsigned d = ok ? (unsigned)(b >> (p * RADIX_BITS)) & (RADIX - 1) : RADIX;
        // A warp whose lanes share a digit (sorted input, a constant high
        // digit, few distinct keys) would serialise 32 atomics on one
        // address; one add of 32 does the same.
        const unsigned d0 = __shfl_sync(0xffffffffu, d, 0);
        if (__all_sync(0xffffffffu, d == d0)) {
            if (lane == 0 && d0 < RADIX) atomicAdd(&s_hist[p * RADIX + d0], 32u);
        } else if (ok) {
            atomicAdd(&s_hist[p * RADIX + d], 1u);
        }
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
sort_histogram(const sort_key_t *__restrict__ keys, unsigned n, unsigned *__restrict__ hist,
               unsigned *__restrict__ status, unsigned status_words) {
    __shared__ unsigned s_hist[PASSES * RADIX];
    const unsigned t = threadIdx.x, lane = t & 31;
    for (unsigned i = t; i < PASSES * RADIX; i += BLOCK) s_hist[i] = 0;
    __syncthreads();

    // 16-byte loads; the host stages buffers to start on 256 bytes.
    const unsigned VEC = 16 / sizeof(sort_key_t);
    const unsigned nv = n / VEC;
    const KeyVec *kv = (const KeyVec *)keys;
    // `base` is the same for the 32 lanes of a warp, so the warp stays
    // converged for count_key's votes.
    const unsigned warp_first = (blockIdx.x * BLOCK + t) & ~31u;
    const unsigned stride = gridDim.x * BLOCK;
    for (unsigned base = warp_first; base < nv; base += stride) {
        const unsigned v = base + lane;
        const bool ok = v < nv;
        KeyVec x;
        if (ok) x = kv[v];
#pragma unroll
        for (unsigned e = 0; e < VEC; ++e) count_key(ok, ok ? x.k[e] : 0, s_hist, lane);
    }
    // The n % VEC keys after the last whole vector: one warp.
    if (blockIdx.x == 0 && t < 32) {
        const unsigned i = nv * VEC + lane;
        const bool ok = i < n;
        count_key(ok, ok ? keys[i] : 0, s_hist, lane);
    }
    __syncthreads();
    for (unsigned i = t; i < PASSES * RADIX; i += BLOCK) {
        const unsigned c = s_hist[i];
        if (c != 0) atomicAdd(&hist[i], c);
    }

    // The first pass's status words must start at zero ("not published").
    for (unsigned i = blockIdx.x * BLOCK + t; i < status_words; i += stride) status[i] = 0;
}

// ---------------------------------------------------------------------------
// One pass.

// Exclusive prefix sums over the block of two values per thread at once.
// Contains a __syncthreads; `s_scan` holds 2 * WARPS words.
__device__ __forceinline__ void block_exclusive_scan2(unsigned a, unsigned b, unsigned &ea, unsigned &eb,
                                                      unsigned *s_scan) {
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned ia = a, ib = b;
#pragma unroll
    for (unsigned o = 1; o < 32; o <<= 1) {
        const unsigned xa = __shfl_up_sync(0xffffffffu, ia, o);
        const unsigned xb = __shfl_up_sync(0xffffffffu, ib, o);
        if (lane >= o) {
            ia += xa;
            ib += xb;
        }
    }
    if (lane == 31) {
        s_scan[warp] = ia;
        s_scan[WARPS + warp] = ib;
    }
    __syncthreads();
    unsigned pa = 0, pb = 0;
#pragma unroll
    for (unsigned w = 0; w < WARPS; ++w) {
        if (w < warp) {
            pa += s_scan[w];
            pb += s_scan[WARPS + w];
        }
    }
    ea = pa + ia - a;
    eb = pb + ib - b;
}

struct PassShared {
    // A tile of keys (then of values) in sorted order, for the scatter.
    sort_key_t stage[TILE * STAGE_BYTES / sizeof(sort_key_t)];
    // Per warp and digit: first the warp's running count during ranking,
    // then the tile-local position of the warp's first key of the digit.
    unsigned wcount[WARPS * RADIX];
    // Per digit: global position of the digit's first key in this tile,
    // minus its tile-local position.
    unsigned gbase[RADIX];
    unsigned scan[2 * WARPS];
    unsigned tile;
};

// The lanes of the warp whose digit equals this lane's: one ballot per digit
// bit (BITS of them; 9 where a partial tile marks missing keys with digit
// 256). CUB ranks the same way. __match_any_sync does this in one
// instruction but a slow one: the sort took a quarter longer with it
// (docs/benchmarks/prims.md).
template <int BITS>
__device__ __forceinline__ unsigned same_digit_lanes(unsigned d) {
    unsigned peers = 0xffffffffu;
#pragma unroll
    for (int b = 0; b < BITS; ++b) {
        const bool set = (d >> b) & 1u;
        const unsigned m = __ballot_sync(0xffffffffu, set);
        peers &= set ? m : ~m;
    }
    return peers;
}

// Ranks, looks back and scatters one tile. FULL: all TILE keys exist (every
// tile but possibly the last), which drops the bounds checks.
template <bool FULL>
__device__ __forceinline__ void pass_tile(PassShared &sh, const sort_key_t *__restrict__ kin,
                                          sort_key_t *__restrict__ kout, const sort_val_t *__restrict__ vin,
                                          sort_val_t *__restrict__ vout, unsigned *__restrict__ status,
                                          unsigned n, unsigned shift, unsigned tile, unsigned gcount) {
    const unsigned t = threadIdx.x, lane = t & 31, warp = t >> 5;
    const unsigned tile_first = tile * TILE;
    // Warp-striped: item i of a lane is key tile_first + warp*WARP_TILE +
    // i*32 + lane. Loads are coalesced, and ranking in (item, lane) order
    // is ranking in memory order, which makes the pass stable.
    const unsigned first = tile_first + warp * WARP_TILE + lane;

    sort_key_t keys[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const unsigned idx = first + i * 32;
        keys[i] = (FULL || idx < n) ? kin[idx] : 0;
    }
#if VAL_BYTES
    sort_val_t vals[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const unsigned idx = first + i * 32;
        vals[i] = (FULL || idx < n) ? vin[idx] : 0;
    }
#endif

    // Warp-level ranking: lanes with the same digit find each other by
    // ballots; the highest of them advances the warp's counter for the
    // digit by the group's size after all have read it.
    unsigned *wc = sh.wcount + warp * RADIX;
    const unsigned lanes_below = (1u << lane) - 1u;
    unsigned rank[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        unsigned d = digit_of(keys[i], shift);
        // Keys past the end take the digit RADIX: they group together,
        // touch no counter and are never staged.
        if (!FULL && first + i * 32 >= n) d = RADIX;
        const unsigned peers = same_digit_lanes<FULL ? RADIX_BITS : RADIX_BITS + 1>(d);
        const unsigned below = __popc(peers & lanes_below);
        const unsigned base = (FULL || d < RADIX) ? wc[d] : 0;
        __syncwarp();
        if ((FULL || d < RADIX) && below + 1 == (unsigned)__popc(peers)) wc[d] = base + below + 1;
        __syncwarp();
        rank[i] = base + below;
    }
    __syncthreads();

    // Thread t now owns digit t.
    unsigned before_warp[WARPS];
    unsigned total = 0;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) {
        before_warp[w] = total;
        total += sh.wcount[w * RADIX + t];
    }
    unsigned *my_status = status + tile * RADIX + t;
    // Publish this tile's count at once, before anything waits: later tiles
    // can then look past it while it does its own look-back.
    store_volatile(my_status, tile == 0 ? (ST_PREFIX | total) : total + 1);

    unsigned tile_excl, global_excl;
    block_exclusive_scan2(total, gcount, tile_excl, global_excl, sh.scan);
#pragma unroll
    for (int w = 0; w < WARPS; ++w) sh.wcount[w * RADIX + t] = tile_excl + before_warp[w];

    // Decoupled look-back for digit t over the tiles before this one. Tiles
    // get their ids in the order blocks start (an atomic counter), so every
    // earlier tile belongs to a block that is running or done and publishes
    // without waiting for later ones: the spin always ends. Tile 0
    // publishes a prefix, so the walk never goes below it.
    unsigned prefix = 0;
    if (tile > 0) {
        unsigned pred = tile - 1;
        for (;;) {
            const unsigned s = load_volatile(status + pred * RADIX + t);
            if (s == 0) continue;  // not published yet
            if (s & ST_PREFIX) {
                prefix += s & ~ST_PREFIX;
                break;
            }
            prefix += s - 1;
            --pred;
        }
        store_volatile(my_status, ST_PREFIX | (prefix + total));
    }
    // Unsigned arithmetic wraps: gbase + (position in tile) is the exact
    // global position even where gbase alone underflows.
    sh.gbase[t] = global_excl + prefix - tile_excl;
    __syncthreads();

    // Stage the keys in sorted order within the tile.
    unsigned pos[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        if (FULL || first + i * 32 < n) {
            pos[i] = sh.wcount[warp * RADIX + digit_of(keys[i], shift)] + rank[i];
            sh.stage[pos[i]] = keys[i];
        }
    }
    __syncthreads();

    // Scatter: consecutive threads take consecutive staged keys, so each run
    // of one digit is written to consecutive global addresses.
    const unsigned valid = FULL ? TILE : n - tile_first;
    unsigned dst[ITEMS];
#pragma unroll
    for (int s = 0; s < ITEMS; ++s) {
        const unsigned j = s * BLOCK + t;
        if (FULL || j < valid) {
            const sort_key_t k = sh.stage[j];
            dst[s] = sh.gbase[digit_of(k, shift)] + j;
            kout[dst[s]] = k;
        }
    }

#if VAL_BYTES
    // The values follow the same permutation through the same buffer.
    __syncthreads();
    sort_val_t *sv = (sort_val_t *)sh.stage;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        if (FULL || first + i * 32 < n) sv[pos[i]] = vals[i];
    }
    __syncthreads();
#pragma unroll
    for (int s = 0; s < ITEMS; ++s) {
        const unsigned j = s * BLOCK + t;
        if (FULL || j < valid) vout[dst[s]] = sv[j];
    }
#else
    (void)vin;
    (void)vout;
    (void)dst;
#endif
}

// One pass over digit `pass` (bits 8*pass .. 8*pass+7 of the radix bits):
// kin -> kout (and vin -> vout). `status` is this pass's status array, zero
// on entry; `status_next` is the next pass's, which this pass zeroes (it
// was the previous pass's, finished before this launch began). One block
// per tile of TILE keys.
extern "C" __global__ void __launch_bounds__(BLOCK, MIN_BLOCKS)
sort_onesweep(const sort_key_t *__restrict__ kin, sort_key_t *__restrict__ kout,
              const sort_val_t *__restrict__ vin, sort_val_t *__restrict__ vout, unsigned *__restrict__ hist,
              unsigned *__restrict__ status, unsigned *__restrict__ status_next, unsigned n, unsigned pass) {
    __shared__ PassShared sh;
    const unsigned t = threadIdx.x, lane = t & 31, warp = t >> 5;
    const unsigned shift = pass * RADIX_BITS;

    for (unsigned i = lane; i < RADIX; i += 32) sh.wcount[warp * RADIX + i] = 0;
    if (t == 0) sh.tile = atomicAdd(&hist[MAX_PASSES * RADIX + pass], 1u);
    const unsigned gcount = hist[pass * RADIX + t];
    // A pass whose digit is the same for every key permutes nothing (the
    // sort is stable): copy instead of ranking. Every block sees the same
    // histogram, so all take the same branch.
    const int trivial = __syncthreads_or(gcount == n);
    const unsigned tile = sh.tile;
    status_next[tile * RADIX + t] = 0;

    if (trivial) {
        const unsigned tile_first = tile * TILE;
#pragma unroll
        for (int s = 0; s < ITEMS; ++s) {
            const unsigned j = tile_first + s * BLOCK + t;
            if (j < n) {
                kout[j] = kin[j];
#if VAL_BYTES
                vout[j] = vin[j];
#endif
            }
        }
        return;
    }
    if ((tile + 1) * TILE <= n) {
        pass_tile<true>(sh, kin, kout, vin, vout, status, n, shift, tile, gcount);
    } else {
        pass_tile<false>(sh, kin, kout, vin, vout, status, n, shift, tile, gcount);
    }
}
