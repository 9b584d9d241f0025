//! The CUDA header draws exactly the numbers the Rust crate draws.
//!
//! Runs on the GPU when one is present (see `warpmc_gpu::testing`), and
//! prints why it is skipped otherwise. Over 4·10⁶ words are compared across
//! thousands of streams, starting offsets that are not multiples of four,
//! stream ids and counters near 2⁶⁴, MWC units that wrap the multiplier
//! table, and every conversion.

use warpmc_gpu::{Gpu, KernelSource, grid_1d};
use warpmc_rng::{Domain, Mwc, PhiloxStream, RandomSource, multipliers, philox_block};

fn source() -> KernelSource {
    KernelSource::new("rng_selftest.cu", include_str!("../kernels/rng_selftest.cu"))
        .header(warpmc_rng::CUDA_HEADER_NAME, warpmc_rng::CUDA_HEADER)
}

fn first_mismatch<T: PartialEq + std::fmt::Debug>(what: &str, gpu: &[T], cpu: &[T]) {
    assert_eq!(gpu.len(), cpu.len(), "{what}: lengths differ");
    if let Some(i) = (0..cpu.len()).find(|&i| gpu[i] != cpu[i]) {
        panic!("{what}: first difference at {i}: gpu {:?} cpu {:?}", gpu[i], cpu[i]);
    }
}

#[test]
fn philox_streams_match_cpu() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("philox_streams_match_cpu") else { return };
    let kernel = gpu.module(&source()).unwrap().kernel("philox_streams").unwrap();
    // Two runs: from word 0, and from an odd offset in a high domain with a
    // seed using both key words.
    for (seed, first, start) in [(0u64, 0u64, 0u64), (0x0123_4567_89ab_cdef, Domain::Test.stream(1 << 40), 3)] {
        let (n_streams, per): (u32, u32) = (4099, 257);
        let mut out = gpu.alloc_zeros::<u32>((n_streams * per) as usize).unwrap();
        gpu.memset_bytes(&mut out, 0xa5).unwrap();
        // SAFETY: matches philox_streams(u64, u64, u32, u32, u64, u32*); the
        // kernel writes out[0 .. n_streams*per).
        unsafe {
            gpu.launch(&kernel)
                .arg(&seed)
                .arg(&first)
                .arg(&n_streams)
                .arg(&per)
                .arg(&start)
                .buf_mut(&mut out)
                .run(grid_1d(n_streams as usize, 128))
                .unwrap();
        }
        let got = gpu.download(&out).unwrap();
        let mut want = Vec::with_capacity(got.len());
        for t in 0..u64::from(n_streams) {
            let mut s = PhiloxStream::at(seed, first + t, start);
            want.extend((0..per).map(|_| s.next_u32()));
        }
        first_mismatch("philox streams", &got, &want);
    }
}

#[test]
fn philox_random_access_matches_cpu() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("philox_random_access_matches_cpu") else { return };
    let kernel = gpu.module(&source()).unwrap().kernel("philox_blocks").unwrap();
    let n = 100_003usize;
    let mut x = 0x853c_49e6_748f_ea9bu64;
    let mut next = move || {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    // Mix random values with the extremes of every field.
    let mut pick = |i: usize, k: u64| match (i + k as usize) % 5 {
        0 => 0,
        1 => u64::MAX - (i as u64 % 3),
        2 => (next() as u32) as u64,
        _ => next(),
    };
    let seeds: Vec<u64> = (0..n).map(|i| pick(i, 0)).collect();
    let streams: Vec<u64> = (0..n).map(|i| pick(i, 1)).collect();
    let counters: Vec<u64> = (0..n).map(|i| pick(i, 2)).collect();
    let (ds, dst, dc) = (gpu.upload(&seeds).unwrap(), gpu.upload(&streams).unwrap(), gpu.upload(&counters).unwrap());
    let mut out = gpu.alloc_zeros::<u32>(4 * n).unwrap();
    let n32 = n as u32;
    // SAFETY: matches philox_blocks(const u64*, const u64*, const u64*, u32,
    // u32*); reads n entries of each input, writes 4n words.
    unsafe {
        gpu.launch(&kernel).buf(&ds).buf(&dst).buf(&dc).arg(&n32).buf_mut(&mut out).run(grid_1d(n, 256)).unwrap();
    }
    let got = gpu.download(&out).unwrap();
    let want: Vec<u32> = (0..n).flat_map(|i| philox_block(seeds[i], streams[i], counters[i])).collect();
    first_mismatch("philox blocks", &got, &want);
}

