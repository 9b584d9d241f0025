//! Ensembles against the reference: every member of the CPU and CUDA
//! ensembles ends in the bits of the same chain run alone on the CPU
//! backend (`Independent` of `CpuBackend`s), through several calls with
//! different chains, temperatures and tables per member, on awkward sizes,
//! both random-number rules, fields and negative couplings.

use warpmc_potts::ensemble::check_chains;
use warpmc_potts::{
    AcceptanceTable, Algorithm, Backend, Chain, CpuBackend, Device, Ensemble, Independent, InitialState, Lattice,
    PottsModel, Update, open_ensemble, open_ensemble_for,
};
use warpmc_testkit::{SplitMix64, test_device};

/// (q, width, height, J, h): odd half-widths, rows not a multiple of 8,
/// the bit-sliced rule for 1 to 4 planes, q above 16, a field, J < 0.
const CASES: &[(u32, usize, usize, f64, f64)] = &[
    (2, 6, 10, 1.0, 0.0),
    (3, 64, 8, 1.0, 0.0),
    (9, 70, 16, 1.0, 0.0),
    (9, 128, 128, 1.0, 0.0),
    (16, 128, 16, 1.0, 0.0),
    (20, 64, 8, 1.0, 0.0),
    (3, 64, 16, 1.0, 0.3),
    (5, 64, 24, -0.7, 0.0),
    (2, 128, 8, 1.0, 0.0),
];

fn model(&(q, w, h, j, f): &(u32, usize, usize, f64, f64)) -> PottsModel {
    PottsModel::new(q, w, h).unwrap().with_coupling(j).unwrap().with_field(f).unwrap()
}

/// Runs the same four calls on `ens` and on the reference and compares
/// every member's lattice and census after each.
fn same_bits_as_alone(ens: &mut dyn Ensemble, m: &PottsModel, case: usize) {
    let n = ens.len();
    let mut reference =
        Independent::new((0..n).map(|_| Box::new(CpuBackend::new(m)) as Box<dyn Backend>).collect::<Vec<_>>());
    let mut rng = SplitMix64::new(case as u64 * 977 + 5);
    let chains: Vec<Chain> = (0..n).map(|i| Chain::new(rng.next_u64(), i as u32 * 3, (i % 2) as u32)).collect();
    for (i, chain) in chains.iter().enumerate() {
        let init = if i % 3 == 2 { InitialState::Ordered } else { InitialState::Random };
        let l = Lattice::new(m, init, chain.seed ^ 1, chain.stream);
        ens.load(i, &l).unwrap();
        reference.load(i, &l).unwrap();
    }
    let mut first = 0;
    // Calls of 64 sweeps or more replay a recorded graph on the GPU's
    // global-memory layout: the first records it, the last replays it
    // with other tables.
    for (call, count) in [3u64, 70, 1, 66].into_iter().enumerate() {
        for i in 0..n {
            // Every member its own temperature; some change between calls.
            if call == 0 || (i + call) % 2 == 0 {
                let t = 0.3 + 1.7 * rng.unit();
                let table = AcceptanceTable::metropolis(m, t);
                ens.set_table(i, &table).unwrap();
                reference.set_table(i, &table).unwrap();
            }
        }
        ens.sweeps(&chains, first, count).unwrap();
        reference.sweeps(&chains, first, count).unwrap();
        first += count;
        let (got, want) = (ens.census().unwrap(), reference.census().unwrap());
        assert_eq!(got, want, "case {case} ({m:?}), call {call}: census, {}", ens.description());
        for i in 0..n {
            assert_eq!(
                ens.lattice(i).unwrap(),
                reference.lattice(i).unwrap(),
                "case {case} ({m:?}), call {call}, member {i}: lattice, {}",
                ens.description()
            );
        }
    }
}

fn ensembles_match_lone_chains(device: &Device) {
    for (c, case) in CASES.iter().enumerate() {
        let m = model(case);
        for members in [2usize, 5] {
            let mut ens = open_ensemble(device, &m, members).unwrap();
            assert_eq!(ens.name(), device.name());
            same_bits_as_alone(ens.as_mut(), &m, c);
        }
    }
}
test_device!(ensembles_match_lone_chains, ensembles_match_lone_chains_cpu, ensembles_match_lone_chains_cuda);

