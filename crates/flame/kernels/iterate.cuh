// iterate.cuh: the chaos game on the GPU, cuburn's design.
//
// Each thread owns one point (x, y, colour) that persists across launches
// and carries out `iters` iterations per launch: choose an xform, apply it,
// apply the final xform to a copy, and add the palette colour of the copy
// into the histogram cell it lands in. Threads draw from their own MWC
// stream.
//
// Xform choice. FLAME_SELECT_WARP: lane 0's draw picks the xform for the
// whole warp, so the xform's code runs without divergence. Points that
// undergo the same transforms converge, so after every iteration the points
// are exchanged between the warps of the block through shared memory
// (FLAME_SHUFFLE 1, cuburn's "simple" shuffle: lane l of warp n writes to
// slot (l + (n + l)·32) mod block, every thread reads back its own slot,
// so no two points of a warp stay together and both accesses are free of
// bank conflicts; 2, the "better" shuffle: first rotate the warp's lanes by
// a random amount, then the same exchange). Otherwise each thread draws its
// own xform (chaos rows need that: the choice depends on each point's
// previous xform).
//
// This file is the fixed part of the kernel. The generated part before it
// defines the FLAME_* macros and `apply_xform` / `apply_final` (see
// render/cuda/codegen.rs).
#pragma once

#include "flame_common.cuh"
#if FLAME_ACCUM == 1
#include "atomics.cuh"
#endif

#define FLAME_CHOOSE_MASK 16383u
#define FLAME_FULL_MASK 0xffffffffu

typedef FLAME_BUCKET bucket;

// A point between launches. `state`: low 8 bits the iterations still to
// discard (fuse), the rest the chaos row of the next choice (1 + the index
// of the xform that produced the point; 0 for a fresh point). `left`: the
// plotted iterations left in the point's sub-batch: then it restarts from
// a random point, as flam3's sub-batches do.
struct ChaosPoint {
    real x, y, c;
    int state;
    int left;
};

// Parameter block offsets of the camera (after the xforms' parameters).
// rot (4), rot_center (2), bounds (4), ws0, wb0s0, hs1, hb1s1, and the
// whole histogram's width and height.
#define CAM_R00 (FLAME_CAMERA_OFFSET + 0)
#define CAM_R01 (FLAME_CAMERA_OFFSET + 1)
#define CAM_R10 (FLAME_CAMERA_OFFSET + 2)
#define CAM_R11 (FLAME_CAMERA_OFFSET + 3)
#define CAM_CX (FLAME_CAMERA_OFFSET + 4)
#define CAM_CY (FLAME_CAMERA_OFFSET + 5)
#define CAM_B0 (FLAME_CAMERA_OFFSET + 6)
#define CAM_B1 (FLAME_CAMERA_OFFSET + 7)
#define CAM_B2 (FLAME_CAMERA_OFFSET + 8)
#define CAM_B3 (FLAME_CAMERA_OFFSET + 9)
#define CAM_WS0 (FLAME_CAMERA_OFFSET + 10)
#define CAM_WB0S0 (FLAME_CAMERA_OFFSET + 11)
#define CAM_HS1 (FLAME_CAMERA_OFFSET + 12)
#define CAM_HB1S1 (FLAME_CAMERA_OFFSET + 13)
#define CAM_FULL_W (FLAME_CAMERA_OFFSET + 14)
#define CAM_FULL_H (FLAME_CAMERA_OFFSET + 15)
#define FLAME_PARAMS_TOTAL (FLAME_CAMERA_OFFSET + 16)

__device__ __forceinline__ bool flame_bad(real v) {
    // NaN fails both comparisons.
    return !(v >= (real)-1e10 && v <= (real)1e10);
}

#define FLAME_NO_CELL 0xffffffffu

// Samples of one cell summed in registers: r, g, b, alpha, hits.
struct Run {
    bucket c[5];
};

// Adds r, g, b, alpha (and hits) to a histogram cell.
__device__ __forceinline__ void add_global(bucket *hist, bucket *count, unsigned cell, const bucket *v) {
#if __CUDA_ARCH__ >= 900
    if (sizeof(bucket) == 4) {
        atomicAdd(reinterpret_cast<float4 *>(hist) + cell, make_float4(v[0], v[1], v[2], v[3]));
    } else
#endif
    {
        bucket *h = hist + 4ull * cell;
        atomicAdd(h + 0, v[0]);
        atomicAdd(h + 1, v[1]);
        atomicAdd(h + 2, v[2]);
        atomicAdd(h + 3, v[3]);
    }
#if FLAME_COUNT
    atomicAdd(count + cell, v[4]);
#else
    (void)count;
#endif
}

