//! Protocol runs: stopping at a checkpoint and resuming gives the results
//! of an uninterrupted run bit for bit; CPU and CUDA runs agree; damaged
//! checkpoints are refused.

use warpmc_potts::checkpoint::{Checkpoint, decode, encode};
use warpmc_potts::{
    Algorithm, ConfigFile, Control, Device, InitialState, Lattice, Observer, PottsModel, ProtocolConfig, Quiet,
    RunState, Runner, Simulation, TemperatureResult, Temperatures,
};

use warpmc_potts::update::ALGORITHMS;

fn config(continue_from_previous: bool) -> ProtocolConfig {
    config_for(continue_from_previous, Algorithm::Metropolis)
}

fn config_for(continue_from_previous: bool, algorithm: Algorithm) -> ProtocolConfig {
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
        algorithm: Some(algorithm),
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
    type Open = fn(ProtocolConfig, &Device) -> warpmc_potts::Result<Runner>;
    for (kind, open, algorithm) in [("ensemble", Runner::on as Open), ("sequential", Runner::sequential as Open)]
        .into_iter()
        .flat_map(|(k, o)| ALGORITHMS.map(|a| (k, o, a)))
    {
        for cont in [false, true] {
            let cfg = config_for(cont, algorithm);
            let (whole, final_lattice) = run_whole(&cfg, &Device::CPU);
            // How often this runner looks at its observer in the whole run.
            let mut count = StopAt { looks: 0, stop_at: 0, saved: None };
            open(cfg.clone(), &Device::CPU).unwrap().run(&mut RunState::new(&cfg), &mut count).unwrap();
            let looks = count.looks;
            assert!(looks > 10, "{kind}: {looks} looks");
            // Chunks are at most one measurement interval here, so looks
            // happen at many positions: thermalisation, mid-measurement,
            // chain and group ends.
            for stop_at in [1, 2, 5, looks / 3, looks / 2, 2 * looks / 3, looks - 1, looks] {
                let mut stop = StopAt { looks: 0, stop_at, saved: None };
                let mut state = RunState::new(&cfg);
                let err = open(cfg.clone(), &Device::CPU).unwrap().run(&mut state, &mut stop);
                assert!(err.is_err(), "{kind}: stop at look {stop_at} of {looks}");
                let Checkpoint { config: cfg2, state: mut state2 } =
                    decode(&stop.saved.expect("checkpoint written")).unwrap();
                assert_eq!(cfg2, cfg);
                let mut runner = open(cfg2, &Device::CPU).unwrap();
                let resumed = runner.run(&mut state2, &mut Quiet).unwrap();
                assert_eq!(
                    physics(&resumed),
                    physics(&whole),
                    "{kind} {algorithm}, continue={cont}, stopped at look {stop_at}"
                );
                assert_eq!(runner.lattice().unwrap(), final_lattice);
            }
        }
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
    for (cont, algorithm) in [false, true].into_iter().flat_map(|c| ALGORITHMS.map(|a| (c, a))) {
        let cfg = config_for(cont, algorithm);
        let (cpu, cpu_lattice) = run_whole(&cfg, &Device::CPU);
        let (cuda, cuda_lattice) = run_whole(&cfg, &gpu);
        assert_eq!(physics(&cuda), physics(&cpu), "{algorithm}");
        assert_eq!(cuda_lattice, cpu_lattice, "{algorithm}");
        // Wolff runs on the CPU whatever the device.
        let expected = if algorithm.runs_on_gpu() { "cuda" } else { "cpu" };
        assert_eq!(cuda[0].backend, expected, "{algorithm}");
    }
}

/// The ensemble runner (all temperatures and samples at once, or the
/// samples of each temperature at once with continuation) gives every
/// result field and every measurement of the sequential runner, on
/// lattices of both random-number rules.
fn ensemble_runs_equal_sequential_runs(device: &Device) {
    for (q, size, height) in [(3u32, 12usize, 6usize), (2, 64, 16)] {
        for (cont, algorithm) in [false, true].into_iter().flat_map(|c| ALGORITHMS.map(|a| (c, a))) {
            let cfg = ConfigFile {
                q: Some(q),
                size: Some(size),
                height: Some(height),
                temps: Some(Temperatures::List(vec![0.9, 1.0, 1.1])),
                init: Some(InitialState::Random),
                therm: Some(21),
                sweeps: Some(40),
                measure_every: Some(4),
                samples: Some(3),
                seed: Some(8),
                continue_from_previous: Some(cont),
                algorithm: Some(algorithm),
                ..Default::default()
            }
            .resolve()
            .unwrap();
            let mut seq = Runner::sequential(cfg.clone(), device).unwrap();
            let (mut seq_state, mut ens_state) = (RunState::new(&cfg), RunState::new(&cfg));
            let want = seq.run(&mut seq_state, &mut Quiet).unwrap();
            let mut ens = Runner::on(cfg.clone(), device).unwrap();
            assert!(ens.simulation().is_none(), "an ensemble runner");
            let got = ens.run(&mut ens_state, &mut Quiet).unwrap();
            assert_eq!(physics(&got), physics(&want), "q={q} {size}x{height} continue={cont} {algorithm}");
            assert_eq!(ens_state.series(), seq_state.series());
            assert_eq!(ens.lattice().unwrap(), seq.lattice().unwrap());
        }
    }
}
warpmc_testkit::test_device!(
    ensemble_runs_equal_sequential_runs,
    ensemble_runs_equal_sequential_runs_cpu,
    ensemble_runs_equal_sequential_runs_cuda
);

/// A checkpoint in `version` with its JSON header edited by `edit`; from
/// versions 6 to 8 to versions 3 to 5, with its lattices unpacked to one
/// byte per site.
fn rewritten(bytes: &[u8], version: u32, edit: impl Fn(&str) -> String) -> Vec<u8> {
    let json_len = u64::from_le_bytes(bytes[12..20].try_into().unwrap()) as usize;
    let json = edit(std::str::from_utf8(&bytes[20..20 + json_len]).unwrap());
    let mut out = b"WMCPOTTS".to_vec();
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&(json.len() as u64).to_le_bytes());
    out.extend_from_slice(json.as_bytes());
    let from = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
    if version <= 5 && from >= 6 {
        // Versions 6 to 8 pack 1, 2, 4 or 8 bits per site, lowest bits first,
        // each lattice padded to whole bytes.
        let header: serde_json::Value = serde_json::from_slice(&bytes[20..20 + json_len]).unwrap();
        let number = |key: &str| header["config"][key].as_u64().unwrap() as usize;
        let bits = match number("q") {
            2 => 1,
            3..=4 => 2,
            5..=16 => 4,
            _ => 8,
        };
        let sites = number("size") * number("height");
        let per_lattice = (sites * bits).div_ceil(8);
        for lattice in bytes[20 + json_len..bytes.len() - 8].chunks(per_lattice) {
            let spins =
                lattice.iter().flat_map(|&b| (0..8 / bits).map(move |j| (b >> (j * bits)) & ((1 << bits) - 1) as u8));
            out.extend(spins.take(sites));
        }
    } else {
        out.extend_from_slice(&bytes[20 + json_len..bytes.len() - 8]);
    }
    let sum = out.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3));
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// A checkpoint of the sequential runner (one chain under way), also in
/// the version-4 format (no algorithm: Metropolis) and the version-3
/// format that said `has_current`, continues on the ensemble runner to the
/// uninterrupted results; a group checkpoint is refused by the sequential
/// runner with a reason.
#[test]
fn checkpoints_move_between_runners() {
    let cfg = config(false);
    let (whole, _) = run_whole(&cfg, &Device::CPU);
    let mut stop = StopAt { looks: 0, stop_at: 30, saved: None };
    let mut state = RunState::new(&cfg);
    assert!(Runner::sequential(cfg.clone(), &Device::CPU).unwrap().run(&mut state, &mut stop).is_err());
    let now = stop.saved.unwrap();
    assert_eq!(u32::from_le_bytes(now[8..12].try_into().unwrap()), 10);
    let resumed = |bytes: &[u8]| {
        let Checkpoint { config, mut state } = decode(bytes).unwrap();
        assert_eq!(config.algorithm(), Algorithm::Metropolis);
        Runner::on(config, &Device::CPU).unwrap().run(&mut state, &mut Quiet).unwrap()
    };
    assert_eq!(physics(&resumed(&now)), physics(&whole));
    // Version 9 differs only in Wolff's calibration, version 8 in having no
    // last lattice: a Metropolis run of either is read as this one.
    assert_eq!(physics(&resumed(&rewritten(&now, 9, str::to_string))), physics(&whole));
    assert_eq!(physics(&resumed(&rewritten(&now, 8, str::to_string))), physics(&whole));
    // The earlier formats: version 7 and 6 as this one, 5 to 3 a byte per
    // site, 4 and 3 without the algorithm (Metropolis), 3 saying whether a
    // chain is under way rather than how many.
    let no_algorithm = |j: &str| {
        assert!(j.contains(",\"algorithm\":\"metropolis\""), "{j}");
        j.replace(",\"algorithm\":\"metropolis\"", "")
    };
    let earlier = |bytes: &[u8], current: &str, has_current: &str| {
        let v7 = rewritten(bytes, 7, str::to_string);
        let v6 = rewritten(&v7, 6, str::to_string);
        let v5 = rewritten(&v6, 5, str::to_string);
        let v4 = rewritten(&v5, 4, no_algorithm);
        let v3 = rewritten(&v5, 3, |j| no_algorithm(j).replace(current, has_current));
        [v7, v6, v5, v4, v3]
    };
    // Before version 8 the random numbers were keyed by the seed alone: a
    // run under way cannot go on bit for bit, and is refused ...
    for (bytes, version) in earlier(&now, "\"current\":1", "\"has_current\":true").iter().zip((3..=7).rev()) {
        let e = decode(bytes).unwrap_err().to_string();
        assert!(e.contains(&format!("format version {version} keyed its random numbers by the seed alone")), "{e}");
    }
    // ... but a finished run gives its results.
    let mut done = RunState::new(&cfg);
    Runner::on(cfg.clone(), &Device::CPU).unwrap().run(&mut done, &mut Quiet).unwrap();
    for bytes in earlier(&encode(&cfg, &done), "\"current\":0", "\"has_current\":false") {
        assert_eq!(physics(&resumed(&bytes)), physics(&whole));
    }
    // Before version 7 an ordered start under h < 0 was state 0: such a run
    // is refused, whatever its algorithm.
    let against_field = |j: &str| {
        assert!(j.contains("\"init\":\"random\"") && j.contains("\"field\":0.0"), "{j}");
        j.replace("\"init\":\"random\"", "\"init\":\"ordered\"").replace("\"field\":0.0", "\"field\":-0.5")
    };
    let e = decode(&rewritten(&now, 6, against_field)).unwrap_err().to_string();
    assert!(e.contains("format version 6 started ordered lattices under h = -0.5"), "{e}");
    assert!(decode(&rewritten(&now, 8, against_field)).is_ok());
    // A heat-bath run's checkpoint keeps its algorithm; a newer version is
    // refused with the version this build reads.
    let hb = config_for(false, Algorithm::HeatBath);
    let mut stop = StopAt { looks: 0, stop_at: 12, saved: None };
    assert!(Runner::on(hb.clone(), &Device::CPU).unwrap().run(&mut RunState::new(&hb), &mut stop).is_err());
    let bytes = stop.saved.unwrap();
    assert_eq!(decode(&bytes).unwrap().config.algorithm(), Algorithm::HeatBath);
    let e = decode(&rewritten(&bytes, 11, str::to_string)).unwrap_err().to_string();
    assert!(e.contains("reads version 10") && !e.contains("damaged"), "{e}");
    // Before version 10 a Wolff sweep was calibrated from the ordered state
    // at every temperature: an unfinished run with one above T_c (q = 3:
    // 0.995) is refused, one below T_c only and a finished one are read.
    let wolff = config_for(false, Algorithm::Wolff);
    let mut stop = StopAt { looks: 0, stop_at: 4, saved: None };
    let _ = Runner::on(wolff.clone(), &Device::CPU).unwrap().run(&mut RunState::new(&wolff), &mut stop);
    let under_way = stop.saved.unwrap();
    assert!(decode(&under_way).is_ok());
    let e = decode(&rewritten(&under_way, 9, str::to_string)).unwrap_err().to_string();
    assert!(e.contains("format version 9 measured the clusters of a Wolff sweep") && e.contains("T = 1"), "{e}");
    let cold = |j: &str| j.replace("[0.9,1.0,1.1]", "[0.9,0.95,0.97]");
    assert!(decode(&rewritten(&under_way, 9, cold)).is_ok());
    let mut done = RunState::new(&wolff);
    Runner::on(wolff.clone(), &Device::CPU).unwrap().run(&mut done, &mut Quiet).unwrap();
    assert!(decode(&rewritten(&encode(&wolff, &done), 9, str::to_string)).is_ok());
    // A flipped bit in the version field itself: the checksum says so.
    let mut flipped = bytes.clone();
    flipped[11] ^= 0x80;
    let e = decode(&flipped).unwrap_err().to_string();
    assert!(e.contains("format version") && e.contains("the file is damaged"), "{e}");
    let mut stop = StopAt { looks: 0, stop_at: 3, saved: None };
    let _ = Runner::on(cfg.clone(), &Device::CPU).unwrap().run(&mut RunState::new(&cfg), &mut stop);
    let Checkpoint { config, mut state } = decode(&stop.saved.unwrap()).unwrap();
    let e = Runner::sequential(config, &Device::CPU).unwrap().run(&mut state, &mut Quiet).unwrap_err().to_string();
    assert!(e.contains("ensemble runner"), "{e}");
}

