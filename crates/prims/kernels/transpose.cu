// Matrix transpose kernels: the five of Harris, "An Efficient Matrix
// Transpose in CUDA C/C++" (NVIDIA, 2013) (copy, shared-memory copy,
// naive, coalesced, conflict-free), generalised to any rows x cols and to
// batches, plus the fast "best" kernels, the "sector" kernels for shapes
// whose rows are not 32-byte aligned, and an in-place transpose of square
// matrices.
//
// Built once per element size; the host (crates/prims/src/transpose/cuda.rs)
// passes, from its own constants:
//   PRIMS_TRANSPOSE_ELEM_BYTES           1, 2, 4, 8 or 16 (elements move as
//                                        raw bits: every type of a size
//                                        shares the module)
//   PRIMS_TRANSPOSE_TILE                 32: elements per side of a tile of
//                                        the article's kernels
//   PRIMS_TRANSPOSE_BLOCK_ROWS           8: a block is TILE x BLOCK_ROWS
//                                        threads
//   PRIMS_TRANSPOSE_SECTOR_WORD          the sector kernel's word size W and
//   PRIMS_TRANSPOSE_SECTOR_WORDS         words per lane and output row K
//   PRIMS_TRANSPOSE_SECTOR_PITCH         its shared-memory words per column
//                                        (checked against SectorTile)
//   PRIMS_TRANSPOSE_ORDER_DIAGONAL,      the values of the sector kernel's
//   PRIMS_TRANSPOSE_ORDER_COLUMN_MAJOR   `order` argument
//
// Layout: a batch of `batch` row-major matrices of rows x cols elements,
// back to back (matrix b starts at element b * rows * cols). The transpose
// of each is written, row-major cols x rows, at the same offset of `out`.
//
// Every kernel runs 32 x 8 threads per block, as in the article, and loops
// over tiles in y and over matrices in z (grid-stride), so grids stay within
// the 65535 limit of those dimensions whatever the shape.

#if !defined(PRIMS_TRANSPOSE_ELEM_BYTES) || !defined(PRIMS_TRANSPOSE_TILE) || !defined(PRIMS_TRANSPOSE_BLOCK_ROWS) || \
    !defined(PRIMS_TRANSPOSE_SECTOR_WORD) || !defined(PRIMS_TRANSPOSE_SECTOR_WORDS) ||                             \
    !defined(PRIMS_TRANSPOSE_SECTOR_PITCH) || !defined(PRIMS_TRANSPOSE_ORDER_DIAGONAL) ||                          \
    !defined(PRIMS_TRANSPOSE_ORDER_COLUMN_MAJOR)
#error "transpose.cu takes its element size, tile and sector geometry and block orders from the host (PRIMS_TRANSPOSE_*)"
#endif

#define TILE PRIMS_TRANSPOSE_TILE
#define BLOCK_ROWS PRIMS_TRANSPOSE_BLOCK_ROWS

constexpr int ELEM_BYTES = PRIMS_TRANSPOSE_ELEM_BYTES;

// Tile orders: which tile a block takes (when the grid has one block per
// tile). Row-major: blockIdx.x along a tile row. Diagonal: the blocks
// running together spread over tile rows and columns. Column-major: the
// blocks running together take a column strip of tiles from top to bottom,
// so they write whole rows of the output, one after the other.
constexpr unsigned ORDER_ROW_MAJOR = 0;
constexpr unsigned ORDER_DIAGONAL = PRIMS_TRANSPOSE_ORDER_DIAGONAL;
constexpr unsigned ORDER_COLUMN_MAJOR = PRIMS_TRANSPOSE_ORDER_COLUMN_MAJOR;

// How each element size runs, fixed at the configuration that measured
// fastest on an H200 (docs/benchmarks/transpose.md has the comparisons):
//
// BEST_ORDER          the best kernel's tile order: column-major for
//                     elements of 4 bytes or more, row-major below (there
//                     column-major cost more than it gained).
// SECTOR_UNROLL,      the sector kernel's load grouping: load passes whose
// SECTOR_BUDGET       loads are in flight together hold at most BUDGET
//                     registers of words, and the group loop is unrolled
//                     UNROLL times (larger groups spill once the loop is not
//                     unrolled).
// SECTOR_ASYNC        interior tiles load element by element by cp.async
//                     instead of through registers: for 8-byte elements
//                     only (4- and 16-byte copies were slower).
// SECTOR_HALO_STAGE   the register path for interior tiles stages the halo
//                     rows by cp.async at its start instead of loading them
//                     in a pass of their own at its end: for 2- and 4-byte
//                     elements (for 1-byte ones the larger shared-memory
//                     footprint made it slower, for 16-byte ones level).
template <int E>
struct SizePolicy;
template <>
struct SizePolicy<1> {
    static constexpr unsigned BEST_ORDER = ORDER_ROW_MAJOR;
    static constexpr int SECTOR_UNROLL = 1, SECTOR_BUDGET = 24;
    static constexpr bool SECTOR_ASYNC = false, SECTOR_HALO_STAGE = false;
};
template <>
struct SizePolicy<2> {
    static constexpr unsigned BEST_ORDER = ORDER_ROW_MAJOR;
    static constexpr int SECTOR_UNROLL = 1, SECTOR_BUDGET = 24;
    static constexpr bool SECTOR_ASYNC = false, SECTOR_HALO_STAGE = true;
};
template <>
struct SizePolicy<4> {
    static constexpr unsigned BEST_ORDER = ORDER_COLUMN_MAJOR;
    static constexpr int SECTOR_UNROLL = 1, SECTOR_BUDGET = 32;
    static constexpr bool SECTOR_ASYNC = false, SECTOR_HALO_STAGE = true;
};
template <>
struct SizePolicy<8> {
    static constexpr unsigned BEST_ORDER = ORDER_COLUMN_MAJOR;
    static constexpr int SECTOR_UNROLL = 1, SECTOR_BUDGET = 16;
    static constexpr bool SECTOR_ASYNC = true, SECTOR_HALO_STAGE = false;
};
template <>
struct SizePolicy<16> {
    static constexpr unsigned BEST_ORDER = ORDER_COLUMN_MAJOR;
    static constexpr int SECTOR_UNROLL = 1, SECTOR_BUDGET = 16;
    static constexpr bool SECTOR_ASYNC = false, SECTOR_HALO_STAGE = false;
};
typedef SizePolicy<ELEM_BYTES> Policy;

// Resident blocks per SM the sector kernel is built for (3, 5 or 6 were no
// faster than 4).
constexpr int SECTOR_MIN_BLOCKS = 4;

typedef unsigned long long u64;

template <int Bytes> struct Raw;
template <> struct Raw<1> { typedef unsigned char type; };
template <> struct Raw<2> { typedef unsigned short type; };
template <> struct Raw<4> { typedef unsigned type; };
template <> struct Raw<8> { typedef u64 type; };
template <> struct Raw<16> { typedef uint4 type; };

typedef Raw<ELEM_BYTES>::type elem_t;

// ---------------------------------------------------------------------------
// The article's kernels. Bounds checks make them correct for any shape; for
// shapes that are multiples of 32 they do the same memory accesses as the
// article's.

