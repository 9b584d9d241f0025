//! Parallel tempering: exchange-free runs equal plain runs bit for bit, a
//! resumed run equals an uninterrupted one, tempered runs match the exact
//! q = 2 torus (Kaufman 1949) at every temperature, and the CPU and a CUDA
//! device agree bit for bit.

use warpmc_potts::exact::{ising_torus, potts_critical_temperature};
use warpmc_potts::observables::spans_too_few_taus;
use warpmc_potts::tempering::{Stop, TemperingState, advance, tables};
use warpmc_potts::{
    Algorithm, ConfigFile, Control, Device, Ensemble, Independent, InitialState, Observer, ProtocolConfig, Runner,
    TemperatureResult, Temperatures, open_backend_for,
};
use warpmc_testkit::test_device;

use warpmc_potts::update::ALGORITHMS;

/// One backend per replica: the reference ensemble.
fn ensemble(device: &Device, cfg: &ProtocolConfig) -> Box<dyn Ensemble> {
    let model = cfg.model().unwrap();
    let n = cfg.temperatures().len() * cfg.samples() as usize;
    Box::new(Independent::new((0..n).map(|_| open_backend_for(device, &model, cfg.algorithm()).unwrap()).collect()))
}

/// Runs to the end, stopping (and resuming on a fresh ensemble from the
/// saved state) after each of `stops` stretches when given.
fn tempered(device: &Device, cfg: &ProtocolConfig, every: u64, stop_after: Option<u32>) -> TemperingState {
    /// Asks for a checkpoint and a stop after every `stop_after` stretches.
    struct Stopper {
        stretches: u32,
        stop_after: Option<u32>,
    }
    impl Observer for Stopper {
        fn control(&mut self) -> Control {
            self.stretches += 1;
            match self.stop_after {
                Some(k) if self.stretches.is_multiple_of(k) => Control::CheckpointAndStop,
                _ => Control::Continue,
            }
        }
    }
    let mut state = TemperingState::new(cfg).unwrap();
    let mut ens = ensemble(device, cfg);
    let mut observer = Stopper { stretches: 0, stop_after };
    loop {
        match advance(cfg, every, &tables(cfg).unwrap(), ens.as_mut(), &mut state, &mut observer).unwrap() {
            Stop::Finished => return state,
            Stop::Asked(_) => {
                // What a checkpoint keeps, on a fresh ensemble.
                state = state.resumed();
                ens = ensemble(device, cfg);
            }
        }
    }
}

fn config(q: u32, size: usize, temps: Vec<f64>, therm: u64, sweeps: u64, samples: u32, seed: u64) -> ProtocolConfig {
    file(q, size, temps, therm, sweeps, samples, seed).resolve().unwrap()
}

fn file(q: u32, size: usize, temps: Vec<f64>, therm: u64, sweeps: u64, samples: u32, seed: u64) -> ConfigFile {
    ConfigFile {
        q: Some(q),
        size: Some(size),
        temps: Some(Temperatures::List(temps)),
        init: Some(InitialState::Random),
        therm: Some(therm),
        sweeps: Some(sweeps),
        measure_every: Some(3),
        samples: Some(samples),
        seed: Some(seed),
        ..Default::default()
    }
}

fn physics(r: &TemperatureResult) -> TemperatureResult {
    TemperatureResult { flips_per_ns: 0.0, backend: String::new(), ..r.clone() }
}

/// A row without what only tempering adds (the replicas' summed energy can
/// also set `too_short`).
fn untempered(r: &TemperatureResult) -> TemperatureResult {
    TemperatureResult {
        exchange_acceptance: None,
        round_trips: None,
        replica_tau_int: None,
        too_short: false,
        ..physics(r)
    }
}

/// With exchanges offered less often than the run is long, tempering is
/// the plain protocol: replica r runs the chain of temperature r.
#[test]
fn tempering_without_exchanges_is_the_plain_protocol() {
    let cfg = config(3, 10, vec![0.7, 1.0, 1.4], 20, 60, 2, 5);
    let plain = Runner::on(cfg.clone(), &Device::CPU).unwrap().run_all().unwrap();
    let state = tempered(&Device::CPU, &cfg, 1 << 40, None);
    let pt = state.results(&cfg, "cpu").unwrap();
    assert_eq!(pt.iter().map(untempered).collect::<Vec<_>>(), plain.iter().map(untempered).collect::<Vec<_>>());
    assert!(pt.iter().zip(&plain).all(|(t, p)| t.too_short >= p.too_short));
    assert_eq!(state.replicas().stats().rounds, 0);
}

