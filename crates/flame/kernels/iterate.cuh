// iterate.cuh: the chaos game on the GPU, after Steven Robertson's cuburn.
//
// Each thread owns one point (x, y, colour) that persists across launches
// and carries out `iters` iterations per launch: choose an xform, apply it,
// apply the final xform to a copy, and add the palette colour of the copy
// into the histogram cell it lands in. Threads draw from their own MWC
// stream (FlameRng).
//
// The variants of the algorithm are policy types, which the generated
// source of a genome (render/cuda/codegen.rs) names when it instantiates
// `flame::ChaosGame`:
//
// - Genome: the genome's xforms (`apply_xform`, `apply_final`) and the
//   offsets of the camera in the parameter block (generated);
// - Choice: how an iteration's xform is chosen: per thread by weight,
//   per thread in the chaos (xaos) row of the previous xform, or per warp;
// - Shuffle: how points move between the warps of a block after each
//   iteration (none, cuburn's simple exchange, or the "better" one);
// - Accumulator: how samples reach the histogram (runs of samples summed
//   in registers, optionally through a block cache of cells, or
//   warp-aggregated atomics, in warp_aggregated.cuh);
// - Palette: flam3's step or linear palette lookup;
// - Histogram: the bucket type and whether hit counts are kept apart.
//
// Shared with the Rust code, as -D options: FLAME_BLOCK (threads per
// block), FLAME_CHOOSE_GRAIN (entries of a choice table), FLAME_PALETTE_SIZE,
// FLAME_STATE_FUSE_BITS and FLAME_STATE_RETRY_BITS (the layout of
// ChaosPoint::state) and FLAME_POINT_BYTES (the size of a ChaosPoint as the
// host writes it). The fuse (iterations discarded after a restart) is a
// kernel argument: 15, or 100 with early clipping.
#pragma once

#include "flame_common.cuh"

#if !defined(FLAME_BLOCK) || !defined(FLAME_CHOOSE_GRAIN) || !defined(FLAME_PALETTE_SIZE) || \
    !defined(FLAME_STATE_FUSE_BITS) || !defined(FLAME_STATE_RETRY_BITS) || !defined(FLAME_POINT_BYTES)
#error "FLAME_BLOCK, FLAME_CHOOSE_GRAIN, FLAME_PALETTE_SIZE, FLAME_STATE_FUSE_BITS, FLAME_STATE_RETRY_BITS and FLAME_POINT_BYTES come from the Rust code that builds the source"
#endif

namespace flame {

enum : unsigned {
    // All lanes of a warp.
    FULL_MASK = 0xffffffffu,
    // A cell index no sample has: "no cell".
    NO_CELL = 0xffffffffu,
};

// A point between launches. `state`: the low FLAME_STATE_FUSE_BITS bits the
// iterations still to discard (fuse), the next FLAME_STATE_RETRY_BITS the
// bad values met in a row (flam3's `consec`), the rest the chaos row of the next
// choice (1 + the index of the xform that produced the point; 0 for a
// fresh point). `left`: the plotted iterations left in the point's
// sub-batch: then it restarts from a random point, as flam3's sub-batches
// do.
struct ChaosPoint {
    real x, y, c;
    int state;
    int left;
};
static_assert(sizeof(ChaosPoint) == FLAME_POINT_BYTES, "ChaosPoint differs from the host's layout");

// A point while a thread iterates it: ChaosPoint with its state unpacked.
struct Walker {
    real x, y, c;
    int fuse;
    int retries;
    int chaos_row;
    int left;

    __device__ __forceinline__ int state() const {
        return fuse | (retries << FLAME_STATE_FUSE_BITS) |
               (chaos_row << (FLAME_STATE_FUSE_BITS + FLAME_STATE_RETRY_BITS));
    }
    __device__ __forceinline__ void unpack(int state) {
        fuse = state & ((1 << FLAME_STATE_FUSE_BITS) - 1);
        retries = (state >> FLAME_STATE_FUSE_BITS) & ((1 << FLAME_STATE_RETRY_BITS) - 1);
        chaos_row = state >> (FLAME_STATE_FUSE_BITS + FLAME_STATE_RETRY_BITS);
    }

