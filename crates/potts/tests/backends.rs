//! The backends against independent references: the CPU backend against a
//! naive site-by-site implementation in the natural layout, and the CUDA
//! backend against the CPU bit for
//! bit on awkward lattice sizes.

use proptest::prelude::*;
use warpmc_potts::algorithm::{
    ALWAYS, AcceptanceTable, Scheme, UNIT_COLS, UNIT_ROWS, chain_stream, metropolis_site, unit_generators,
    units_per_row,
};
#[cfg(feature = "cuda")]
use warpmc_potts::cuda::{CudaKernel, check_fits};
use warpmc_potts::sliced::{MAX_PROPOSAL_ROUNDS, proposal_bits};
use warpmc_potts::{Backend, CpuBackend, InitialState, Lattice, PottsModel};
#[cfg(feature = "cuda")]
use warpmc_potts::{CudaBackend, PottsError};
use warpmc_rng::RandomSource;

/// The bit-sliced rule (crates/potts/src/sliced.rs) written site by site on
/// the row-major lattice, with no bit-sliced arithmetic: unit by unit, each
/// row's 32 sites drawing their bits from the row's generator.
fn naive_sliced_sweeps(
    l: &Lattice,
    model: &PottsModel,
    t: f64,
    seed: u64,
    stream: u64,
    first: u64,
    count: u64,
) -> Lattice {
    let (w, h, q) = (l.width(), l.height(), l.q());
    let th = AcceptanceTable::metropolis(model, t).without_field();
    let (b, m) = (proposal_bits(q), q - 1);
    let wr = w / 64;
    let mut s = l.spins().to_vec();
    for sweep in first..first + count {
        for colour in 0..2usize {
            for unit in 0..wr * h / 8 {
                for i in 0..8 {
                    let y = unit / wr * 8 + i;
                    // Row i: the pair (i mod 2) of Philox block 4·unit + i/2.
                    let g =
                        &mut unit_generators(seed, stream, sweep, colour as u32, 4 * unit as u64 + i as u64 / 2)[i % 2];
                    // The row's sites: x = 2 x_h + o for x_h = 32 w … 32 w + 31.
                    let xs: Vec<usize> = (0..32).map(|j| 2 * (32 * (unit % wr) + j) + ((y + colour) & 1)).collect();
                    // Proposal steps: bit i of site j from bit j of word i.
                    let mut k = [0u32; 32];
                    let mut todo: Vec<usize> = (0..32).collect();
                    for round in 0..MAX_PROPOSAL_ROUNDS {
                        let words: Vec<u32> = (0..b).map(|_| g.next_u32()).collect();
                        for &j in &todo {
                            k[j] = (0..b).map(|i| ((words[i] >> j) & 1) << i).sum();
                        }
                        todo.retain(|&j| k[j] >= m);
                        if todo.is_empty() || round + 1 == MAX_PROPOSAL_ROUNDS {
                            break;
                        }
                    }
                    for &j in &todo {
                        k[j] -= m;
                    }
                    let nbrs = |x: usize, v: u8| {
                        [
                            s[y * w + (x + w - 1) % w],
                            s[y * w + (x + 1) % w],
                            s[((y + h - 1) % h) * w + x],
                            s[((y + 1) % h) * w + x],
                        ]
                        .iter()
                        .filter(|&&n| n == v)
                        .count() as i32
                    };
                    let mut new = [0u8; 32];
                    let mut theta = [ALWAYS; 32];
                    for (j, &x) in xs.iter().enumerate() {
                        let old = s[y * w + x];
                        new[j] = ((old as u32 + 1 + k[j]) % q) as u8;
                        let d = nbrs(x, old) - nbrs(x, new[j]);
                        theta[j] = th[(4 - d) as usize];
                    }
                    // Acceptance: U = 0.u1 u2 … against θ/2³², MSB first.
                    let mut accept: Vec<Option<bool>> = theta.iter().map(|&t| (t == ALWAYS).then_some(true)).collect();
                    for pos in (0..32).rev() {
                        if accept.iter().all(Option::is_some) {
                            break;
                        }
                        let u = g.next_u32();
                        for j in 0..32 {
                            let (ub, tb) = (u64::from((u >> j) & 1), (theta[j] >> pos) & 1);
                            if accept[j].is_none() && ub != tb {
                                accept[j] = Some(ub == 0);
                            }
                        }
                    }
                    for (j, &x) in xs.iter().enumerate() {
                        if accept[j] == Some(true) {
                            s[y * w + x] = new[j];
                        }
                    }
                }
            }
        }
    }
    Lattice::from_spins(w, h, q, s).unwrap()
}