/// The CLI's loop over a study's sizes, from `state` at size `first`.
fn run_study(
    study: &[ProtocolConfig],
    first: usize,
    mut state: RunState,
    observer: &mut dyn Observer,
) -> warpmc_potts::Result<RunState> {
    for at in first..study.len() {
        if at > first {
            state = state.next_size(&study[at - 1], &study[at])?;
        }
        Runner::on(study[at].clone(), &Device::CPU)?.run(&mut state, observer)?;
    }
    Ok(state)
}

/// A study of several sizes (TOML `size = [..]`): one protocol per size,
/// each result with its L; stopped anywhere, its checkpoint carries the
/// finished sizes and resumes to the same results and series.
#[test]
fn a_study_of_several_sizes_resumes_across_sizes() {
    let text = "q = 2\nsize = [8, 16, 12]\ntemps = [1.0, 1.5]\ntherm = 10\nsweeps = 24\nmeasure_every = 4\nsamples = 2\n\
                init = \"random\"\nbackend = \"cpu\"\n";
    let file = ConfigFile::parse(text, std::path::Path::new("study.toml")).unwrap();
    assert!(file.resolve().unwrap_err().to_string().contains("3 lattice sizes"));
    let study = file.resolve_sizes().unwrap();
    assert_eq!(study.iter().map(|c| (c.size(), c.height())).collect::<Vec<_>>(), [(8, 8), (16, 16), (12, 12)]);
    let whole = run_study(&study, 0, RunState::new(&study[0]), &mut Quiet).unwrap();
    let results = whole.study_results(&study[2]).unwrap();
    assert_eq!(results.iter().map(|r| r.size).collect::<Vec<_>>(), [8, 8, 16, 16, 12, 12]);
    assert_eq!(whole.study_series().len(), 3);
    // Each size alone gives the same results.
    for (i, cfg) in study.iter().enumerate() {
        let alone = ConfigFile::parse(&text.replace("[8, 16, 12]", &cfg.size().to_string()), std::path::Path::new("x"))
            .unwrap()
            .resolve()
            .unwrap();
        let r = Runner::on(alone, &Device::CPU).unwrap().run_all().unwrap();
        assert_eq!(physics(&r), physics(&results[2 * i..2 * i + 2]));
    }
    for stop_at in [3, 9, 14, 20] {
        let mut stop = StopAt { looks: 0, stop_at, saved: None };
        assert!(run_study(&study, 0, RunState::new(&study[0]), &mut stop).is_err());
        let Checkpoint { config, state } = decode(&stop.saved.unwrap()).unwrap();
        assert_eq!(config.study_sizes(), [8, 16, 12]);
        let first = study.iter().position(|c| c.size() == config.size()).unwrap();
        let resumed = run_study(&study, first, state, &mut Quiet).unwrap();
        assert_eq!(physics(&resumed.study_results(&study[2]).unwrap()), physics(&results), "stop at {stop_at}");
        assert_eq!(resumed.study_series(), whole.study_series());
    }
    // Bad lists: a repeated size, an odd one, a height beside several sizes.
    for bad in ["[8, 8]", "[8, 9]"] {
        let f = ConfigFile::parse(&text.replace("[8, 16, 12]", bad), std::path::Path::new("x")).unwrap();
        assert!(f.resolve_sizes().is_err(), "{bad}");
    }
    let f = ConfigFile::parse(&format!("{text}height = 8\n"), std::path::Path::new("x")).unwrap();
    assert!(f.resolve_sizes().unwrap_err().to_string().contains("square"));
    assert!(ConfigFile::parse(&text.replace("[8, 16, 12]", "[]"), std::path::Path::new("x")).is_err());
}

