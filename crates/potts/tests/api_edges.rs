//! The library's public functions given the edges of their inputs (empty
//! series, no temperatures, sweep numbers at the chain's limit, sizes whose
//! product overflows): an error or a defined value, never a panic.

use warpmc_potts::algorithm::MAX_SWEEPS_PER_CHAIN;
use warpmc_potts::observables::{Measurement, analyze};
use warpmc_potts::stats::integrated_time;
use warpmc_potts::tempering::Replicas;
use warpmc_potts::{Backend, Census, CpuBackend, Lattice, PottsModel};

#[test]
fn fewer_than_two_measurements_have_the_documented_time_and_no_error_bar() {
    assert_eq!(integrated_time(&[]), 0.5);
    assert_eq!(integrated_time(&[&[]]), 0.5);
    assert_eq!(integrated_time(&[&[1.0]]), 0.5);
    let model = PottsModel::new(2, 4, 4).unwrap();
    for series in [vec![], vec![vec![]]] {
        let a = analyze(&model, 1.0, &series, 1);
        assert!(a.energy[0].value.is_nan() && a.energy[0].error.is_nan(), "{:?}", a.energy[0]);
    }
}

#[test]
fn tempering_refuses_no_temperatures_and_censuses_of_another_model() {
    assert!(Replicas::new(&[], 1, 0).is_err());
    let model = PottsModel::new(2, 4, 4).unwrap();
    let mut r = Replicas::new(&[1.0, 2.0], 1, 0).unwrap();
    let odd = [Census::new(0, vec![]), Census::new(0, vec![])];
    assert!(r.exchange(&model, &odd).unwrap_err().to_string().contains("census of 0 states"));
    // A census of another model gives a number, not a panic.
    assert!(Measurement::from_census(&model, &Census::new(0, vec![])).energy.is_finite());
}

#[test]
fn sweeps_beyond_the_chains_limit_are_refused() {
    let model = PottsModel::new(2, 8, 8).unwrap();
    let mut b = CpuBackend::new(&model);
    for (first, count) in [(u64::MAX, 2), (u64::MAX / 2 + 5, 1), (MAX_SWEEPS_PER_CHAIN, 1)] {
        let e = b.sweeps(0, 0, first, count).unwrap_err().to_string();
        assert!(e.contains("beyond"), "{first} + {count}: {e}");
    }
    b.sweeps(0, 0, MAX_SWEEPS_PER_CHAIN - 1, 1).unwrap();
}

#[test]
fn sizes_and_memory_at_their_limits_are_errors() {
    assert!(Lattice::from_spins(usize::MAX, 2, 2, vec![]).is_none());
    let model = PottsModel::new(2, 8, 8).unwrap();
    assert!(model.check_host_memory(u64::MAX).is_err());
    assert_eq!(model.host_bytes(u64::MAX), u64::MAX);
}
