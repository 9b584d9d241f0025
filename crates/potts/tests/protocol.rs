//! Protocol runs: stopping at a checkpoint and resuming gives the results
//! of an uninterrupted run bit for bit; CPU and CUDA runs agree; damaged
//! checkpoints are refused.

use warpmc_potts::checkpoint::{Checkpoint, decode, encode};
use warpmc_potts::{
    ConfigFile, Control, Device, InitialState, Lattice, Observer, ProtocolConfig, Quiet, RunState, Runner,
    TemperatureResult, Temperatures,
};

fn config(continue_from_previous: bool) -> ProtocolConfig {
    ConfigFile {
        q: Some(3),
        size: Some(12),
        height: Some(6),
        temps: Some(Temperatures::List(vec![0.9, 1.0, 1.1])),
        init: Some(InitialState::Random),
        therm: Some(37),
        sweeps: Some(60),
        measure_every: Some(4),
        samples: Some(2),
        seed: Some(31),
        continue_from_previous: Some(continue_from_previous),
        ..Default::default()
    }
    .resolve()
    .unwrap()
}

/// Everything but the timing.
fn physics(results: &[TemperatureResult]) -> Vec<TemperatureResult> {
    results.iter().map(|r| TemperatureResult { flips_per_ns: 0.0, backend: String::new(), ..r.clone() }).collect()
}

/// Stops the run at its `stop_at`-th look, keeping the checkpoint bytes.
struct StopAt {
    looks: usize,
    stop_at: usize,
    saved: Option<Vec<u8>>,
}

impl Observer for StopAt {
    fn control(&mut self) -> Control {
        self.looks += 1;
        if self.looks == self.stop_at { Control::CheckpointAndStop } else { Control::Continue }
    }
    fn checkpoint(&mut self, cfg: &ProtocolConfig, state: &RunState) -> warpmc_potts::Result<()> {
        self.saved = Some(encode(cfg, state));
        Ok(())
    }
}

fn run_whole(cfg: &ProtocolConfig, device: &Device) -> (Vec<TemperatureResult>, Lattice) {
    let mut runner = Runner::on(cfg.clone(), device).unwrap();
    let r = runner.run_all().unwrap();
    (r, runner.lattice().unwrap())
}

#[test]
fn resuming_from_any_checkpoint_equals_an_uninterrupted_run() {
    for cont in [false, true] {
        let cfg = config(cont);
        let (whole, final_lattice) = run_whole(&cfg, &Device::CPU);
        let mut resumed_runs = 0;
        // Chunks are at most one measurement interval here, so looks happen
        // at many positions: thermalisation, mid-measurement, chain ends.
        for stop_at in [1, 2, 5, 11, 17, 30, 44, 61] {
            let mut stop = StopAt { looks: 0, stop_at, saved: None };
            let mut state = RunState::new(&cfg);
            let err = Runner::on(cfg.clone(), &Device::CPU).unwrap().run(&mut state, &mut stop);
            if err.is_ok() {
                continue; // the run ended before that many looks
            }
            let Checkpoint { config: cfg2, state: mut state2 } =
                decode(&stop.saved.expect("checkpoint written")).unwrap();
            assert_eq!(cfg2, cfg);
            let mut runner = Runner::on(cfg2, &Device::CPU).unwrap();
            let resumed = runner.run(&mut state2, &mut Quiet).unwrap();
            assert_eq!(physics(&resumed), physics(&whole), "continue={cont}, stopped at look {stop_at}");
            assert_eq!(runner.lattice().unwrap(), final_lattice);
            resumed_runs += 1;
        }
        assert_eq!(resumed_runs, 8, "every stop point lies inside the run");
    }
}

#[test]
fn damaged_checkpoints_are_refused_with_a_reason() {
    let cfg = config(true);
    let mut stop = StopAt { looks: 0, stop_at: 20, saved: None };
    let _ = Runner::on(cfg.clone(), &Device::CPU).unwrap().run(&mut RunState::new(&cfg), &mut stop);
    let bytes = stop.saved.unwrap();
    assert!(decode(&bytes).is_ok());
    let mut flipped = bytes.clone();
    flipped[bytes.len() / 2] ^= 0x10;
    assert!(decode(&flipped).unwrap_err().to_string().contains("checksum"));
    assert!(decode(&bytes[..bytes.len() - 100]).is_err());
    assert!(decode(b"hello").unwrap_err().to_string().contains("not a warpmc"));
}

#[cfg(feature = "cuda")]
#[test]
fn cuda_runs_give_the_cpu_results() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("cuda_runs_give_the_cpu_results") else { return };
    let gpu = Device::Cuda(gpu);
    for cont in [false, true] {
        let cfg = config(cont);
        let (cpu, cpu_lattice) = run_whole(&cfg, &Device::CPU);
        let (cuda, cuda_lattice) = run_whole(&cfg, &gpu);
        assert_eq!(physics(&cuda), physics(&cpu));
        assert_eq!(cuda_lattice, cpu_lattice);
        assert_eq!(cuda[0].backend, "cuda");
    }
}
