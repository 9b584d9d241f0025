//! Heat-bath sweeps: the CPU backend against a naive site-by-site
//! implementation on the row-major lattice, and the CUDA kernel against the
//! CPU bit for bit, on awkward sizes, q up to 255, fields and negative
//! couplings. (The rule of one site is checked against Gibbs' probabilities
//! exactly in heat_bath.rs's unit tests.)

use warpmc_potts::algorithm::{UNIT_COLS, UNIT_ROWS, chain_stream, unit_generators, units_per_row};
use warpmc_potts::heat_bath::{HeatBathTable, heat_bath_site};
use warpmc_potts::{Algorithm, Backend, CpuBackend, InitialState, Lattice, PottsModel, Update};
use warpmc_rng::RandomSource;

/// Heat-bath sweeps written the obvious way: row-major lattice, each site of
/// the colour in turn, its word found by jumping its unit's generator ahead.
fn naive_heat_bath(l: &Lattice, model: &PottsModel, t: f64, seed: u64, stream: u64, first: u64, count: u64) -> Lattice {
    let (w, h, q) = (l.width(), l.height(), l.q());
    let table = HeatBathTable::new(model, t);
    let mut s = l.spins().to_vec();
    for sweep in first..first + count {
        for colour in 0..2u32 {
            for y in 0..h {
                for x in (0..w).filter(|x| (x + y) % 2 == colour as usize) {
                    let (hw, xh) = (w / 2, x / 2);
                    let unit = (y / UNIT_ROWS) * units_per_row(hw) + xh / UNIT_COLS;
                    let cols = UNIT_COLS.min(hw - xh / UNIT_COLS * UNIT_COLS);
                    let before = (y % UNIT_ROWS) / 2 * cols + xh % UNIT_COLS;
                    let mut g = unit_generators(seed, stream, sweep, colour, unit as u64)[(y % UNIT_ROWS) % 2];
                    g.jump(before as u64);
                    let nbrs = [
                        s[y * w + (x + w - 1) % w],
                        s[y * w + (x + 1) % w],
                        s[((y + h - 1) % h) * w + x],
                        s[((y + 1) % h) * w + x],
                    ];
                    s[y * w + x] = heat_bath_site(nbrs, g.next_u32(), q, &table);
                }
            }
        }
    }
    Lattice::from_spins(w, h, q, s).unwrap()
}

fn model(q: u32, w: usize, h: usize, j: f64, field: f64) -> PottsModel {
    PottsModel::new(q, w, h).unwrap().with_coupling(j).unwrap().with_field(field).unwrap()
}

/// (q, width, height, J, h, T/T_c): odd half-widths, heights not a multiple
/// of 8, a lattice above the CPU's parallel threshold, fields, J < 0 and
/// J = 0, q = 255, temperatures far below T_c.
const CASES: &[(u32, usize, usize, f64, f64, f64)] = &[
    (2, 2, 2, 1.0, 0.0, 0.9),
    (3, 6, 4, 1.0, 0.0, 0.9),
    (9, 34, 10, 1.0, 0.3, 1.0),
    (255, 14, 8, 1.0, -0.2, 0.9),
    (5, 260, 130, 1.0, 0.0, 1.0),
    (16, 64, 24, 1.0, 0.0, 0.05),
    (4, 62, 16, -1.0, 0.5, 1.1),
    (7, 10, 2, 0.0, 0.0, 1.0),
    (2, 128, 8, 1.0, 0.0, 1.0),
];

fn temperature(q: u32, factor: f64) -> f64 {
    factor / (1.0 + (q as f64).sqrt()).ln()
}

#[test]
fn cpu_heat_bath_matches_the_naive_reference() {
    for &(q, w, h, j, field, f) in CASES {
        let m = model(q, w, h, j, field);
        let t = temperature(q, f);
        let stream = chain_stream(4, 1);
        let start = Lattice::new(&m, InitialState::Random, 31, stream);
        let mut cpu = CpuBackend::for_algorithm(&m, Algorithm::HeatBath).unwrap();
        assert_eq!(cpu.storage_name(), "bytes");
        cpu.load(&start).unwrap();
        cpu.set_update(&Update::new(Algorithm::HeatBath, &m, t).unwrap()).unwrap();
        cpu.sweeps(31, stream, 2, 3).unwrap();
        cpu.sweeps(31, stream, 5, 2).unwrap();
        let expected = naive_heat_bath(&start, &m, t, 31, stream, 2, 5);
        assert_eq!(cpu.lattice().unwrap(), expected, "q={q} {w}x{h} J={j} h={field}");
        assert_eq!(cpu.census().unwrap(), expected.census());
        assert!(w * h < 16 || expected != start, "nothing moved: q={q} {w}x{h}");
    }
}