#[test]
fn mwc_units_match_cpu() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("mwc_units_match_cpu") else { return };
    let kernel = gpu.module(&source()).unwrap().kernel("mwc_units").unwrap();
    let table = multipliers::table();
    let dtable = gpu.upload(table).unwrap();
    let table_len = table.len() as u32;
    // Units 131 000 .. 135 099 wrap around the end of the table.
    let (seed, first, n_units, per) = (987_654_321u64, 131_000u64, 4099u32, 257u32);
    let mut out = gpu.alloc_zeros::<u32>((n_units * per) as usize).unwrap();
    let mut states = gpu.alloc_zeros::<u64>(n_units as usize).unwrap();
    // SAFETY: matches mwc_units(u64, u64, u32, u32, const u32*, u32, u32*,
    // u64*); table has table_len entries; out and states are sized for
    // n_units.
    unsafe {
        gpu.launch(&kernel)
            .arg(&seed)
            .arg(&first)
            .arg(&n_units)
            .arg(&per)
            .buf(&dtable)
            .arg(&table_len)
            .buf_mut(&mut out)
            .buf_mut(&mut states)
            .run(grid_1d(n_units as usize, 128))
            .unwrap();
    }
    let got = gpu.download(&out).unwrap();
    let got_states = gpu.download(&states).unwrap();
    let mut want = Vec::with_capacity(got.len());
    let mut want_states = Vec::new();
    for t in 0..u64::from(n_units) {
        let mut g = Mwc::for_unit(seed, first + t);
        want.extend((0..per).map(|_| g.next_u32()));
        want_states.push(g.state());
    }
    first_mismatch("mwc words", &got, &want);
    first_mismatch("mwc final states", &got_states, &want_states);
}

struct Conversions {
    f32: Vec<f32>,
    f32o: Vec<f32>,
    f64: Vec<f64>,
    f64o: Vec<f64>,
    ints: Vec<u32>,
    u64s: Vec<u64>,
}

fn cpu_conversions(sources: &mut [Box<dyn RandomSource>], rounds: u32, ranges: &[u32]) -> Conversions {
    let mut c = Conversions { f32: vec![], f32o: vec![], f64: vec![], f64o: vec![], ints: vec![], u64s: vec![] };
    for (t, s) in sources.iter_mut().enumerate() {
        for r in 0..rounds as usize {
            c.f32.push(s.next_f32());
            c.f32o.push(s.next_f32_open());
            c.f64.push(s.next_f64());
            c.f64o.push(s.next_f64_open());
            c.ints.push(s.below(ranges[(t + r) % ranges.len()]));
            c.u64s.push(s.next_u64());
        }
    }
    c
}

fn compare_conversions(what: &str, got: &Conversions, want: &Conversions) {
    let bits32 = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let bits64 = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    first_mismatch(&format!("{what} f32"), &bits32(&got.f32), &bits32(&want.f32));
    first_mismatch(&format!("{what} f32 open"), &bits32(&got.f32o), &bits32(&want.f32o));
    first_mismatch(&format!("{what} f64"), &bits64(&got.f64), &bits64(&want.f64));
    first_mismatch(&format!("{what} f64 open"), &bits64(&got.f64o), &bits64(&want.f64o));
    first_mismatch(&format!("{what} below"), &got.ints, &want.ints);
    first_mismatch(&format!("{what} u64"), &got.u64s, &want.u64s);
    assert!(got.f32.iter().all(|&x| (0.0..1.0).contains(&x)));
    assert!(got.f32o.iter().all(|&x| x > 0.0 && x < 1.0));
    assert!(got.f64.iter().all(|&x| (0.0..1.0).contains(&x)));
    assert!(got.f64o.iter().all(|&x| x > 0.0 && x < 1.0));
}