/// A range whose step is so fine that its point count overflows an integer
/// is refused with a reason, as is any range past the chain limit.
#[test]
fn temperature_ranges_with_too_many_points_are_refused() {
    for range in ["1:2:1e-300", "1:2:5e-324", "0.5:1e300:1e-10", "1:2:1e-8"] {
        let err = Temperatures::Range(range.into()).expand().unwrap_err().to_string();
        assert!(err.contains("too many points"), "{range}: {err}");
    }
    assert_eq!(Temperatures::Range("1:2:0.25".into()).expand().unwrap(), vec![1.0, 1.25, 1.5, 1.75, 2.0]);
}

/// A range runs down with a negative step (a cooling schedule), a string
/// without a colon is a comma list (TOML's `temps = "1.0,1.1"`), and a step
/// against the direction of the range is refused.
#[test]
fn temperature_ranges_run_down_and_strings_can_be_lists() {
    let t = |s: &str| Temperatures::Range(s.into()).expand();
    assert_eq!(t("1.1:0.9:-0.05").unwrap(), vec![1.1, 1.05, 1.0, 0.95, 0.9]);
    assert_eq!(t("2:2:-1").unwrap(), vec![2.0]);
    assert_eq!(t("1.0, 1.1,0.95").unwrap(), vec![1.0, 1.1, 0.95]);
    assert_eq!(t("1.25").unwrap(), vec![1.25]);
    for bad in ["1:2:-0.1", "2:1:0.1", "1:2:0", "1,x", "1:2:nan"] {
        let e = t(bad).unwrap_err().to_string();
        assert!(e.contains(bad), "{bad}: {e}");
    }
    let f = ConfigFile::parse("q = 2\nsize = 8\ntemps = \"1.0,1.1\"\n", std::path::Path::new("x")).unwrap();
    assert_eq!(f.resolve().unwrap().temperatures(), [1.0, 1.1]);
}