extern "C" __global__ void __launch_bounds__(TILE * BLOCK_ROWS)
tr_copy(const elem_t* __restrict__ in, elem_t* __restrict__ out, unsigned rows, unsigned cols, unsigned batch) {
    const unsigned tiles_y = (rows + TILE - 1) / TILE;
    const u64 mat = (u64)rows * cols;
    const unsigned x = blockIdx.x * TILE + threadIdx.x;
    for (unsigned b = blockIdx.z; b < batch; b += gridDim.z) {
        const elem_t* src = in + b * mat;
        elem_t* dst = out + b * mat;
        for (unsigned t = blockIdx.y; t < tiles_y; t += gridDim.y) {
            const unsigned y = t * TILE + threadIdx.y;
#pragma unroll
            for (int j = 0; j < TILE; j += BLOCK_ROWS)
                if (x < cols && y + j < rows) dst[(u64)(y + j) * cols + x] = src[(u64)(y + j) * cols + x];
        }
    }
}

extern "C" __global__ void __launch_bounds__(TILE * BLOCK_ROWS)
tr_copy_shared(const elem_t* __restrict__ in, elem_t* __restrict__ out, unsigned rows, unsigned cols,
               unsigned batch) {
    __shared__ elem_t tile[TILE * TILE];
    const unsigned tiles_y = (rows + TILE - 1) / TILE;
    const u64 mat = (u64)rows * cols;
    const unsigned x = blockIdx.x * TILE + threadIdx.x;
    for (unsigned b = blockIdx.z; b < batch; b += gridDim.z) {
        const elem_t* src = in + b * mat;
        elem_t* dst = out + b * mat;
        for (unsigned t = blockIdx.y; t < tiles_y; t += gridDim.y) {
            const unsigned y = t * TILE + threadIdx.y;
#pragma unroll
            for (int j = 0; j < TILE; j += BLOCK_ROWS)
                if (x < cols && y + j < rows)
                    tile[(threadIdx.y + j) * TILE + threadIdx.x] = src[(u64)(y + j) * cols + x];
            __syncthreads();
#pragma unroll
            for (int j = 0; j < TILE; j += BLOCK_ROWS)
                if (x < cols && y + j < rows)
                    dst[(u64)(y + j) * cols + x] = tile[(threadIdx.y + j) * TILE + threadIdx.x];
            // The next tile overwrites this one.
            __syncthreads();
        }
    }
}

extern "C" __global__ void __launch_bounds__(TILE * BLOCK_ROWS)
tr_naive(const elem_t* __restrict__ in, elem_t* __restrict__ out, unsigned rows, unsigned cols, unsigned batch) {
    const unsigned tiles_y = (rows + TILE - 1) / TILE;
    const u64 mat = (u64)rows * cols;
    const unsigned x = blockIdx.x * TILE + threadIdx.x;
    for (unsigned b = blockIdx.z; b < batch; b += gridDim.z) {
        const elem_t* src = in + b * mat;
        elem_t* dst = out + b * mat;
        for (unsigned t = blockIdx.y; t < tiles_y; t += gridDim.y) {
            const unsigned y = t * TILE + threadIdx.y;
#pragma unroll
            for (int j = 0; j < TILE; j += BLOCK_ROWS)
                if (x < cols && y + j < rows) dst[(u64)x * rows + (y + j)] = src[(u64)(y + j) * cols + x];
        }
    }
}

