//! Parallel tempering: exchange-free runs equal plain runs bit for bit, a
//! resumed run equals an uninterrupted one, tempered runs match the exact
//! q = 2 torus (Kaufman 1949) at every temperature, and the CPU and a CUDA
//! device agree bit for bit.

use warpmc_potts::exact::{ising_torus, potts_critical_temperature};
use warpmc_potts::tempering::{Stop, TemperingState, advance};
use warpmc_potts::{
    ConfigFile, Control, Device, Ensemble, Independent, InitialState, ProtocolConfig, Runner, TemperatureResult,
    Temperatures, open_backend,
};
use warpmc_testkit::test_device;

fn ensemble(device: &Device, cfg: &ProtocolConfig) -> Box<dyn Ensemble> {
    let model = cfg.model().unwrap();
    let n = cfg.temperatures().len() * cfg.samples() as usize;
    Box::new(Independent::new((0..n).map(|_| open_backend(device, &model).unwrap()).collect()))
}

/// Runs to the end, stopping (and resuming on a fresh ensemble from the
/// saved state) after each of `stops` stretches when given.
fn tempered(device: &Device, cfg: &ProtocolConfig, every: u64, stop_after: Option<u32>) -> TemperingState {
    let mut state = TemperingState::new(cfg).unwrap();
    let mut ens = ensemble(device, cfg);
    let mut stretches = 0u32;
    loop {
        let mut control = || {
            stretches += 1;
            match stop_after {
                Some(k) if stretches % k == 0 => Control::CheckpointAndStop,
                _ => Control::Continue,
            }
        };
        match advance(cfg, every, ens.as_mut(), &mut state, &mut |_, _| {}, &mut control).unwrap() {
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
    .resolve()
    .unwrap()
}

fn physics(r: &TemperatureResult) -> TemperatureResult {
    TemperatureResult { flips_per_ns: 0.0, backend: String::new(), ..r.clone() }
}

/// With exchanges offered less often than the run is long, tempering is
/// the plain protocol: replica r runs the chain of temperature r.
#[test]
fn tempering_without_exchanges_is_the_plain_protocol() {
    let cfg = config(3, 10, vec![0.7, 1.0, 1.4], 20, 60, 2, 5);
    let plain = Runner::on(cfg.clone(), &Device::CPU).unwrap().run_all().unwrap();
    let state = tempered(&Device::CPU, &cfg, 1 << 40, None);
    let pt = state.results(&cfg, "cpu").unwrap();
    assert_eq!(pt.iter().map(physics).collect::<Vec<_>>(), plain.iter().map(physics).collect::<Vec<_>>());
    assert_eq!(state.replicas().stats().rounds, 0);
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
        for r in state.results(&cfg, device.name()).unwrap() {
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
    for cfg in [config(9, 64, vec![0.68, 0.7, 0.72], 10, 40, 2, 3), field.resolve().unwrap()] {
        let cpu = tempered(&Device::CPU, &cfg, 2, None);
        let cuda = tempered(&Device::Cuda(gpu.clone()), &cfg, 2, None);
        assert_eq!(cpu.series(), cuda.series());
        assert_eq!(cpu.replicas(), cuda.replicas());
    }
}