/// A checkpoint whose checksum is right but whose header contradicts
/// itself (hand-edited, or written by a broken build) is refused with a
/// reason, never a panic or a silently wrong continuation.
#[test]
fn checkpoints_that_contradict_themselves_are_refused() {
    let edit = |bytes: &[u8], f: &dyn Fn(&mut serde_json::Value)| {
        rewritten(bytes, 8, |j| {
            let mut v: serde_json::Value = serde_json::from_str(j).unwrap();
            f(&mut v);
            v.to_string()
        })
    };
    let refused = |bytes: &[u8], why: &str| {
        let e = decode(bytes).expect_err(why).to_string();
        assert!(e.contains("checkpoint"), "{why}: {e}");
    };
    for tempering in [false, true] {
        let base = config(true);
        let cfg = if tempering {
            let f = ConfigFile {
                tempering: Some(true),
                exchange_every: Some(3),
                continue_from_previous: Some(false),
                ..Default::default()
            };
            ConfigFile {
                q: Some(3),
                size: Some(12),
                height: Some(6),
                temps: Some(Temperatures::List(vec![0.9, 1.0, 1.1])),
                therm: Some(37),
                sweeps: Some(60),
                measure_every: Some(4),
                samples: Some(2),
                seed: Some(31),
                ..f
            }
            .resolve()
            .unwrap()
        } else {
            base
        };
        let mut stop = StopAt { looks: 0, stop_at: 20, saved: None };
        assert!(Runner::on(cfg.clone(), &Device::CPU).unwrap().run(&mut RunState::new(&cfg), &mut stop).is_err());
        let bytes = stop.saved.unwrap();
        decode(&bytes).unwrap();
        // The seconds between checkpoints the run was given come back; no
        // time, or less, is refused.
        let Checkpoint { config: c, mut state } = decode(&bytes).unwrap();
        assert_eq!(state.checkpoint_every(), None);
        state.set_checkpoint_every(Some(-1.0));
        assert_eq!(state.checkpoint_every(), None, "not a time between checkpoints");
        state.set_checkpoint_every(Some(0.25));
        let every = encode(&c, &state);
        assert_eq!(decode(&every).unwrap().state.checkpoint_every(), Some(0.25));
        for bad in [0.0, -1.0] {
            refused(&edit(&every, &|v| v["checkpoint_every"] = bad.into()), "no time between checkpoints");
        }
        // The protocol holds a key this build does not know.
        refused(&edit(&bytes, &|v| v["config"]["unknown_key"] = 1.into()), "unknown config key");
        // A measurement more, or fewer, than the position says.
        let first_chain = |v: &mut serde_json::Value| -> Vec<serde_json::Value> {
            let series = if tempering { &mut v["tempering"]["series"] } else { &mut v["series"] };
            std::mem::take(series[0][0].as_array_mut().unwrap())
        };
        let put_back = |v: &mut serde_json::Value, chain: Vec<serde_json::Value>| {
            let series = if tempering { &mut v["tempering"]["series"] } else { &mut v["series"] };
            series[0][0] = chain.into();
        };
        let one_more = |v: &mut serde_json::Value| {
            let mut chain = first_chain(v);
            chain.push(chain[0].clone());
            put_back(v, chain);
        };
        refused(&edit(&bytes, &one_more), "a measurement too many");
        let one_fewer = |v: &mut serde_json::Value| {
            let mut chain = first_chain(v);
            chain.pop();
            put_back(v, chain);
        };
        refused(&edit(&bytes, &one_fewer), "a measurement too few");
        // A measurement that no lattice gives: |e| beyond 2|J| + |h|, m
        // outside [0, 1].
        for (key, value) in [("energy", 1e300), ("energy", -2.5), ("magnetization", -5.0), ("magnetization", 1.5)] {
            let odd = |v: &mut serde_json::Value| {
                let mut chain = first_chain(v);
                chain[0][key] = value.into();
                put_back(v, chain);
            };
            let e = decode(&edit(&bytes, &odd)).expect_err(key).to_string();
            assert!(e.contains("no lattice of the run can give"), "{key} = {value}: {e}");
        }
        // Counters the rest of the run would carry past u64::MAX, and time
        // that runs backwards.
        let set_timing = |v: &mut serde_json::Value, seconds: f64, updates: u64| {
            let t = if tempering { &mut v["tempering"]["timing"] } else { &mut v["timing"][0] };
            assert!(t.is_array(), "{t}");
            *t = serde_json::json!([seconds, updates]);
        };
        refused(&edit(&bytes, &|v| set_timing(v, 1.0, u64::MAX)), "site updates beyond the run's");
        refused(&edit(&bytes, &|v| set_timing(v, -1.0, 1)), "negative seconds");
        // A backend name that would break the CSV's columns.
        if !tempering {
            refused(&edit(&bytes, &|v| v["backends"][0] = "cpu,\nx".into()), "a backend name with a comma");
        }
        if tempering {
            for key in ["rounds", "round_trips"] {
                refused(&edit(&bytes, &|v| v["tempering"]["replicas"]["stats"][key] = u64::MAX.into()), key);
            }
            let offered_ever = |v: &mut serde_json::Value| {
                let stats = &mut v["tempering"]["replicas"]["stats"];
                stats["attempts"][0] = u64::MAX.into();
                stats["accepted"][0] = u64::MAX.into();
            };
            refused(&edit(&bytes, &offered_ever), "more offers than rounds");
            let accepted_more = |v: &mut serde_json::Value| {
                let stats = &mut v["tempering"]["replicas"]["stats"];
                stats["accepted"][0] = (stats["attempts"][0].as_u64().unwrap() + 1).into();
            };
            refused(&edit(&bytes, &accepted_more), "more swaps accepted than offered");
            // The replicas' block taken out: the run would start its
            // tempering again from the start, under the old position.
            let e = decode(&edit(&bytes, &|v| v["tempering"] = serde_json::Value::Null)).unwrap_err().to_string();
            assert!(e.contains("without its replicas"), "{e}");
        } else {
            // Continuation keeps one saved lattice per sample.
            refused(&edit(&bytes, &|v| v["saved"] = serde_json::json!([])), "no saved lattices");
        }
    }
}

