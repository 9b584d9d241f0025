//! A lattice split into strips, each on its own thread trading halo rows
//! through channels (as MPI ranks trade them), ends every sweep in the bits
//! of the whole lattice on the CPU backend, under both random-number rules:
//! strips on the CPU, on the GPU (each with its own streams, as each MPI
//! rank has its own GPU) and mixed.

use std::ops::Range;
use std::sync::mpsc::{Receiver, Sender, channel};

use warpmc_potts::strip::{Halo, HaloExchange, Strip, StripBackend, open_strip, strip_rows};
use warpmc_potts::{AcceptanceTable, Backend, Census, CpuBackend, Device, InitialState, Lattice, PottsModel, Scheme};

/// Halo rows through channels: a strip's first row goes to the strip above,
/// its last row to the strip below.
struct Channels {
    to_up: Sender<Vec<u8>>,
    to_down: Sender<Vec<u8>>,
    from_up: Receiver<Vec<u8>>,
    from_down: Receiver<Vec<u8>>,
}

impl HaloExchange for Channels {
    fn exchange(&mut self, halo: Halo<'_>, interior: &mut dyn FnMut()) -> warpmc_potts::Result<()> {
        self.to_up.send(halo.send_up.to_vec()).unwrap();
        self.to_down.send(halo.send_down.to_vec()).unwrap();
        interior();
        halo.from_up.copy_from_slice(&self.from_up.recv().unwrap());
        halo.from_down.copy_from_slice(&self.from_down.recv().unwrap());
        Ok(())
    }
}

/// One stretch of sweeps under one table.
#[derive(Clone, Copy)]
struct Stretch {
    temperature: f64,
    first: u64,
    count: u64,
}

/// Opens strip `i` (of the rows given) of a model's lattice.
type Opener<'a> = dyn Fn(usize, Range<usize>) -> Box<dyn Strip> + Sync + 'a;