/// Tempering with one temperature has nothing to exchange: refused with a
/// reason rather than run with an empty acceptance list.
#[test]
fn tempering_needs_two_temperatures() {
    let one = ConfigFile { tempering: Some(true), ..file(2, 8, vec![1.0], 10, 30, 1, 1) };
    let err = one.resolve().unwrap_err().to_string();
    assert!(err.contains("at least two temperatures"), "{err}");
    let two = ConfigFile { tempering: Some(true), ..file(2, 8, vec![1.0, 1.1], 10, 30, 1, 1) };
    assert!(two.resolve().is_ok());
}

/// A run stopped and resumed from its saved state after every few
/// stretches ends in the same bits as an uninterrupted one.
#[test]
fn resumed_tempering_is_bit_identical() {
    let cfg = config(2, 8, vec![1.0, 1.1, 1.2, 1.35], 30, 90, 2, 11);
    let whole = tempered(&Device::CPU, &cfg, 3, None);
    let pieces = tempered(&Device::CPU, &cfg, 3, Some(2));
    assert_eq!(whole.series(), pieces.series());
    assert_eq!(whole.replicas(), pieces.replicas());
    assert!(whole.replicas().stats().accepted.iter().sum::<u64>() > 0, "no exchange was ever accepted");
}

/// The acceptance counts and round trips are those of the rounds after
/// thermalisation: 20 sweeps of it and 100 measured, an exchange round
/// after every sweep but the last, give rounds 0 to 118, of which 20 to
/// 118 count: pair 0 (even rounds) is offered 50 swaps per sample, pair 1
/// 49. A run stopped during thermalisation and resumed counts the same.
#[test]
fn exchange_statistics_count_the_rounds_after_thermalisation() {
    let cfg = config(2, 8, vec![1.0, 1.1, 1.2], 20, 100, 3, 4);
    let whole = tempered(&Device::CPU, &cfg, 1, None);
    let stats = whole.replicas().stats();
    assert_eq!(stats.rounds, 119);
    assert_eq!(stats.attempts, vec![50 * 3, 49 * 3]);
    assert!(stats.accepted.iter().zip(&stats.attempts).all(|(a, n)| a <= n));
    let pieces = tempered(&Device::CPU, &cfg, 1, Some(1));
    assert_eq!(whole.replicas(), pieces.replicas());
    assert_eq!(whole.series(), pieces.series());
    // No round after thermalisation (rounds at sweeps 20 to 100 of 109):
    // no offers, and no round trips, are reported.
    let late = config(2, 8, vec![1.0, 1.1, 1.2], 100, 10, 2, 4);
    let stats = tempered(&Device::CPU, &late, 20, None).replicas().stats().clone();
    assert_eq!((stats.rounds, stats.attempts, stats.round_trips), (5, vec![0, 0], 0));
}

/// Every algorithm tempers: stopped and resumed the run ends in the same
/// bits, and the protocol's runner (on its ensemble for the algorithm)
/// gives the results of one backend per replica.
#[test]
fn every_algorithm_tempers_and_resumes() {
    for algorithm in ALGORITHMS {
        let f = ConfigFile { algorithm: Some(algorithm), ..file(2, 8, vec![1.0, 1.1, 1.2, 1.35], 30, 90, 2, 11) };
        let cfg = f.resolve().unwrap();
        let whole = tempered(&Device::CPU, &cfg, 3, None);
        let pieces = tempered(&Device::CPU, &cfg, 3, Some(2));
        assert_eq!(whole.series(), pieces.series(), "{algorithm}");
        assert_eq!(whole.replicas(), pieces.replicas(), "{algorithm}");
        assert!(whole.replicas().stats().accepted.iter().sum::<u64>() > 0, "{algorithm}: no exchange accepted");
        let with = ConfigFile { tempering: Some(true), exchange_every: Some(3), ..f }.resolve().unwrap();
        let runner = Runner::on(with, &Device::CPU).unwrap().run_all().unwrap();
        let reference = whole.results(&cfg, "cpu").unwrap();
        assert_eq!(runner.iter().map(physics).collect::<Vec<_>>(), reference.iter().map(physics).collect::<Vec<_>>());
        assert_eq!(runner[0].round_trips, Some(whole.replicas().stats().round_trips), "{algorithm}");
        assert!(runner.iter().all(|r| r.replica_tau_int.is_some_and(|t| t > 0.0)), "{algorithm}");
    }
}