// The coalesced transpose through a shared tile; PAD = 0 is the article's
// "coalesced" kernel (32-way bank conflicts when a warp reads a tile
// column), PAD = 1 its "conflict-free" one.
template <int PAD>
__device__ __forceinline__ void transpose_tiled(const elem_t* __restrict__ in, elem_t* __restrict__ out,
                                                unsigned rows, unsigned cols, unsigned batch) {
    __shared__ elem_t tile[TILE][TILE + PAD];
    const unsigned tiles_y = (rows + TILE - 1) / TILE;
    const u64 mat = (u64)rows * cols;
    for (unsigned b = blockIdx.z; b < batch; b += gridDim.z) {
        const elem_t* src = in + b * mat;
        elem_t* dst = out + b * mat;
        for (unsigned t = blockIdx.y; t < tiles_y; t += gridDim.y) {
            unsigned x = blockIdx.x * TILE + threadIdx.x;
            unsigned y = t * TILE + threadIdx.y;
#pragma unroll
            for (int j = 0; j < TILE; j += BLOCK_ROWS)
                if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = src[(u64)(y + j) * cols + x];
            __syncthreads();
            // Swap the block offsets: this block writes the tile at (column
            // tile, row tile) of the output, with threadIdx.x again running
            // along a row so that the writes coalesce.
            x = t * TILE + threadIdx.x;
            y = blockIdx.x * TILE + threadIdx.y;
#pragma unroll
            for (int j = 0; j < TILE; j += BLOCK_ROWS)
                if (x < rows && y + j < cols) dst[(u64)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
            __syncthreads();
        }
    }
}

extern "C" __global__ void __launch_bounds__(TILE * BLOCK_ROWS)
tr_coalesced(const elem_t* __restrict__ in, elem_t* __restrict__ out, unsigned rows, unsigned cols, unsigned batch) {
    transpose_tiled<0>(in, out, rows, cols, batch);
}

extern "C" __global__ void __launch_bounds__(TILE * BLOCK_ROWS)
tr_conflict_free(const elem_t* __restrict__ in, elem_t* __restrict__ out, unsigned rows, unsigned cols,
                 unsigned batch) {
    transpose_tiled<1>(in, out, rows, cols, batch);
}

// ---------------------------------------------------------------------------
// In place, square matrices (n x n): block p of the grid swaps tile (i, j)
// with tile (j, i) for the p-th pair i <= j of the upper triangle, both
// through shared memory (diagonal tiles transpose onto themselves).

extern "C" __global__ void __launch_bounds__(TILE * BLOCK_ROWS)
tr_in_place(elem_t* __restrict__ data, unsigned n, unsigned batch) {
    __shared__ elem_t ta[TILE][TILE + 1];
    __shared__ elem_t tb[TILE][TILE + 1];
    const u64 nt = (n + TILE - 1) / TILE;
    const u64 pairs = nt * (nt + 1) / 2;
    const u64 mat = (u64)n * n;
    for (unsigned b = blockIdx.z; b < batch; b += gridDim.z) {
        elem_t* m = data + b * mat;
        for (u64 p = blockIdx.x; p < pairs; p += gridDim.x) {
            // p = j (j + 1) / 2 + i with i <= j.
            u64 j = (u64)((sqrt(8.0 * (double)p + 1.0) - 1.0) / 2.0);
            while (j * (j + 1) / 2 > p) --j;
            while ((j + 1) * (j + 2) / 2 <= p) ++j;
            const u64 i = p - j * (j + 1) / 2;
            const unsigned ri = (unsigned)i * TILE, cj = (unsigned)j * TILE;
            // Tile A has rows ri.., columns cj..; tile B rows cj.., columns ri...
#pragma unroll
            for (int k = 0; k < TILE; k += BLOCK_ROWS) {
                const unsigned r = threadIdx.y + k, c = threadIdx.x;
                if (ri + r < n && cj + c < n) ta[r][c] = m[(u64)(ri + r) * n + cj + c];
                if (i != j && cj + r < n && ri + c < n) tb[r][c] = m[(u64)(cj + r) * n + ri + c];
            }
            __syncthreads();
#pragma unroll
            for (int k = 0; k < TILE; k += BLOCK_ROWS) {
                const unsigned r = threadIdx.y + k, c = threadIdx.x;
                // Element (ri + c, cj + r) of A lands at (cj + r, ri + c).
                if (cj + r < n && ri + c < n) m[(u64)(cj + r) * n + ri + c] = ta[c][r];
                if (i != j && ri + r < n && cj + c < n) m[(u64)(ri + r) * n + cj + c] = tb[c][r];
            }
            __syncthreads();
        }
    }
}

// ---------------------------------------------------------------------------
// The best kernels.
//
// Each thread moves W-byte words (W = 4, 8 or 16), V = W / E elements per
// word. A thread loads a V x V "unit" of elements as V words, one from each
// of V consecutive rows, transposes the unit in registers (byte permutes for
// 1- and 2-byte elements, register moves otherwise), and parks the V
// resulting words in shared memory; after the barrier, lanes read words
// along a tile column and store them along an output row. A tile is
// 32 x 32 units (32V x 32V elements): a warp's load or store covers 32
// consecutive words of one row, 128 to 512 bytes.
//
// Shared memory holds V planes of 32 x 33 words (plane k: word k of every
// unit's transpose); the padding word makes both the column-wise writes
// and the row-wise reads conflict-free for every W (8- and 16-byte words
// are served 16 and 8 lanes at a time, and the padded strides of 66 and
// 132 banks spread those lanes over distinct banks).
//
// E >= 4: the host chooses W > E only when rows and cols are multiples of
// V, so every row of the input and of the output starts on a W-byte
// boundary and a unit is either wholly inside the matrix or wholly out.
// The loads are plain (predicated) and the compiler issues them together.
//
// E < 4 (W = 4): rows of any length start at any byte. Loads read the
// aligned words covering a row segment and realign them with a funnel of
// two neighbouring lanes' words (shuffle + byte permute); the loads of
// several passes are issued before any is used, so that enough bytes are
// in flight. Stores realign the other way, and the partial words at both
// ends of a segment are written byte by byte, so that no byte outside the
// segment is touched (the neighbouring tile writes the rest of that word).
//
// These kernels write partial sectors where a segment starts or ends
// inside one; for shapes whose rows are not all 32-byte aligned the host
// runs the sector kernels below instead.

template <int W> struct Word { unsigned r[W / 4]; };

template <int W>
__device__ __forceinline__ Word<W> zero_word() {
    Word<W> w;
#pragma unroll
    for (int i = 0; i < W / 4; ++i) w.r[i] = 0;
    return w;
}

template <int W>
__device__ __forceinline__ Word<W> load_word(const unsigned char* p) {
    Word<W> w;
    if constexpr (W == 4) {
        w.r[0] = *reinterpret_cast<const unsigned*>(p);
    } else if constexpr (W == 8) {
        const uint2 v = *reinterpret_cast<const uint2*>(p);
        w.r[0] = v.x;
        w.r[1] = v.y;
    } else {
        const uint4 v = *reinterpret_cast<const uint4*>(p);
        w.r[0] = v.x;
        w.r[1] = v.y;
        w.r[2] = v.z;
        w.r[3] = v.w;
    }
    return w;
}

template <int W>
__device__ __forceinline__ void store_word(unsigned char* p, const Word<W>& w) {
    if constexpr (W == 4) {
        *reinterpret_cast<unsigned*>(p) = w.r[0];
    } else if constexpr (W == 8) {
        *reinterpret_cast<uint2*>(p) = make_uint2(w.r[0], w.r[1]);
    } else {
        *reinterpret_cast<uint4*>(p) = make_uint4(w.r[0], w.r[1], w.r[2], w.r[3]);
    }
}

// An asynchronous copy of B (4, 8 or 16) bytes from global memory to
// shared memory address dst; cp.async.wait_all waits for the thread's own.
template <int B>
__device__ __forceinline__ void cp_async(unsigned dst, const unsigned char* src) {
    if constexpr (B == 4)
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src));
    else if constexpr (B == 8)
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(dst), "l"(src));
    else
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}

__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

template <int W>
__device__ __forceinline__ Word<W> shfl_down_word(const Word<W>& w) {
    Word<W> out;
#pragma unroll
    for (int i = 0; i < W / 4; ++i) out.r[i] = __shfl_down_sync(0xffffffffu, w.r[i], 1);
    return out;
}

// Bytes [m, m + W) of the 2W-byte string lo, hi (0 <= m < W).
template <int W>
__device__ __forceinline__ Word<W> funnel(const Word<W>& lo, const Word<W>& hi, unsigned m) {
    constexpr int N = W / 4;
    unsigned cat[2 * N];
#pragma unroll
    for (int i = 0; i < N; ++i) {
        cat[i] = lo.r[i];
        cat[N + i] = hi.r[i];
    }
    // A register shift by m / 4 (selects, so that no register array is
    // indexed at run time), then a byte shift by m % 4.
    const unsigned s = m >> 2, sel = 0x3210 + 0x1111 * (m & 3);
    Word<W> out;
#pragma unroll
    for (int i = 0; i < N; ++i) {
        unsigned a = cat[i], b = cat[i + 1];
#pragma unroll
        for (int t = 1; t < N; ++t)
            if (s == t) {
                a = cat[i + t];
                b = cat[i + t + 1];
            }
        // Elements of 4 bytes or more start on a register: m % 4 = 0.
        if constexpr (ELEM_BYTES >= 4)
            out.r[i] = a;
        else
            out.r[i] = __byte_perm(a, b, sel);
    }
    return out;
}

// Transposes a V x V unit: x[k] holds row k (V elements), y[i] receives
// column i (element k of it from row k).
template <int E, int W>
__device__ __forceinline__ void transpose_unit(const Word<W> (&x)[W / E], Word<W> (&y)[W / E]) {
    constexpr int V = W / E;
    if constexpr (E == 1) {
        // 4 x 4 bytes in two rounds of byte permutes: interleave rows
        // pairwise, then pairs of pairs.
        static_assert(V == 4, "bytes move in 4-byte words");
        const unsigned t0 = __byte_perm(x[0].r[0], x[1].r[0], 0x5140);
        const unsigned t1 = __byte_perm(x[0].r[0], x[1].r[0], 0x7362);
        const unsigned t2 = __byte_perm(x[2].r[0], x[3].r[0], 0x5140);
        const unsigned t3 = __byte_perm(x[2].r[0], x[3].r[0], 0x7362);
        y[0].r[0] = __byte_perm(t0, t2, 0x5410);
        y[1].r[0] = __byte_perm(t0, t2, 0x7632);
        y[2].r[0] = __byte_perm(t1, t3, 0x5410);
        y[3].r[0] = __byte_perm(t1, t3, 0x7632);
    } else if constexpr (E == 2) {
        static_assert(V == 2, "halves move in 4-byte words");
        y[0].r[0] = __byte_perm(x[0].r[0], x[1].r[0], 0x5410);
        y[1].r[0] = __byte_perm(x[0].r[0], x[1].r[0], 0x7632);
    } else {
        constexpr int R = E / 4;  // registers per element
#pragma unroll
        for (int i = 0; i < V; ++i)
#pragma unroll
            for (int k = 0; k < V; ++k)
#pragma unroll
                for (int q = 0; q < R; ++q) y[i].r[k * R + q] = x[k].r[i * R + q];
    }
}