/// Sweeps written the obvious way: row-major lattice, each site of the
/// colour in turn. A site's word is found from its place in its unit by
/// jumping the unit's generator ahead (no sequential stepping).
fn naive_sweeps(l: &Lattice, model: &PottsModel, t: f64, seed: u64, stream: u64, first: u64, count: u64) -> Lattice {
    let (w, h, q) = (l.width(), l.height(), l.q());
    let table = AcceptanceTable::metropolis(model, t);
    let mut s = l.spins().to_vec();
    for sweep in first..first + count {
        for colour in 0..2u32 {
            for y in 0..h {
                for x in 0..w {
                    if (x + y) % 2 != colour as usize {
                        continue;
                    }
                    let (hw, xh) = (w / 2, x / 2);
                    let unit = (y / UNIT_ROWS) * units_per_row(hw) + xh / UNIT_COLS;
                    let cols = UNIT_COLS.min(hw - xh / UNIT_COLS * UNIT_COLS);
                    let before = (y % UNIT_ROWS) / 2 * cols + xh % UNIT_COLS;
                    let mut g = unit_generators(seed, stream, sweep, colour, unit as u64)[(y % UNIT_ROWS) % 2];
                    g.jump(before as u64);
                    let r = g.next_u32();
                    let nbrs = [
                        s[y * w + (x + w - 1) % w],
                        s[y * w + (x + 1) % w],
                        s[((y + h - 1) % h) * w + x],
                        s[((y + 1) % h) * w + x],
                    ];
                    s[y * w + x] = metropolis_site(s[y * w + x], nbrs, r, q, &table);
                }
            }
        }
    }
    Lattice::from_spins(w, h, q, s).unwrap()
}

fn random_model(q: u32, w: usize, h: usize, field: f64) -> PottsModel {
    PottsModel::new(q, w, h).unwrap().with_field(field).unwrap()
}

#[test]
fn cpu_backend_matches_the_naive_reference() {
    // Odd and even half-widths, a lattice above the parallel threshold, a
    // field, negative couplings; then the bit-sliced rule (q ≤ 16, no field,
    // width % 64 = 0, height % 8 = 0) for every plane count, powers of two
    // and not for q − 1, and low temperatures where thresholds reach 0.
    for (q, w, h, j, field, t_factor) in [
        (2, 2, 2, 1.0, 0.0, 0.9),
        (3, 6, 4, 1.0, 0.0, 0.9),
        (9, 34, 10, 1.0, 0.3, 0.9),
        (255, 14, 8, 1.0, -0.2, 0.9),
        (5, 260, 130, 1.0, 0.0, 0.9),
        (16, 48, 26, 1.0, 0.0, 0.9),
        (4, 62, 16, -1.0, 0.0, 0.9),
        (2, 64, 8, 1.0, 0.0, 0.9),
        (2, 128, 24, -0.7, 0.0, 1.1),
        (3, 64, 16, 1.0, 0.0, 0.9),
        (4, 192, 8, 1.0, 0.0, 1.2),
        (5, 64, 40, 1.0, 0.0, 0.01),
        (9, 256, 136, 1.0, 0.0, 0.9),
        (9, 64, 8, -1.0, 0.0, 1.0),
        (12, 128, 16, 1.0, 0.0, 1.3),
        (16, 64, 24, 1.0, 0.0, 1.0),
        (7, 64, 8, 0.0, 0.0, 1.0),
        // Rows of eight words and more (the CPU's AVX2 groups), with odd
        // and single words left over.
        (9, 704, 16, 1.0, 0.0, 0.9),
        (2, 1024, 8, 1.0, 0.0, 1.0),
        (3, 512, 24, -1.0, 0.0, 1.1),
        (16, 1088, 8, 1.0, 0.0, 1.0),
    ] {
        let model = random_model(q, w, h, field).with_coupling(j).unwrap();
        let t = t_factor / (1.0 + (q as f64).sqrt()).ln();
        let stream = chain_stream(1, 2);
        let start = Lattice::new(&model, InitialState::Random, 77, stream);
        let mut cpu = CpuBackend::new(&model);
        let sliced = Scheme::for_model(&model) == Scheme::Sliced;
        assert_eq!(cpu.storage_name().starts_with("planes"), sliced);
        cpu.load(&start).unwrap();
        cpu.set_table(&AcceptanceTable::metropolis(&model, t)).unwrap();
        cpu.sweeps(77, stream, 3, 5).unwrap();
        let expected = if sliced {
            naive_sliced_sweeps(&start, &model, t, 77, stream, 3, 5)
        } else {
            naive_sweeps(&start, &model, t, 77, stream, 3, 5)
        };
        assert_eq!(cpu.lattice().unwrap(), expected, "q={q} {w}x{h} J={j} {}", cpu.storage_name());
        // The same without AVX2 (a no-op where the CPU lacks it).
        let mut plain = CpuBackend::new(&model).without_simd();
        plain.load(&start).unwrap();
        plain.set_table(&AcceptanceTable::metropolis(&model, t)).unwrap();
        plain.sweeps(77, stream, 3, 5).unwrap();
        assert_eq!(plain.lattice().unwrap(), expected, "q={q} {w}x{h} J={j} {}", plain.storage_name());
        assert_eq!(cpu.census().unwrap(), expected.census(), "census q={q} {w}x{h}");
        // (A 2×2 lattice may well come back to its start after 5 sweeps.)
        assert!(w * h < 16 || expected != start, "nothing moved: q={q} {w}x{h}");
        // The one-word-per-site rule runs any model, also those the
        // bit-sliced rule would take.
        if sliced {
            let mut bytes = CpuBackend::with_scheme(&model, Scheme::SiteWords).unwrap();
            bytes.load(&start).unwrap();
            bytes.set_table(&AcceptanceTable::metropolis(&model, t)).unwrap();
            bytes.sweeps(77, stream, 3, 5).unwrap();
            assert_eq!(bytes.lattice().unwrap(), naive_sweeps(&start, &model, t, 77, stream, 3, 5));
        }
    }
}

