//! The baseline kernel of `warpmc potts bench` (the `updateCUDA` of
//! Ferrero et al. 2012) against its CPU twin, bit for bit.

use warpmc_bench::potts_baseline::{BaselineCpu, BaselineGpu};
use warpmc_potts::{InitialState, Lattice, PottsModel};

#[test]
fn baseline_kernel_matches_its_cpu_reference() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("baseline_kernel_matches_its_cpu_reference") else { return };
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