/// q = 2 on 16² and 32² tori, tempered across T_c: ⟨e⟩ and c equal the
/// exact finite-torus values within 4 error bars at every temperature.
fn tempering_matches_kaufman(device: &Device) {
    let tc = potts_critical_temperature(2);
    let temps = vec![1.0, 1.07, tc, 1.2, 1.3];
    for (size, seed) in [(16usize, 1986u64), (32, 1991)] {
        let cfg = config(2, size, temps.clone(), 2000, 20_000, 2, seed);
        let state = tempered(device, &cfg, 10, None);
        let stats = state.replicas().stats();
        eprintln!("{} {size}²: acceptance {:?}, round trips {}", device.name(), stats.acceptance(), stats.round_trips);
        assert!(stats.round_trips > 0, "no replica crossed the temperature range");
        let results = state.results(&cfg, device.name()).unwrap();
        let replica_tau = results[0].replica_tau_int.unwrap();
        let measurements = results[0].measurements;
        eprintln!("  replica τ_int {replica_tau:.1} sweeps, {measurements} measurements 3 sweeps apart");
        // A continuous transition: the replicas relax about as fast as each
        // temperature's series, well within the run.
        assert!(!spans_too_few_taus(measurements, 3, replica_tau), "replica τ_int {replica_tau}");
        for r in results {
            let exact = ising_torus(size, size, r.temperature, 1.0).unwrap();
            let ze = (r.energy - exact.energy) / r.energy_err;
            let zc = (r.specific_heat - exact.specific_heat) / r.specific_heat_err;
            eprintln!("  T={:.4}: e z {ze:.2}, c z {zc:.2}", r.temperature);
            assert!(ze.abs() < 4.0 && zc.abs() < 4.0, "{} {size}² T={}: z = {ze}, {zc}", device.name(), r.temperature);
        }
    }
}
test_device!(tempering_matches_kaufman, tempering_matches_kaufman_cpu, tempering_matches_kaufman_cuda);

/// The same tempered run on the CPU and on a CUDA device: the same
/// measurements and the same permutation, bit for bit (a model that takes
/// each random-number rule: bit-sliced 64×8, site words 10×6 with a field).
#[test]
fn tempering_is_bit_identical_on_cpu_and_cuda() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("tempering_is_bit_identical_on_cpu_and_cuda") else { return };
    let field = ConfigFile {
        q: Some(4),
        size: Some(10),
        height: Some(6),
        field: Some(0.3),
        temps: Some(Temperatures::List(vec![0.6, 0.8, 1.1])),
        therm: Some(10),
        sweeps: Some(40),
        seed: Some(8),
        ..Default::default()
    };
    let heat_bath = ConfigFile { algorithm: Some(Algorithm::HeatBath), ..field.clone() };
    let clusters =
        ConfigFile { algorithm: Some(Algorithm::SwendsenWang), ..file(3, 12, vec![0.9, 1.0, 1.1], 10, 40, 2, 4) };
    for cfg in [
        config(9, 64, vec![0.68, 0.7, 0.72], 10, 40, 2, 3),
        field.resolve().unwrap(),
        heat_bath.resolve().unwrap(),
        clusters.resolve().unwrap(),
    ] {
        let cpu = tempered(&Device::CPU, &cfg, 2, None);
        let cuda = tempered(&Device::Cuda(gpu.clone()), &cfg, 2, None);
        assert_eq!(cpu.series(), cuda.series(), "{}", cfg.algorithm());
        assert_eq!(cpu.replicas(), cuda.replicas(), "{}", cfg.algorithm());
    }
}