#[test]
fn a_value_of_the_wrong_kind_is_named_by_its_key_in_words() {
    let parse = |line: &str| {
        let key = line.split(' ').next().unwrap();
        let base = ["q = 3", "size = 8", "temps = [1.0]"].into_iter().filter(|l| !l.starts_with(key));
        let text = base.chain([line]).collect::<Vec<_>>().join("\n");
        match ConfigFile::parse(&text, std::path::Path::new("c.toml")) {
            Ok(_) => panic!("{line}: accepted"),
            Err(e) => e.to_string(),
        }
    };
    for (line, words) in [
        ("seed = -1", "seed = -1: expected a whole number from 0 to 18446744073709551615"),
        // q's own range, not its type's.
        ("q = \"2\"", "q = \"2\": expected a whole number from 2 to 255"),
        ("q = -3", "q = -3: expected a whole number from 2 to 255"),
        ("samples = 2.5", "samples = 2.5: expected a whole number from 1 to 16777215"),
        ("height = [8]", "height: expected a whole number"),
        ("coupling = \"strong\"", "coupling = \"strong\": expected a number"),
        ("tempering = 1", "tempering = 1: expected true or false"),
        ("measure_every = 1e30", "measure_every = 1000000000000000000000000000000.0: expected a whole number"),
        ("init = \"hot\"", "init: unknown variant `hot`"),
        // The keys that take a word, given something else.
        ("init = 3", "init: expected \"ordered\" or \"random\" (a string)"),
        ("init = [1]", "init: expected \"ordered\" or \"random\""),
        ("backend = true", "backend: expected \"auto\", \"cpu\" or \"cuda\""),
        ("algorithm = 3", "algorithm: expected \"metropolis\", \"heat-bath\", \"swendsen-wang\" or \"wolff\""),
        // Beyond TOML's own integers (toml's message names no key).
        (
            "seed = 18446744073709551615",
            "seed = 18446744073709551615: TOML integers run from -2^63 to 2^63 - 1 = 9223372036854775807 (a larger \
             seed can be given as --seed)",
        ),
        ("therm = 99999999999999999999 # long", "therm = 99999999999999999999: TOML integers run from -2^63"),
    ] {
        let message = parse(line);
        assert!(message.contains(words), "{line}: {message}");
        assert!(!message.contains("invalid type") && !message.contains("invalid value"), "{line}: {message}");
    }
    // Lists name their key too; syntax errors keep their position.
    assert!(parse("size = [8, \"x\"]").contains("size: expected a width or a list of widths"));
    assert!(parse("temps = [1, \"x\"]").contains("temps: expected a list of numbers or a range"));
    assert!(parse("therm = ").contains("at line 4: therm ="), "{}", parse("therm = "));
    // A key given twice is named by its line.
    let e = ConfigFile::parse("q = 3\nsize = 8\nsize = 9\n", std::path::Path::new("c.toml")).unwrap_err().to_string();
    assert!(e.contains("duplicate key at line 3: size = 9"), "{e}");
}

