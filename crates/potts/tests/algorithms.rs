//! Every update algorithm against exact results at the transition, and the
//! autocorrelation times that tell them apart.
//!
//! - ⟨e⟩ and the specific heat at T_c match the exact values of the same
//!   finite torus within 4 standard errors: q = 2 on 16² (Kaufman 1949;
//!   Ferdinand and Fisher 1969), q = 3 and q = 4 on 6 × 6 (the exact
//!   density of states by transfer matrix). On the CPU, and on a CUDA
//!   device when one is usable (Wolff runs on the CPU there too).
//! - τ_int of the energy at T_c on 32² and 128², q = 2: Swendsen–Wang and
//!   Wolff at least ten times below Metropolis at L = 128, and the local
//!   algorithms slowing down with L.
//!
//! Seeds are fixed, so each test always passes or always fails for a given
//! build; the tolerances leave a correct implementation passing for all but
//! a ~10⁻⁴ fraction of seeds, while a wrong rule moves the results by many
//! error bars (a Wolff sweep ending once its clusters total N sites is 30
//! standard errors low on 16²).

use warpmc_potts::exact::{ExactMoments, density_of_states, ising_torus, potts_critical_temperature};
use warpmc_potts::stats::GammaMethod;
use warpmc_potts::update::ALGORITHMS;
use warpmc_potts::{Algorithm, ConfigFile, Device, InitialState, PottsModel, Runner, Simulation};
use warpmc_testkit::test_device;

fn z(value: f64, err: f64, exact: f64) -> f64 {
    assert!(err.is_finite() && err > 0.0, "no error bar");
    (value - exact) / err
}

/// Sweeps measured per sample: each run spans thousands of τ_int of every
/// algorithm at these sizes (Metropolis on 16² at T_c: τ_int(e) ≈ 6).
const SWEEPS: u64 = 40_000;

fn every_algorithm_matches_the_exact_torus_at_tc(device: &Device) {
    let cases: Vec<(u32, usize, ExactMoments)> = vec![
        (2, 16, ising_torus(16, 16, potts_critical_temperature(2), 1.0).unwrap()),
        (3, 6, density_of_states(3, 6, 6).moments(potts_critical_temperature(3), 1.0)),
        (4, 6, density_of_states(4, 6, 6).moments(potts_critical_temperature(4), 1.0)),
    ];
    for (q, l, exact) in cases {
        for algorithm in ALGORITHMS {
            let cfg = ConfigFile {
                q: Some(q),
                size: Some(l),
                temp: Some(potts_critical_temperature(q)),
                init: Some(InitialState::Ordered),
                therm: Some(1000),
                sweeps: Some(SWEEPS),
                measure_every: Some(2),
                samples: Some(2),
                seed: Some(27 + q as u64),
                algorithm: Some(algorithm),
                ..Default::default()
            }
            .resolve()
            .unwrap();
            let r = &Runner::on(cfg, device).unwrap().run_all().unwrap()[0];
            let ze = z(r.energy, r.energy_err, exact.energy);
            let zc = z(r.specific_heat, r.specific_heat_err, exact.specific_heat);
            eprintln!(
                "{} q={q} {l}² {algorithm:>13}: e {:.5}±{:.5} exact {:.5} (z {ze:5.2}); c {:.4}±{:.4} exact {:.4} \
                 (z {zc:5.2}); tau_e {:.1}",
                r.backend,
                r.energy,
                r.energy_err,
                exact.energy,
                r.specific_heat,
                r.specific_heat_err,
                exact.specific_heat,
                r.tau_int_energy
            );
            assert!(ze.abs() < 4.0 && zc.abs() < 4.0, "{} q={q} {l}² {algorithm}: z = {ze}, {zc}", device.name());
        }
    }
}
test_device!(
    every_algorithm_matches_the_exact_torus_at_tc,
    every_algorithm_matches_the_exact_torus_at_tc_cpu,
    every_algorithm_matches_the_exact_torus_at_tc_cuda
);

/// τ_int of the energy per site (in sweeps) and its error, from `sweeps`
/// measurements after every sweep of one chain started ordered at T_c,
/// summed over the energy's own Sokal window. For the local algorithms
/// that window leaves out a weak slow tail the energy inherits from the
/// order parameter, so their τ_int comes out low: the ratios asserted
/// below only gain from summing it (warpmc potts bench --autocorrelation
/// does, with far longer runs).
fn tau_int(algorithm: Algorithm, l: usize, therm: u64, sweeps: u64) -> (f64, f64) {
    let model = PottsModel::new(2, l, l).unwrap();
    let tc = potts_critical_temperature(2);
    let mut sim = Simulation::with_algorithm(model, algorithm, tc, &Device::CPU).unwrap().with_seed(2026);
    sim.sweeps(therm).unwrap();
    let e: Vec<f64> = (0..sweeps).map(|_| sim.sweeps(1).unwrap().energy().unwrap()).collect();
    let g = GammaMethod::new(vec![vec![e]]).analyze(|v| v[0]);
    (g.tau_int, g.tau_int_err)
}