    // After a bad value: a random point in [-1, 1]², the colour the xform
    // gave kept, and no new fuse (flam3's flam3_iterate and apply_xform).
    // Returns whether the iteration is to be tried again from that point
    // (fewer than 5 bad values in a row), as flam3 retries it; the fifth
    // time the random point is used.
    __device__ __forceinline__ bool bad_value(FlameRng &rng) {
        x = (real)2 * rng.uniform() - (real)1;
        y = (real)2 * rng.uniform() - (real)1;
        if (++retries < 5) return true;
        retries = 0;
        return false;
    }
    // The end of a sub-batch: a fresh random point and colour, fused (for
    // `fuse_iters` iterations), with no previous xform.
    __device__ __forceinline__ void new_sub_batch(FlameRng &rng, int sub_batch, int fuse_iters) {
        x = (real)2 * rng.uniform() - (real)1;
        y = (real)2 * rng.uniform() - (real)1;
        c = rng.uniform();
        fuse = fuse_iters;
        retries = 0;
        chaos_row = 0;
        left = sub_batch;
    }
};

// ---- Xform choice ------------------------------------------------------
// `choose` turns the iteration's draw into an xform index through the
// choice tables (FLAME_CHOOSE_GRAIN entries per row; row 0 by weight, row
// i + 1 after xform i with chaos).

static_assert((FLAME_CHOOSE_GRAIN & (FLAME_CHOOSE_GRAIN - 1)) == 0, "a draw picks a table entry by masking");

__device__ __forceinline__ int table_entry(const unsigned short *tables, int row, unsigned r) {
    return tables[row * FLAME_CHOOSE_GRAIN + (r & (FLAME_CHOOSE_GRAIN - 1u))];
}

// Every thread draws its own xform by weight, as the CPU does.
struct PerThreadChoice {
    __device__ static __forceinline__ int choose(const unsigned short *tables, unsigned draw, int) {
        return table_entry(tables, 0, draw);
    }
};

// Every thread draws its own xform in the chaos row of the xform that
// produced its point (flames with xaos need that).
struct ChaosRowChoice {
    __device__ static __forceinline__ int choose(const unsigned short *tables, unsigned draw, int chaos_row) {
        return table_entry(tables, chaos_row, draw);
    }
};

// Lane 0's draw picks the xform for the whole warp (cuburn), so the
// xform's code runs without divergence. Every lane still draws, so the
// streams advance as with per-thread choice.
struct WarpUniformChoice {
    __device__ static __forceinline__ int choose(const unsigned short *tables, unsigned draw, int) {
        return table_entry(tables, 0, __shfl_sync(FULL_MASK, draw, 0));
    }
};

// ---- Point shuffle ---------------------------------------------------------
// With warp-uniform choice, points that undergo the same transforms
// converge; after every iteration `exchange` moves them between the warps
// of the block.

// Points stay in their thread.
struct NoShuffle {
    __device__ __forceinline__ explicit NoShuffle(unsigned) {}
    __device__ __forceinline__ void exchange(int, Walker &, FlameRng &) {}
};

// cuburn's simple shuffle through shared memory: lane l of warp n writes
// to slot (l + (n + l)·32) mod block, every thread reads back its own slot,
// so no two points of a warp stay together and both accesses are free of
// bank conflicts. BUFFERS = 2: the barrier of iteration it + 1 separates
// this iteration's reads from the next writes into the same buffer; with
// one buffer (large blocks of doubles) a second barrier does.
template <int BUFFERS>
struct SimpleShuffle {
    unsigned tid, slot;

    __device__ __forceinline__ explicit SimpleShuffle(unsigned tid_)
        : tid(tid_), slot(((tid_ & 31u) + ((tid_ >> 5) + (tid_ & 31u)) * 32u) % FLAME_BLOCK) {}

    __device__ __forceinline__ void exchange(int it, Walker &p, FlameRng &) { through_shared(it, p, p.state()); }