/// q = 2 Metropolis far above T_c makes almost every flip: each sweep
/// nearly inverts the lattice and the next restores it. Where the 32-bit
/// test rejects the costliest flip once in 2^32 tries the run is refused
/// (the chain never leaves its two states); where rejections are too rare
/// for the run's sweeps, its rows are flagged too short. The energy such a
/// chain reports (−2 at T = 10⁹, where the exact value is −1) would
/// otherwise pass as trustworthy.
#[test]
fn q2_metropolis_that_hardly_ever_rejects_is_refused_or_flagged() {
    let cfg = |temps: Vec<f64>, algorithm: Algorithm| {
        ConfigFile {
            q: Some(2),
            size: Some(16),
            temps: Some(Temperatures::List(temps)),
            therm: Some(100),
            sweeps: Some(2000),
            algorithm: Some(algorithm),
            backend: Some(warpmc_gpu::BackendChoice::Cpu),
            ..Default::default()
        }
        .resolve()
    };
    let e = cfg(vec![2.0, 1e11], Algorithm::Metropolis).unwrap_err().to_string();
    assert!(e.contains("at T = 100000000000") && e.contains("use the heat-bath algorithm"), "{e}");
    assert!(cfg(vec![1e11], Algorithm::HeatBath).is_ok());
    let c = cfg(vec![2.0, 1e9], Algorithm::Metropolis).unwrap();
    let results = Runner::new(c).unwrap().run_all().unwrap();
    assert!(!results[0].too_short, "T = 2 mixes");
    assert!(results[1].too_short, "T = 1e9: 2100 sweeps with a rejection of 4e-9");
}

/// A simulation refuses what a run refuses, with the run's words: at T =
/// 10³⁰⁰, or with J = 10⁻⁶⁰ at T = 1, q = 2 Metropolis flips every site
/// every sweep, and a chain of it reported e = −2 (a frozen pair of
/// states) where the exact value is about 0.
#[test]
fn a_simulation_refuses_the_frozen_metropolis_a_run_refuses() {
    let run_error = |coupling: f64, field: f64, t: f64| {
        ConfigFile {
            q: Some(2),
            size: Some(8),
            coupling: Some(coupling),
            field: Some(field),
            temps: Some(Temperatures::List(vec![t])),
            therm: Some(10),
            sweeps: Some(10),
            backend: Some(warpmc_gpu::BackendChoice::Cpu),
            ..Default::default()
        }
        .resolve()
        .unwrap_err()
        .to_string()
    };
    let model = |coupling: f64, field: f64| {
        PottsModel::new(2, 8, 8).unwrap().with_coupling(coupling).unwrap().with_field(field).unwrap()
    };
    for (coupling, field, t) in [(1.0, 0.0, 1e300), (1e-60, 0.0, 1.0), (1.0, 0.5, 1e11)] {
        let expected = run_error(coupling, field, t);
        assert!(expected.contains("use the heat-bath algorithm"), "{expected}");
        let e = Simulation::on_cpu(model(coupling, field), t).unwrap_err().to_string();
        assert_eq!(e, expected);
        let e = Simulation::on_cpu_with(model(coupling, field), Algorithm::Metropolis, t).unwrap_err().to_string();
        assert_eq!(e, expected);
        // A simulation already made is refused the temperature and keeps
        // its own.
        let start = if coupling == 1.0 { 1.0 } else { 1e-59 };
        let mut sim = Simulation::on_cpu(model(coupling, field), start).unwrap();
        assert_eq!(sim.set_temperature(t).unwrap_err().to_string(), expected);
        assert_eq!(sim.temperature(), start);
        // The other algorithms and q ≠ 2 have no such alternation.
        for algorithm in [Algorithm::HeatBath, Algorithm::SwendsenWang, Algorithm::Wolff] {
            if field == 0.0 {
                Simulation::with_algorithm(model(coupling, field), algorithm, t, &Device::CPU).unwrap();
            }
        }
        let q3 = PottsModel::new(3, 8, 8).unwrap().with_coupling(coupling).unwrap().with_field(field).unwrap();
        Simulation::on_cpu(q3, t).unwrap();
    }
}