#if FLAME_ACCUM == 2 && FLAME_CACHE_BITS > 0
#define FLAME_CACHE 1
#define FLAME_CACHE_SLOTS (1u << FLAME_CACHE_BITS)
// The block's cache of cells: a slot belongs to the first cell that hashes
// to it in this launch (the tag), and sums that cell's samples.
__shared__ unsigned cache_tag[FLAME_CACHE_SLOTS];
__shared__ bucket cache_val[5][FLAME_CACHE_SLOTS];
#else
#define FLAME_CACHE 0
#endif

// Adds a run to its cell (nothing when there is none): into the block's
// cache when the cell holds (or can claim) its slot, else to the histogram.
__device__ __forceinline__ void flush_run(bucket *hist, bucket *count, unsigned cell, const Run &run) {
    if (cell == FLAME_NO_CELL) return;
#if FLAME_CACHE
    const unsigned slot = (cell * 2654435761u) >> (32 - FLAME_CACHE_BITS);
    unsigned tag = cache_tag[slot];
    if (tag == FLAME_NO_CELL) {
        const unsigned prev = atomicCAS(&cache_tag[slot], FLAME_NO_CELL, cell);
        tag = prev == FLAME_NO_CELL ? cell : prev;
    }
    if (tag == cell) {
        atomicAdd(&cache_val[0][slot], run.c[0]);
        atomicAdd(&cache_val[1][slot], run.c[1]);
        atomicAdd(&cache_val[2][slot], run.c[2]);
        atomicAdd(&cache_val[3][slot], run.c[3]);
#if FLAME_COUNT
        atomicAdd(&cache_val[4][slot], run.c[4]);
#endif
        return;
    }
#endif
    add_global(hist, count, cell, run.c);
}

// Palette colour (premultiplied by 255 and the temporal weight) at c.
__device__ __forceinline__ float4 palette_lookup(const float4 *pal, real c) {
    const float scaled = (float)c * 256.0f;
    int idx = (int)scaled;  // truncation, as the CPU's `as i64`
#if FLAME_LINEAR_PALETTE
    float frac;
    if (!(scaled >= 0.0f)) {  // negative or NaN
        idx = 0;
        frac = 0.0f;
    } else if (idx >= 255) {
        idx = 254;
        frac = 1.0f;
    } else {
        frac = scaled - (float)idx;
    }
    const float4 a = pal[idx], b = pal[idx + 1];
    const float g = 1.0f - frac;
    return make_float4(a.x * g + b.x * frac, a.y * g + b.y * frac, a.z * g + b.z * frac, a.w * g + b.w * frac);
#else
    if (!(scaled >= 0.0f)) idx = 0;
    if (idx > 255) idx = 255;
    return pal[idx];
#endif
}