// The bytes of the W-byte word at `at` (a multiple of W) that lie before
// `total`, the rest zero (for tiles near the end of the buffer).
template <int W>
__device__ __forceinline__ Word<W> load_word_tail(const unsigned char* bytes, u64 at, u64 total) {
    if (at + W <= total) return load_word<W>(bytes + at);
    Word<W> w = zero_word<W>();
    for (int i = 0; i < W; ++i)
        if (at + i < total) w.r[i / 4] |= (unsigned)bytes[at + i] << (8 * (i % 4));
    return w;
}

// Writes the bytes of `w` (whose byte 0 belongs at `at`) that fall in
// [lo, hi): the whole word when it fits, else 4-byte pieces, else bytes.
template <int W>
__device__ __forceinline__ void store_word_clipped(unsigned char* bytes, u64 at, const Word<W>& w, u64 lo, u64 hi) {
    if (at >= lo && at + W <= hi) {
        store_word<W>(bytes + at, w);
        return;
    }
    for (int i = 0; i < W / 4; ++i) {
        const u64 a = at + 4 * i;
        if (a >= lo && a + 4 <= hi) {
            *reinterpret_cast<unsigned*>(bytes + a) = w.r[i];
        } else {
            for (int j = 0; j < 4; ++j)
                if (a + j >= lo && a + j < hi) bytes[a + j] = (unsigned char)(w.r[i] >> (8 * j));
        }
    }
}

// Loads the tile's input rows r0 .. r0 + 32 V - 1 (those inside the
// matrix), transposes every unit, and parks the transposes in the planes.
// A warp loads one unit row per pass, lane = unit column: V row segments of
// 32 words, realigned from aligned loads. GUARDED: some word may straddle
// the end of the buffer (bytes past `total` are never read).
template <int W, bool GUARDED>
__device__ __forceinline__ void load_tile(const unsigned char* __restrict__ in, u64 total, u64 base, unsigned rows,
                                          unsigned cols, unsigned r0, unsigned c0, Word<W>* planes) {
    constexpr int E = ELEM_BYTES;
    constexpr int V = W / E;
    constexpr int UNITS = 32;
    constexpr int LOAD_UNITS = UNITS;
    constexpr int PITCH = UNITS + 1;
    constexpr int PASSES = UNITS / BLOCK_ROWS;
    // Passes whose loads are issued together, before any is used: 16 to
    // 64 bytes in flight per thread within about 16 registers of words, so
    // that three blocks fit on an SM.
    constexpr int GROUP_REGS = 2 * V * (W / 4);
    constexpr int GROUP = (16 / GROUP_REGS) < 1 ? 1 : ((16 / GROUP_REGS) > PASSES ? PASSES : 16 / GROUP_REGS);
    const unsigned lane = threadIdx.x;
    // Groups one after the other, not unrolled: unrolled, the compiler
    // hoisted later groups' loads, which made the u8 kernel much slower
    // (docs/benchmarks/transpose.md).
#pragma unroll 1
    for (int g = 0; g < PASSES; g += GROUP) {
        Word<W> lo[GROUP][V], extra[GROUP][V];
        // Issue every load of the group first.
#pragma unroll
        for (int p = 0; p < GROUP; ++p) {
            const unsigned ur = threadIdx.y + (g + p) * BLOCK_ROWS;
#pragma unroll
            for (int k = 0; k < V; ++k) {
                const unsigned r = r0 + ur * V + k;
                // Warp-uniform: every lane has the same row.
                const bool row_ok = g + p < PASSES && ur < LOAD_UNITS && r < rows;
                const u64 seg = (base + (u64)r * cols + c0) * E;
                const unsigned m = (unsigned)(seg % W);
                const unsigned char* at = in + (seg - m) + lane * W;
                lo[p][k] = zero_word<W>();
                extra[p][k] = zero_word<W>();
                if (GUARDED) {
                    if (row_ok) {
                        lo[p][k] = load_word_tail<W>(in, seg - m + lane * W, total);
                        if (lane == 31 && m != 0) extra[p][k] = load_word_tail<W>(in, seg - m + UNITS * W, total);
                    }
                } else {
                    if (row_ok) lo[p][k] = load_word<W>(at);
                    if (row_ok && lane == 31 && m != 0) extra[p][k] = load_word<W>(at + W);
                }
            }
        }
#pragma unroll
        for (int p = 0; p < GROUP; ++p) {
            const unsigned ur = threadIdx.y + (g + p) * BLOCK_ROWS;
            Word<W> x[V];
#pragma unroll
            for (int k = 0; k < V; ++k) {
                const u64 seg = (base + (u64)(r0 + ur * V + k) * cols + c0) * E;
                Word<W> hi = shfl_down_word<W>(lo[p][k]);
                if (lane == 31) hi = extra[p][k];
                x[k] = funnel<W>(lo[p][k], hi, (unsigned)(seg % W));
            }
            Word<W> y[V];
            transpose_unit<E, W>(x, y);
            if (g + p < PASSES && ur < LOAD_UNITS) {
#pragma unroll
                for (int k = 0; k < V; ++k) planes[(k * UNITS + lane) * PITCH + ur] = y[k];
            }
        }
    }
}