/// Where only the field lets q = 2 checkerboard Metropolis reach every
/// state (a torus of at most 8 sites, or J = 0), a run too short for the
/// field to break the chain's cycles is refused: on 2 × 2 at h = 10⁻⁴ such
/// a run gave an energy 34 standard errors from the exact one, with error
/// bars that looked sound.
#[test]
fn a_run_whose_weak_field_cannot_break_the_metropolis_cycles_is_refused() {
    let resolve = |size: usize, coupling: f64, field: f64, sweeps: u64, algorithm: Algorithm| {
        ConfigFile {
            q: Some(2),
            size: Some(size),
            coupling: Some(coupling),
            field: Some(field),
            temps: Some(Temperatures::List(vec![1.0])),
            therm: Some(500),
            sweeps: Some(sweeps),
            algorithm: Some(algorithm),
            backend: Some(warpmc_gpu::BackendChoice::Cpu),
            ..Default::default()
        }
        .resolve()
        .map(drop)
        .map_err(|e| e.to_string())
    };
    use Algorithm::{HeatBath, Metropolis};
    for (size, coupling, field) in [(2, 1.0, 1e-4), (2, 1.0, -1e-3), (2, 1.0, 1e-12), (16, 0.0, 1e-4)] {
        let e = resolve(size, coupling, field, 20_000, Metropolis).unwrap_err();
        assert!(e.contains("cost the field alone") && e.contains("heat-bath") && e.contains("sweeps"), "{e}");
        resolve(size, coupling, field, 20_000, HeatBath).unwrap();
    }
    // A field strong enough for the sweeps, or a torus whose free flips
    // leave no cycles, runs.
    resolve(2, 1.0, 1e-2, 20_000, Metropolis).unwrap();
    resolve(2, 1.0, 1e-4, 2_000_000, Metropolis).unwrap();
    resolve(4, 1.0, 1e-4, 20_000, Metropolis).unwrap();
}

/// The random numbers of a chain are keyed by the lattice's size and the
/// temperature's value besides the seed: the sizes of a study, and
/// separate runs at other temperatures under one seed, draw unrelated
/// numbers (keyed by the seed and the temperature's place alone, runs at
/// T = 3.0 and 3.01 gave energy series correlated at r ≈ 0.3–0.4, and the
/// sizes of a study at r ≈ 0.15); the same run under the same seed is the
/// same run.
#[test]
fn sizes_and_temperatures_draw_their_own_random_numbers() {
    let at = |size: usize, temps: Vec<f64>| {
        ConfigFile {
            q: Some(2),
            size: Some(size),
            temps: Some(Temperatures::List(temps)),
            init: Some(InitialState::Random),
            therm: Some(100),
            sweeps: Some(20_000),
            measure_every: Some(1),
            seed: Some(3),
            ..Default::default()
        }
        .resolve()
        .unwrap()
    };
    let a = at(8, vec![3.0]);
    assert_eq!(a.chain(0, 0), at(8, vec![3.0]).chain(0, 0));
    let keys = [a.chain(0, 0).seed, at(16, vec![3.0]).chain(0, 0).seed, at(8, vec![3.01]).chain(0, 0).seed];
    assert!(keys[0] != keys[1] && keys[0] != keys[2] && keys[1] != keys[2], "{keys:?}");
    assert_ne!(a.model_key(), at(16, vec![3.0]).model_key());
    // So are the coupling and the field (−0 is 0), and q.
    let model = |coupling: f64, field: f64, q: u32| {
        let f = ConfigFile {
            q: Some(q),
            size: Some(8),
            temps: Some(Temperatures::List(vec![3.0])),
            coupling: Some(coupling),
            field: Some(field),
            seed: Some(3),
            algorithm: Some(Algorithm::HeatBath),
            ..Default::default()
        };
        f.resolve().unwrap().chain(0, 0).seed
    };
    let plain = model(1.0, 0.0, 2);
    assert_eq!(plain, model(1.0, -0.0, 2));
    for other in [model(1.003, 0.0, 2), model(1.0, 0.01, 2), model(1.0, 0.0, 3)] {
        assert_ne!(plain, other);
    }
    // A temperature listed twice gives two chains.
    let twice = at(8, vec![3.0, 3.0]);
    assert_ne!(twice.chain(0, 0), twice.chain(0, 1));
    // Separate runs at nearby temperatures: their energy series are
    // uncorrelated (|r| ≈ 1/√20000 ≈ 0.007 for independent series).
    let energies = |cfg: &ProtocolConfig| -> Vec<f64> {
        let mut state = RunState::new(cfg);
        Runner::on(cfg.clone(), &Device::CPU).unwrap().run(&mut state, &mut Quiet).unwrap();
        state.series()[0][0].iter().map(|m| m.energy).collect()
    };
    let correlation = |x: &[f64], y: &[f64]| {
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let (mx, my) = (mean(x), mean(y));
        let cov: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
        let var = |v: &[f64], m: f64| v.iter().map(|a| (a - m) * (a - m)).sum::<f64>();
        cov / (var(x, mx) * var(y, my)).sqrt()
    };
    let r = correlation(&energies(&a), &energies(&at(8, vec![3.01])));
    assert!(r.abs() < 0.04, "r = {r}");
}