    // Writes the point (its state packed in `st`) to this thread's slot and
    // reads back the one another thread wrote to this thread's index.
    __device__ __forceinline__ void through_shared(int it, Walker &p, int st) {
        __shared__ real sx[BUFFERS][FLAME_BLOCK], sy[BUFFERS][FLAME_BLOCK], sc[BUFFERS][FLAME_BLOCK];
        __shared__ int ss[BUFFERS][FLAME_BLOCK], sl[BUFFERS][FLAME_BLOCK];
        int b = 0;
        if (BUFFERS == 2) {
            b = it & 1;
        } else {
            __syncthreads();
        }
        sx[b][slot] = p.x;
        sy[b][slot] = p.y;
        sc[b][slot] = p.c;
        ss[b][slot] = st;
        sl[b][slot] = p.left;
        __syncthreads();
        p.x = sx[b][tid];
        p.y = sy[b][tid];
        p.c = sc[b][tid];
        st = ss[b][tid];
        p.left = sl[b][tid];
        p.unpack(st);
    }
};

// cuburn's "better" shuffle: first rotate the warp's points by a random
// number of lanes (lane 0's draw; every lane draws), then the simple
// exchange.
template <int BUFFERS>
struct BetterShuffle : SimpleShuffle<BUFFERS> {
    __device__ __forceinline__ explicit BetterShuffle(unsigned tid_) : SimpleShuffle<BUFFERS>(tid_) {}

    __device__ __forceinline__ void exchange(int it, Walker &p, FlameRng &rng) {
        int st = p.state();
        const unsigned rot = __shfl_sync(FULL_MASK, rng.next_u32(), 0) & 31u;
        const unsigned src = ((this->tid & 31u) + rot) & 31u;
        p.x = __shfl_sync(FULL_MASK, p.x, src);
        p.y = __shfl_sync(FULL_MASK, p.y, src);
        p.c = __shfl_sync(FULL_MASK, p.c, src);
        st = __shfl_sync(FULL_MASK, st, src);
        p.left = __shfl_sync(FULL_MASK, p.left, src);
        this->through_shared(it, p, st);
    }
};

// ---- Palette ------------------------------------------------------------
// The palette colour (premultiplied by 255 and the temporal weight) at
// colour coordinate c, as the CPU's ColorMap::lookup finds it.

// flam3's (int) of c × the palette size, as the CPU's ColorMap::lookup
// takes it: truncation towards zero, and x86's INT_MIN for a value beyond
// int's range or NaN (CUDA's conversion saturates instead), which selects
// entry 0 as a negative index does. In the coordinate's own precision: a
// double a hair below an entry's edge (0.8749999999999998) rounded to float
// first would land on the edge, a whole entry up in step mode.
__device__ __forceinline__ real palette_scaled(real c) { return c * (real)FLAME_PALETTE_SIZE; }
__device__ __forceinline__ int palette_index(real c) {
    const real scaled = palette_scaled(c);
    return scaled < (real)2147483648.0 ? (int)scaled : -2147483647 - 1;
}

// flam3's step mode: the entry c falls in.
struct StepPalette {
    __device__ static __forceinline__ float4 lookup(const float4 *pal, real c) {
        const int idx = palette_index(c);
        return pal[idx < 0 ? 0 : (idx > FLAME_PALETTE_SIZE - 1 ? FLAME_PALETTE_SIZE - 1 : idx)];
    }
};

// flam3's linear mode: between the two entries around c.
struct LinearPalette {
    __device__ static __forceinline__ float4 lookup(const float4 *pal, real c) {
        const real scaled = palette_scaled(c);
        int idx = palette_index(c);
        float frac;
        if (idx < 0) {
            idx = 0;
            frac = 0.0f;
        } else if (idx >= FLAME_PALETTE_SIZE - 1) {
            idx = FLAME_PALETTE_SIZE - 2;
            frac = 1.0f;
        } else {
            frac = (float)(scaled - (real)idx);
        }
        const float4 a = pal[idx], b = pal[idx + 1];
        const float g = 1.0f - frac;
        return make_float4(a.x * g + b.x * frac, a.y * g + b.y * frac, a.z * g + b.z * frac, a.w * g + b.w * frac);
    }
};

// ---- Histogram and accumulation ------------------------------------------

// The histogram: r, g, b, alpha per cell in `values` (4 buckets a cell),
// and with COUNT the hit counts apart in `count` (flam3 keeps them apart;
// they differ from alpha only where the palette has transparent entries).
template <class Bucket, bool COUNT>
struct Histogram {
    typedef Bucket bucket;
    enum { HAS_COUNT = COUNT };

    bucket *values;
    bucket *count;