#[test]
fn heat_bath_and_metropolis_switch_on_one_backend() {
    // A backend opened for heat-bath also runs Metropolis when given its
    // table (the same storage and random numbers), and back.
    let m = model(3, 16, 8, 1.0, 0.0);
    let (t, stream) = (0.9, chain_stream(0, 0));
    let start = Lattice::new(&m, InitialState::Random, 5, stream);
    let mut a = CpuBackend::for_algorithm(&m, Algorithm::HeatBath).unwrap();
    a.load(&start).unwrap();
    a.set_update(&Update::new(Algorithm::Metropolis, &m, t).unwrap()).unwrap();
    a.sweeps(5, stream, 0, 2).unwrap();
    a.set_update(&Update::new(Algorithm::HeatBath, &m, t).unwrap()).unwrap();
    a.sweeps(5, stream, 2, 2).unwrap();
    let after_metropolis = {
        let mut b = CpuBackend::with_scheme(&m, warpmc_potts::Scheme::SiteWords).unwrap();
        b.load(&start).unwrap();
        b.set_update(&Update::new(Algorithm::Metropolis, &m, t).unwrap()).unwrap();
        b.sweeps(5, stream, 0, 2).unwrap();
        b.lattice().unwrap()
    };
    assert_eq!(a.lattice().unwrap(), naive_heat_bath(&after_metropolis, &m, t, 5, stream, 2, 2));
    // The bit-planes storage cannot run heat-bath: a clear error.
    let sliced = model(3, 64, 8, 1.0, 0.0);
    let e = CpuBackend::new(&sliced).set_update(&Update::new(Algorithm::HeatBath, &sliced, t).unwrap()).unwrap_err();
    assert!(e.to_string().contains("heat-bath"), "{e}");
}

#[cfg(feature = "cuda")]
#[test]
fn cuda_heat_bath_is_bit_identical_to_the_cpu() {
    use warpmc_potts::CudaBackend;
    let Some(gpu) = warpmc_testkit::gpu_or_skip("cuda_heat_bath_is_bit_identical_to_the_cpu") else { return };
    let mut cases = CASES.to_vec();
    cases.extend([(9, 1030, 258, 1.0, 0.25, 1.0), (2, 2, 1024, 1.0, 0.0, 1.0), (255, 98, 40, 1.0, 0.0, 0.5)]);
    for (q, w, h, j, field) in cases.iter().map(|c| (c.0, c.1, c.2, c.3, c.4)) {
        let m = model(q, w, h, j, field);
        for f in [0.05, 0.8, 1.0, 1.3] {
            let t = temperature(q, f);
            let stream = chain_stream(2, 7);
            let start = Lattice::new(&m, InitialState::Random, 2027, stream);
            let update = Update::new(Algorithm::HeatBath, &m, t).unwrap();
            let mut cpu = CpuBackend::for_algorithm(&m, Algorithm::HeatBath).unwrap();
            let mut cuda = CudaBackend::for_algorithm(gpu.clone(), &m, Algorithm::HeatBath).unwrap();
            assert_eq!(cuda.kernel_name(), "heat-bath");
            for b in [&mut cpu as &mut dyn Backend, &mut cuda] {
                b.load(&start).unwrap();
                b.set_update(&update).unwrap();
                b.sweeps(2027, stream, 0, 1).unwrap();
                b.sweeps(2027, stream, 1, 40).unwrap();
                b.sweeps(2027, chain_stream(2, 8), 0, 3).unwrap();
            }
            let want = cpu.lattice().unwrap();
            assert!(cuda.lattice().unwrap() == want, "q={q} {w}x{h} J={j} h={field} T={t}: lattices differ");
            assert_eq!(cuda.census().unwrap(), want.census(), "census q={q} {w}x{h}");
            // Metropolis again on the same backend: the generic kernel.
            let metropolis = Update::new(Algorithm::Metropolis, &m, t).unwrap();
            cpu.set_update(&metropolis).unwrap();
            cuda.set_update(&metropolis).unwrap();
            assert_eq!(cuda.kernel_name(), "generic");
            cpu.sweeps(2027, stream, 41, 3).unwrap();
            cuda.sweeps(2027, stream, 41, 3).unwrap();
            assert!(cuda.lattice().unwrap() == cpu.lattice().unwrap(), "q={q} {w}x{h}: Metropolis after heat-bath");
        }
    }
}