/// A finished tempering run of format 7 (its exchanges keyed by the seed
/// alone) gives its results again; an unfinished one is refused.
#[test]
fn a_finished_tempering_run_of_format_7_gives_its_results() {
    let cfg = ConfigFile {
        q: Some(3),
        size: Some(12),
        height: Some(6),
        temps: Some(Temperatures::List(vec![0.9, 1.0, 1.1])),
        therm: Some(37),
        sweeps: Some(60),
        measure_every: Some(4),
        samples: Some(2),
        seed: Some(31),
        tempering: Some(true),
        exchange_every: Some(3),
        continue_from_previous: Some(false),
        ..Default::default()
    }
    .resolve()
    .unwrap();
    let mut done = RunState::new(&cfg);
    let whole = Runner::on(cfg.clone(), &Device::CPU).unwrap().run(&mut done, &mut Quiet).unwrap();
    let as_format_7 = |bytes: &[u8]| {
        rewritten(bytes, 7, |j| {
            let mut v: serde_json::Value = serde_json::from_str(j).unwrap();
            v["tempering"]["replicas"]["seed"] = 31.into();
            v.to_string()
        })
    };
    let Checkpoint { config, mut state } = decode(&as_format_7(&encode(&cfg, &done))).unwrap();
    let again = Runner::on(config, &Device::CPU).unwrap().run(&mut state, &mut Quiet).unwrap();
    assert_eq!(physics(&again), physics(&whole));
    let mut stop = StopAt { looks: 0, stop_at: 20, saved: None };
    assert!(Runner::on(cfg.clone(), &Device::CPU).unwrap().run(&mut RunState::new(&cfg), &mut stop).is_err());
    let e = decode(&as_format_7(&stop.saved.unwrap())).unwrap_err().to_string();
    assert!(e.contains("the unfinished run cannot be continued"), "{e}");
}

/// A finished run may keep its last lattice (for its snapshot) in its
/// checkpoint; a run not finished, or a lattice of another size, may not.
#[test]
fn a_finished_runs_last_lattice_travels_in_its_checkpoint() {
    let cfg = config(false);
    let mut runner = Runner::on(cfg.clone(), &Device::CPU).unwrap();
    let mut state = RunState::new(&cfg);
    let fresh = runner.lattice().unwrap();
    assert!(state.keep_last_lattice(&cfg, fresh).is_err(), "not finished");
    runner.run(&mut state, &mut Quiet).unwrap();
    assert!(decode(&encode(&cfg, &state)).unwrap().state.last_lattice().is_none());
    let other =
        Lattice::new(&PottsModel::new(cfg.q(), cfg.size() * 2, cfg.height()).unwrap(), InitialState::Ordered, 1, 0);
    assert!(state.keep_last_lattice(&cfg, other).is_err(), "another size");
    let last = runner.lattice().unwrap();
    state.keep_last_lattice(&cfg, last.clone()).unwrap();
    let bytes = encode(&cfg, &state);
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 10);
    let back = decode(&bytes).unwrap();
    assert_eq!(back.state.last_lattice(), Some(&last));
    assert_eq!(back.state, state);
    // The header's count and the lattices that follow must agree, and a
    // format before 9 keeps none.
    let e = decode(&rewritten(&bytes, 9, |j| j.replace(",\"last\":true", ""))).unwrap_err().to_string();
    assert!(e.contains("lattices"), "{e}");
    let e = decode(&rewritten(&bytes, 8, str::to_string)).unwrap_err().to_string();
    assert!(e.contains("format 8, which keeps none"), "{e}");
}

/// Only the last size of a study keeps a last lattice: an earlier one's
/// state, finished, refuses it (its checkpoint would be refused).
#[test]
fn only_a_studys_last_size_keeps_its_last_lattice() {
    let file = ConfigFile {
        q: Some(3),
        sizes: Some(vec![8, 16]),
        temps: Some(warpmc_potts::Temperatures::List(vec![1.0])),
        therm: Some(5),
        sweeps: Some(20),
        backend: Some(warpmc_potts::BackendChoice::Cpu),
        ..Default::default()
    };
    let study = file.resolve_sizes().unwrap();
    let mut runner = Runner::on(study[0].clone(), &Device::CPU).unwrap();
    let mut state = RunState::new(&study[0]);
    runner.run(&mut state, &mut Quiet).unwrap();
    assert!(state.finished(&study[0]));
    assert!(state.keep_last_lattice(&study[0], runner.lattice().unwrap()).is_err());
    let mut state = state.next_size(&study[0], &study[1]).unwrap();
    let mut runner = Runner::on(study[1].clone(), &Device::CPU).unwrap();
    runner.run(&mut state, &mut Quiet).unwrap();
    state.keep_last_lattice(&study[1], runner.lattice().unwrap()).unwrap();
    assert!(decode(&encode(&study[1], &state)).unwrap().state.last_lattice().is_some());
}