extern "C" __global__ void __launch_bounds__(FLAME_BLOCK) flame_iterate(
    const real *__restrict__ gparams,        // FLAME_PARAMS_TOTAL values
    const unsigned short *__restrict__ tables,  // choice tables, 16384 per row
    const float4 *__restrict__ gpalette,     // 256 entries
    ChaosPoint *__restrict__ points,         // one per thread
    unsigned long long *__restrict__ rng_state,
    const unsigned *__restrict__ rng_a,
    bucket *__restrict__ hist,               // cells × 4 (r, g, b, a)
    bucket *__restrict__ count,              // cells (FLAME_COUNT only)
    unsigned width, unsigned height,         // histogram cells held
    unsigned row0,                           // first row held (strips)
    int iters,
    int sub_batch,                           // plotted iterations per point
    unsigned long long *__restrict__ counters)  // [kept iterations, bad values]
{
    __shared__ real P[FLAME_PARAMS_TOTAL];
    __shared__ float4 pal[256];
#if FLAME_SHUFFLE
    __shared__ real sx[FLAME_SHUFFLE_BUFFERS][FLAME_BLOCK], sy[FLAME_SHUFFLE_BUFFERS][FLAME_BLOCK],
        sc[FLAME_SHUFFLE_BUFFERS][FLAME_BLOCK];
    __shared__ int ss[FLAME_SHUFFLE_BUFFERS][FLAME_BLOCK], sl[FLAME_SHUFFLE_BUFFERS][FLAME_BLOCK];
#endif
    const unsigned tid = threadIdx.x;
    for (unsigned i = tid; i < FLAME_PARAMS_TOTAL; i += FLAME_BLOCK) P[i] = gparams[i];
    for (unsigned i = tid; i < 256; i += FLAME_BLOCK) pal[i] = gpalette[i];
#if FLAME_CACHE
    for (unsigned i = tid; i < FLAME_CACHE_SLOTS; i += FLAME_BLOCK) {
        cache_tag[i] = FLAME_NO_CELL;
        for (int k = 0; k < 5; ++k) cache_val[k][i] = (bucket)0;
    }
#endif
    __syncthreads();

    const unsigned gid = blockIdx.x * FLAME_BLOCK + tid;
    FlameRng rng;
    rng.state = rng_state[gid];
    rng.a = rng_a[gid];
    ChaosPoint pt = points[gid];
    real x = pt.x, y = pt.y, c = pt.c;
    int fuse = pt.state & 0xff;
    int chaos_row = pt.state >> 8;
    (void)chaos_row;
    int left = pt.left;
    unsigned long long kept = 0, bad = 0;
#if FLAME_ACCUM != 1
    unsigned run_cell = FLAME_NO_CELL;
    Run run;
#endif
#if FLAME_SHUFFLE
    const unsigned lane = tid & 31u, warp = tid >> 5;
    const unsigned slot = (lane + (warp + lane) * 32u) % FLAME_BLOCK;
#endif

    for (int it = 0; it < iters; ++it) {
        const unsigned draw = rng.next_u32();
#if FLAME_SELECT_WARP
        const unsigned r = __shfl_sync(FLAME_FULL_MASK, draw, 0);
        const int row = 0;
#else
        const unsigned r = draw;
#if FLAME_CHAOS
        const int row = chaos_row;
#else
        const int row = 0;
#endif
#endif
        const int xi = tables[row * 16384 + (r & FLAME_CHOOSE_MASK)];
        real vis;
        apply_xform(xi, x, y, c, vis, rng, P);
        if (flame_bad(x) || flame_bad(y)) {
            // Restart from a random point and discard a few iterations.
            x = (real)2 * rng.uniform() - (real)1;
            y = (real)2 * rng.uniform() - (real)1;
            fuse = FLAME_REFUSE;
            ++bad;
        }
        chaos_row = xi + 1;

        real fx = x, fy = y, fc = c;
#if FLAME_HAS_FINAL
        {
            const real op = P[FLAME_FINAL_OFFSET + 15];
            if (op == (real)1 || rng.uniform() < op) apply_final(fx, fy, fc, rng, P);
        }
#endif
        bool valid = false;
        unsigned cell = 0xffffffffu;
        if (fuse > 0) {
            --fuse;
        } else {
            ++kept;
            if (--left <= 0) {
                // End of the point's sub-batch (this sample is still
                // plotted, from fx, fy, fc): a fresh random point, fused.
                x = (real)2 * rng.uniform() - (real)1;
                y = (real)2 * rng.uniform() - (real)1;
                c = rng.uniform();
                fuse = FLAME_REFUSE;
                chaos_row = 0;
                left = sub_batch;
            }
            const real px = P[CAM_R00] * (fx - P[CAM_CX]) + P[CAM_R01] * (fy - P[CAM_CY]) + P[CAM_CX];
            const real py = P[CAM_R10] * (fx - P[CAM_CX]) + P[CAM_R11] * (fy - P[CAM_CY]) + P[CAM_CY];
            if (vis > (real)0 && px >= P[CAM_B0] && py >= P[CAM_B1] && px <= P[CAM_B2] && py <= P[CAM_B3]) {
                // The camera's bounds say where the whole histogram is; a
                // strip holds rows row0 .. row0 + height of it.
                unsigned ix = (unsigned)(P[CAM_WS0] * px - P[CAM_WB0S0]);
                unsigned iy = (unsigned)(P[CAM_HS1] * py - P[CAM_HB1S1]);
                ix = min(ix, (unsigned)P[CAM_FULL_W] - 1u);
                iy = min(iy, (unsigned)P[CAM_FULL_H] - 1u);
                if (iy >= row0 && iy - row0 < height) {
                    cell = ix + width * (iy - row0);
                    valid = true;
                }
            }
        }
        float4 col = make_float4(0.f, 0.f, 0.f, 0.f);
        if (valid) {
            col = palette_lookup(pal, fc);
            const float v = (float)vis;
            if (v != 1.0f) {
                col.x *= v;
                col.y *= v;
                col.z *= v;
                col.w *= v;
            }
        }
#if FLAME_ACCUM == 1
        {
            warpmc::Value<bucket, 4> val;
            val.c[0] = (bucket)col.x;
            val.c[1] = (bucket)col.y;
            val.c[2] = (bucket)col.z;
            val.c[3] = (bucket)col.w;
            const unsigned peers = warpmc::peers_match(cell, valid);
            val = warpmc::reduce_peers(peers, val);
            if (valid && (peers & warpmc::lanemask_lt()) == 0) {
                warpmc::atomic_add_value<false, true>(hist + 4ull * cell, val);
            }
#if FLAME_COUNT
            if (valid) atomicAdd(count + cell, (bucket)(255.0f * (float)vis));
#endif
        }
#else
        // Consecutive samples of this thread in one cell are summed in
        // registers and added with one atomic when the cell changes: a
        // point converging on a fixed point would otherwise hammer a
        // single address from many threads at once (and, in f32 buckets,
        // add units to a large sum one by one).
        if (valid) {
            if (cell != run_cell) {
                flush_run(hist, count, run_cell, run);
                run_cell = cell;
                run.c[0] = (bucket)col.x;
                run.c[1] = (bucket)col.y;
                run.c[2] = (bucket)col.z;
                run.c[3] = (bucket)col.w;
                run.c[4] = (bucket)(255.0f * (float)vis);
            } else {
                run.c[0] += (bucket)col.x;
                run.c[1] += (bucket)col.y;
                run.c[2] += (bucket)col.z;
                run.c[3] += (bucket)col.w;
                run.c[4] += (bucket)(255.0f * (float)vis);
            }
        }
#endif

#if FLAME_SHUFFLE
        {
            int st = fuse | (chaos_row << 8);
#if FLAME_SHUFFLE == 2
            // Rotate the warp's points by a random number of lanes first.
            const unsigned rot = __shfl_sync(FLAME_FULL_MASK, rng.next_u32(), 0) & 31u;
            const unsigned src = (lane + rot) & 31u;
            x = __shfl_sync(FLAME_FULL_MASK, x, src);
            y = __shfl_sync(FLAME_FULL_MASK, y, src);
            c = __shfl_sync(FLAME_FULL_MASK, c, src);
            st = __shfl_sync(FLAME_FULL_MASK, st, src);
            left = __shfl_sync(FLAME_FULL_MASK, left, src);
#endif
            // Two buffers: the barrier of iteration it + 1 separates this
            // iteration's reads from the next writes into the same buffer.
            // One buffer (large blocks of doubles): a second barrier.
#if FLAME_SHUFFLE_BUFFERS == 2
            const int b = it & 1;
#else
            const int b = 0;
            __syncthreads();
#endif
            sx[b][slot] = x;
            sy[b][slot] = y;
            sc[b][slot] = c;
            ss[b][slot] = st;
            sl[b][slot] = left;
            __syncthreads();
            x = sx[b][tid];
            y = sy[b][tid];
            c = sc[b][tid];
            st = ss[b][tid];
            left = sl[b][tid];
            fuse = st & 0xff;
            chaos_row = st >> 8;
        }
#endif
    }

#if FLAME_ACCUM != 1
    flush_run(hist, count, run_cell, run);
#endif
#if FLAME_CACHE
    // Every sample of the launch is in; the cache goes to the histogram.
    __syncthreads();
    for (unsigned i = tid; i < FLAME_CACHE_SLOTS; i += FLAME_BLOCK) {
        const unsigned cell = cache_tag[i];
        if (cell != FLAME_NO_CELL) {
            bucket v[5];
            for (int k = 0; k < 5; ++k) v[k] = cache_val[k][i];
            add_global(hist, count, cell, v);
        }
    }
#endif
    pt.x = x;
    pt.y = y;
    pt.c = c;
    pt.state = fuse | (chaos_row << 8);
    pt.left = left;
    points[gid] = pt;
    rng_state[gid] = rng.state;
    // One atomic per warp for the counters.
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        kept += __shfl_down_sync(FLAME_FULL_MASK, kept, o);
        bad += __shfl_down_sync(FLAME_FULL_MASK, bad, o);
    }
    if ((tid & 31u) == 0) {
        atomicAdd(counters + 0, kept);
        atomicAdd(counters + 1, bad);
    }
}