template <int W>
__device__ __forceinline__ void transpose_best(const unsigned char* __restrict__ in, unsigned char* __restrict__ out,
                                               unsigned rows, unsigned cols, unsigned batch) {
    constexpr int E = ELEM_BYTES;
    constexpr int V = W / E;
    constexpr int UNITS = 32;  // units per tile side
    constexpr int PITCH = UNITS + 1;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    Word<W>* planes = reinterpret_cast<Word<W>*>(smem_raw);  // [V][UNITS][PITCH]

    const unsigned lane = threadIdx.x;
    const unsigned tiles_y = (rows + UNITS * V - 1) / (UNITS * V);
    const u64 mat = (u64)rows * cols;
    const u64 total = mat * batch * E;
    // Block order (Policy::BEST_ORDER): column-major for elements of 4
    // bytes or more, so that the blocks running together write whole output
    // rows; row order for 1 and 2 bytes.
    unsigned tile_x = blockIdx.x;
    unsigned tile_y0 = blockIdx.y;
    if (Policy::BEST_ORDER != ORDER_ROW_MAJOR && gridDim.y == tiles_y) {
        const unsigned bid = blockIdx.x + gridDim.x * blockIdx.y;
        tile_y0 = bid % gridDim.y;
        tile_x = Policy::BEST_ORDER == ORDER_DIAGONAL ? (bid / gridDim.y + tile_y0) % gridDim.x : bid / gridDim.y;
    }
    const unsigned c0 = tile_x * UNITS * V;  // first input column of the tile

    for (unsigned b = blockIdx.z; b < batch; b += gridDim.z) {
        const u64 base = b * mat;  // first element of this matrix
        for (unsigned t = tile_y0; t < tiles_y; t += gridDim.y) {
            const unsigned r0 = t * UNITS * V;  // first input row of the tile

            if constexpr (E >= 4) {
                // Load: warp-rows of units, lane = unit column.
#pragma unroll
                for (int j = 0; j < UNITS; j += BLOCK_ROWS) {
                    const unsigned ur = threadIdx.y + j;
                    Word<W> x[V];
#pragma unroll
                    for (int k = 0; k < V; ++k) {
                        const unsigned r = r0 + ur * V + k;
                        const unsigned c = c0 + lane * V;
                        x[k] = zero_word<W>();
                        if (r < rows && c < cols) x[k] = load_word<W>(in + (base + (u64)r * cols + c) * E);
                    }
                    Word<W> y[V];
                    transpose_unit<E, W>(x, y);
#pragma unroll
                    for (int k = 0; k < V; ++k) planes[(k * UNITS + lane) * PITCH + ur] = y[k];
                }
            } else {
                // Only a tile whose loads could reach the last word of the
                // buffer needs the guarded path (byte loads for the word
                // that straddles the end).
                const unsigned last_row = min(rows, r0 + UNITS * V) - 1;
                const u64 last_seg = (base + (u64)last_row * cols + c0) * E;
                if (last_seg - last_seg % W + (UNITS + 1) * W > total)
                    load_tile<W, true>(in, total, base, rows, cols, r0, c0, planes);
                else
                    load_tile<W, false>(in, total, base, rows, cols, r0, c0, planes);
            }
            __syncthreads();

            // Store: warp-rows of the transposed tile, lane = unit row of
            // the input (= unit column of the output).
            const unsigned rows_here = min(rows - r0, (unsigned)(UNITS * V));
#pragma unroll
            for (int j = 0; j < UNITS; j += BLOCK_ROWS) {
                const unsigned uc = threadIdx.y + j;
#pragma unroll
                for (int k = 0; k < V; ++k) {
                    const unsigned o = c0 + uc * V + k;  // output row = input column
                    const Word<W> w = planes[(k * UNITS + uc) * PITCH + lane];
                    if constexpr (E >= 4) {
                        const unsigned oc = r0 + lane * V;
                        if (o < cols && oc < rows) store_word<W>(out + (base + (u64)o * rows + oc) * E, w);
                    } else if (o < cols) {  // warp-uniform
                        const u64 seg = (base + (u64)o * rows + r0) * E;
                        const u64 end = seg + (u64)rows_here * E;
                        const unsigned m = (unsigned)(seg & 3);
                        if (m == 0) {
                            store_word_clipped<4>(out, seg + 4 * lane, w, seg, end);
                        } else {
                            // Aligned word i of the segment takes its first m
                            // bytes from lane i - 1's word, the rest from lane i's.
                            Word<4> prev, last, zero = zero_word<4>();
                            prev.r[0] = __shfl_up_sync(0xffffffffu, w.r[0], 1);
                            const u64 aligned = seg - m;
                            store_word_clipped<4>(out, aligned + 4 * lane, funnel<4>(prev, w, 4 - m), seg, end);
                            if (lane == 31) {
                                last = funnel<4>(w, zero, 4 - m);
                                store_word_clipped<4>(out, aligned + 4 * 32, last, seg, end);
                            }
                        }
                    }
                }
            }
            __syncthreads();
        }
    }
}

// ---------------------------------------------------------------------------
// The best kernels for shapes whose rows are not all 32-byte aligned.
//
// A warp store that covers a 32-byte sector only in part costs a quarter
// of the copy bandwidth or more, even when a neighbouring warp writes the
// rest of the sector at once; loads that straddle sectors cost far less
// (docs/benchmarks/transpose.md, "misaligned rows"). So these kernels choose each output row's segments to
// start on a sector: tile t writes output elements [t TR - d, (t+1) TR - d)
// of output row o, where d < SECT (the elements per sector) is o's own
// misalignment. A tile therefore loads `halo` = SECT input rows before its
// first (0 when every output row is aligned) and keeps, per input column,
// the TR + halo rows in shared memory; each output row reads its segment
// out at its own offset.
//
// Loads are the best kernel's: aligned W-byte words realigned with a
// neighbouring lane's (any shape), V x V units transposed in registers, so
// that a word in shared memory is V consecutive rows of one input column.
// Shared memory is column-major in words, P (odd) words per column; the
// word index is XOR-swizzled with the column's lane group so that the
// column-wise stores of a wavefront hit distinct banks. Stores read two
// neighbouring words and funnel them to the segment's element offset, then
// write W-byte words that are aligned in memory (clipped only at the two
// ends of an output row).
//
// Tiles whose rows (halo included) all lie inside the matrix, all but the
// first and last tile row, take a leaner path (sector_load_interior, or
// sector_load_async for 8-byte elements, and an unclipped store loop):
// 32-bit row offsets and funnel selectors fixed per thread instead of
// 64-bit arithmetic and bounds tests per row (a quarter faster for 1-byte
// elements). The other tiles take the general path.

// Element e of a word, written to p.
template <int W>
__device__ __forceinline__ void store_elem(unsigned char* p, const Word<W>& w, int e) {
    constexpr int E = ELEM_BYTES;
    if constexpr (E == 1) {
        *p = (unsigned char)(w.r[e / 4] >> (8 * (e % 4)));
    } else if constexpr (E == 2) {
        *reinterpret_cast<unsigned short*>(p) = (unsigned short)(w.r[e / 2] >> (16 * (e % 2)));
    } else {
#pragma unroll
        for (int i = 0; i < E / 4; ++i) reinterpret_cast<unsigned*>(p)[i] = w.r[e * (E / 4) + i];
    }
}

// Words of shared memory per column: the tile's unit rows rounded up to a
// whole swizzle group, plus the words the stores may touch past them, then
// to an odd count.
template <int W, int K>
struct SectorTile {
    static constexpr int E = ELEM_BYTES;
    static constexpr int V = W / E;            // elements per word
    static constexpr int SECT = 32 / E;        // elements per 32-byte sector
    static constexpr int H = SECT;             // halo rows (a multiple of V)
    static constexpr int TR = 32 * K * V;      // input rows per tile (output segment length)
    static constexpr int TC = 32 * V;          // input columns per tile
    static constexpr int UR = (TR + H) / V;    // unit rows loaded per tile
    static constexpr int UR_ROUND = (UR + V - 1) / V * V;
    // Stores read word (UR_ROUND - 1 + 1) ^ swizzle = UR_ROUND + V - 1 at
    // most (the funnel's second word, unused when the shift is 0).
    static constexpr int PMIN = UR_ROUND + V;
    static constexpr int P = PMIN % 2 ? PMIN : PMIN + 1;
    static constexpr int NB = 128 / W;         // lanes per shared-memory wavefront
};

template <int W, int K>
__device__ __forceinline__ unsigned sector_swizzle(unsigned column) {
    typedef SectorTile<W, K> T;
    return (column / T::NB) & (T::V - 1);
}

// The grouping of PASSES load passes: passes whose loads are in flight
// together, as many as fit in the register budget (a pass holds
// GROUP_REGS registers of words), balanced so that the last group is not a
// lone pass (each group is one memory round trip).
template <int PASSES, int GROUP_REGS, int BUDGET>
struct LoadGroups {
    static constexpr int GMAX =
        (BUDGET / GROUP_REGS) < 1 ? 1 : ((BUDGET / GROUP_REGS) > PASSES ? PASSES : BUDGET / GROUP_REGS);
    static constexpr int NGROUPS = (PASSES + GMAX - 1) / GMAX;
    static constexpr int GROUP = (PASSES + NGROUPS - 1) / NGROUPS;
};

