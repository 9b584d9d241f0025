//! The backends against independent references: the CPU backend against a
//! naive site-by-site implementation in the natural layout, and the CUDA
//! backend (and the document-style baseline kernel) against the CPU bit for
//! bit on awkward lattice sizes.

use proptest::prelude::*;
use warpmc_potts::algorithm::{
    AcceptanceTable, UNIT_COLS, UNIT_ROWS, chain_stream, metropolis_site, unit_generators, units_per_row,
};
use warpmc_potts::baseline::{BaselineCpu, BaselineGpu};
use warpmc_potts::cuda::{CudaKernel, check_fits};
use warpmc_potts::{Backend, CpuBackend, CudaBackend, InitialState, Lattice, PottsError, PottsModel};
use warpmc_rng::RandomSource;

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
    // Odd and even half-widths, a lattice above the parallel threshold, a field.
    for (q, w, h, field) in [
        (2, 2, 2, 0.0),
        (3, 6, 4, 0.0),
        (9, 34, 10, 0.3),
        (255, 14, 8, -0.2),
        (5, 260, 130, 0.0),
        (16, 48, 26, 0.0),
        // The CPU's 4-bit storage (q ≤ 16, no field, width/2 % 16 = 0, height % 8 = 0).
        (2, 32, 8, 0.0),
        (3, 64, 16, 0.0),
        (9, 96, 24, 0.0),
        (16, 160, 136, 0.0),
        // … and its AVX2 rows (width/2 a multiple of 64), where the CPU has AVX2.
        (9, 256, 128, 0.0),
        (2, 128, 16, 0.0),
        (3, 384, 8, 0.0),
        (16, 128, 24, 0.0),
    ] {
        let model = random_model(q, w, h, field);
        let t = 0.9 / (1.0 + (q as f64).sqrt()).ln();
        let stream = chain_stream(1, 2);
        let start = Lattice::new(&model, InitialState::Random, 77, stream);
        let mut cpu = CpuBackend::new(&model);
        assert_eq!(cpu.storage_name().starts_with("nibbles"), CpuBackend::nibbles_fit(&model));
        cpu.load(&start).unwrap();
        cpu.set_table(&AcceptanceTable::metropolis(&model, t)).unwrap();
        cpu.sweeps(77, stream, 3, 5).unwrap();
        let expected = naive_sweeps(&start, &model, t, 77, stream, 3, 5);
        assert_eq!(cpu.lattice().unwrap(), expected, "q={q} {w}x{h} {}", cpu.storage_name());
        // The same without AVX2 (a no-op where the CPU lacks it).
        let mut plain = CpuBackend::new(&model).without_simd();
        plain.load(&start).unwrap();
        plain.set_table(&AcceptanceTable::metropolis(&model, t)).unwrap();
        plain.sweeps(77, stream, 3, 5).unwrap();
        assert_eq!(plain.lattice().unwrap(), expected, "q={q} {w}x{h} {}", plain.storage_name());
        assert_eq!(cpu.census().unwrap(), expected.census(), "census q={q} {w}x{h}");
        // (A 2×2 lattice may well come back to its start after 5 sweeps.)
        assert!(w * h < 16 || expected != start, "nothing moved: q={q} {w}x{h}");
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

#[test]
fn cuda_backend_is_bit_identical_to_the_cpu() {
    let Some(gpu) = warpmc_gpu::testing::gpu_or_skip("cuda_backend_is_bit_identical_to_the_cpu") else { return };
    for (q, w, h, field) in [
        (2, 6, 4, 0.0),
        (3, 34, 10, 0.0),
        (9, 130, 66, 0.0),
        (9, 1030, 258, 0.25),
        (2, 2, 1024, 0.0),
        (255, 98, 40, 0.0),
        // The 4-bit kernel: every q it compiles for a different path.
        (2, 48, 16, 0.0),
        // The 1-bit kernel: one, two and three words per row.
        (2, 64, 8, 0.0),
        (2, 128, 24, 0.0),
        (2, 192, 40, 0.0),
        (3, 16, 8, 0.0),
        (8, 176, 24, 0.0),
        (9, 144, 40, 0.0),
        (16, 1040, 264, 0.0),
        (12, 16, 8, 0.0),
    ] {
        let model = random_model(q, w, h, field);
        for t_factor in [0.8, 1.0, 1.3] {
            let t = t_factor / (1.0 + (q as f64).sqrt()).ln();
            let stream = chain_stream(3, 1);
            let start = Lattice::new(&model, InitialState::Random, 2026, stream);
            let table = AcceptanceTable::metropolis(&model, t);
            let mut cpu = CpuBackend::new(&model);
            let mut cudas = vec![CudaBackend::with_kernel(gpu.clone(), &model, CudaKernel::Generic).unwrap()];
            for k in [CudaKernel::Packed4, CudaKernel::Packed4Split, CudaKernel::Packed1, CudaKernel::Packed1Split] {
                if k.fits(&model) {
                    cudas.push(CudaBackend::with_kernel(gpu.clone(), &model, k).unwrap());
                }
            }
            for b in
                std::iter::once(&mut cpu as &mut dyn Backend).chain(cudas.iter_mut().map(|c| c as &mut dyn Backend))
            {
                b.load(&start).unwrap();
                b.set_table(&table).unwrap();
                b.sweeps(2026, stream, 0, 1).unwrap();
                b.sweeps(2026, stream, 1, 10).unwrap();
                // Long enough for the packed kernels' recorded graph (64
                // sweeps) plus a remainder; then another chain's stream,
                // which must not replay the first chain's graph.
                b.sweeps(2026, stream, 11, 70).unwrap();
                b.sweeps(2026, chain_stream(3, 2), 0, 64).unwrap();
            }
            let a = cpu.lattice().unwrap();
            assert_ne!(a, start, "nothing moved: q={q} {w}x{h}");
            for cuda in &mut cudas {
                let kernel = cuda.kernel_name();
                let g = cuda.lattice().unwrap();
                assert!(a == g, "q={q} {w}x{h} T={t} {kernel}: lattices differ after 145 sweeps");
                assert_eq!(cuda.census().unwrap(), a.census(), "census q={q} {w}x{h} {kernel}");
            }
        }
    }
}

#[test]
fn baseline_kernel_matches_its_cpu_reference() {
    let Some(gpu) = warpmc_gpu::testing::gpu_or_skip("baseline_kernel_matches_its_cpu_reference") else { return };
    for (q, w, h) in [(9u32, 518usize, 6usize), (2, 1024, 520), (3, 6, 4)] {
        let model = PottsModel::new(q, w, h).unwrap();
        let t = 1.0 / (1.0 + (q as f64).sqrt()).ln();
        let start = Lattice::new(&model, InitialState::Random, 5, 0);
        let mut cpu = BaselineCpu::new(&start, 5);
        let mut dev = BaselineGpu::new(gpu.clone(), &start, 5).unwrap();
        dev.set_temperature(t).unwrap();
        for _ in 0..3 {
            cpu.sweep(t);
        }
        dev.sweeps(3).unwrap();
        assert!(cpu.lattice() == dev.lattice().unwrap(), "baseline q={q} {w}x{h} differs");
        assert_ne!(cpu.lattice(), start);
    }
}

#[test]
fn a_lattice_too_large_for_the_device_says_how_much_memory() {
    let Some(gpu) = warpmc_gpu::testing::gpu_or_skip("a_lattice_too_large_for_the_device_says_how_much_memory") else {
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