/// Every algorithm's ensemble (the CPU ensemble; on a GPU the CUDA
/// ensemble for heat-bath and one CUDA backend per member for
/// Swendsen–Wang; the CPU for Wolff anywhere) against one
/// CPU backend per member, through calls with per-member temperatures.
fn every_algorithm_ensemble_matches_lone_chains(device: &Device) {
    for algorithm in [Algorithm::HeatBath, Algorithm::SwendsenWang, Algorithm::Wolff] {
        // Clusters run without a field and with J > 0.
        let cases = CASES.iter().filter(|c| !algorithm.is_cluster() || (c.3 > 0.0 && c.4 == 0.0));
        for (c, case) in cases.enumerate() {
            let m = model(case);
            let n = 3;
            let mut ens = open_ensemble_for(device, &m, algorithm, n).unwrap();
            let expected_name = if algorithm.runs_on_gpu() { device.name() } else { "cpu" };
            assert_eq!(ens.name(), expected_name, "{algorithm}");
            same_update_bits_as_alone(ens.as_mut(), &m, algorithm, c);
        }
    }
}
/// As [`same_bits_as_alone`] for `algorithm`'s updates: calls of 2, 70
/// (a recorded graph on the GPU's global layout) and 1 sweeps, every
/// member its own temperature in each, against one CPU backend per member.
fn same_update_bits_as_alone(ens: &mut dyn Ensemble, m: &PottsModel, algorithm: Algorithm, case: usize) {
    let n = ens.len();
    let mut reference = Independent::new(
        (0..n).map(|_| Box::new(CpuBackend::for_algorithm(m, algorithm).unwrap()) as Box<dyn Backend>).collect(),
    );
    let mut rng = SplitMix64::new(case as u64 + 40);
    let chains: Vec<Chain> = (0..n).map(|i| Chain::new(rng.next_u64(), i as u32, 1)).collect();
    for (i, chain) in chains.iter().enumerate() {
        let l = Lattice::new(m, InitialState::Random, chain.seed, chain.stream);
        ens.load(i, &l).unwrap();
        reference.load(i, &l).unwrap();
    }
    let mut first = 0;
    for (call, count) in [2u64, 70, 1].into_iter().enumerate() {
        for i in 0..n {
            let update = Update::new(algorithm, m, 0.4 + 1.2 * rng.unit()).unwrap();
            ens.set_update(i, &update).unwrap();
            reference.set_update(i, &update).unwrap();
        }
        ens.sweeps(&chains, first, count).unwrap();
        reference.sweeps(&chains, first, count).unwrap();
        first += count;
        assert_eq!(ens.census().unwrap(), reference.census().unwrap(), "{algorithm} case {case} call {call}");
        for i in 0..n {
            assert_eq!(ens.lattice(i).unwrap(), reference.lattice(i).unwrap(), "{algorithm} case {case} {i}");
        }
    }
}
test_device!(
    every_algorithm_ensemble_matches_lone_chains,
    every_algorithm_ensemble_matches_lone_chains_cpu,
    every_algorithm_ensemble_matches_lone_chains_cuda
);

/// Both CUDA layouts (shared and global memory) on every case, and the
/// global one with enough members to pick each thread split.
#[cfg(feature = "cuda")]
#[test]
fn cuda_ensemble_layouts_match_lone_chains() {
    use warpmc_potts::Scheme;
    use warpmc_potts::cuda_ensemble::{CudaEnsemble, EnsembleLayout};
    let Some(gpu) = warpmc_testkit::gpu_or_skip("cuda_ensemble_layouts_match_lone_chains") else { return };
    for (c, case) in CASES.iter().enumerate() {
        let m = model(case);
        for layout in [EnsembleLayout::Shared, EnsembleLayout::Global] {
            let mut ens = CudaEnsemble::with_layout(gpu.clone(), &m, 3, layout).unwrap();
            same_bits_as_alone(&mut ens, &m, c);
        }
    }
    // Heat-bath in both layouts (the byte-per-spin storage, whatever the
    // model's Metropolis rule).
    for (c, case) in CASES.iter().enumerate() {
        let m = model(case);
        for layout in [EnsembleLayout::Shared, EnsembleLayout::Global] {
            let mut ens = CudaEnsemble::running(gpu.clone(), &m, 3, Algorithm::HeatBath, layout).unwrap();
            assert!(ens.kernel_name().starts_with("heat-bath"), "{}", ens.kernel_name());
            same_update_bits_as_alone(&mut ens, &m, Algorithm::HeatBath, c);
        }
    }
    // Many members of a bit-sliced lattice: the global layout with one
    // thread per unit (more units than one wave of the GPU).
    let m = PottsModel::new(4, 256, 64).unwrap();
    assert_eq!(Scheme::for_model(&m), Scheme::Sliced);
    let mut ens = CudaEnsemble::with_layout(gpu.clone(), &m, 700, EnsembleLayout::Global).unwrap();
    same_bits_as_alone(&mut ens, &m, 99);
}

#[test]
fn ensembles_refuse_bad_calls() {
    let m = PottsModel::new(3, 8, 8).unwrap();
    assert!(open_ensemble(&Device::CPU, &m, 0).is_err());
    let mut ens = open_ensemble(&Device::CPU, &m, 3).unwrap();
    let chains = vec![Chain::of_seed(1); 3];
    // No table yet.
    let e = ens.sweeps(&chains, 0, 1).unwrap_err().to_string();
    assert!(e.contains("no acceptance table"), "{e}");
    for i in 0..3 {
        ens.set_table(i, &AcceptanceTable::metropolis(&m, 1.0)).unwrap();
    }
    assert!(ens.sweeps(&chains[..2], 0, 1).is_err());
    // A Metropolis ensemble refuses heat-bath tables, and the cluster
    // algorithms refuse a field.
    let hb = Update::new(Algorithm::HeatBath, &m, 1.0).unwrap();
    assert!(open_ensemble(&Device::CPU, &PottsModel::new(3, 64, 8).unwrap(), 2).unwrap().set_update(0, &hb).is_err());
    let field = m.clone().with_field(0.2).unwrap();
    let e = open_ensemble_for(&Device::CPU, &field, Algorithm::Wolff, 2).err().unwrap().to_string();
    assert!(e.contains("field"), "{e}");
    assert!(check_chains(3, &chains).is_ok());
    assert!(ens.load(3, &Lattice::new(&m, InitialState::Ordered, 0, 0)).is_err());
    assert!(ens.lattice(7).is_err());
    let other = PottsModel::new(3, 8, 10).unwrap();
    assert!(ens.load(0, &Lattice::new(&other, InitialState::Ordered, 0, 0)).is_err());
    ens.sweeps(&chains, 0, 2).unwrap();
    assert_eq!(ens.census().unwrap().len(), 3);
}