/// Energy per site at which a q = 10 lattice near its transition counts as
/// ordered (below) or disordered (above): between the two phases' energies
/// (about −1.65 and −0.9 on 16²).
const PHASE_DIVIDE: f64 = -1.3;

/// Crossings of [`PHASE_DIVIDE`] in a series, and the fraction below it.
fn phase_crossings(series: &[warpmc_potts::Measurement]) -> (usize, f64) {
    let ordered: Vec<bool> = series.iter().map(|m| m.energy < PHASE_DIVIDE).collect();
    let crossings = ordered.windows(2).filter(|w| w[0] != w[1]).count();
    (crossings, ordered.iter().filter(|&&o| o).count() as f64 / ordered.len() as f64)
}

/// q = 10 has a first-order transition: near T_c a Metropolis chain stays
/// in the phase it is in, while tempered replicas cross between the
/// ordered and disordered phases through the temperatures above and below.
/// On 16² at T = 0.710 (the finite lattice's transition, above the
/// infinite lattice's T_c = 0.7012) the tempered energy histogram shows
/// both peaks, and crosses between them over ten times as often as a plain
/// Metropolis chain with the same measurements.
#[test]
fn tempered_q10_replicas_cross_the_first_order_transition() {
    let temps: Vec<f64> = (0..12).map(|i| 0.700 + 0.002 * i as f64).collect();
    let at = 5; // T = 0.710
    let file = |temps: Vec<f64>| ConfigFile {
        q: Some(10),
        size: Some(16),
        temps: Some(Temperatures::List(temps)),
        init: Some(InitialState::Ordered),
        therm: Some(2000),
        sweeps: Some(10_000),
        measure_every: Some(10),
        seed: Some(10),
        ..Default::default()
    };
    let cfg = file(temps.clone()).resolve().unwrap();
    let state = tempered(&Device::CPU, &cfg, 5, None);
    let series = &state.series()[at][0];
    let (crossings, ordered) = phase_crossings(series);

    let plain_cfg = file(vec![temps[at]]).resolve().unwrap();
    let mut runner = Runner::on(plain_cfg.clone(), &Device::CPU).unwrap();
    let mut plain = warpmc_potts::RunState::new(&plain_cfg);
    runner.run(&mut plain, &mut warpmc_potts::Quiet).unwrap();
    let (plain_crossings, plain_ordered) = phase_crossings(&plain.series()[0][0]);

    // Histogram of e in bins of 0.05 from −1.9 to −0.7.
    let mut hist = [0usize; 24];
    for m in series {
        let bin = ((m.energy + 1.9) / 0.05).floor();
        if (0.0..24.0).contains(&bin) {
            hist[bin as usize] += 1;
        }
    }
    let divide = ((PHASE_DIVIDE + 1.9) / 0.05) as usize;
    let (low_peak, high_peak) = (hist[..divide].iter().max().unwrap(), hist[divide..].iter().max().unwrap());
    let dip = hist[divide - 4..divide + 4].iter().min().unwrap();
    eprintln!(
        "tempered: {crossings} crossings, {ordered:.2} ordered, round trips {}, histogram {hist:?}; \
         Metropolis alone: {plain_crossings} crossings, {plain_ordered:.3} ordered",
        state.replicas().stats().round_trips
    );
    assert!((0.2..0.8).contains(&ordered), "tempered replicas spent {ordered} of the time ordered");
    assert!(2 * dip < *low_peak.min(high_peak), "the energy histogram is not bimodal: {hist:?}");
    assert!(crossings >= 10 * plain_crossings.max(1), "{crossings} tempered crossings, {plain_crossings} plain");

    // The share of ordered replicas changes far more slowly than each
    // temperature's series decorrelates: the replicas' summed energy shows
    // it, and flags every row of this 10,000-sweep run.
    let results = state.results(&cfg, "cpu").unwrap();
    let replica_tau = results[0].replica_tau_int.unwrap();
    eprintln!(
        "replica τ_int {replica_tau:.0} sweeps; rows' own τ_int {:?}",
        results.iter().map(|r| r.tau_int_energy.round()).collect::<Vec<_>>()
    );
    assert!(spans_too_few_taus(results[0].measurements, 10, replica_tau), "replica τ_int {replica_tau}");
    assert!(results.iter().all(|r| r.too_short));
}
