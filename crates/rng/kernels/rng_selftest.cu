// Kernels that draw from warpmc_rng.cuh so the tests can compare every word
// with the CPU implementation.
#include "warpmc_rng.cuh"

using namespace warpmc::rng;

// Thread t reads `per_stream` words of stream first_stream + t from word
// `start`; out is [n_streams][per_stream].
extern "C" __global__ void philox_streams(u64 seed, u64 first_stream, u32 n_streams, u32 per_stream,
                                          u64 start, u32* out) {
    const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n_streams) return;
    PhiloxStream s(seed, first_stream + t, start);
    for (u32 i = 0; i < per_stream; ++i) out[(u64)t * per_stream + i] = s.next_u32();
}

// Random access: block i of (seeds[i], streams[i], counters[i]) into out[4i..4i+3].
extern "C" __global__ void philox_blocks(const u64* seeds, const u64* streams, const u64* counters, u32 n,
                                         u32* out) {
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const Words4 b = philox_block(seeds[i], streams[i], counters[i]);
    out[4 * (u64)i + 0] = b.w0;
    out[4 * (u64)i + 1] = b.w1;
    out[4 * (u64)i + 2] = b.w2;
    out[4 * (u64)i + 3] = b.w3;
}

// Thread t runs work unit first_unit + t's MWC generator for per_unit words.
extern "C" __global__ void mwc_units(u64 seed, u64 first_unit, u32 n_units, u32 per_unit, const u32* table,
                                     u32 table_len, u32* out, u64* final_state) {
    const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n_units) return;
    Mwc g = mwc_for_unit(seed, first_unit + t, table, table_len);
    for (u32 i = 0; i < per_unit; ++i) out[(u64)t * per_unit + i] = g.next_u32();
    final_state[t] = g.state;
}

// Every conversion, in a fixed order per round, from one source per thread.
// ranges[] supplies the n of below(); results are [n_sources][rounds].
template <class S>
__device__ void conversions(S& s, u32 t, u32 rounds, const u32* ranges, u32 n_ranges, float* f32, float* f32o,
                            double* f64, double* f64o, u32* ints, unsigned long long* u64s) {
    for (u32 r = 0; r < rounds; ++r) {
        const u64 k = (u64)t * rounds + r;
        f32[k] = next_f32(s);
        f32o[k] = next_f32_open(s);
        f64[k] = next_f64(s);
        f64o[k] = next_f64_open(s);
        ints[k] = below(s, ranges[(t + r) % n_ranges]);
        u64s[k] = next_u64(s);
    }
}

extern "C" __global__ void philox_conversions(u64 seed, u64 first_stream, u32 n_sources, u32 rounds,
                                              const u32* ranges, u32 n_ranges, float* f32, float* f32o,
                                              double* f64, double* f64o, u32* ints, unsigned long long* u64s) {
    const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n_sources) return;
    PhiloxStream s(seed, first_stream + t);
    conversions(s, t, rounds, ranges, n_ranges, f32, f32o, f64, f64o, ints, u64s);
}

extern "C" __global__ void mwc_conversions(u64 seed, u64 first_unit, u32 n_sources, u32 rounds, const u32* table,
                                           u32 table_len, const u32* ranges, u32 n_ranges, float* f32, float* f32o,
                                           double* f64, double* f64o, u32* ints, unsigned long long* u64s) {
    const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n_sources) return;
    Mwc s = mwc_for_unit(seed, first_unit + t, table, table_len);
    conversions(s, t, rounds, ranges, n_ranges, f32, f32o, f64, f64o, ints, u64s);
}
