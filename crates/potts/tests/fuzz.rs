//! Property tests that feed the checkpoint decoder and the TOML protocol
//! reader hostile bytes: they must answer with an error or a valid value,
//! never panic. A few thousand cases run with every `cargo test`; for a
//! deeper run:
//!
//!     PROPTEST_CASES=1000000 cargo test --release -p warpmc-potts --test fuzz

use proptest::prelude::*;
use warpmc_potts::checkpoint::{decode, encode};
use warpmc_potts::{ConfigFile, InitialState, RunState, Runner, Temperatures};

/// A small finished-in-part run's checkpoint bytes, the seed of mutations.
fn valid_checkpoint() -> Vec<u8> {
    let cfg = ConfigFile {
        q: Some(3),
        size: Some(8),
        height: Some(4),
        temps: Some(Temperatures::List(vec![1.0, 1.2])),
        init: Some(InitialState::Random),
        therm: Some(4),
        sweeps: Some(8),
        measure_every: Some(2),
        samples: Some(2),
        continue_from_previous: Some(true),
        backend: Some(warpmc_potts::BackendChoice::Cpu),
        ..Default::default()
    }
    .resolve()
    .unwrap();
    let mut state = RunState::new(&cfg);
    struct StopSoon(u32);
    impl warpmc_potts::Observer for StopSoon {
        fn control(&mut self) -> warpmc_potts::Control {
            self.0 += 1;
            if self.0 == 7 { warpmc_potts::Control::CheckpointAndStop } else { warpmc_potts::Control::Continue }
        }
    }
    let _ = Runner::new(cfg.clone()).unwrap().run(&mut state, &mut StopSoon(0));
    encode(&cfg, &state)
}

fn config() -> ProptestConfig {
    ProptestConfig { cases: warpmc_testkit::fuzz_cases(2000), ..ProptestConfig::default() }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_bytes_never_panic_the_checkpoint_decoder(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = decode(&bytes);
        let mut with_magic = b"WMCPOTTS\x03\x00\x00\x00".to_vec();
        with_magic.extend_from_slice(&bytes);
        let _ = decode(&with_magic);
    }

    #[test]
    fn damaged_checkpoints_are_refused_or_consistent(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..8), 0..6),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let mut bytes = valid_checkpoint();
        for (i, bit) in &flips {
            let i = i.index(bytes.len());
            bytes[i] ^= 1 << bit;
        }
        if truncate {
            bytes.truncate(cut.index(bytes.len()));
        }
        if let Ok(c) = decode(&bytes) {
            // Whatever is accepted round-trips: it is a whole, checked state.
            prop_assert_eq!(decode(&encode(&c.config, &c.state)).unwrap(), c);
        }
    }

    #[test]
    fn hostile_toml_never_panics_the_protocol_reader(
        lines in proptest::collection::vec(
            (
                prop::sample::select(vec![
                    "q", "size", "height", "coupling", "field", "temp", "temps", "init", "therm", "sweeps",
                    "measure_every", "samples", "seed", "continue", "backend", "bogus",
                ]),
                prop::sample::select(vec![
                    "0", "1", "2", "-1", "9", "255", "256", "4294967296", "18446744073709551615", "1e308", "-1e308",
                    "nan", "inf", "-inf", "0.5", "\"0.7:0.8:0.01\"", "\"1:0:1\"", "\"0:1e9:1e-9\"", "\"a:b:c\"",
                    "[0.5, 1.0]", "[]", "[-1.0]", "true", "\"random\"", "\"ordered\"", "\"cuda\"", "\"x\"",
                    "{}", "\"\"", "[[1]]",
                ]),
            ),
            0..12,
        ),
    ) {
        let text: String = lines.iter().map(|(k, v)| format!("{k} = {v}\n")).collect();
        if let Ok(file) = ConfigFile::parse(&text, std::path::Path::new("fuzz.toml")) {
            let _ = file.resolve();
        }
    }
}