// The guarded form of sector_load, for the tiles whose word loads could
// reach past the end of the buffer (the last few of the buffer): element by
// element, each straight to its place in shared memory (only those inside
// the matrix; slow, and small in registers).
template <int W, int K>
__device__ void sector_load_guarded(const unsigned char* __restrict__ in, u64 base, unsigned rows, unsigned cols,
                                    long long rb, unsigned c0, int units, Word<W>* s) {
    typedef SectorTile<W, K> T;
    constexpr int E = T::E, V = T::V, P = T::P;
    unsigned char* sb = reinterpret_cast<unsigned char*>(s);
    const unsigned tid = threadIdx.y * TILE + threadIdx.x;
    for (unsigned idx = tid; idx < (unsigned)(units * V * T::TC); idx += TILE * BLOCK_ROWS) {
        const unsigned rr = idx / T::TC, col = idx % T::TC;
        const long long r = rb + rr;
        const unsigned c = c0 + col;
        if (r < 0 || r >= (long long)rows || c >= cols) continue;
        const unsigned ur = rr / V;
        const unsigned char* src = in + (base + (u64)r * cols + c) * E;
        unsigned char* dst = sb + (u64)(col * P + (ur ^ sector_swizzle<W, K>(col))) * W + (rr % V) * E;
        for (int i = 0; i < E; ++i) dst[i] = src[i];
    }
}

// Loads the tile's UR unit rows (input rows rb, rb + 1, ...; those inside
// the matrix), transposes every unit, and parks the words column-major in
// shared memory. Reads whole aligned words around each row segment: the
// caller checks that these stay inside the buffer.
template <int W, int K, int UNROLL, int BUDGET>
__device__ __forceinline__ void sector_load(const unsigned char* __restrict__ in, u64 base, unsigned rows,
                                            unsigned cols, long long rb, unsigned c0, int units, Word<W>* s) {
    typedef SectorTile<W, K> T;
    constexpr int E = T::E, V = T::V, P = T::P;
    constexpr int PASSES = (T::UR + BLOCK_ROWS - 1) / BLOCK_ROWS;
    constexpr int GROUP = LoadGroups<PASSES, 2 * V * (W / 4), BUDGET>::GROUP;
    const unsigned lane = threadIdx.x;
#pragma unroll UNROLL
    for (int g = 0; g < PASSES; g += GROUP) {
        Word<W> lo[GROUP][V], extra[GROUP][V];
#pragma unroll
        for (int p = 0; p < GROUP; ++p) {
            const int ur = threadIdx.y + (g + p) * BLOCK_ROWS;
#pragma unroll
            for (int k = 0; k < V; ++k) {
                const long long r = rb + (long long)ur * V + k;
                const bool row_ok = g + p < PASSES && ur < units && r >= 0 && r < (long long)rows;
                const u64 seg = (base + (u64)r * cols + c0) * E;
                const unsigned m = (unsigned)(seg % W);
                lo[p][k] = zero_word<W>();
                extra[p][k] = zero_word<W>();
                if (row_ok) {
                    lo[p][k] = load_word<W>(in + (seg - m) + lane * W);
                    if (lane == 31 && m != 0) extra[p][k] = load_word<W>(in + (seg - m) + 32 * W);
                }
            }
        }
#pragma unroll
        for (int p = 0; p < GROUP; ++p) {
            const int ur = threadIdx.y + (g + p) * BLOCK_ROWS;
            Word<W> x[V];
#pragma unroll
            for (int k = 0; k < V; ++k) {
                const long long r = rb + (long long)ur * V + k;
                const u64 seg = (base + (u64)r * cols + c0) * E;
                Word<W> hi = shfl_down_word<W>(lo[p][k]);
                if (lane == 31) hi = extra[p][k];
                x[k] = funnel<W>(lo[p][k], hi, (unsigned)(seg % W));
            }
            Word<W> y[V];
            transpose_unit<E, W>(x, y);
            if (g + p < PASSES && ur < units) {
#pragma unroll
                for (int k = 0; k < V; ++k) {
                    const unsigned col = lane * V + k;
                    s[col * P + (ur ^ sector_swizzle<W, K>(col))] = y[k];
                }
            }
        }
    }
}