    // Adds r, g, b, alpha (and hits) to a cell.
    __device__ __forceinline__ void add(unsigned cell, const bucket *v) const {
#if __CUDA_ARCH__ >= 900
        if (sizeof(bucket) == 4) {
            atomicAdd(reinterpret_cast<float4 *>(values) + cell, make_float4(v[0], v[1], v[2], v[3]));
        } else
#endif
        {
            bucket *h = values + 4ull * cell;
            atomicAdd(h + 0, v[0]);
            atomicAdd(h + 1, v[1]);
            atomicAdd(h + 2, v[2]);
            atomicAdd(h + 3, v[3]);
        }
        if (COUNT) atomicAdd(count + cell, v[4]);
    }
};

// Samples of one cell summed in registers: r, g, b, alpha, hits.
template <class Bucket>
struct Run {
    Bucket c[5];
};

// Where a run of samples goes: straight to the histogram.
struct GlobalFlush {
    template <class H>
    __device__ static __forceinline__ void init_shared(unsigned) {}
    // Whether the run was taken (never: it goes to the histogram).
    template <class H>
    __device__ static __forceinline__ bool add(unsigned, const Run<typename H::bucket> &) {
        return false;
    }
    template <class H>
    __device__ static __forceinline__ void drain(const H &, unsigned) {}
};

// Where a run of samples goes: into the block's cache of cells in shared
// memory (2^BITS slots) when its cell holds, or can claim, its slot. A slot
// belongs to the first cell that hashes to it in the launch (the tag) and
// sums that cell's samples; the block adds the slots to the histogram when
// the launch ends. Hot cells (a point converging on a fixed point) then
// cost shared-memory atomics instead of global ones on one address from
// every block.
template <int BITS>
struct BlockCache {
    enum : unsigned { SLOTS = 1u << BITS };

    // The slots' tags and sums (r, g, b, alpha, hits).
    __device__ static __forceinline__ unsigned *tags() {
        __shared__ unsigned cache_tag[SLOTS];
        return cache_tag;
    }
    template <class Bucket>
    __device__ static __forceinline__ Bucket (*sums())[SLOTS] {
        __shared__ Bucket cache_val[5][SLOTS];
        return cache_val;
    }

    template <class H>
    __device__ static __forceinline__ void init_shared(unsigned tid) {
        unsigned *tag = tags();
        typename H::bucket(*val)[SLOTS] = sums<typename H::bucket>();
        for (unsigned i = tid; i < SLOTS; i += FLAME_BLOCK) {
            tag[i] = NO_CELL;
            for (int k = 0; k < 5; ++k) val[k][i] = (typename H::bucket)0;
        }
    }

    template <class H>
    __device__ static __forceinline__ bool add(unsigned cell, const Run<typename H::bucket> &run) {
        unsigned *tags_ = tags();
        typename H::bucket(*val)[SLOTS] = sums<typename H::bucket>();
        const unsigned slot = (cell * 2654435761u) >> (32 - BITS);
        unsigned tag = tags_[slot];
        if (tag == NO_CELL) {
            const unsigned prev = atomicCAS(&tags_[slot], NO_CELL, cell);
            tag = prev == NO_CELL ? cell : prev;
        }
        if (tag != cell) return false;
        atomicAdd(&val[0][slot], run.c[0]);
        atomicAdd(&val[1][slot], run.c[1]);
        atomicAdd(&val[2][slot], run.c[2]);
        atomicAdd(&val[3][slot], run.c[3]);
        if (H::HAS_COUNT) atomicAdd(&val[4][slot], run.c[4]);
        return true;
    }

    // Every sample of the launch is in: the slots go to the histogram.
    template <class H>
    __device__ static __forceinline__ void drain(const H &h, unsigned tid) {
        const unsigned *tag = tags();
        typename H::bucket(*val)[SLOTS] = sums<typename H::bucket>();
        __syncthreads();
        for (unsigned i = tid; i < SLOTS; i += FLAME_BLOCK) {
            const unsigned cell = tag[i];
            if (cell != NO_CELL) {
                typename H::bucket v[5];
                for (int k = 0; k < 5; ++k) v[k] = val[k][i];
                h.add(cell, v);
            }
        }
    }
};

// Consecutive samples of a thread in one cell are summed in registers and
// added (through `Flush`) when the cell changes: a point converging on a
// fixed point would otherwise hammer a single address from many threads at
// once (and, in f32 buckets, add units to a large sum one by one).
template <class Flush>
struct Runs {
    template <class H>
    __device__ static __forceinline__ void init_shared(unsigned tid) {
        Flush::template init_shared<H>(tid);
    }

    template <class H>
    struct State {
        unsigned cell;
        Run<typename H::bucket> run;

        __device__ __forceinline__ State() : cell(NO_CELL) {}