fn run_conversions(
    gpu: &Gpu,
    kernel_name: &str,
    seed: u64,
    first: u64,
    n: u32,
    rounds: u32,
    ranges: &[u32],
) -> Conversions {
    let kernel = gpu.module(&source()).unwrap().kernel(kernel_name).unwrap();
    let total = (n * rounds) as usize;
    let dranges = gpu.upload(ranges).unwrap();
    let n_ranges = ranges.len() as u32;
    let table = gpu.upload(multipliers::table()).unwrap();
    let table_len = multipliers::table().len() as u32;
    let mut f32 = gpu.alloc_zeros::<f32>(total).unwrap();
    let mut f32o = gpu.alloc_zeros::<f32>(total).unwrap();
    let mut f64 = gpu.alloc_zeros::<f64>(total).unwrap();
    let mut f64o = gpu.alloc_zeros::<f64>(total).unwrap();
    let mut ints = gpu.alloc_zeros::<u32>(total).unwrap();
    let mut u64s = gpu.alloc_zeros::<u64>(total).unwrap();
    let launch = gpu.launch(&kernel).arg(&seed).arg(&first).arg(&n).arg(&rounds);
    let launch = if kernel_name == "mwc_conversions" { launch.buf(&table).arg(&table_len) } else { launch };
    // SAFETY: matches {philox,mwc}_conversions's parameter lists (the MWC
    // one takes the table and its length after `rounds`); every output holds
    // n*rounds elements.
    unsafe {
        launch
            .buf(&dranges)
            .arg(&n_ranges)
            .buf_mut(&mut f32)
            .buf_mut(&mut f32o)
            .buf_mut(&mut f64)
            .buf_mut(&mut f64o)
            .buf_mut(&mut ints)
            .buf_mut(&mut u64s)
            .run(grid_1d(n as usize, 64))
            .unwrap();
    }
    Conversions {
        f32: gpu.download(&f32).unwrap(),
        f32o: gpu.download(&f32o).unwrap(),
        f64: gpu.download(&f64).unwrap(),
        f64o: gpu.download(&f64o).unwrap(),
        ints: gpu.download(&ints).unwrap(),
        u64s: gpu.download(&u64s).unwrap(),
    }
}

/// Ranges for `below`, including ones with large rejection zones (n just
/// above 2³¹ rejects almost half the words) so the retry path runs often.
const RANGES: [u32; 9] = [1, 2, 3, 6, 9, 255, 1_000_003, 0x8000_0001, 0];

#[test]
fn philox_conversions_match_cpu() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("philox_conversions_match_cpu") else { return };
    let (seed, first, n, rounds) = (42u64, Domain::Test.stream(7), 1031u32, 67u32);
    let got = run_conversions(&gpu, "philox_conversions", seed, first, n, rounds, &RANGES);
    let mut sources: Vec<Box<dyn RandomSource>> =
        (0..u64::from(n)).map(|t| Box::new(PhiloxStream::new(seed, first + t)) as Box<dyn RandomSource>).collect();
    compare_conversions("philox", &got, &cpu_conversions(&mut sources, rounds, &RANGES));
}

#[test]
fn mwc_conversions_match_cpu() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("mwc_conversions_match_cpu") else { return };
    let (seed, first, n, rounds) = (7u64, 5u64, 1031u32, 67u32);
    let got = run_conversions(&gpu, "mwc_conversions", seed, first, n, rounds, &RANGES);
    let mut sources: Vec<Box<dyn RandomSource>> =
        (0..u64::from(n)).map(|t| Box::new(Mwc::for_unit(seed, first + t)) as Box<dyn RandomSource>).collect();
    compare_conversions("mwc", &got, &cpu_conversions(&mut sources, rounds, &RANGES));
}