// sector_load for an interior tile: every loaded row inside the matrix and
// every word load inside the buffer. `tile` is the byte offset from `in` of
// the tile's element (r0, c0), `halo` the rows loaded above it.
//
// Row offsets within the tile are 32-bit (the caller checks they fit). A
// warp's rows in successive passes are 8 V rows apart, a multiple of W
// bytes further, so each of a thread's V rows of a unit keeps its
// misalignment m (and its funnel selector) over all passes: per row a
// multiply-add gives the word's offset, where the general path spends
// about 20 instructions of 64-bit arithmetic and bounds tests. The TR rows
// below r0 take exactly 4 K passes; the halo rows (at most 8 unit rows)
// are realigned and transposed by the first warps at the end, loaded
// either then (one more round trip) or, with Policy::SECTOR_HALO_STAGE,
// staged in shared memory by cp.async before the first pass.
template <int W, int K, int UNROLL, int BUDGET>
__device__ __forceinline__ void sector_load_interior(const unsigned char* __restrict__ in, u64 tile, unsigned row_bytes,
                                                     unsigned halo, Word<W>* s) {
    typedef SectorTile<W, K> T;
    constexpr int E = T::E, V = T::V, P = T::P;
    constexpr int PASSES = T::TR / V / BLOCK_ROWS;  // 4 K
    constexpr int GROUP = LoadGroups<PASSES, 2 * V * (W / 4), BUDGET>::GROUP;
    static_assert(T::NB % V == 0, "a unit's columns must share a swizzle");
    const unsigned lane = threadIdx.x, ty = threadIdx.y;
    const bool last = lane == 31;
    // The unit's columns lane V .. lane V + V - 1 share one swizzle (the
    // lanes of a wavefront group are a multiple of V columns wide), and
    // (u + 8 p) ^ swz = (u ^ swz) + 8 p as swz < V <= 8.
    const unsigned swz = sector_swizzle<W, K>(lane * V);
    const unsigned hu = halo / V;  // unit rows of halo, stored first
    Word<W>* sw0 = s + (lane * V) * P + ((hu + ty) ^ swz);

    // Offsets from the aligned word at or before the tile's first byte.
    const unsigned m0 = (unsigned)(tile & (W - 1));
    const unsigned char* a0 = in + (tile - m0);

    // The staged halo rows: warp ty's unit row, per row its 32 aligned
    // words and the one after them (which lane 31 needs when the row is
    // misaligned), as the halo pass below would load them.
    __shared__ Word<W> stage[Policy::SECTOR_HALO_STAGE ? T::SECT / V : 1][V][33];
    if constexpr (Policy::SECTOR_HALO_STAGE) {
        if (ty < hu) {
            const unsigned dst = (unsigned)__cvta_generic_to_shared(&stage[ty][0][lane]);
#pragma unroll
            for (int k = 0; k < V; ++k) {
                const long long off = (long long)m0 - (long long)(halo - ty * V - k) * row_bytes;
                const unsigned m = (unsigned)off & (W - 1);
                const unsigned char* at = a0 + (off - (long long)m) + lane * W;
                cp_async<W>(dst + k * 33 * W, at);
                if (last && m != 0) cp_async<W>(dst + (k * 33 + 1) * W, at + W);
            }
        }
    }
    const unsigned step = BLOCK_ROWS * V * row_bytes;  // a warp's rows, pass to pass
    unsigned cb[V], sel[V];
    bool more[V];  // lane 31 loads the word after the segment: it holds the row's last bytes
#pragma unroll
    for (int k = 0; k < V; ++k) {
        const unsigned off = m0 + (ty * V + k) * row_bytes;
        sel[k] = off & (W - 1);
        cb[k] = off - sel[k] + lane * W;
        more[k] = last && sel[k] != 0;
    }
#pragma unroll UNROLL
    for (unsigned g = 0; g < PASSES; g += GROUP) {
        Word<W> lo[GROUP][V], extra[GROUP][V];
#pragma unroll
        for (int p = 0; p < GROUP; ++p) {
#pragma unroll
            for (int k = 0; k < V; ++k) {
                const unsigned char* at = a0 + (cb[k] + (g + p) * step);
                if (PASSES % GROUP == 0 || g + p < PASSES) {
                    lo[p][k] = load_word<W>(at);
                    if (more[k]) extra[p][k] = load_word<W>(at + W);
                } else {
                    lo[p][k] = zero_word<W>();
                }
            }
        }
#pragma unroll
        for (int p = 0; p < GROUP; ++p) {
            Word<W> x[V];
#pragma unroll
            for (int k = 0; k < V; ++k) {
                Word<W> hi = shfl_down_word<W>(lo[p][k]);
                if (more[k]) hi = extra[p][k];
                x[k] = funnel<W>(lo[p][k], hi, sel[k]);
            }
            Word<W> y[V];
            transpose_unit<E, W>(x, y);
            if (PASSES % GROUP == 0 || g + p < PASSES) {
#pragma unroll
                for (int k = 0; k < V; ++k) sw0[k * P + (g + p) * BLOCK_ROWS] = y[k];
            }
        }
    }
    // The halo: rows r0 - halo .. r0 - 1, unit rows 0 .. hu - 1 (hu <= 8).
    if (ty < hu) {
        if constexpr (Policy::SECTOR_HALO_STAGE) {
            cp_async_wait_all();
            __syncwarp();
        }
        Word<W> x[V];
#pragma unroll
        for (int k = 0; k < V; ++k) {
            // Row -halo + ty V + k of the tile: offset m0 - (halo - ty V - k) row_bytes.
            const long long off = (long long)m0 - (long long)(halo - ty * V - k) * row_bytes;
            const unsigned m = (unsigned)off & (W - 1);
            if constexpr (Policy::SECTOR_HALO_STAGE) {
                // Word 32 is stale when m = 0, and then the funnel ignores it.
                x[k] = funnel<W>(stage[ty][k][lane], stage[ty][k][lane + 1], m);
            } else {
                const unsigned char* at = a0 + (off - (long long)m) + lane * W;
                const Word<W> lo = load_word<W>(at);
                Word<W> hi = shfl_down_word<W>(lo);
                if (last && m != 0) hi = load_word<W>(at + W);
                x[k] = funnel<W>(lo, hi, m);
            }
        }
        Word<W> y[V];
        transpose_unit<E, W>(x, y);
        Word<W>* h = s + (lane * V) * P + (ty ^ swz);
#pragma unroll
        for (int k = 0; k < V; ++k) h[k * P] = y[k];
    }
}

// sector_load for an interior tile of 4-, 8- or 16-byte elements: every
// element copied on its own, global to shared memory, by cp.async (the
// element sizes it moves), straight to its place in the column-major words.
// No register holds a load in flight, so the whole tile (halo included) is
// requested at once; rows need no realignment, as every element is
// aligned. `tile` is the byte offset from `in` of element (r0 - halo, c0).
template <int W, int K>
__device__ __forceinline__ void sector_load_async(const unsigned char* __restrict__ in, u64 tile, unsigned row_bytes,
                                                  unsigned halo, Word<W>* s) {
    typedef SectorTile<W, K> T;
    constexpr int E = T::E, V = T::V, P = T::P;
    static_assert(E >= 4, "cp.async moves 4, 8 or 16 bytes");
    const unsigned lane = threadIdx.x, ty = threadIdx.y;
    const unsigned rows_here = T::TR + halo;
    const unsigned char* src0 = in + tile + lane * E;
    // A warp copies one row, lane = column (lane + 32 i for i < V).
    const unsigned sbase = (unsigned)__cvta_generic_to_shared(s);
    unsigned dst_col[V];
#pragma unroll
    for (int i = 0; i < V; ++i) dst_col[i] = sbase + (lane + 32 * i) * P * W;
#pragma unroll 4
    for (unsigned x = ty; x < rows_here; x += BLOCK_ROWS) {
        const unsigned char* src = src0 + x * row_bytes;
#pragma unroll
        for (int i = 0; i < V; ++i) {
            const unsigned c = lane + 32 * i;
            const unsigned dst = dst_col[i] + ((x / V) ^ sector_swizzle<W, K>(c)) * W + (x % V) * E;
            cp_async<E>(dst, src + 32 * i * E);
        }
    }
    cp_async_wait_all();
}