        __device__ __forceinline__ void add(const H &h, bool valid, unsigned cell_, float4 col, real vis) {
            typedef typename H::bucket bucket;
            if (!valid) return;
            if (cell_ != cell) {
                flush(h);
                cell = cell_;
                run.c[0] = (bucket)col.x;
                run.c[1] = (bucket)col.y;
                run.c[2] = (bucket)col.z;
                run.c[3] = (bucket)col.w;
                run.c[4] = (bucket)floorf(255.0f * (float)vis);
            } else {
                run.c[0] += (bucket)col.x;
                run.c[1] += (bucket)col.y;
                run.c[2] += (bucket)col.z;
                run.c[3] += (bucket)col.w;
                run.c[4] += (bucket)floorf(255.0f * (float)vis);
            }
        }

        // Adds the run to its cell (nothing when there is none).
        __device__ __forceinline__ void flush(const H &h) {
            if (cell == NO_CELL) return;
            if (Flush::template add<H>(cell, run)) return;
            h.add(cell, run.c);
        }

        __device__ __forceinline__ void finish(const H &h, unsigned tid) {
            flush(h);
            Flush::drain(h, tid);
        }
    };
};

// ---- The chaos game ----------------------------------------------------

// The camera: the plane point (fx, fy) rotated about the camera's centre,
// and the cell column and row of a rotated point within the camera's
// bounds (CAM_B0..CAM_B3, those of the whole histogram).
template <class Genome>
struct Camera {
    __device__ static __forceinline__ void rotate(const real *P, real fx, real fy, real &px, real &py) {
        px = P[Genome::CAM_R00] * (fx - P[Genome::CAM_CX]) + P[Genome::CAM_R01] * (fy - P[Genome::CAM_CY]) +
             P[Genome::CAM_CX];
        py = P[Genome::CAM_R10] * (fx - P[Genome::CAM_CX]) + P[Genome::CAM_R11] * (fy - P[Genome::CAM_CY]) +
             P[Genome::CAM_CY];
    }
    __device__ static __forceinline__ void cell(const real *P, real px, real py, unsigned &ix, unsigned &iy) {
        ix = (unsigned)(P[Genome::CAM_WS0] * px - P[Genome::CAM_WB0S0]);
        iy = (unsigned)(P[Genome::CAM_HS1] * py - P[Genome::CAM_HB1S1]);
        // flam3 adds the column to width * row unclamped (rect.c): a point
        // on the right edge (column = width) counts in the first cell of
        // the next row, one on the bottom edge (row = height) falls outside
        // every strip's rows.
        const unsigned w = (unsigned)P[Genome::CAM_FULL_W];
        if (ix >= w) {
            ix -= w;
            ++iy;
        }
    }
};

template <class Genome, class Choice, class Shuffle, class Accumulator, class Palette, class H>
struct ChaosGame {
    typedef typename H::bucket bucket;