/// The lattice and census after `stretches` on `parts` strips, each strip
/// on its own thread, opened by `open`.
fn split_run(
    model: &PottsModel,
    start: &Lattice,
    parts: usize,
    chain: (u64, u64),
    stretches: &[Stretch],
    open: &Opener<'_>,
) -> (Lattice, Census) {
    let rows = strip_rows(model.height(), parts);
    let k = rows.len();
    let (mut up_tx, mut up_rx, mut down_tx, mut down_rx) = (vec![], vec![], vec![], vec![]);
    for _ in 0..k {
        let (t, r) = channel();
        up_tx.push(t);
        up_rx.push(Some(r));
        let (t, r) = channel();
        down_tx.push(t);
        down_rx.push(Some(r));
    }
    let results: Vec<(Vec<u8>, Census)> = std::thread::scope(|scope| {
        let handles: Vec<_> = rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                // Strip i's first row becomes the lower halo of strip i − 1,
                // which receives it on its from_down channel.
                let mut ex = Channels {
                    to_up: down_tx[(i + k - 1) % k].clone(),
                    to_down: up_tx[(i + 1) % k].clone(),
                    from_up: up_rx[i].take().unwrap(),
                    from_down: down_rx[i].take().unwrap(),
                };
                let r = r.clone();
                scope.spawn(move || {
                    let mut strip = open(i, r);
                    strip.load(start).unwrap();
                    for s in stretches {
                        strip.set_table(&AcceptanceTable::metropolis(model, s.temperature)).unwrap();
                        strip.sweeps(chain.0, chain.1, s.first, s.count, &mut ex).unwrap();
                    }
                    (strip.spins().unwrap(), strip.census().unwrap())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let q = model.q() as usize;
    let spins: Vec<u8> = results.iter().flat_map(|(s, _)| s.iter().copied()).collect();
    let census = Census::sum(q, results.into_iter().map(|(_, c)| c));
    (Lattice::from_spins(model.width(), model.height(), model.q(), spins).unwrap(), census)
}

/// The same stretches on the whole lattice.
fn whole_run(model: &PottsModel, start: &Lattice, chain: (u64, u64), stretches: &[Stretch]) -> (Lattice, Census) {
    let mut b = CpuBackend::new(model);
    b.load(start).unwrap();
    for s in stretches {
        b.set_table(&AcceptanceTable::metropolis(model, s.temperature)).unwrap();
        b.sweeps(chain.0, chain.1, s.first, s.count).unwrap();
    }
    (b.lattice().unwrap(), b.census().unwrap())
}

/// Near each model's transition, where moves are accepted and rejected,
/// with the table changed half way (as parallel tempering does).
fn stretches(q: u32, sweeps: u64) -> Vec<Stretch> {
    let tc = 1.0 / (1.0 + (q as f64).sqrt()).ln();
    vec![
        Stretch { temperature: tc * 1.02, first: 7, count: sweeps / 2 },
        Stretch { temperature: tc * 0.97, first: 7 + sweeps / 2, count: sweeps - sweeps / 2 },
    ]
}

/// Where each strip of a split run goes.
#[derive(Clone, Copy, Debug)]
enum Placement {
    /// Every strip on the CPU, with or without AVX2.
    Cpu { simd: bool },
    /// Every strip on the GPU.
    Gpu,
    /// Every strip on the GPU, every bit-sliced launch with one thread per
    /// unit.
    GpuUnits,
    /// Strips alternately on the GPU and the CPU, the first on the GPU
    /// when `gpu_first`.
    Mixed { gpu_first: bool },
}

/// `lattice`: q, width, height and field.
fn check_on(
    lattice: (u32, usize, usize, f64),
    scheme: Scheme,
    parts: &[usize],
    sweeps: u64,
    placements: &[Placement],
    device: &Device,
) {
    let (q, width, height, field) = lattice;
    let model = PottsModel::new(q, width, height).unwrap().with_field(field).unwrap();
    assert_eq!(Scheme::for_model(&model), scheme, "q={q} {width}x{height} h={field}");
    let chain = (0x5eed ^ u64::from(q), 0xabc0 + width as u64);
    let start = Lattice::new(&model, InitialState::Random, chain.0, chain.1);
    let plan = stretches(q, sweeps);
    let (lattice, census) = whole_run(&model, &start, chain, &plan);
    assert_eq!(census, lattice.census());
    assert_ne!(lattice.spins(), start.spins(), "nothing moved: the test would prove nothing");
    for &p in parts {
        for &placement in placements {
            let open = |i: usize, rows: Range<usize>| -> Box<dyn Strip> {
                let on_gpu = match placement {
                    Placement::Cpu { simd } => {
                        let strip = StripBackend::new(&model, rows).unwrap();
                        return Box::new(if simd { strip } else { strip.without_simd() });
                    }
                    Placement::Gpu => true,
                    #[cfg(feature = "cuda")]
                    Placement::GpuUnits => {
                        let Device::Cuda(gpu) = device else { panic!("GPU placement on {device:?}") };
                        let strip = warpmc_potts::CudaStripBackend::new(gpu.clone(), &model, rows).unwrap();
                        return Box::new(strip.with_unit_threads_from(0));
                    }
                    #[cfg(not(feature = "cuda"))]
                    Placement::GpuUnits => unreachable!("GPU placements need the cuda feature"),
                    Placement::Mixed { gpu_first } => i.is_multiple_of(2) == gpu_first,
                };
                let strip = open_strip(if on_gpu { device } else { &Device::CPU }, &model, rows).unwrap();
                assert_eq!(strip.name(), if on_gpu { "cuda" } else { "cpu" });
                strip
            };
            let (l, c) = split_run(&model, &start, p, chain, &plan, &open);
            let k = strip_rows(height, p).len();
            assert!(
                l.spins() == lattice.spins(),
                "q={q} {width}x{height} h={field}, {p} strips ({k} used), {placement:?}: the lattices differ"
            );
            assert_eq!(c, census, "q={q} {width}x{height} h={field}, {p} strips, {placement:?}: the censuses differ");
        }
    }
}

/// CPU strips, with and without AVX2.
fn check(q: u32, width: usize, height: usize, field: f64, scheme: Scheme, parts: &[usize], sweeps: u64) {
    let placements = [Placement::Cpu { simd: true }, Placement::Cpu { simd: false }];
    check_on((q, width, height, field), scheme, parts, sweeps, &placements, &Device::CPU);
}

/// GPU strips, alone and mixed with CPU strips, on `device`.
fn check_gpu(device: &Device, lattice: (u32, usize, usize, f64), scheme: Scheme, parts: &[usize], sweeps: u64) {
    let placements = [
        Placement::Gpu,
        Placement::GpuUnits,
        Placement::Mixed { gpu_first: true },
        Placement::Mixed { gpu_first: false },
    ];
    check_on(lattice, scheme, parts, sweeps, &placements, device);
}

#[test]
fn site_words_rule_on_awkward_lattices_matches_one_backend() {
    // Heights that are not whole row-blocks, widths that are not whole
    // units, the smallest lattice, a field of either sign, q up to 255.
    check(3, 10, 22, 0.3, Scheme::SiteWords, &[1, 2, 3, 4], 300);
    check(2, 2, 2, 0.0, Scheme::SiteWords, &[1, 2], 40);
    check(2, 6, 18, -0.4, Scheme::SiteWords, &[2, 3], 50);
    check(9, 66, 40, 0.0, Scheme::SiteWords, &[1, 2, 4, 5], 40);
    check(255, 8, 26, -0.5, Scheme::SiteWords, &[2, 4], 30);
    check(4, 34, 8, 0.1, Scheme::SiteWords, &[1, 3], 40);
    // q ≤ 16 with a field: the bit-sliced rule does not apply.
    check(9, 64, 32, 0.2, Scheme::SiteWords, &[2, 4], 40);
}

#[test]
fn bit_sliced_rule_matches_one_backend() {
    // One word per row, words in pairs and alone, groups of eight (AVX2)
    // with one left over; one row-block per strip and several.
    check(2, 64, 8, 0.0, Scheme::Sliced, &[1, 2], 60);
    check(9, 128, 48, 0.0, Scheme::Sliced, &[1, 2, 4, 6], 300);
    check(16, 192, 24, 0.0, Scheme::Sliced, &[2, 3], 40);
    check(10, 576, 32, 0.0, Scheme::Sliced, &[2, 4], 30);
    check(3, 64, 40, 0.0, Scheme::Sliced, &[2, 5, 7], 50);
}

#[test]
fn gpu_strips_on_awkward_lattices_match_one_backend() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("gpu_strips_on_awkward_lattices_match_one_backend") else { return };
    let d = Device::Cuda(gpu);
    // The one-word-per-site rule: heights that are not whole row-blocks,
    // widths that are not whole units, the smallest lattice, fields of
    // either sign (q ≤ 16 with a field too), q up to 255.
    check_gpu(&d, (3, 10, 22, 0.3), Scheme::SiteWords, &[1, 2, 3], 200);
    check_gpu(&d, (2, 2, 2, 0.0), Scheme::SiteWords, &[1, 2], 40);
    check_gpu(&d, (2, 6, 18, -0.4), Scheme::SiteWords, &[2, 3], 50);
    check_gpu(&d, (9, 66, 40, 0.0), Scheme::SiteWords, &[1, 2, 4, 5], 40);
    check_gpu(&d, (16, 64, 30, -0.2), Scheme::SiteWords, &[1, 3, 4], 60);
    check_gpu(&d, (9, 64, 32, 0.2), Scheme::SiteWords, &[2, 4], 40);
    check_gpu(&d, (255, 8, 26, -0.5), Scheme::SiteWords, &[2, 4], 30);
    // Many units per row-block and an interior of many row-blocks.
    check_gpu(&d, (9, 514, 130, 0.1), Scheme::SiteWords, &[1, 3, 5], 60);
}

#[test]
fn gpu_strips_under_the_bit_sliced_rule_match_one_backend() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("gpu_strips_under_the_bit_sliced_rule_match_one_backend") else {
        return;
    };
    let d = Device::Cuda(gpu);
    // One word per row, several, one row-block per strip and several.
    check_gpu(&d, (2, 64, 8, 0.0), Scheme::Sliced, &[1, 2], 60);
    check_gpu(&d, (9, 128, 48, 0.0), Scheme::Sliced, &[1, 2, 4, 5], 200);
    check_gpu(&d, (16, 192, 24, 0.0), Scheme::Sliced, &[2, 3], 40);
    check_gpu(&d, (3, 64, 40, 0.0), Scheme::Sliced, &[2, 5], 50);
    check_gpu(&d, (10, 576, 32, 0.0), Scheme::Sliced, &[2, 4], 30);
    // Many units per row-block and an interior of many row-blocks.
    check_gpu(&d, (2, 1024, 256, 0.0), Scheme::Sliced, &[1, 3, 5], 60);
}

#[test]
fn a_gpu_strip_refuses_rows_and_lattices_that_do_not_fit() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("a_gpu_strip_refuses_rows_and_lattices_that_do_not_fit") else {
        return;
    };
    let d = Device::Cuda(gpu);
    let m = PottsModel::new(3, 16, 20).unwrap();
    for bad in [0..4, 4..16, 8..8, 16..24] {
        let e = open_strip(&d, &m, bad.clone()).err().expect("refused").to_string();
        assert!(e.contains("whole 8-row blocks"), "{bad:?}: {e}");
    }
    let mut s = open_strip(&d, &m, 8..16).unwrap();
    let other = Lattice::new(&PottsModel::new(3, 16, 24).unwrap(), InitialState::Random, 1, 2);
    assert!(s.load(&other).unwrap_err().to_string().contains("does not fit"));
}

#[cfg(feature = "cuda")]
/// The GPUs of this machine and NCCL, or `None` after printing why the
/// NCCL tests are skipped (a failure under `WARPMC_REQUIRE_GPU=1`).
fn gpus_with_nccl(test: &str) -> Option<Vec<warpmc_gpu::Gpu>> {
    let first = warpmc_testkit::gpu_or_skip(test)?;
    if let Err(e) = warpmc_gpu::nccl::library() {
        let required = std::env::var("WARPMC_REQUIRE_GPU").is_ok_and(|v| v == "1");
        assert!(!required, "{test}: WARPMC_REQUIRE_GPU=1 but {e}");
        eprintln!("SKIPPED {test}: {e}");
        return None;
    }
    let n = warpmc_gpu::probe().devices.map_or(1, |d| d.len());
    let mut gpus = vec![first];
    gpus.extend((1..n).map(|i| warpmc_gpu::Gpu::open(i).unwrap()));
    Some(gpus)
}

#[cfg(feature = "cuda")]
/// The lattice and census after `stretches` on one strip per GPU of
/// `gpus`, each driven by its own thread, edge rows and census through
/// NCCL.
fn nccl_run(
    model: &PottsModel,
    start: &Lattice,
    gpus: &[warpmc_gpu::Gpu],
    chain: (u64, u64),
    stretches: &[Stretch],
    unit_threads_from: u64,
) -> (Lattice, Census) {
    let rows = strip_rows(model.height(), gpus.len());
    assert_eq!(rows.len(), gpus.len(), "the test lattice is too small for {} strips", gpus.len());
    let k = rows.len();
    let comms = warpmc_gpu::nccl::Communicator::for_devices(gpus).unwrap();
    let results: Vec<(Vec<u8>, Census)> = std::thread::scope(|scope| {
        let handles: Vec<_> = comms
            .into_iter()
            .zip(gpus)
            .zip(&rows)
            .enumerate()
            .map(|(i, ((comm, gpu), r))| {
                scope.spawn(move || {
                    let mut strip = warpmc_potts::CudaStripBackend::new(gpu.clone(), model, r.clone())
                        .unwrap()
                        .with_unit_threads_from(unit_threads_from);
                    strip.load(start).unwrap();
                    if unit_threads_from == 0 {
                        // Connecting trades the edge rows once: a loaded strip is unchanged.
                        strip.connect_nccl(&comm, ((i + k - 1) % k, (i + 1) % k)).unwrap();
                    }
                    for s in stretches {
                        strip.set_table(&AcceptanceTable::metropolis(model, s.temperature)).unwrap();
                        let (up, down) = ((i + k - 1) % k, (i + 1) % k);
                        strip.sweeps_nccl(chain.0, chain.1, s.first, s.count, &comm, (up, down)).unwrap();
                    }
                    (strip.spins().unwrap(), strip.census_nccl(&comm).unwrap())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    // Every strip's census is already the whole lattice's.
    for (_, c) in &results[1..] {
        assert_eq!(*c, results[0].1, "the ranks' all-reduced censuses differ");
    }
    let census = results[0].1.clone();
    let spins: Vec<u8> = results.into_iter().flat_map(|(s, _)| s).collect();
    (Lattice::from_spins(model.width(), model.height(), model.q(), spins).unwrap(), census)
}

#[cfg(feature = "cuda")]
#[test]
fn gpu_strips_trading_through_nccl_match_one_backend() {
    let Some(gpus) = gpus_with_nccl("gpu_strips_trading_through_nccl_match_one_backend") else { return };
    eprintln!(
        "NCCL {:?} from {}, {} GPU(s)",
        warpmc_gpu::nccl::library().unwrap().version(),
        warpmc_gpu::nccl::library().unwrap().name(),
        gpus.len()
    );
    // Both rules, a field, strips of one row-block and of many, a lone
    // strip trading with itself and (on a machine with several GPUs) one
    // strip per GPU.
    for (q, width, height, field, scheme, sweeps) in [
        (3, 10, 22, 0.3, Scheme::SiteWords, 200),
        (9, 66, 40, 0.1, Scheme::SiteWords, 60),
        (9, 128, 48, 0.0, Scheme::Sliced, 200),
        (2, 1024, 256, 0.0, Scheme::Sliced, 60),
        (10, 576, 32, 0.0, Scheme::Sliced, 30),
    ] {
        let model = PottsModel::new(q, width, height).unwrap().with_field(field).unwrap();
        assert_eq!(Scheme::for_model(&model), scheme);
        let chain = (0x5eed ^ u64::from(q), 0xabc0 + width as u64);
        let start = Lattice::new(&model, InitialState::Random, chain.0, chain.1);
        let plan = stretches(q, sweeps);
        let (lattice, census) = whole_run(&model, &start, chain, &plan);
        assert_ne!(lattice.spins(), start.spins(), "nothing moved: the test would prove nothing");
        for n in 1..=gpus.len().min(height / 8) {
            // A thread per row, and a thread per unit (the kernel of large strips).
            for unit_threads_from in [u64::MAX, 0] {
                let (l, c) = nccl_run(&model, &start, &gpus[..n], chain, &plan, unit_threads_from);
                let what = format!("q={q} {width}x{height} h={field}, {n} GPUs, unit threads from {unit_threads_from}");
                assert!(l.spins() == lattice.spins(), "{what}: the lattices differ");
                assert_eq!(c, census, "{what}: the censuses differ");
            }
        }
    }
}