template <int W, int K, int UNROLL, int BUDGET>
__device__ __forceinline__ void transpose_sector(const unsigned char* __restrict__ in, unsigned char* __restrict__ out,
                                                 unsigned rows, unsigned cols, unsigned batch, unsigned halo,
                                                 unsigned order) {
    typedef SectorTile<W, K> T;
    constexpr int E = T::E, V = T::V, TR = T::TR, P = T::P;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    Word<W>* s = reinterpret_cast<Word<W>*>(smem_raw);  // [T::TC][P]

    const unsigned lane = threadIdx.x;
    const unsigned span = halo ? T::SECT - 1 : 0;  // largest shift d
    const int units = (TR + (int)halo) / V;         // unit rows to load (at most UR)
    const unsigned tiles_y = (rows + span + TR - 1) / TR;
    const u64 mat = (u64)rows * cols;
    const u64 total = mat * batch * E;
    // Interior tiles address their rows with 32-bit offsets from the tile
    // (from its first row below the halo, for cp.async): up to TR + SECT
    // rows, plus a row's words.
    const unsigned row_bytes = cols * E;
    const bool offsets_fit = (u64)cols * E * (TR + T::SECT + 1) + 64 * W < 0xffffffffull;

    for (unsigned b = blockIdx.z; b < batch; b += gridDim.z) {
        const u64 base = b * mat;
        // Tile order (`order`, chosen by the host per element size), when
        // the grid has one block per tile: ORDER_DIAGONAL or
        // ORDER_COLUMN_MAJOR (see the orders at the top).
        unsigned tx = blockIdx.x, ty0 = blockIdx.y;
        if (order != ORDER_ROW_MAJOR && gridDim.y == tiles_y) {
            const unsigned bid = blockIdx.x + gridDim.x * blockIdx.y;
            ty0 = bid % gridDim.y;
            tx = order == ORDER_DIAGONAL ? (bid / gridDim.y + ty0) % gridDim.x : bid / gridDim.y;
        }
        for (unsigned t = ty0; t < tiles_y; t += gridDim.y) {
            const unsigned c0 = tx * T::TC;
            const long long r0 = (long long)t * TR;
            const long long rb = r0 - (long long)halo;  // input row of unit row 0
            // Whether some load of this tile could reach past the buffer.
            const long long last_row = min((long long)rows, rb + (long long)units * V) - 1;
            const u64 last_seg = (base + (u64)last_row * cols + c0) * E;
            const bool guarded = last_seg - last_seg % W + (u64)33 * W > total;
            // Interior: every loaded row inside the matrix, so every output
            // word inside its row as well (block-uniform). Columns past the
            // last (right-hand tiles) load bytes of the next rows, inside
            // the buffer as guarded says, and store nothing.
            const bool interior = offsets_fit && !guarded && rb >= 0 && r0 + TR <= (long long)rows;

            if (interior) {
                if constexpr (Policy::SECTOR_ASYNC)
                    sector_load_async<W, K>(in, (base + (u64)rb * cols + c0) * E, row_bytes, halo, s);
                else
                    sector_load_interior<W, K, UNROLL, BUDGET>(in, (base + (u64)r0 * cols + c0) * E, row_bytes, halo, s);
            } else if (guarded) {
                sector_load_guarded<W, K>(in, base, rows, cols, rb, c0, units, s);
            } else {
                sector_load<W, K, UNROLL, BUDGET>(in, base, rows, cols, rb, c0, units, s);
            }
            __syncthreads();

            // Store: warp-rows = output rows (input columns), lane = word
            // of the output segment. (Stores do not wait, so the loop is
            // not unrolled: that keeps registers for the loads.)
            if (interior) {
                // No output word crosses an end of its row. Word q of the
                // segment is column word x0 / V + q, and (a + 32 k) ^ sw =
                // (a ^ sw) + 32 k as sw < 32, so a lane's K words are
                // constant offsets from two shared-memory addresses. For 1-
                // and 2-byte elements the funnel (byte permutes) runs even
                // when the shift is 0, where it is the identity: that saves
                // a branch per row. For wider elements it is a register
                // select, and rows with shift 0 skip it and its second load.
                u64 f = base + (u64)(c0 + threadIdx.y) * rows + (u64)r0;  // element (o, r0) of the output
                const u64 f_step = (u64)BLOCK_ROWS * rows;
#pragma unroll 1
                for (int j = 0; j < T::TC; j += BLOCK_ROWS, f += f_step) {
                    const unsigned oc = threadIdx.y + j;
                    if (c0 + oc >= cols) break;  // warp-uniform, and so are the later rows
                    // d = 0 whenever halo = 0: the output rows are then aligned.
                    const unsigned d = (unsigned)f & (T::SECT - 1);
                    const unsigned x0 = halo - d;
                    const unsigned sw = sector_swizzle<W, K>(oc);
                    const unsigned shift = (x0 % V) * E;
                    const Word<W>* colw = s + oc * P;
                    const Word<W>* w0 = colw + ((x0 / V + lane) ^ sw);
                    const Word<W>* w1 = colw + ((x0 / V + lane + 1) ^ sw);
                    unsigned char* dst = out + (f - d) * E + lane * W;
                    if (E < 4 || shift != 0) {
#pragma unroll
                        for (int k = 0; k < K; ++k)
                            store_word<W>(dst + 32 * k * W, funnel<W>(w0[32 * k], w1[32 * k], shift));
                    } else {
#pragma unroll
                        for (int k = 0; k < K; ++k) store_word<W>(dst + 32 * k * W, w0[32 * k]);
                    }
                }
            } else {
#pragma unroll 1
                for (int j = 0; j < T::TC; j += BLOCK_ROWS) {
                    const unsigned oc = threadIdx.y + j;
                    const unsigned o = c0 + oc;
                    if (o < cols) {  // warp-uniform
                        const u64 f = base + (u64)o * rows;  // element index of output row o
                        const unsigned d = halo ? (unsigned)((f + (u64)r0) & (T::SECT - 1)) : 0;
                        const unsigned x0 = halo - d;  // segment start within the column
                        const unsigned sw = sector_swizzle<W, K>(oc);
                        const unsigned shift = (x0 % V) * E;
                        const Word<W>* colw = s + oc * P;
#pragma unroll
                        for (int k = 0; k < K; ++k) {
                            const unsigned q = lane + 32 * k;
                            const unsigned wi = x0 / V + q;
                            Word<W> w = colw[wi ^ sw];
                            if (shift != 0) w = funnel<W>(w, colw[(wi + 1) ^ sw], shift);
                            const long long j0 = r0 - (long long)d + (long long)q * V;  // output column of the word
                            if (j0 >= 0 && j0 + V <= (long long)rows) {
                                store_word<W>(out + (f + j0) * E, w);
                            } else {
                                // A word across an end of the output row: its
                                // elements inside the row, one by one.
#pragma unroll
                                for (int e = 0; e < V; ++e)
                                    if (j0 + e >= 0 && j0 + e < (long long)rows)
                                        store_elem<W>(out + (f + j0 + e) * E, w, e);
                            }
                        }
                    }
                }
            }
            __syncthreads();
        }
    }
}

// The sector kernel, `tr_sector`, with the host's word size W and words per
// lane and output row K for this element size, and the load grouping of
// Policy. The host sizes the grid and the shared memory (T::TC columns of P
// words) from the same W and K.
typedef SectorTile<PRIMS_TRANSPOSE_SECTOR_WORD, PRIMS_TRANSPOSE_SECTOR_WORDS> SectorGeometry;
static_assert(SectorGeometry::P == PRIMS_TRANSPOSE_SECTOR_PITCH, "the host's sector tile pitch differs from SectorTile's");

extern "C" __global__ void __launch_bounds__(TILE * BLOCK_ROWS, SECTOR_MIN_BLOCKS)
    tr_sector(const unsigned char* __restrict__ in, unsigned char* __restrict__ out, unsigned rows, unsigned cols,
              unsigned batch, unsigned halo, unsigned order) {
    transpose_sector<PRIMS_TRANSPOSE_SECTOR_WORD, PRIMS_TRANSPOSE_SECTOR_WORDS, Policy::SECTOR_UNROLL,
                     Policy::SECTOR_BUDGET>(in, out, rows, cols, batch, halo, order);
}

// The host gives the best kernel with W-byte words V planes of 32 x 33
// words of dynamic shared memory.
#define BEST_KERNEL(W)                                                                                   \
    extern "C" __global__ void __launch_bounds__(TILE * BLOCK_ROWS)                                \
        tr_best_w##W(const unsigned char* __restrict__ in, unsigned char* __restrict__ out,        \
                     unsigned rows, unsigned cols, unsigned batch) {                               \
        transpose_best<W>(in, out, rows, cols, batch);                                             \
    }

#if PRIMS_TRANSPOSE_ELEM_BYTES <= 4
BEST_KERNEL(4)
#endif
#if PRIMS_TRANSPOSE_ELEM_BYTES >= 4 && PRIMS_TRANSPOSE_ELEM_BYTES <= 8
BEST_KERNEL(8)
#endif
#if PRIMS_TRANSPOSE_ELEM_BYTES >= 4
BEST_KERNEL(16)
#endif