    // One launch: `iters` iterations of every thread's point.
    __device__ static __forceinline__ void run(
        const real *__restrict__ gparams,           // Genome::PARAMS values
        const unsigned short *__restrict__ tables,  // choice tables, FLAME_CHOOSE_GRAIN per row
        const float4 *__restrict__ gpalette,        // FLAME_PALETTE_SIZE entries
        ChaosPoint *__restrict__ points,            // one per thread
        unsigned long long *__restrict__ rng_state,
        const unsigned *__restrict__ rng_a,
        bucket *__restrict__ hist,                  // cells × 4 (r, g, b, a)
        bucket *__restrict__ count,                 // cells (H::HAS_COUNT only)
        unsigned width, unsigned height,            // histogram cells held
        unsigned row0,                              // first row held (strips)
        int iters,
        int sub_batch,                              // plotted iterations per point
        int fuse_iters,                             // iterations discarded after a restart
        unsigned plotting,                          // threads that plot (the first ones)
        unsigned long long *__restrict__ counters)  // [kept iterations, bad values]
    {
        __shared__ real P[Genome::PARAMS];
        __shared__ float4 pal[FLAME_PALETTE_SIZE];
        const unsigned tid = threadIdx.x;
        for (unsigned i = tid; i < Genome::PARAMS; i += FLAME_BLOCK) P[i] = gparams[i];
        for (unsigned i = tid; i < FLAME_PALETTE_SIZE; i += FLAME_BLOCK) pal[i] = gpalette[i];
        Accumulator::template init_shared<H>(tid);
        __syncthreads();

        const unsigned gid = blockIdx.x * FLAME_BLOCK + tid;
        // The others iterate with their warp (for its collective
        // accumulation and shuffle) and plot and count nothing.
        const bool idle = gid >= plotting;
        FlameRng rng;
        rng.state = rng_state[gid];
        rng.a = rng_a[gid];
        ChaosPoint pt = points[gid];
        Walker p;
        p.x = pt.x;
        p.y = pt.y;
        p.c = pt.c;
        p.unpack(pt.state);
        // A job's sub-batches may be shorter than the one the points were
        // started with (a temporal sample of few iterations): no point
        // plots more than this job's before it restarts.
        p.left = pt.left < sub_batch ? pt.left : sub_batch;
        unsigned long long kept = 0, bad = 0;
        H h;
        h.values = hist;
        h.count = count;
        typename Accumulator::template State<H> acc;
        Shuffle shuffle(tid);

        for (int it = 0; it < iters; ++it) {
            const int xi = Choice::choose(tables, rng.next_u32(), p.chaos_row);
            real vis;
            Genome::apply_xform(xi, p.x, p.y, p.c, vis, rng, P);
            // A retried iteration plots nothing, counts nothing and keeps
            // the chaos row; it still takes part in the warp's collective
            // accumulation and shuffle below, with no sample.
            bool retry = false;
            if (flame_bad_value(p.x) || flame_bad_value(p.y)) {
                retry = p.bad_value(rng);
                if (!idle) ++bad;
            } else {
                p.retries = 0;
            }
            bool valid = false;
            unsigned cell = NO_CELL;
            real fx = p.x, fy = p.y, fc = p.c;
            if (!retry) {
                p.chaos_row = xi + 1;
                Genome::apply_final(fx, fy, fc, rng, P);
            }
            if (retry || idle) {
                // Nothing plotted.
            } else if (p.fuse > 0) {
                --p.fuse;
            } else {
                ++kept;
                if (--p.left <= 0) {
                    // End of the point's sub-batch (this sample is still
                    // plotted, from fx, fy, fc).
                    p.new_sub_batch(rng, sub_batch, fuse_iters);
                }
                real px, py;
                Camera<Genome>::rotate(P, fx, fy, px, py);
                if (vis > (real)0 && px >= P[Genome::CAM_B0] && py >= P[Genome::CAM_B1] && px <= P[Genome::CAM_B2] &&
                    py <= P[Genome::CAM_B3]) {
                    // A strip holds rows row0 .. row0 + height of the
                    // whole histogram. (These tests stay in the loop: as
                    // a helper returning `valid` they compile to branches
                    // instead of a select.)
                    unsigned ix, iy;
                    Camera<Genome>::cell(P, px, py, ix, iy);
                    if (iy >= row0 && iy - row0 < height) {
                        cell = ix + width * (iy - row0);
                        valid = true;
                    }
                }
            }
            float4 col = make_float4(0.f, 0.f, 0.f, 0.f);
            if (valid) {
                // Truncated to whole numbers, as flam3's integer histogram
                // adds them (histogram.rs, Count::add_hit).
                col = Palette::lookup(pal, fc);
                const float v = (float)vis;
                if (v != 1.0f) {
                    col.x *= v;
                    col.y *= v;
                    col.z *= v;
                    col.w *= v;
                }
                col = make_float4(floorf(col.x), floorf(col.y), floorf(col.z), floorf(col.w));
            }
            acc.add(h, valid, cell, col, vis);
            shuffle.exchange(it, p, rng);
        }

        acc.finish(h, tid);
        pt.x = p.x;
        pt.y = p.y;
        pt.c = p.c;
        pt.state = p.state();
        pt.left = p.left;
        points[gid] = pt;
        rng_state[gid] = rng.state;
        add_counters(counters, kept, bad, tid);
    }

    // One atomic per warp for the counters.
    __device__ static __forceinline__ void add_counters(unsigned long long *counters, unsigned long long kept,
                                                        unsigned long long bad, unsigned tid) {
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            kept += __shfl_down_sync(FULL_MASK, kept, o);
            bad += __shfl_down_sync(FULL_MASK, bad, o);
        }
        if ((tid & 31u) == 0) {
            atomicAdd(counters + 0, kept);
            atomicAdd(counters + 1, bad);
        }
    }
};

}  // namespace flame
