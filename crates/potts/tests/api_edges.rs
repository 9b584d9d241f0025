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
    assert!(Replicas::new(&[1.0, 2.0], 0, 0).is_err());
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
    // q beyond what a model takes (a snapshot's palette would have
    // allocated for all u32::MAX colours), or below 2.
    for q in [0, 1, warpmc_potts::model::MAX_Q + 1, u32::MAX] {
        assert!(Lattice::from_spins(2, 2, q, vec![0; 4]).is_none(), "q = {q}");
    }
    assert_eq!(warpmc_potts::snapshot::palette(u32::MAX).len(), 256);
    let model = PottsModel::new(2, 8, 8).unwrap();
    assert!(model.check_host_memory(u64::MAX).is_err());
    assert_eq!(model.host_bytes(u64::MAX), u64::MAX);
}

/// A configuration read through serde is checked as `resolve` checks one:
/// values no run can take are an error, not a division by zero later.
#[test]
fn a_deserialized_configuration_is_checked() {
    use warpmc_potts::{ConfigFile, ProtocolConfig, Temperatures};
    let cfg = ConfigFile {
        q: Some(3),
        size: Some(8),
        temps: Some(Temperatures::List(vec![1.0, 1.2])),
        therm: Some(4),
        sweeps: Some(8),
        measure_every: Some(2),
        ..Default::default()
    }
    .resolve()
    .unwrap();
    let value = serde_json::to_value(&cfg).unwrap();
    let back: ProtocolConfig = serde_json::from_value(value.clone()).unwrap();
    assert_eq!(back, cfg);
    for (field, bad, message) in [
        ("measure_every", serde_json::json!(0), "the sweeps between measurements must be at least 1"),
        ("sweeps", serde_json::json!(1), "must be at least the sweeps between measurements"),
        ("q", serde_json::json!(1), "q must be between 2 and 255"),
        ("temperatures", serde_json::json!([]), "no temperatures given"),
        ("samples", serde_json::json!(0), "the samples per temperature must be between 1"),
    ] {
        let mut v = value.clone();
        v[field] = bad.clone();
        let e = serde_json::from_value::<ProtocolConfig>(v).unwrap_err().to_string();
        assert!(e.contains(message), "{field} = {bad}: {e}");
    }
    // A field of another name is still refused.
    let mut v = value.clone();
    v["measure_evry"] = serde_json::json!(2);
    assert!(serde_json::from_value::<ProtocolConfig>(v).unwrap_err().to_string().contains("unknown field"));
}

/// A study too large for this machine's memory, once every process of it
/// keeps its own copy, names its lattice and what to change: under MPI
/// each process holds a whole lattice, so measuring less would not help.
#[test]
fn a_study_beyond_memory_names_its_lattice() {
    use warpmc_potts::protocol::{check_study_memory, check_study_memory_shared};
    use warpmc_potts::{ConfigFile, Temperatures};
    let cfg = ConfigFile {
        q: Some(3),
        size: Some(8192),
        height: Some(4096),
        temps: Some(Temperatures::List(vec![1.0])),
        therm: Some(0),
        sweeps: Some(10),
        ..Default::default()
    }
    .resolve()
    .unwrap();
    let study = [cfg];
    check_study_memory(&study, true).unwrap();
    let e = check_study_memory_shared(&study, true, 1 << 40).unwrap_err().to_string();
    assert!(e.contains("8192 × 4096 lattice") && e.contains("in each of the 1099511627776 processes"), "{e}");
    assert!(e.contains("run fewer processes on each machine (each holds a whole lattice)"), "{e}");
}