#[test]
fn the_bit_sliced_rule_is_refused_where_it_does_not_fit() {
    for (q, w, h, field) in [(17, 64, 8, 0.0), (9, 96, 8, 0.0), (9, 64, 12, 0.0), (9, 64, 8, 0.5)] {
        let model = random_model(q, w, h, field);
        let e = CpuBackend::with_scheme(&model, Scheme::Sliced).unwrap_err();
        assert!(e.to_string().contains("bit-sliced"), "{e}");
        assert_eq!(Scheme::for_model(&model), Scheme::SiteWords);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// The CPU census (on the colour-split arrays) equals the row-major one.
    #[test]
    fn census_agrees_on_any_lattice(q in 2u32..20, hw in 1usize..12, hh in 1usize..8, seed in any::<u64>()) {
        let model = PottsModel::new(q, 2 * hw, 2 * hh).unwrap();
        let l = Lattice::new(&model, InitialState::Random, seed, 5);
        let mut cpu = CpuBackend::new(&model);
        cpu.load(&l).unwrap();
        prop_assert_eq!(cpu.lattice().unwrap(), l.clone());
        prop_assert_eq!(cpu.census().unwrap(), l.census());
    }
}

#[cfg(feature = "cuda")]
#[test]
fn cuda_backend_is_bit_identical_to_the_cpu() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("cuda_backend_is_bit_identical_to_the_cpu") else { return };
    for (q, w, h, j, field) in [
        (2, 6, 4, 1.0, 0.0),
        (3, 34, 10, 1.0, 0.0),
        (9, 130, 66, 1.0, 0.0),
        (9, 1030, 258, 1.0, 0.25),
        (2, 2, 1024, 1.0, 0.0),
        (255, 98, 40, 1.0, 0.0),
        // The bit-sliced kernels: every plane count, q − 1 a power of two
        // or not, one to five words per row, negative and zero coupling.
        (2, 64, 8, 1.0, 0.0),
        (2, 128, 24, -1.0, 0.0),
        (3, 192, 40, 1.0, 0.0),
        (4, 64, 16, 1.0, 0.0),
        (5, 320, 8, 1.0, 0.0),
        (8, 192, 24, 1.0, 0.0),
        (9, 256, 40, 1.0, 0.0),
        (9, 128, 16, -0.5, 0.0),
        (12, 64, 8, 1.0, 0.0),
        (16, 1024, 264, 1.0, 0.0),
        (6, 64, 8, 0.0, 0.0),
        // The resident kernel's neighbour waits: a row-block per block of
        // threads, and a row-block over two blocks; the tiled kernel's
        // strips of 4 rows (the fewest) with 32 and 64 words per row.
        (9, 2048, 128, 1.0, 0.0),
        (2, 4096, 64, 1.0, 0.0),
        // The tiled kernel: two strips (each block's halo rows are the
        // other's), and (on a 132-multiprocessor GPU) strips of 8 rows,
        // copied by words and by 16-byte pieces.
        (5, 128, 8, 1.0, 0.0),
        (9, 128, 1056, 1.0, 0.0),
        (4, 256, 1056, -1.0, 0.0),
        // The tiled kernel with one halo row: strips of 2 rows (every row an
        // edge row) and of 4 rows of 64 words (more edge words than a warp).
        (9, 2048, 264, 1.0, 0.0),
        (2, 4096, 512, -1.0, 0.0),
        // … and more blocks to watch than a block has threads.
        (3, 64 * 2100, 8, 1.0, 0.0),
    ] {
        let model = random_model(q, w, h, field).with_coupling(j).unwrap();
        for t_factor in [0.05, 0.8, 1.0, 1.3] {
            let t = t_factor / (1.0 + (q as f64).sqrt()).ln();
            let stream = chain_stream(3, 1);
            let start = Lattice::new(&model, InitialState::Random, 2026, stream);
            let table = AcceptanceTable::metropolis(&model, t);
            let mut cpu = CpuBackend::new(&model);
            let mut cpu_bytes = CpuBackend::with_scheme(&model, Scheme::SiteWords).unwrap();
            // (backend, the CPU backend of its rule: 0 the model's own, 1 bytes)
            let mut cudas = vec![(CudaBackend::with_kernel(gpu.clone(), &model, CudaKernel::Generic).unwrap(), 1)];
            for k in [
                CudaKernel::Sliced,
                CudaKernel::SlicedSplit,
                CudaKernel::SlicedSplit4,
                CudaKernel::SlicedSplit8,
                CudaKernel::SlicedResident,
                CudaKernel::SlicedTiled,
                CudaKernel::SlicedTiledInline,
            ] {
                if k.fits(&model) {
                    cudas.push((CudaBackend::with_kernel(gpu.clone(), &model, k).unwrap(), 0));
                }
            }
            for b in [&mut cpu as &mut dyn Backend, &mut cpu_bytes]
                .into_iter()
                .chain(cudas.iter_mut().map(|(c, _)| c as &mut dyn Backend))
            {
                b.load(&start).unwrap();
                b.set_table(&table).unwrap();
                b.sweeps(2026, stream, 0, 1).unwrap();
                b.sweeps(2026, stream, 1, 10).unwrap();
                // Long enough for the recorded graph (64 sweeps) plus a
                // remainder; then another chain's stream, which must not
                // replay the first chain's graph.
                b.sweeps(2026, stream, 11, 70).unwrap();
                b.sweeps(2026, chain_stream(3, 2), 0, 64).unwrap();
            }
            let refs = [cpu.lattice().unwrap(), cpu_bytes.lattice().unwrap()];
            if t_factor > 0.5 || j == 0.0 {
                assert_ne!(refs[0], start, "nothing moved: q={q} {w}x{h}");
            }
            for (cuda, r) in &mut cudas {
                let kernel = cuda.kernel_name();
                let g = cuda.lattice().unwrap();
                let a = &refs[*r];
                assert!(*a == g, "q={q} {w}x{h} J={j} T={t} {kernel}: lattices differ after 145 sweeps");
                assert_eq!(cuda.census().unwrap(), a.census(), "census q={q} {w}x{h} {kernel}");
            }
        }
    }
}

#[cfg(feature = "cuda")]
#[test]
fn a_lattice_too_large_for_the_device_says_how_much_memory() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("a_lattice_too_large_for_the_device_says_how_much_memory") else {
        return;
    };
    let total = gpu.info().total_memory;
    match check_fits(&gpu, total + 1) {
        Err(e @ PottsError::OutOfDeviceMemory { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains(&(total + 1).to_string()) && msg.contains("free"), "{msg}");
        }
        other => panic!("expected OutOfDeviceMemory, got {other:?}"),
    }
}