/// q = 2 at T_c: the cluster algorithms' τ_int of the energy is at least
/// ten times below Metropolis' on 128², and the local algorithms slow down
/// from 32² to 128² (critical slowing down). The runs are sized to stay
/// lean: the local algorithms' on 128² span some 100 and 50 of their
/// τ_int (their errors near half of it), the others hundreds to
/// thousands; what is measured (Metropolis over Swendsen–Wang and Wolff:
/// 40 and 115) is four times and more past the ratio asserted.
#[test]
fn cluster_algorithms_decorrelate_ten_times_faster_at_tc() {
    // (algorithm, L, thermalisation, measured sweeps)
    let runs = [
        (Algorithm::Metropolis, 32, 2_000, 20_000),
        (Algorithm::Metropolis, 128, 5_000, 30_000),
        (Algorithm::HeatBath, 32, 2_000, 20_000),
        (Algorithm::HeatBath, 128, 5_000, 10_000),
        (Algorithm::SwendsenWang, 32, 200, 4_000),
        (Algorithm::SwendsenWang, 128, 200, 3_000),
        (Algorithm::Wolff, 32, 200, 4_000),
        (Algorithm::Wolff, 128, 200, 3_000),
    ];
    let taus: Vec<(Algorithm, usize, f64, f64)> = runs
        .iter()
        .map(|&(a, l, therm, sweeps)| {
            let (t, e) = tau_int(a, l, therm, sweeps);
            eprintln!(
                "{a:>13} L = {l:>3}: tau_int(e) = {t:7.2} ± {e:.2} sweeps ({:.0} tau measured)",
                sweeps as f64 / t
            );
            (a, l, t, e)
        })
        .collect();
    let at = |a: Algorithm, l: usize| taus.iter().find(|t| t.0 == a && t.1 == l).map(|t| t.2).unwrap();
    let metropolis = at(Algorithm::Metropolis, 128);
    for a in [Algorithm::SwendsenWang, Algorithm::Wolff] {
        let speedup = metropolis / at(a, 128);
        eprintln!("L = 128: tau_int(metropolis) / tau_int({a}) = {speedup:.1}");
        assert!(speedup >= 10.0, "{a} is only {speedup:.1} times faster than Metropolis at L = 128");
    }
    for a in [Algorithm::Metropolis, Algorithm::HeatBath] {
        let growth = at(a, 128) / at(a, 32);
        assert!(growth > 2.0, "{a}: tau_int grew only {growth:.2} times from L = 32 to 128");
    }
}

#[test]
fn metropolis_refuses_ising_tori_too_small_to_be_ergodic() {
    // On 2 × 2 a q = 2 checkerboard Metropolis chain never visits 4 of the
    // 16 states (its ΔE = 0 flips are deterministic): ⟨e⟩ at T = 2 comes out
    // near −1.627 where enumeration gives −1.536. A run is refused there;
    // heat-bath, a field, q = 3 and a larger torus run.
    let open = |q: u32, w: usize, h: usize, field: f64, algorithm: Algorithm| {
        let model = PottsModel::new(q, w, h).unwrap().with_field(field).unwrap();
        Simulation::with_algorithm(model, algorithm, 2.0, &Device::CPU).map(drop)
    };
    for (w, h) in [(2, 2), (2, 4), (4, 2)] {
        let e = open(2, w, h, 0.0, Algorithm::Metropolis).unwrap_err().to_string();
        assert!(e.contains("cannot reach every state") && e.contains("heat-bath"), "{e}");
    }
    open(2, 2, 2, 0.0, Algorithm::HeatBath).unwrap();
    open(2, 2, 2, 0.1, Algorithm::Metropolis).unwrap();
    // Without a coupling every flip is free at any size: a sweep flips
    // every site, and m stays 1 from an ordered start.
    let uncoupled = |q: u32, algorithm: Algorithm, field: f64| {
        let model = PottsModel::new(q, 64, 64).unwrap().with_coupling(0.0).unwrap().with_field(field).unwrap();
        Simulation::with_algorithm(model, algorithm, 1.0, &Device::CPU).map(drop)
    };
    let e = uncoupled(2, Algorithm::Metropolis, 0.0).unwrap_err().to_string();
    assert!(e.contains("J = 0") && e.contains("heat-bath"), "{e}");
    uncoupled(2, Algorithm::HeatBath, 0.0).unwrap();
    uncoupled(2, Algorithm::Metropolis, 0.5).unwrap();
    uncoupled(3, Algorithm::Metropolis, 0.0).unwrap();
    open(3, 2, 2, 0.0, Algorithm::Metropolis).unwrap();
    open(2, 2, 6, 0.0, Algorithm::Metropolis).unwrap();
    // Heat-bath's chain on 2 × 2 has the enumerated average.
    let exact = warpmc_potts::exact::density_of_states(2, 2, 2).moments(2.0, 1.0).energy;
    let model = PottsModel::new(2, 2, 2).unwrap();
    let mut sim = Simulation::with_algorithm(model, Algorithm::HeatBath, 2.0, &Device::CPU).unwrap().with_seed(5);
    sim.sweeps(1000).unwrap();
    let n = 200_000;
    let mut sum = 0.0;
    for _ in 0..n {
        sim.sweeps(1).unwrap();
        sum += sim.energy().unwrap();
    }
    let mean = sum / n as f64;
    assert!((mean - exact).abs() < 0.01, "heat-bath ⟨e⟩ = {mean}, exact {exact}");
}
