//! `warpmc potts` as a user runs it: outputs, bad input, snapshots,
//! checkpoints that survive Ctrl-C and kill -9.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{bin, stderr, stdout, warpmc, warpmc_within};

fn tmp(name: &str) -> PathBuf {
    let d = warpmc_testkit::scratch_dir("cli-potts");
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// A user mistake: non-zero exit, one `error:` line naming the problem, no panic.
fn assert_one_line_error(args: &[&str], needle: &str) {
    assert_one_line_failure(args, &warpmc(args), needle);
}

fn assert_one_line_failure(args: &[&str], o: &Output, needle: &str) {
    let err = stderr(o);
    assert!(!o.status.success(), "{args:?} succeeded");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(lines.len(), 1, "{args:?}: {err}");
    assert!(lines[0].contains(needle), "{args:?}: expected '{needle}' in: {err}");
}

const SMALL: &[&str] = &["potts", "run", "--backend", "cpu", "--q", "3", "--size", "8", "--height", "6"];

fn small(extra: &[&str]) -> Vec<String> {
    SMALL.iter().chain(extra).map(|s| s.to_string()).collect()
}

fn run_small(extra: &[&str]) -> Output {
    let args = small(extra);
    warpmc(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

#[test]
fn row_warnings_stop_after_a_hundred_with_one_line_saying_so() {
    // 201 temperatures, each far too short to trust on a 2 × 2 torus.
    let o = warpmc(&[
        "potts",
        "run",
        "--backend",
        "cpu",
        "--q",
        "3",
        "--size",
        "2",
        "--temps",
        "1:1.0002:0.000001",
        "--algorithm",
        "heat-bath",
        "--therm",
        "10",
        "--sweeps",
        "100",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = physics(&o.stdout);
    let flagged = rows.iter().filter(|r| r["too_short"] == true).count();
    assert!(flagged > 150, "only {flagged} of {} rows flagged", rows.len());
    let err = stderr(&o);
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning: T = ")).collect();
    assert_eq!(warnings.len(), 100, "{err}");
    assert_eq!(err.matches("their warnings are not printed").count(), 1, "{err}");
}

#[test]
fn a_negative_number_with_a_negative_exponent_is_a_value() {
    // clap takes "-1e-3" for an option; the field it gives is the same as
    // "-0.001"'s, to the bit.
    let run = |h: &str| {
        let o = warpmc(&[
            "potts",
            "run",
            "--backend",
            "cpu",
            "--q",
            "3",
            "--size",
            "8",
            "--temp",
            "1",
            "--therm",
            "10",
            "--sweeps",
            "100",
            "--json",
            "--field",
            h,
        ]);
        assert!(o.status.success(), "--field {h}: {}", stderr(&o));
        physics(&o.stdout)
    };
    assert_eq!(run("-1e-3"), run("-0.001"));
}

#[test]
fn bad_input_is_one_clear_line() {
    let base = ["potts", "run", "--backend", "cpu", "--temp", "1", "--therm", "1", "--sweeps", "10"];
    let with = |extra: &[&'static str]| base.iter().copied().chain(extra.iter().copied()).collect::<Vec<&str>>();
    assert_one_line_error(&with(&["--q", "1", "--size", "8"]), "q must be between 2 and 255");
    assert_one_line_error(&with(&["--q", "256", "--size", "8"]), "q must be between 2 and 255");
    assert_one_line_error(&with(&["--q", "3", "--size", "7"]), "even");
    assert_one_line_error(&with(&["--q", "3", "--size", "0"]), "even");
    assert_one_line_error(&with(&["--q", "3", "--size", "8", "--height", "5"]), "height must be even");
    assert_one_line_error(&with(&["--q", "3", "--size", "8", "--snapshot", "x.jpg"]), ".png or .npy");
    assert_one_line_error(&with(&["--q", "3"]), "missing --size");
    assert_one_line_error(&["potts", "run", "--resume", "-"], "from a file, not from standard input");
    assert_one_line_error(&["potts", "inspect", "-"], "name the checkpoint file");
    // A file name that holds a line break is still one line.
    assert_one_line_error(&with(&["--config", "no\nsuch.toml"]), "no\\nsuch.toml");
    assert_one_line_error(&with(&["--q", "3", "--size", "8", "--out", "nod\nir/x.csv"]), "nod\\nir");
    // Energies so small that their fourth moment underflows (C = 0 and NaN
    // error bars before): refused, J and h alike.
    assert_one_line_error(&with(&["--q", "2", "--size", "8", "--coupling", "1e-300"]), "must be 0 or at least 1e-70");
    assert_one_line_error(&with(&["--q", "3", "--size", "8", "--field", "-1e-71"]), "must be 0 or at least 1e-70");
    let neg = ["potts", "run", "--backend", "cpu", "--q", "3", "--size", "8", "--temp", "-1"];
    assert_one_line_error(&neg, "positive");
    let zero = ["potts", "run", "--backend", "cpu", "--q", "3", "--size", "8", "--temps", "0:1:0.5"];
    assert_one_line_error(&zero, "positive");
    let infinite_step = ["potts", "run", "--backend", "cpu", "--q", "3", "--size", "8", "--temps", "1:2:inf"];
    assert_one_line_error(&infinite_step, "'inf' is not a finite number");
    let word = ["potts", "run", "--backend", "cpu", "--q", "3", "--size", "8", "--temps", "a:2:0.5"];
    assert_one_line_error(&word, "'a' is not a finite number");
    let empty = ["potts", "run", "--backend", "cpu", "--q", "3", "--size", "8", "--temps", "1::0.5"];
    assert_one_line_error(&empty, "a part is empty");
    let backwards = ["potts", "run", "--backend", "cpu", "--q", "3", "--size", "8", "--temps", "2:1:0.5"];
    assert_one_line_error(&backwards, "must be T0:T1:DT");
    let dash = ["potts", "run", "--backend", "cpu", "--q", "3", "--size", "8", "--temp", "1", "--out", "-"];
    assert_one_line_error(&dash, "--out -: this output is written to a file");
    let huge: Vec<&str> =
        "potts run --backend cpu --q 2 --size 65536 --temp 1 --sweeps 1 --measure-every 1".split(' ').collect();
    assert_one_line_failure(&huge, &warpmc_within(4 << 20, &huge), "a 65536 × 65536 lattice needs");
    let tiny = ["potts", "run", "--backend", "cpu", "--q", "2", "--size", "2", "--height", "4", "--temp", "2"];
    assert_one_line_error(&tiny, "cannot reach every state of a 2 × 4 torus");
    let uncoupled = ["potts", "run", "--backend", "cpu", "--q", "2", "--size", "16", "--temp", "1", "--coupling", "0"];
    assert_one_line_error(&uncoupled, "J = 0");
    let unsaved =
        ["potts", "run", "--backend", "cpu", "--q", "2", "--size", "8", "--temp", "1", "--checkpoint-every", "5"];
    assert_one_line_error(&unsaved, "--checkpoint-every needs a checkpoint to write");
    // Inputs that are not files of the right kind: one line, not a process
    // that reads /dev/zero until memory runs out.
    assert_one_line_error(&["potts", "run", "--config", "/dev/zero"], "the most warpmc reads as a configuration file");
    assert_one_line_error(&["potts", "run", "--resume", "/dev/zero"], "not a regular file");
    let cfg = tmp("unknown-key.toml");
    std::fs::write(&cfg, "q = 3\nsize = 8\ntemp = 1.0\nsweps = 100\n").unwrap();
    assert_one_line_error(&["potts", "run", "--config", cfg.to_str().unwrap()], "unknown field `sweps`");
    let bad = tmp("corrupt.ckpt");
    std::fs::write(&bad, b"WMCPOTTS\x03\x00\x00\x00 this is not a checkpoint at all").unwrap();
    assert_one_line_error(&["potts", "run", "--resume", bad.to_str().unwrap()], "checksum");
    // A checkpoint of an earlier random-number assignment is refused by name.
    std::fs::write(&bad, b"WMCPOTTS\x02\x00\x00\x00 this is not a checkpoint at all").unwrap();
    assert_one_line_error(&["potts", "run", "--resume", bad.to_str().unwrap()], "older warpmc");
    // Version 1 used another random-number assignment: refused by name.
    std::fs::write(&bad, b"WMCPOTTS\x01\x00\x00\x00 an old checkpoint, whatever follows").unwrap();
    assert_one_line_error(&["potts", "run", "--resume", bad.to_str().unwrap()], "older warpmc");
    assert_one_line_error(&["potts", "run", "--resume", "/nonexistent/x.ckpt"], "--resume: /nonexistent/x.ckpt");
}

/// A checkpoint written for a GPU, resumed where there is none: the message
/// says that the CPU continues it, and it does.
#[test]
fn a_gpu_runs_checkpoint_continues_on_the_cpu() {
    use warpmc_potts::checkpoint::encode;
    use warpmc_potts::{BackendChoice, ConfigFile, RunState};
    let ckpt = tmp("gpu-run.ckpt");
    let cfg = ConfigFile {
        q: Some(3),
        size: Some(8),
        temp: Some(1.0),
        therm: Some(5),
        sweeps: Some(20),
        backend: Some(BackendChoice::Cuda),
        ..Default::default()
    };
    let cfg = cfg.resolve().unwrap();
    std::fs::write(&ckpt, encode(&cfg, &RunState::new(&cfg))).unwrap();
    let c = ckpt.to_str().unwrap();
    for other in ["next", "cpu"] {
        let _ = std::fs::remove_file(format!("{c}.{other}"));
    }
    let o = warpmc(&["potts", "run", "--resume", c, "--checkpoint", &format!("{c}.next")]);
    if !o.status.success() {
        assert_one_line_failure(&[], &o, "--backend cpu continues it on the CPU");
    }
    let o = warpmc(&["potts", "run", "--resume", c, "--backend", "cpu", "--checkpoint", &format!("{c}.cpu")]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn settings_that_do_nothing_useful_are_warned_about() {
    let run = |extra: &[&str]| {
        let mut args = vec!["potts", "run", "--backend", "cpu", "--q", "2", "--size", "8", "--therm", "1"];
        args.extend_from_slice(&["--sweeps", "4", "--measure-every", "1"]);
        args.extend_from_slice(extra);
        let o = warpmc(&args);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        stderr(&o)
    };
    // q = 2 Metropolis far above T_c: exp(-4/20) = 0.82, exp(-4/10) = 0.67.
    let e = run(&["--temps", "40,1,20,10"]);
    assert!(e.contains("warning: T ≥ 20 (2 temperatures): q = 2 Metropolis makes even the costliest flip"), "{e}");
    assert!(e.contains("with probability at least 0.818,"), "{e}");
    let e = run(&["--temps", "4", "--coupling", "0.5"]);
    assert!(!e.contains("costliest flip"), "{e}");
    let e = run(&["--temps", "40", "--algorithm", "heat-bath"]);
    assert!(!e.contains("costliest flip"), "{e}");
    // --decompose outside mpirun.
    let e = run(&["--temps", "1", "--decompose", "strips"]);
    assert!(e.contains("warning: --decompose applies only under mpirun"), "{e}");
    assert!(!run(&["--temps", "1"]).contains("--decompose"));
}

#[test]
fn json_lines_and_csv_carry_the_contract_fields() {
    let csv = tmp("results.csv");
    let o = run_small(&[
        "--temps",
        "0.8:1.0:0.1",
        "--therm",
        "50",
        "--sweeps",
        "100",
        "--json",
        "--out",
        csv.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<serde_json::Value> =
        String::from_utf8(o.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3);
    for key in [
        "temperature",
        "energy",
        "energy_err",
        "magnetization",
        "magnetization_err",
        "binder",
        "specific_heat",
        "susceptibility",
        "sweeps",
        "flips_per_ns",
        "backend",
        "tau_int_energy",
    ] {
        assert!(lines[0].get(key).is_some(), "missing {key}");
    }
    assert_eq!(lines[2]["temperature"].as_f64().unwrap(), 1.0);
    assert_eq!(lines[0]["backend"], "cpu");
    let text = std::fs::read_to_string(&csv).unwrap();
    let table: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    let header: Vec<&str> = table[0].split(',').collect();
    for key in ["temperature", "energy", "energy_err", "binder", "specific_heat", "susceptibility", "flips_per_ns"] {
        assert!(header.contains(&key), "CSV lacks {key}");
    }
    assert_eq!(table.len(), 4);
    // Provenance: every JSON line's `run`, and the CSV's comment header.
    let csv_run: serde_json::Value = text
        .lines()
        .find_map(|l| l.strip_prefix("# provenance: "))
        .map(|j| serde_json::from_str(j).unwrap())
        .expect("the CSV has a provenance line");
    assert!(text.starts_with("# warpmc "), "{text}");
    for line in &lines {
        let run = &line["run"];
        assert_eq!(run, &csv_run);
        assert_eq!(run["warpmc"], env!("CARGO_PKG_VERSION"));
        assert!(run.get("commit").is_some());
        assert_eq!((run["q"].as_u64(), run["width"].as_u64(), run["height"].as_u64()), (Some(3), Some(8), Some(6)));
        assert_eq!((run["coupling"].as_f64(), run["field"].as_f64()), (Some(1.0), Some(0.0)));
        assert_eq!(run["seed"].as_u64(), Some(1));
        assert_eq!(run["start"], "ordered");
        assert!(run["algorithm"].as_str().unwrap().contains("Metropolis"));
        assert!(run["backend"].as_str().unwrap().contains("CPU"));
        assert_eq!(run["config"]["therm"].as_u64(), Some(50));
        assert_eq!(run["config"]["temperatures"].as_array().unwrap().len(), 3);
    }
}

#[test]
fn snapshots_are_png_and_npy() {
    for ext in ["png", "npy"] {
        let path = tmp(&format!("snap.{ext}"));
        let o = run_small(&["--temp", "0.9", "--therm", "10", "--sweeps", "10", "--snapshot", path.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        let bytes = std::fs::read(&path).unwrap();
        if ext == "png" {
            let reader = png::Decoder::new(std::io::Cursor::new(&bytes)).read_info().unwrap();
            let chunk = reader.info().utf8_text.iter().find(|t| t.keyword == "warpmc-provenance");
            let run: serde_json::Value =
                serde_json::from_str(&chunk.expect("a provenance text chunk").get_text().unwrap()).unwrap();
            assert_eq!(run["q"].as_u64(), Some(3));
            assert_eq!(run["config"]["temperatures"][0].as_f64(), Some(0.9));
        } else {
            let warpmc_potts::snapshot::SpinArray { width: w, height: h, spins } =
                warpmc_potts::snapshot::read_npy(&path).unwrap();
            assert_eq!((w, h), (8, 6));
            assert!(spins.iter().all(|&s| s < 3));
        }
    }
}

/// Strips the timing so runs can be compared.
fn physics(stdout: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("flips_per_ns");
            v
        })
        .collect()
}

/// The run the interruption tests stop and resume: four temperatures, each
/// continuing from the previous one.
const CONTINUED: &[&str] =
    &["--q", "9", "--size", "128", "--temps", "0.6:0.9:0.1", "--continue", "--therm", "300", "--sweeps", "6000"];

/// Waits (a minute at most, then fails with `missing`) until `file`
/// exists: a run started in the background has written it.
fn wait_for_file(file: &Path, missing: &str) {
    let started = Instant::now();
    while !file.exists() {
        assert!(started.elapsed() < Duration::from_secs(60), "{missing}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Starts a checkpointing run, stops it with `signal` once a checkpoint
/// exists, resumes it, and compares with an uninterrupted run. With
/// `one_after_another`, the temperatures run in order, so the series of the
/// stopped run is the whole run's up to a point and NaN after it.
fn interrupted_run_resumes_exactly(signal: &str, protocol: &[&str], one_after_another: bool) {
    let name = format!("{signal}-{}", protocol.len());
    let ckpt = tmp(&format!("run-{name}.ckpt"));
    let _ = std::fs::remove_file(&ckpt);
    // "-INT-tempering": the signal, then what tells the runs apart.
    let signal = &format!("-{}", signal.trim_start_matches('-').split('-').next().unwrap());
    let whole_series = tmp(&format!("whole-{name}.npy"));
    let whole = run_small_with(protocol, &["--json", "--series", whole_series.to_str().unwrap()]);
    assert!(whole.status.success(), "{}", stderr(&whole));
    let stopped_series = tmp(&format!("stopped-{name}.npy"));
    let _ = std::fs::remove_file(&stopped_series);

    let mut args: Vec<String> = ["potts", "run", "--backend", "cpu", "--json", "--checkpoint-every", "0.05"]
        .iter()
        .chain(protocol.iter())
        .map(|s| s.to_string())
        .collect();
    args.extend(["--checkpoint".into(), ckpt.to_str().unwrap().into()]);
    args.extend(["--series".into(), stopped_series.to_str().unwrap().into()]);
    let mut child = Command::new(bin()).args(&args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    wait_for_file(&ckpt, "no checkpoint appeared");
    std::thread::sleep(Duration::from_millis(300));
    let finished_early = child.try_wait().unwrap().is_some();
    if name.contains("twice") {
        // As `timeout` does: to the process, then to its group, at once.
        let pid = child.id();
        Command::new("sh").args(["-c", &format!("kill {signal} {pid}; kill {signal} {pid}")]).status().unwrap();
    } else {
        Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(!finished_early, "the run finished before it could be interrupted; make it longer");
    // 128 + the signal's number, as a shell reports it.
    let status = match signal.as_str() {
        "-INT" => Some(130),
        "-TERM" => Some(143),
        "-USR1" => Some(128 + 10),
        "-XCPU" => Some(128 + 24),
        "-HUP" => Some(129),
        _ => None,
    };
    if let Some(status) = status {
        assert_eq!(out.status.code(), Some(status), "{}", stderr(&out));
        assert!(stderr(&out).contains("--resume"), "{}", stderr(&out));
    }
    if signal == "-INT" && one_after_another {
        // The measurements taken before the stop are kept, the rest are NaN.
        let (shape, stopped) = read_f64_npy(&stopped_series);
        let (_, whole) = read_f64_npy(&whole_series);
        assert_eq!(shape, [1, 4, 1, 600, 2]);
        let taken = stopped.iter().take_while(|v| !v.is_nan()).count();
        assert!(taken < stopped.len(), "the stopped run's series is complete");
        assert!(stopped[taken..].iter().all(|v| v.is_nan()), "measurements after the stop must all be NaN");
        assert_eq!(
            stopped[..taken].iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            whole[..taken].iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
    }
    let resumed_series = tmp(&format!("resumed-{name}.npy"));
    let resumed_csv = tmp(&format!("resumed-{name}.csv"));
    let resumed = warpmc(&[
        "potts",
        "run",
        "--json",
        "--backend",
        "cpu",
        "--resume",
        ckpt.to_str().unwrap(),
        "--series",
        resumed_series.to_str().unwrap(),
        "--out",
        resumed_csv.to_str().unwrap(),
    ]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let text = std::fs::read_to_string(&resumed_csv).unwrap();
    assert!(!text.contains("# incomplete"), "{text}");
    assert_eq!(physics(&resumed.stdout), physics(&whole.stdout), "resumed after {signal}");
    let bits = |p: &Path| read_f64_npy(p).1.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&resumed_series), bits(&whole_series), "the resumed run's series differs after {signal}");
}

/// A FIFO at an output path, `None` where there is no mkfifo.
fn fifo(name: &str) -> Option<PathBuf> {
    let fifo = tmp(name);
    let _ = std::fs::remove_file(&fifo);
    Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()).then_some(fifo)
}

/// Sends `signal` to `child` and waits (at most 10 s) for it to end.
fn signal_and_wait(child: std::process::Child, signal: &str, times: usize) -> Output {
    for _ in 0..times {
        Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap();
        // Apart by more than signals that count as one request.
        std::thread::sleep(Duration::from_millis(700));
    }
    let mut child = child;
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("{times} × {signal} did not stop the run");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// An output that is a FIFO nobody reads waits for a reader, but a first
/// Ctrl-C or SIGTERM (a batch system's, sent once) stops the wait: the
/// checkpoint is written and the process ends, naming the FIFO.
#[test]
fn one_signal_stops_a_wait_for_a_fifos_reader() {
    let Some(fifo) = fifo("unread.csv") else {
        println!("SKIPPED one_signal_stops_a_wait_for_a_fifos_reader: no mkfifo");
        return;
    };
    let ckpt = tmp("unread.ckpt");
    let _ = std::fs::remove_file(&ckpt);
    let child = Command::new(bin())
        .args(small(&["--temps", "1.0", "--therm", "10", "--sweeps", "50"]))
        .args(["--out", fifo.to_str().unwrap(), "--checkpoint", ckpt.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let out = signal_and_wait(child, "-TERM", 1);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("waiting for a process to read this FIFO"), "{err}");
    assert!(err.contains("stopped waiting"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(ckpt.exists(), "no checkpoint: {err}");
    std::fs::remove_file(&fifo).unwrap();
    std::fs::remove_file(&ckpt).unwrap();
}

/// A second Ctrl-C ends the process at once, for what the first cannot
/// stop: here a finished run writing its series into a FIFO whose reader
/// has it open but reads nothing (the write blocks once the pipe is full).
/// A SIGTERM sent again does not: batch systems and mpirun send it more
/// than once, and the run must go on saving.
#[test]
fn a_second_ctrl_c_stops_a_blocked_output_at_once() {
    let Some(fifo) = fifo("blocked.npy") else {
        println!("SKIPPED a_second_ctrl_c_stops_a_blocked_output_at_once: no mkfifo");
        return;
    };
    // Opened for reading without waiting for a writer, and never read.
    let reader = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(&fifo).unwrap()
    };
    // 8000 measurements of two doubles: 128 kB, twice a pipe's buffer.
    let child = Command::new(bin())
        .args(small(&["--temps", "1.0", "--therm", "0", "--sweeps", "8000", "--measure-every", "1"]))
        .args(["--series", fifo.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    for _ in 0..3 {
        Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
        std::thread::sleep(Duration::from_millis(700));
    }
    let mut child = child;
    assert!(child.try_wait().unwrap().is_none(), "three SIGTERMs cut the blocked write short");
    let out = signal_and_wait(child, "-INT", 1);
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    assert!(stderr(&out).contains("interrupted again"), "{}", stderr(&out));
    drop(reader);
    std::fs::remove_file(&fifo).unwrap();
}

/// Wolff runs on the CPU whatever the backend, so asking for CUDA where
/// there is none still runs it (with a note).
#[test]
fn wolff_needs_no_gpu_even_when_cuda_is_asked_for() {
    let o = warpmc(&[
        "potts",
        "run",
        "--q",
        "2",
        "--size",
        "8",
        "--temps",
        "1.0",
        "--therm",
        "10",
        "--sweeps",
        "20",
        "--algorithm",
        "wolff",
        "--backend",
        "cuda",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("run on the CPU"), "{}", stderr(&o));
    assert_eq!(physics(&o.stdout)[0]["backend"], "cpu");
}

fn run_small_with(protocol: &[&str], extra: &[&str]) -> Output {
    let mut args = vec!["potts", "run", "--backend", "cpu"];
    args.extend(protocol);
    args.extend(extra);
    warpmc(&args)
}

#[test]
fn ctrl_c_checkpoints_and_resume_finishes_bit_for_bit() {
    interrupted_run_resumes_exactly("-INT", CONTINUED, true);
}

/// A tempering run checkpoints its replicas' lattices and permutation; the
/// resumed run equals an uninterrupted one, exchange statistics included.
#[test]
fn tempering_run_resumes_bit_for_bit_after_ctrl_c() {
    let protocol = [
        "--q",
        "9",
        "--size",
        "128",
        "--temps",
        "0.6:0.9:0.1",
        "--tempering",
        "--exchange-every",
        "3",
        "--therm",
        "300",
        "--sweeps",
        "6000",
    ];
    interrupted_run_resumes_exactly("-INT-tempering", &protocol, false);
}

/// A lattice of another height than width resumes at its own shape.
#[test]
fn rectangular_run_resumes_bit_for_bit_after_ctrl_c() {
    let protocol: Vec<&str> = CONTINUED.iter().copied().chain(["--height", "256"]).collect();
    interrupted_run_resumes_exactly("-INT-rectangle", &protocol, true);
}

/// A heat-bath run's checkpoint carries its algorithm: the resumed run is
/// heat-bath again and equals an uninterrupted one.
#[test]
fn heat_bath_run_resumes_bit_for_bit_after_ctrl_c() {
    let mut protocol: Vec<&str> = CONTINUED.iter().copied().chain(["--algorithm", "heat-bath"]).collect();
    // A quarter of the Metropolis run's lattice: heat-bath sweeps are slower.
    protocol[3] = "64";
    interrupted_run_resumes_exactly("-INT-heat-bath", &protocol, true);
}

/// `--algorithm` and TOML `algorithm` choose the update; the results'
/// provenance names it; bad names and models a cluster algorithm cannot run
/// are one clear line.
#[test]
fn every_algorithm_runs_from_flags_and_toml() {
    for (name, words) in [
        ("metropolis", "Metropolis"),
        ("heat-bath", "heat-bath"),
        ("swendsen-wang", "Swendsen-Wang"),
        ("wolff", "Wolff"),
    ] {
        let o = run_small(&["--temps", "0.9,1.1", "--therm", "20", "--sweeps", "40", "--json", "--algorithm", name]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        assert!(stderr(&o).contains(&format!("{name} sweeps")), "{}", stderr(&o));
        for line in String::from_utf8(o.stdout).unwrap().lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(v["run"]["config"]["algorithm"], name);
            assert!(v["run"]["algorithm"].as_str().unwrap().contains(words), "{v}");
        }
    }
    let cfg = tmp("heat-bath.toml");
    std::fs::write(
        &cfg,
        "q = 3
size = 8
temp = 1.0
therm = 10
sweeps = 20
algorithm = \"heat-bath\"\n",
    )
    .unwrap();
    let algorithm_of = |extra: &[&str]| {
        let mut args = vec!["potts", "run", "--backend", "cpu", "--json", "--config", cfg.to_str().unwrap()];
        args.extend(extra);
        let o = warpmc(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(o.stdout.split(|&b| b == b'\n').next().unwrap()).unwrap();
        v["run"]["config"]["algorithm"].as_str().unwrap().to_string()
    };
    assert_eq!(algorithm_of(&[]), "heat-bath");
    assert_eq!(algorithm_of(&["--algorithm", "wolff"]), "wolff");
    let base = ["potts", "run", "--backend", "cpu", "--q", "3", "--size", "8", "--temp", "1", "--sweeps", "10"];
    let with = |extra: &[&'static str]| base.iter().copied().chain(extra.iter().copied()).collect::<Vec<&str>>();
    assert_one_line_error(&with(&["--algorithm", "gibbs"]), "unknown algorithm 'gibbs'");
    assert_one_line_error(&with(&["--algorithm", "wolff", "--field", "0.5"]), "without a field");
    assert_one_line_error(&with(&["--algorithm", "wolff", "--coupling", "-1"]), "J > 0");
    std::fs::write(
        &cfg,
        "q = 3
size = 8
temp = 1.0
algorithm = \"gibbs\"\n",
    )
    .unwrap();
    assert_one_line_error(&["potts", "run", "--config", cfg.to_str().unwrap()], "unknown variant `gibbs`");
}

/// `--backend cuda --algorithm wolff` runs, on the CPU, and says so in one
/// line (on a machine with a GPU; skipped elsewhere).
#[test]
fn wolff_asked_for_on_a_gpu_runs_on_the_cpu_with_a_note() {
    if warpmc_testkit::gpu_or_skip("wolff_asked_for_on_a_gpu_runs_on_the_cpu_with_a_note").is_none() {
        return;
    }
    let base = ["potts", "run", "--backend", "cuda", "--q", "2", "--size", "8", "--temp", "1", "--therm", "10"];
    let o = warpmc(&[&base[..], &["--sweeps", "20", "--json", "--algorithm", "wolff"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let notes: Vec<String> = stderr(&o).lines().filter(|l| l.starts_with("note:")).map(str::to_string).collect();
    assert_eq!(notes, ["note: wolff updates run on the CPU, whatever the backend"], "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(o.stdout.split(|&b| b == b'\n').next().unwrap()).unwrap();
    assert_eq!(v["backend"], "cpu");
    // Heat-bath runs on the GPU.
    let o = warpmc(&[&base[..], &["--sweeps", "20", "--json", "--algorithm", "heat-bath"]].concat());
    assert!(o.status.success() && !stderr(&o).contains("note:"), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(o.stdout.split(|&b| b == b'\n').next().unwrap()).unwrap();
    assert_eq!(v["backend"], "cuda");
}

/// A batch system's SIGTERM stops the run as Ctrl-C does; the exit status
/// says which signal it was.
#[test]
fn sigterm_checkpoints_exits_143_and_resume_finishes_bit_for_bit() {
    interrupted_run_resumes_exactly("-TERM", CONTINUED, false);
}

/// `timeout` sends SIGTERM twice at once (to the process, then to its
/// group): that is one request to stop, which checkpoints, not a second
/// one that ends the process without saving.
#[test]
fn sigterm_sent_twice_at_once_still_checkpoints() {
    interrupted_run_resumes_exactly("-TERM-twice", CONTINUED, false);
}

/// What batch systems send ahead of a limit (SIGUSR1 with SLURM's
/// --signal, SIGXCPU at a soft CPU-time limit) saves and stops as Ctrl-C
/// does, instead of ending the run unsaved.
#[test]
fn sigusr1_and_sigxcpu_checkpoint_and_resume_finishes_bit_for_bit() {
    interrupted_run_resumes_exactly("-USR1", CONTINUED, false);
    interrupted_run_resumes_exactly("-XCPU", CONTINUED, false);
}

/// A closed terminal's SIGHUP saves and stops too, with its own status.
#[test]
fn sighup_checkpoints_exits_129_and_resume_finishes_bit_for_bit() {
    interrupted_run_resumes_exactly("-HUP", CONTINUED, false);
}

/// `potts exact` prints each value as it is computed; Ctrl-C keeps those
/// (in --out too, marked as interrupted), exits 130 and leaves no lock.
#[test]
fn exact_values_come_as_computed_and_an_interrupt_keeps_them() {
    let out = tmp("exact-interrupted.csv");
    let _ = std::fs::remove_file(&out);
    // Kaufman's sums on a side of 2^23 take about a second per temperature.
    let mut child = Command::new(bin())
        .args(["potts", "exact", "--size", "8388608", "--temps", "1:1.05:0.001", "--json"])
        .args(["--out", out.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.as_mut().unwrap()), &mut first).unwrap();
    let v: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert_eq!(v["temperature"].as_f64(), Some(1.0));
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("of the 51 values were computed") && err.contains("holds them"), "{err}");
    let csv = std::fs::read_to_string(&out).unwrap();
    assert!(csv.contains("# interrupted: "), "{csv}");
    let rows: Vec<&str> = csv.lines().filter(|l| !l.starts_with('#')).skip(1).collect();
    assert!(!rows.is_empty() && rows.len() < 51, "{csv}");
    assert_eq!(rows[0].split(',').nth(3).unwrap().parse::<f64>().unwrap(), v["energy"].as_f64().unwrap());
    let lock = out.with_file_name(".exact-interrupted.csv.lock");
    assert!(!lock.exists(), "the lock was left behind");
}

/// A reader that goes away (`| head`) ends `potts exact` quietly, but not
/// before --out holds every value.
#[test]
fn exact_values_reach_out_when_the_reader_goes_away() {
    let out = tmp("exact-head.csv");
    let _ = std::fs::remove_file(&out);
    let mut child = Command::new(bin())
        .args(["potts", "exact", "--size", "16", "--temps", "1:3:0.001", "--out", out.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut first).unwrap();
    assert!(first.starts_with("exact:"), "{first}");
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(&out).unwrap();
    assert_eq!(csv.lines().filter(|l| !l.starts_with('#')).count(), 2002, "a header and 2001 values");
}

/// A snapshot that cannot be written (a full disk) leaves the finished
/// run's checkpoint with its last lattice, whether or not a checkpoint was
/// saved on the way: resuming it writes the snapshot without running
/// again, the same as an uninterrupted run's.
#[test]
fn a_failed_snapshot_leaves_a_checkpoint_that_can_write_it() {
    if !Path::new("/dev/full").exists() {
        println!("SKIPPED: no /dev/full");
        return;
    }
    let full = tmp("full-disk.png");
    let _ = std::fs::remove_file(&full);
    std::os::unix::fs::symlink("/dev/full", &full).unwrap();
    let (ckpt, snap, reference) = (tmp("snapshot-failed.ckpt"), tmp("snapshot-again.png"), tmp("snapshot-ref.png"));
    for p in [&ckpt, &snap, &reference] {
        let _ = std::fs::remove_file(p);
    }
    let run = |extra: &[&str]| {
        let mut args = vec!["potts", "run", "--backend", "cpu"];
        args.extend(extra);
        warpmc(&args)
    };
    let (c, s, r, f) =
        (ckpt.to_str().unwrap(), snap.to_str().unwrap(), reference.to_str().unwrap(), full.to_str().unwrap());
    let o = run(&[&["--snapshot", r], CONTINUED].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    // With checkpoints on the way, and with none before the end (the
    // default interval is longer than the run).
    for every in ["0.05", "300"] {
        let _ = std::fs::remove_file(&ckpt);
        let _ = std::fs::remove_file(&snap);
        let o = run(&[&["--checkpoint-every", every, "--checkpoint", c, "--snapshot", f], CONTINUED].concat());
        assert!(!o.status.success());
        assert!(stderr(&o).contains("keeps the finished run's last lattice"), "{}", stderr(&o));
        let o = run(&["--resume", c, "--snapshot", s]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(std::fs::read(&snap).unwrap() == std::fs::read(&reference).unwrap(), "the snapshots differ");
    }
}

/// A stop signal the job was started ignoring stays ignored: under `nohup`
/// a closed terminal's SIGHUP does not stop it. SIGINT is heard even when
/// ignored at the start (a background job of a script): sent on purpose,
/// it saves and stops the run.
#[test]
fn signals_ignored_at_start_stay_ignored() {
    let ckpt = tmp("shielded.ckpt");
    let _ = std::fs::remove_file(&ckpt);
    let command = format!(
        "trap '' HUP INT; exec {} potts run --backend cpu --checkpoint-every 0.05 --checkpoint {} {}",
        bin().display(),
        ckpt.display(),
        CONTINUED.join(" ")
    );
    let mut child =
        Command::new("sh").args(["-c", &command]).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    wait_for_file(&ckpt, "no checkpoint appeared");
    let pid = child.id().to_string();
    Command::new("kill").args(["-HUP", &pid]).status().unwrap();
    // The run goes on: it is alive, and saves again on its timer (a run
    // that is stopping saves once and no more).
    let modified = || std::fs::metadata(&ckpt).and_then(|m| m.modified()).ok();
    std::thread::sleep(Duration::from_millis(300));
    let after_signals = modified();
    let waiting = Instant::now();
    while modified() == after_signals {
        assert!(child.try_wait().unwrap().is_none(), "an ignored signal stopped the run");
        assert!(waiting.elapsed() < Duration::from_secs(30), "the run stopped saving");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(child.try_wait().unwrap().is_none(), "an ignored signal stopped the run");
    Command::new("kill").args(["-INT", &pid]).status().unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert_eq!(err.lines().filter(|l| l.starts_with("interrupted: state saved")).count(), 1, "{err}");
}

#[test]
fn kill_9_loses_nothing_saved_and_resume_finishes_bit_for_bit() {
    interrupted_run_resumes_exactly("-KILL", CONTINUED, true);
}

#[test]
fn help_teaches_the_contract_flags() {
    let o = warpmc(&["potts", "run", "--help"]);
    let text = String::from_utf8_lossy(&o.stdout);
    for flag in [
        "--q",
        "--size",
        "--height",
        "--temp",
        "--temps",
        "--init",
        "--therm",
        "--sweeps",
        "--measure-every",
        "--samples",
        "--seed",
        "--backend",
        "--algorithm",
        "--out",
        "--json",
        "--snapshot",
        "--checkpoint",
        "--resume",
        "--config",
    ] {
        assert!(text.contains(flag), "--help lacks {flag}");
    }
    assert!(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/potts-seed-protocol.toml").exists());
}

#[test]
fn the_shipped_protocol_files_parse_with_the_published_protocol() {
    // Ferrero et al. 2012's q = 9 sweep: 15 temperatures of 2048² with
    // 10⁵ thermalisation and 10⁴ measurement sweeps, measured every 500.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let seed = warpmc_potts::ConfigFile::read(&dir.join("potts-seed-protocol.toml")).unwrap().resolve().unwrap();
    assert_eq!((seed.q(), seed.size(), seed.height()), (9, 2048, 2048));
    assert_eq!(seed.temperatures().len(), 15);
    assert_eq!((seed.therm(), seed.sweeps(), seed.measure_every()), (100_000, 10_000, 500));
    assert!(seed.continue_from_previous());
    assert_eq!(seed.total_sweeps(), 1_650_000);
    assert_eq!(seed.temperatures().len() as u64 * seed.measurements_per_chain(), 300);
    warpmc_potts::ConfigFile::read(&dir.join("potts-quick.toml")).unwrap().resolve().unwrap();
}

// ---- Regression tests: outputs that lost data, runs that crashed ----------

#[test]
fn a_new_run_refuses_another_runs_checkpoint() {
    // Another run's checkpoint, as its first save would leave it.
    let ckpt = tmp("other-run.ckpt");
    let p = ckpt.to_str().unwrap();
    let other = warpmc_potts::ConfigFile { q: Some(3), size: Some(8), temp: Some(1.5), ..Default::default() }
        .resolve()
        .unwrap();
    std::fs::write(&ckpt, warpmc_potts::checkpoint::encode(&other, &warpmc_potts::RunState::new(&other))).unwrap();
    let before = std::fs::read(&ckpt).unwrap();
    let args = small(&["--temp", "2", "--therm", "5", "--sweeps", "20", "--checkpoint", p]);
    let o = warpmc(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let err = stderr(&o);
    assert!(!o.status.success());
    assert!(err.contains(&format!("--resume {p}")) && err.contains("--force"), "{err}");
    assert_eq!(std::fs::read(&ckpt).unwrap(), before, "the other run's state was touched");
    // With --force the new run takes the file.
    let mut forced = args.clone();
    forced.push("--force".into());
    let o = warpmc(&forced.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", stderr(&o));
    // A file that is not a checkpoint is not overwritten either.
    let notes = tmp("notes.txt");
    std::fs::write(&notes, b"my notes").unwrap();
    assert_one_line_error(
        &small(&["--temp", "1", "--checkpoint", notes.to_str().unwrap()])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        "not a warpmc checkpoint",
    );
    assert_eq!(std::fs::read(&notes).unwrap(), b"my notes");
}

#[test]
fn bad_output_paths_are_found_before_any_work() {
    // A long run that would take minutes: each bad path must stop it at
    // once, before the first temperature.
    let long = ["--temps", "1,2", "--therm", "100000000", "--sweeps", "100"];
    for flag in ["--checkpoint", "--out", "--snapshot"] {
        let path = if flag == "--snapshot" { "/nonexistent/dir/x.png" } else { "/nonexistent/dir/x.out" };
        let mut args = small(&long);
        args.extend([flag.to_string(), path.to_string()]);
        let started = Instant::now();
        assert_one_line_error(&args.iter().map(String::as_str).collect::<Vec<_>>(), "/nonexistent/dir");
        assert!(started.elapsed() < Duration::from_secs(20), "{flag}: the error came after the work");
    }
}

#[test]
fn an_output_never_lands_on_another_output_or_an_input() {
    let dir = tmp("collisions");
    std::fs::create_dir_all(&dir).unwrap();
    let at = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let quick = ["--temp", "1", "--therm", "1", "--sweeps", "10"];
    // Two outputs at one path, spelled alike or not.
    for (a, b, pa, pb) in [
        ("--series", "--snapshot", at("a.npy"), at("a.npy")),
        ("--out", "--checkpoint", at("x.csv"), at("x.csv")),
        ("--out", "--series", at("s.npy"), format!("{}/../collisions/s.npy", dir.display())),
    ] {
        let mut args = small(&quick);
        args.extend([a.into(), pa, b.into(), pb]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_one_line_error(&args, "name the same file");
    }
    // An output onto the config it reads: the config survives.
    let cfg = at("cfg.toml");
    let text = "q = 3\nsize = 8\ntemp = 1.0\ntherm = 1\nsweeps = 10\n";
    std::fs::write(&cfg, text).unwrap();
    assert_one_line_error(&["potts", "run", "--config", &cfg, "--out", &cfg], "--out would overwrite --config");
    assert_eq!(std::fs::read_to_string(&cfg).unwrap(), text);
    // An output onto the checkpoint a run resumes from: the checkpoint
    // survives, and resuming in place still works.
    let ckpt = at("r.ckpt");
    let saved = {
        use warpmc_potts::checkpoint::encode;
        use warpmc_potts::{ConfigFile, RunState};
        let cfg = ConfigFile {
            q: Some(3),
            size: Some(8),
            temp: Some(1.0),
            therm: Some(1),
            sweeps: Some(10),
            ..Default::default()
        };
        let cfg = cfg.resolve().unwrap();
        encode(&cfg, &RunState::new(&cfg))
    };
    std::fs::write(&ckpt, &saved).unwrap();
    assert_one_line_error(&["potts", "run", "--resume", &ckpt, "--out", &ckpt], "name the same file");
    let other = at("other.ckpt");
    assert_one_line_error(
        &["potts", "run", "--resume", &ckpt, "--checkpoint", &other, "--out", &ckpt],
        "--out would overwrite --resume",
    );
    assert_eq!(std::fs::read(&ckpt).unwrap(), saved);
    // A resumed run keeps its length; the message says how to get more.
    assert_one_line_error(&["potts", "run", "--resume", &ckpt, "--sweeps", "20"], "its own --seed");
    assert_one_line_error(&["potts", "run", "--resume", &ckpt, "--samples", "2"], "its own --seed");
    assert_one_line_error(&["potts", "run", "--resume", &ckpt, "--q", "3"], "drop the model and protocol flags");
    let o = warpmc(&["potts", "run", "--resume", &ckpt, "--checkpoint", &ckpt, "--out", &at("r.csv")]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn extreme_temperatures_give_numbers_or_one_line() {
    // T² underflows below 1e-154: the specific heat must still be a number.
    let o = run_small(&["--temp", "1e-200", "--therm", "2", "--sweeps", "20", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows: Vec<_> = physics(&o.stdout).into_iter().filter(|v| v.get("specific_heat").is_some()).collect();
    assert_eq!(rows.len(), 1, "{}", String::from_utf8_lossy(&o.stdout));
    for key in ["energy", "specific_heat", "susceptibility"] {
        assert!(rows[0][key].as_f64().is_some_and(f64::is_finite), "{key}: {}", rows[0]);
    }
    // 1/T overflows for subnormal temperatures.
    let args = small(&["--temp", "1e-310", "--sweeps", "10"]);
    assert_one_line_error(&args.iter().map(String::as_str).collect::<Vec<_>>(), "temperatures must be at least");
    // Tempering that would never exchange.
    for every in ["111", "110"] {
        // Exchanges follow sweeps every, 2·every, … before the last (110).
        let args =
            small(&["--temps", "1,2", "--therm", "10", "--sweeps", "100", "--tempering", "--exchange-every", every]);
        assert_one_line_error(
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
            "no replicas would ever be exchanged",
        );
    }
    // --exchange-every without --tempering: one line from the protocol, not
    // clap's (a config file may turn tempering on).
    let args = small(&["--temps", "1,2", "--exchange-every", "5"]);
    assert_one_line_error(&args.iter().map(String::as_str).collect::<Vec<_>>(), "tempering (--tempering) is not on");
}

#[test]
fn exchange_every_overrides_a_config_that_turns_tempering_on() {
    let cfg = tmp("pt-on.toml");
    std::fs::write(&cfg, "q = 2\nsize = 8\ntemps = [1.0, 1.2]\ntempering = true\ntherm = 10\nsweeps = 40\n").unwrap();
    let o = warpmc(&[
        "potts",
        "run",
        "--config",
        cfg.to_str().unwrap(),
        "--exchange-every",
        "5",
        "--backend",
        "cpu",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("\"exchange_every\":5"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn checkpoint_every_1e300_does_not_panic() {
    let ckpt = tmp("every-1e300.ckpt");
    let _ = std::fs::remove_file(&ckpt);
    let extra = ["--temp", "1", "--therm", "5", "--sweeps", "20", "--checkpoint", ckpt.to_str().unwrap()];
    let mut args = small(&extra);
    args.extend(["--checkpoint-every".into(), "1e300".into()]);
    let o = warpmc(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success() && !stderr(&o).contains("panicked"), "{}", stderr(&o));
}

#[test]
fn json_into_head_ends_quietly() {
    let mut child = Command::new(bin())
        .args(small(&["--temps", "1:3:0.01", "--therm", "10", "--sweeps", "100", "--json"]))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    {
        use std::io::BufRead;
        let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
        reader.read_line(&mut first).unwrap();
    } // the reader goes away, as `head -1` does
    let o = child.wait_with_output().unwrap();
    assert!(first.starts_with('{'), "{first}");
    assert!(o.status.success(), "exit {:?}: {}", o.status, stderr(&o));
    assert!(!stderr(&o).lines().any(|l| l.starts_with("error")), "{}", stderr(&o));
}

#[test]
fn couplings_and_fields_that_overflow_are_refused() {
    for (flag, value) in
        [("--coupling", "1e308"), ("--coupling", "-1e308"), ("--field", "1e308"), ("--field", "-1e100")]
    {
        let args = small(&["--temp", "1", "--therm", "1", "--sweeps", "10", flag, value]);
        assert_one_line_error(&args.iter().map(String::as_str).collect::<Vec<_>>(), "2|J| + |h| must be at most");
    }
    // The coupling is checked before the field is set: the message names
    // the values that gave the energies.
    let args = small(&["--temp", "1", "--coupling", "1e300", "--field", "5"]);
    assert_one_line_error(&args.iter().map(String::as_str).collect::<Vec<_>>(), "J = 1e300 gives energies up to");
    let args = small(&["--temp", "1", "--coupling", "2", "--field", "1e100"]);
    assert_one_line_error(&args.iter().map(String::as_str).collect::<Vec<_>>(), "J = 2.0 and h = 1e100 give");
}

#[test]
fn lattices_beyond_host_memory_are_one_line_not_an_abort() {
    // 2^34 sites (the largest lattice the model allows) and 2^32 sites, each
    // beyond a 4 GiB limit: refused up front, not aborted or OOM-killed.
    for size in ["131072", "65536"] {
        let args = ["potts", "run", "--backend", "cpu", "--q", "2", "--size", size, "--temp", "1", "--sweeps", "10"];
        assert_one_line_failure(&args, &warpmc_within(4 << 20, &args), "of host memory but only");
    }
}

#[test]
fn algorithm_and_ensemble_storage_beyond_host_memory_is_one_line_not_an_abort() {
    // Wolff's copy of the lattice and its cluster stack (5 bytes a site)
    // on 16384²: beyond 1.5 GiB once the lattice is counted.
    let wolff = "potts run --backend cpu --q 2 --size 16384 --temp 0.5 --therm 0 --sweeps 1 --measure-every 1 \
                 --algorithm wolff";
    let args: Vec<&str> = wolff.split_whitespace().collect();
    assert_one_line_failure(&args, &warpmc_within(1_500_000, &args), "Wolff on a 16384 × 16384 lattice needs");
    // A million replicas of a 32² lattice: each replica's own storage
    // counts, not only its 1024 spins.
    let replicas = "potts run --backend cpu --q 2 --size 32 --temps 1:2:1e-6 --therm 0 --sweeps 20 --tempering";
    let args: Vec<&str> = replicas.split_whitespace().collect();
    assert_one_line_failure(&args, &warpmc_within(4 << 20, &args), "lattices of 1024 sites needs");
    // The benchmark's lattice.
    let bench = ["potts", "bench", "--backend", "cpu", "--sizes", "131072", "--cpu-max-size", "131072"];
    assert_one_line_failure(&bench, &warpmc_within(4 << 20, &bench), "of host memory but only");
}

#[test]
fn measurements_beyond_host_memory_are_one_line_not_an_abort() {
    // A tiny lattice, 8.2e9 measurements kept (131 GB): refused before the
    // first sweep, not an abort once the memory runs out.
    let tiny = "potts run --backend cpu --q 3 --size 2 --therm 0 --measure-every 1";
    let many: Vec<&str> = tiny.split(' ').chain(["--temp", "1", "--sweeps", "2000000", "--samples", "4096"]).collect();
    assert_one_line_failure(&many, &warpmc_within(4 << 20, &many), "8.19e+9 measurements needs");
    // The checkpoints' copies count: 1e7 measurements (320 MB) fit in 1 GiB,
    // but not with checkpoints (2 GB more).
    let ckpt = tmp("measurements.ckpt");
    let _ = std::fs::remove_file(&ckpt);
    let few: Vec<&str> = tiny
        .split(' ')
        .chain(["--temps", "1,2", "--sweeps", "5000000", "--checkpoint", ckpt.to_str().unwrap()])
        .collect();
    assert_one_line_failure(&few, &warpmc_within(1 << 20, &few), "and checkpointing them");
    // Each row of results counts too: 3.3 million temperatures of a 2²
    // lattice (which ran out of memory before the first measurement).
    let rows: Vec<&str> = tiny.split(' ').chain(["--temps", "1:2:3e-7", "--sweeps", "1"]).collect();
    assert_one_line_failure(&rows, &warpmc_within(4 << 20, &rows), "3.33e+6 rows of results");
}

#[test]
fn a_crafted_checkpoint_declaring_a_huge_lattice_is_refused() {
    use warpmc_potts::checkpoint::encode;
    use warpmc_potts::{ConfigFile, RunState};
    let cfg = ConfigFile { q: Some(2), size: Some(131072), temp: Some(1.0), ..Default::default() }.resolve().unwrap();
    let bytes = encode(&cfg, &RunState::new(&cfg));
    let path = tmp("huge.ckpt");
    std::fs::write(&path, bytes).unwrap();
    let args = ["potts", "run", "--resume", path.to_str().unwrap(), "--backend", "cpu"];
    assert_one_line_failure(&args, &warpmc_within(4 << 20, &args), "host memory");
}

#[test]
fn a_symlinked_checkpoint_stays_a_link_to_its_scratch_file() {
    use std::os::unix::fs::symlink;
    let scratch = tmp("scratch-disk.ckpt");
    let link = tmp("run.ckpt");
    let _ = std::fs::remove_file(&scratch);
    let _ = std::fs::remove_file(&link);
    std::fs::write(&scratch, b"").unwrap();
    symlink(&scratch, &link).unwrap();
    let every = ["--checkpoint-every", "1e-9"];
    let o = run_small(
        &[&["--temp", "1", "--therm", "5", "--sweeps", "20", "--checkpoint", link.to_str().unwrap()][..], &every]
            .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link became a file");
    let saved = std::fs::read(&scratch).unwrap();
    assert!(warpmc_potts::checkpoint::decode(&saved).is_ok(), "the scratch file does not hold the checkpoint");
}

#[test]
fn a_results_file_of_mode_600_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let out = tmp("private.csv");
    std::fs::write(&out, b"old").unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = run_small(&["--temp", "1", "--therm", "5", "--sweeps", "20", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::metadata(&out).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(std::fs::read_to_string(&out).unwrap().contains("energy"));
}

#[test]
fn results_to_dev_full_report_no_space_and_dev_null_stays_a_device() {
    use std::os::unix::fs::FileTypeExt;
    if !Path::new("/dev/full").exists() {
        println!("SKIPPED: no /dev/full on this system");
        return;
    }
    let args = small(&["--temp", "1", "--therm", "5", "--sweeps", "20", "--out", "/dev/full"]);
    assert_one_line_error(&args.iter().map(String::as_str).collect::<Vec<_>>(), "space");
    let o = run_small(&["--temp", "1", "--therm", "5", "--sweeps", "20", "--out", "/dev/null"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device(), "/dev/null was replaced");
    // The snapshot of the finished run is written all the same: no
    // checkpoint of a finished run keeps its lattice.
    let snap = tmp("full-results-snapshot.png");
    let _ = std::fs::remove_file(&snap);
    let s = snap.to_str().unwrap();
    let o = run_small(&["--temp", "1", "--therm", "5", "--sweeps", "20", "--out", "/dev/full", "--snapshot", s]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("/dev/full") && snap.exists(), "{}", stderr(&o));
    std::fs::remove_file(&snap).unwrap();
}

#[test]
fn a_full_standard_error_loses_no_results() {
    // Notes and warnings that standard error cannot take are dropped: the
    // run still writes its results and exits 0 (a panic at the first note,
    // before any sweep, would lose the run).
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        println!("SKIPPED: no /dev/full on this system");
        return;
    };
    let out = tmp("full-stderr.csv");
    let series = tmp("full-stderr.npy");
    let _ = std::fs::remove_file(&out);
    let args = small(&[
        "--temps",
        "1,2",
        "--therm",
        "5",
        "--sweeps",
        "20",
        "--out",
        out.to_str().unwrap(),
        "--series",
        series.to_str().unwrap(),
    ]);
    let o = Command::new(bin()).args(&args).stderr(full).output().unwrap();
    assert!(o.status.success(), "{:?}", o.status);
    assert!(std::fs::read_to_string(&out).unwrap().contains("energy"));
    assert!(std::fs::metadata(&series).unwrap().len() > 0);
}

/// Standard output that fails for another reason than a closed pipe (a
/// full disk under a log) does not end a run that writes files; the run
/// writes them all, then fails, saying where the results are (a script
/// that reads the lost output must not go on as if it were whole).
#[test]
fn a_full_standard_output_does_not_end_a_run_that_writes_files() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        println!("SKIPPED: no /dev/full on this system");
        return;
    };
    let (out, ckpt) = (tmp("full-stdout.csv"), tmp("full-stdout.ckpt"));
    for p in [&out, &ckpt] {
        let _ = std::fs::remove_file(p);
    }
    let args = small(&[
        "--temps",
        "1,2",
        "--therm",
        "5",
        "--sweeps",
        "20",
        "--out",
        out.to_str().unwrap(),
        "--checkpoint",
        ckpt.to_str().unwrap(),
    ]);
    let o = Command::new(bin()).args(&args).stdout(full.try_clone().unwrap()).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let last = stderr(&o).lines().last().unwrap_or_default().to_string();
    assert!(last.starts_with("error: standard output failed"), "{}", stderr(&o));
    assert!(last.contains(&format!("{} holds them", out.display())), "{last}");
    assert_eq!(common::csv_physics(&out).len(), 2);
    assert!(ckpt.exists());
    // The finished run's results printed again from its checkpoint: the
    // same failure, said as such.
    let o = Command::new(bin())
        .args(["potts", "run", "--resume", ckpt.to_str().unwrap(), "--json"])
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("error: printing the results the checkpoint holds: "), "{}", stderr(&o));
}

/// `--json` into a full disk with only a checkpoint to keep the results:
/// the run ends in an error naming the command that prints them again.
#[test]
fn json_lines_lost_to_a_full_disk_name_the_checkpoint_that_holds_them() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        println!("SKIPPED: no /dev/full on this system");
        return;
    };
    let ckpt = tmp("full-json.ckpt");
    let _ = std::fs::remove_file(&ckpt);
    let args =
        small(&["--temps", "1,2", "--therm", "5", "--sweeps", "20", "--json", "--checkpoint", ckpt.to_str().unwrap()]);
    let o = Command::new(bin()).args(&args).stdout(full).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains(&format!("--resume {} --json` prints them again", ckpt.display())), "{}", stderr(&o));
    assert!(ckpt.exists());
    let o = warpmc(&["potts", "run", "--resume", ckpt.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 2);
}

/// A periodic checkpoint that cannot be written (here its directory is
/// gone for a while, as a disk can be full for a while) is warned of once;
/// the run goes on, writes the next one when it can, and saves on Ctrl-C.
#[test]
fn a_checkpoint_that_cannot_be_written_on_the_way_is_warned_of_and_tried_again() {
    use std::io::BufRead;
    let dir = tmp("checkpoint-dir-gone");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let ckpt = dir.join("run.ckpt");
    let mut args: Vec<&str> = vec!["potts", "run", "--backend", "cpu", "--json", "--checkpoint-every", "0.05"];
    args.extend(["--q", "3", "--size", "64", "--temps", "1", "--therm", "0", "--sweeps", "100000000"]);
    args.extend(["--checkpoint", ckpt.to_str().unwrap()]);
    let mut child = Command::new(bin()).args(&args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let (lines, seen) = std::sync::mpsc::channel();
    let reader = std::io::BufReader::new(child.stderr.take().unwrap());
    std::thread::spawn(move || {
        for line in reader.lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let wait_for = |what: &dyn Fn() -> bool, why: &str| {
        let started = Instant::now();
        while !what() {
            assert!(started.elapsed() < Duration::from_secs(60), "{why}");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    wait_for(&|| ckpt.exists(), "no first checkpoint");
    std::fs::remove_dir_all(&dir).unwrap();
    let mut stderr_lines = Vec::new();
    loop {
        let line = seen.recv_timeout(Duration::from_secs(60)).expect("no warning about the checkpoint");
        let warned = line.contains("the previous checkpoint is kept");
        stderr_lines.push(line);
        if warned {
            break;
        }
    }
    // Failing again and again, it warns once.
    std::thread::sleep(Duration::from_millis(300));
    std::fs::create_dir_all(&dir).unwrap();
    wait_for(&|| ckpt.exists(), "no checkpoint once the directory was back");
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let status = child.wait().unwrap();
    stderr_lines.extend(seen.try_iter());
    assert_eq!(status.code(), Some(130), "{stderr_lines:#?}");
    let warnings = stderr_lines.iter().filter(|l| l.contains("the previous checkpoint is kept")).count();
    assert_eq!(warnings, 1, "{stderr_lines:#?}");
    assert!(!stderr_lines.iter().any(|l| l.contains(".warpmc-")), "a temporary file's name: {stderr_lines:#?}");
    // The checkpoint keeps the interval, so the command to continue needs
    // no --checkpoint-every ...
    assert!(
        stderr_lines.iter().any(|l| l.contains("state saved to") && !l.contains("--checkpoint-every")),
        "{stderr_lines:#?}"
    );
    let saved = warpmc_potts::checkpoint::read(&ckpt).unwrap();
    assert_eq!(saved.state.checkpoint_every(), Some(0.05));
    // ... and the resumed run saves as often (not every 300 s).
    let before = std::fs::metadata(&ckpt).unwrap().modified().unwrap();
    let mut child = Command::new(bin())
        .args(["potts", "run", "--json", "--resume", ckpt.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(
        &|| std::fs::metadata(&ckpt).is_ok_and(|m| m.modified().unwrap() != before),
        "the resumed run saved no checkpoint",
    );
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert_eq!(warpmc_potts::checkpoint::read(&ckpt).unwrap().state.checkpoint_every(), Some(0.05));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A resumed run's --out that is not a regular file (a pipe, /dev/stdout,
/// a FIFO) is written, not read for the rows it held: reading it would
/// wait for ever.
#[test]
fn a_resumed_run_writes_to_a_pipe_without_reading_it() {
    let ckpt = tmp("resume-to-pipe.ckpt");
    let _ = std::fs::remove_file(&ckpt);
    let mut args = SMALL.to_vec();
    args.extend(["--temps", "1,1.2", "--therm", "10", "--sweeps", "100", "--checkpoint", ckpt.to_str().unwrap()]);
    let o = warpmc(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    // Resuming the finished run prints its results again, to the pipe the
    // test reads (with a time limit: before, the run read its own output).
    let child = Command::new("timeout")
        .args(["60", bin().to_str().unwrap(), "potts", "run", "--resume", ckpt.to_str().unwrap()])
        .args(["--out", "/dev/stdout"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "status {:?}: {}", o.status, stderr(&o));
    let rows = stdout(&o).lines().filter(|l| l.starts_with("8,")).count();
    assert_eq!(rows, 2, "{}", stdout(&o));
    let _ = std::fs::remove_file(&ckpt);
}

/// A run resumed from a checkpoint older than its CSV (kill -9 after a
/// temperature finished, before the next checkpoint) and stopped again
/// leaves the CSV's rows: the file is not rewritten with fewer, also when
/// the resumed run has another backend (other `--threads`, another node).
/// Its series file, holding more measurements, is left as it was too.
#[test]
fn an_interrupted_resume_keeps_the_rows_its_csv_already_held() {
    let (ckpt, early, csv, npy) = (tmp("older.ckpt"), tmp("older-copy.ckpt"), tmp("older.csv"), tmp("older.npy"));
    for p in [&ckpt, &early, &csv, &npy] {
        let _ = std::fs::remove_file(p);
    }
    let interrupt_when = |args: &[&str], ready: &dyn Fn() -> bool| {
        let child = Command::new(bin()).args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        let started = Instant::now();
        while !ready() {
            assert!(started.elapsed() < Duration::from_secs(60), "never ready");
            std::thread::sleep(Duration::from_millis(10));
        }
        Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    };
    let rows = || if csv.exists() { common::csv_physics(&csv).len() } else { 0 };
    // A checkpoint after the first temperature.
    let mut args = vec!["potts", "run", "--backend", "cpu", "--checkpoint-every", "1000"];
    args.extend(CONTINUED);
    args.extend(["--checkpoint", ckpt.to_str().unwrap(), "--out", csv.to_str().unwrap()]);
    interrupt_when(&args, &|| rows() >= 1);
    std::fs::copy(&ckpt, &early).unwrap();
    let held = rows();
    // The run to its end: the CSV holds every row.
    let (c, n) = (csv.to_str().unwrap(), npy.to_str().unwrap());
    let o = warpmc(&["potts", "run", "--resume", ckpt.to_str().unwrap(), "--out", c, "--series", n]);
    assert!(o.status.success(), "{}", stderr(&o));
    let whole = common::csv_physics(&csv);
    let series = std::fs::read(&npy).unwrap();
    assert!(whole.len() == 4 && held < 4, "{held} rows, then {whole:?}");
    // From the older checkpoint on one thread, stopped as soon as it says
    // what it runs (its signal handlers are in place by then): the CSV is
    // as it was.
    let args = ["--threads", "1", "potts", "run", "--resume", early.to_str().unwrap(), "--out", c, "--series", n];
    let mut child = Command::new(bin()).args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let mut first_line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stderr.as_mut().unwrap()), &mut first_line).unwrap();
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{first_line}{}", stderr(&out));
    assert_eq!(common::csv_physics(&csv), whole);
    assert!(std::fs::read(&npy).unwrap() == series, "the series file was rewritten: {}", stderr(&out));
    assert!(stderr(&out).contains("is as it was: it holds more of this run's measurements"), "{}", stderr(&out));
}

/// Two runs given one checkpoint or results file (a job array whose file
/// names forgot the task) cannot replace each other's: the second is
/// refused while the first runs, and the locks beside the files go with the
/// first. No other output replaces a checkpoint unless forced.
#[test]
fn a_checkpoint_file_another_run_is_writing_is_refused() {
    let ckpt = tmp("claimed.ckpt");
    let lock = tmp(".claimed.ckpt.lock");
    let csv = tmp("claimed.csv");
    for p in [&ckpt, &lock, &csv] {
        let _ = std::fs::remove_file(p);
    }
    let (c, o) = (ckpt.to_str().unwrap(), csv.to_str().unwrap());
    let mut first = Command::new(bin())
        .args(small(&["--temps", "1", "--therm", "0", "--sweeps", "100000000", "--checkpoint", c, "--out", o]))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_file(&lock, "no lock appeared");
    let second = small(&["--temps", "1", "--therm", "0", "--sweeps", "10", "--checkpoint", c]);
    let args: Vec<&str> = second.iter().map(String::as_str).collect();
    assert_one_line_error(&args, "another process is writing it");
    let second = small(&["--temps", "1", "--therm", "0", "--sweeps", "10", "--out", o]);
    let args: Vec<&str> = second.iter().map(String::as_str).collect();
    assert_one_line_error(&args, "give this run its own --out file");
    // Exact values are an output too.
    assert_one_line_error(
        &["potts", "exact", "--size", "4", "--temp", "1", "--out", o],
        "another process is writing it",
    );
    // Its checkpoint, not saved yet (every 300 s), is named as coming,
    // not as missing.
    assert!(!ckpt.exists());
    assert_one_line_error(&["potts", "run", "--resume", c], "saves its first checkpoint after");
    assert_one_line_error(&["potts", "inspect", c], "saves its first checkpoint after");
    Command::new("kill").args(["-INT", &first.id().to_string()]).status().unwrap();
    assert_eq!(first.wait().unwrap().code(), Some(130));
    assert!(ckpt.exists() && !lock.exists() && !tmp(".claimed.csv.lock").exists());
    // The checkpoint named as another run's results file: refused, kept.
    let saved = std::fs::read(&ckpt).unwrap();
    let other = small(&["--temps", "1", "--therm", "0", "--sweeps", "10", "--out", c]);
    let args: Vec<&str> = other.iter().map(String::as_str).collect();
    assert_one_line_error(&args, "the file holds a run's checkpoint");
    assert_one_line_error(
        &["potts", "exact", "--size", "4", "--temp", "1", "--out", c],
        "the file holds a run's checkpoint",
    );
    assert_eq!(std::fs::read(&ckpt).unwrap(), saved);
    let mut forced = args.clone();
    forced.push("--force");
    let out = warpmc(&forced);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_ne!(std::fs::read(&ckpt).unwrap(), saved, "replaced when forced");
    for p in [&ckpt, &csv] {
        let _ = std::fs::remove_file(p);
    }
}

/// A `.npy` file of little-endian float64 as (shape, values).
fn read_f64_npy(path: &Path) -> (Vec<usize>, Vec<f64>) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..6], b"\x93NUMPY");
    let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
    assert!(header.contains("'descr': '<f8'") && header.contains("'fortran_order': False"), "{header}");
    let shape_text = header.split("'shape': (").nth(1).unwrap().split(')').next().unwrap();
    let shape: Vec<usize> =
        shape_text.split(',').filter(|s| !s.trim().is_empty()).map(|s| s.trim().parse().unwrap()).collect();
    let data = &bytes[10 + header_len..];
    assert_eq!((10 + header_len) % 64, 0, "data must start on a 64-byte boundary");
    let values = data.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect::<Vec<_>>();
    assert_eq!(values.len(), shape.iter().product::<usize>(), "{header}");
    (shape, values)
}

#[test]
fn series_holds_every_measurement_behind_the_averages() {
    let series = tmp("series.npy");
    let extra = ["--temps", "1,1.5,2", "--samples", "2", "--therm", "5", "--sweeps", "40", "--measure-every", "10"];
    let mut args = extra.to_vec();
    args.extend(["--json", "--series", series.to_str().unwrap()]);
    let o = run_small(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let (shape, values) = read_f64_npy(&series);
    assert_eq!(shape, [1, 3, 2, 4, 2]);
    let results: Vec<serde_json::Value> =
        String::from_utf8(o.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    for (t, r) in results.iter().enumerate() {
        let block = &values[t * 16..(t + 1) * 16];
        let energy = block.iter().step_by(2).sum::<f64>() / 8.0;
        let order = block.iter().skip(1).step_by(2).sum::<f64>() / 8.0;
        assert!((energy - r["energy"].as_f64().unwrap()).abs() < 1e-12, "T #{t}: {energy} vs {r}");
        assert!((order - r["magnetization"].as_f64().unwrap()).abs() < 1e-12, "T #{t}: {order} vs {r}");
    }
    // Not a .npy name: refused before the run.
    let mut bad = extra.to_vec();
    bad.extend(["--series", "/tmp/series.csv"]);
    assert_one_line_error(&small(&bad).iter().map(String::as_str).collect::<Vec<_>>(), "must end in .npy");
}

#[test]
fn a_run_stopped_before_any_temperature_finished_keeps_an_existing_series_file() {
    let earlier = b"earlier work".to_vec();
    // Stopped by Ctrl-C long before the first temperature ends.
    let series = tmp("kept-on-ctrl-c.npy");
    std::fs::write(&series, &earlier).unwrap();
    let args = small(&["--temps", "0.9,1.0", "--therm", "100000000", "--series", series.to_str().unwrap()]);
    let mut child = Command::new(bin()).args(&args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut text = String::new();
    use std::io::BufRead;
    while !text.contains("potts:") {
        assert!(err.read_line(&mut text).unwrap() > 0, "the run ended early: {text}");
    }
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    std::io::Read::read_to_string(&mut err, &mut text).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(130), "{text}");
    assert!(text.contains(&format!("series: {} is as it was", series.display())), "{text}");
    assert!(!text.contains("holds the measurements taken"), "said of a file left as it was: {text}");
    assert_eq!(std::fs::read(&series).unwrap(), earlier);
}

#[test]
fn five_million_temperatures_print_the_work_up_front_and_stop_on_ctrl_c_keeping_results() {
    let csv = tmp("five-million.csv");
    let series = tmp("five-million.npy");
    let _ = std::fs::remove_file(&csv);
    let _ = std::fs::remove_file(&series);
    let args = small(&[
        "--temps",
        "1:6:0.000001",
        "--therm",
        "10",
        "--sweeps",
        "10",
        "--measure-every",
        "10",
        "--out",
        csv.to_str().unwrap(),
        "--series",
        series.to_str().unwrap(),
    ]);
    let child = Command::new(bin()).args(&args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    wait_for_file(&csv, "no temperature finished");
    std::thread::sleep(Duration::from_millis(200));
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let stopped = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(stopped.elapsed() < Duration::from_secs(30), "Ctrl-C took {:?} to stop the run", stopped.elapsed());
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("5000001 temperature(s)") && err.contains("site updates"), "no work estimate: {err}");
    assert!(err.contains("interrupted") && err.contains("--checkpoint"), "{err}");
    assert!(err.contains(&format!("{} holds the measurements taken", series.display())), "{err}");
    // What was finished is kept: the CSV's rows and the series' measurements.
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.lines().filter(|l| !l.starts_with('#')).count() >= 2, "{text}");
    // … and says it is not the whole study.
    let marker = text.lines().find(|l| l.starts_with("# incomplete: ")).unwrap_or_else(|| panic!("{text}"));
    assert!(marker.contains("of 5000001 rows") && marker.contains("it has no checkpoint"), "{marker}");
    let (shape, values) = read_f64_npy(&series);
    assert_eq!(shape, [1, 5_000_001, 1, 1, 2]);
    assert!(values[0].is_finite() && values[1].is_finite());
    assert!(values.last().unwrap().is_nan());
    // 80 MB of mostly NaN: not left behind in the temporary directory.
    let _ = std::fs::remove_file(&series);
}

#[test]
fn a_single_measurement_has_no_error_bar_and_no_tau_int() {
    let args = ["potts", "run", "--backend", "cpu", "--q", "2", "--size", "8", "--temp", "1", "--therm", "10"];
    let o = warpmc(&[&args[..], &["--sweeps", "10", "--measure-every", "10", "--json"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("warning: T = 1: a single measurement has no error bar"), "{e}");
    let row: serde_json::Value = serde_json::from_str(String::from_utf8(o.stdout).unwrap().trim()).unwrap();
    for key in ["energy_err", "tau_int_energy", "tau_int_magnetization"] {
        assert!(row[key].is_null(), "{key}: {row}");
    }
    assert_eq!(row["too_short"], true, "{row}");
}

#[test]
fn a_random_start_below_tc_too_short_to_trust_is_flagged() {
    // A random start just below T_c on 64²: domains still coarsening, the
    // susceptibility's error bar as large as the value, and no word of it
    // before this flag.
    let args = ["potts", "run", "--backend", "cpu", "--q", "2", "--size", "64", "--init", "random", "--temp", "1.0"];
    let short = [&args[..], &["--therm", "10", "--sweeps", "300", "--json"]].concat();
    let o = warpmc(&short);
    assert!(o.status.success(), "{}", stderr(&o));
    let line: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&o.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(line["too_short"], true, "{line}");
    let warnings: Vec<String> = stderr(&o).lines().filter(|l| l.starts_with("warning:")).map(str::to_string).collect();
    assert_eq!(warnings.len(), 1, "{}", stderr(&o));
    assert!(warnings[0].contains("τ_int") && warnings[0].contains("--sweeps"), "{}", warnings[0]);
    // Far above T_c with many τ_int of measurements: no flag, no warning.
    let o = warpmc(&[
        "potts",
        "run",
        "--backend",
        "cpu",
        "--q",
        "2",
        "--size",
        "16",
        "--temp",
        "3",
        "--sweeps",
        "20000",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let line: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&o.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(line["too_short"], false, "{line}");
    assert_eq!(line["slow_mode"], false, "{line}");
    assert!(!stderr(&o).contains("warning:"), "{}", stderr(&o));
}

#[test]
fn tempering_flags_replicas_that_have_not_relaxed() {
    // q = 10 on 16² across its first-order transition: the replicas swap
    // freely, but the share of them in the ordered phase changes over
    // thousands of sweeps, which 5,000 sweeps cannot resolve.
    let csv = tmp("replicas-not-relaxed.csv");
    let csv_arg = csv.to_str().unwrap();
    let pt = ["potts", "run", "--backend", "cpu", "--tempering", "--exchange-every", "5", "--json", "--out", csv_arg];
    let q10 = [
        "--q",
        "10",
        "--size",
        "16",
        "--temps",
        "0.704:0.714:0.002",
        "--init",
        "ordered",
        "--therm",
        "1000",
        "--sweeps",
        "5000",
        "--measure-every",
        "10",
    ];
    let o = warpmc(&[&pt[..], &q10[..]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let rows: Vec<serde_json::Value> =
        String::from_utf8_lossy(&o.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 6);
    for r in &rows {
        assert_eq!(r["too_short"], true, "{r}");
        assert!(r["replica_tau_int"].as_f64().unwrap() > 50.0, "{r}");
    }
    // Every row has the pair's acceptance: a rate below the last, null there.
    for (i, r) in rows.iter().enumerate() {
        let a = r.get("exchange_acceptance").unwrap_or_else(|| panic!("row {i} lacks exchange_acceptance: {r}"));
        assert_eq!(a.is_null(), i == rows.len() - 1, "{r}");
    }
    let err = stderr(&o);
    let warning = err.lines().find(|l| l.contains("replicas' summed energy")).unwrap_or_else(|| panic!("{err}"));
    assert!(warning.starts_with("warning:") && warning.contains("--sweeps"), "{warning}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let header = text.lines().find(|l| !l.starts_with('#')).unwrap();
    assert!(header.ends_with(",round_trips,replica_tau_int"), "{header}");
    // Ising far from a first-order transition: the replicas relax in a few
    // sweeps, and 20,000 sweeps are plenty.
    let q2 = ["--q", "2", "--size", "8", "--temps", "2.0:2.6:0.2", "--sweeps", "20000"];
    let o = warpmc(&[&pt[..], &q2[..]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("summed energy"), "{}", stderr(&o));
    for line in String::from_utf8_lossy(&o.stdout).lines() {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(r["replica_tau_int"].as_f64().unwrap() < 20.0, "{r}");
    }
}

#[test]
fn json_lines_summarise_long_temperature_lists_in_their_run_object() {
    // 101 temperatures: each line's `run` names the list by count and ends
    // instead of repeating it (a run of millions would repeat it millions of
    // times); the CSV header keeps it in full.
    let csv = tmp("long-list.csv");
    let o =
        run_small(&["--temps", "1:2:0.01", "--therm", "1", "--sweeps", "10", "--json", "--out", csv.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let first: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&o.stdout).lines().next().unwrap()).unwrap();
    let ts = &first["run"]["config"]["temperatures"];
    assert_eq!(
        (ts["count"].as_u64(), ts["first"].as_f64(), ts["last"].as_f64()),
        (Some(101), Some(1.0), Some(2.0)),
        "{ts}"
    );
    assert!(first["energy"].is_number());
    let text = std::fs::read_to_string(&csv).unwrap();
    let header: serde_json::Value =
        serde_json::from_str(text.lines().find_map(|l| l.strip_prefix("# provenance: ")).unwrap()).unwrap();
    assert_eq!(header["config"]["temperatures"].as_array().unwrap().len(), 101);
}

#[test]
fn a_list_of_sizes_runs_a_finite_size_scaling_study_from_one_command() {
    let csv = tmp("fss.csv");
    let series = tmp("fss.npy");
    let o = Command::new(bin())
        .args([
            "potts",
            "run",
            "--backend",
            "cpu",
            "--q",
            "2",
            "--size",
            "8,16",
            "--temps",
            "1.0,2.0",
            "--therm",
            "20",
            "--sweeps",
            "40",
            "--measure-every",
            "10",
            "--samples",
            "3",
            "--json",
            "--out",
        ])
        .arg(&csv)
        .arg("--series")
        .arg(&series)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<serde_json::Value> =
        String::from_utf8(o.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let ls: Vec<u64> = lines.iter().map(|l| l["L"].as_u64().unwrap()).collect();
    assert_eq!(ls, [8, 8, 16, 16]);
    assert_eq!(lines[0]["run"]["sizes"], serde_json::json!([8, 16]));
    let text = std::fs::read_to_string(&csv).unwrap();
    let table: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(table[0].split(',').next(), Some("L"));
    let firsts: Vec<&str> = table[1..].iter().map(|r| r.split(',').next().unwrap()).collect();
    assert_eq!(firsts, ["8", "8", "16", "16"]);
    let (shape, values) = read_f64_npy(&series);
    assert_eq!(shape, [2, 2, 3, 4, 2]);
    assert!(values.iter().all(|v| v.is_finite()));
    // A height does not go with several sizes.
    assert_one_line_error(
        &["potts", "run", "--backend", "cpu", "--q", "2", "--size", "8,16", "--height", "8", "--temp", "1"],
        "square",
    );
}

/// A build without MPI started by mpirun (its environment, as Open MPI sets
/// it) says so once and stops, rather than running the whole job in every
/// process; started as the only process, it just runs.
#[cfg(not(feature = "mpi"))]
#[test]
fn a_build_without_mpi_under_mpirun_says_so_once() {
    let args = small(&["--temp", "2", "--therm", "5", "--sweeps", "20"]);
    let as_rank = |rank: &str, size: &str| {
        Command::new(bin())
            .args(&args)
            .env("OMPI_COMM_WORLD_RANK", rank)
            .env("OMPI_COMM_WORLD_SIZE", size)
            .output()
            .unwrap()
    };
    let first = as_rank("0", "2");
    assert_one_line_failure(&["rank 0 of 2"], &first, "built without MPI");
    // The others wait first: the first, built alike, has spoken and ended
    // the job by then. If it has not (a first process built with MPI waits
    // for this one in MPI for ever), the later process says why and fails.
    let start = std::time::Instant::now();
    let second = as_rank("1", "2");
    assert!(start.elapsed() >= std::time::Duration::from_secs(3));
    assert_one_line_failure(&["process 1 of 2"], &second, "built without MPI");
    assert!(as_rank("0", "1").status.success());
}

#[test]
fn exact_values_are_the_library_s_and_a_run_reproduces_them() {
    use warpmc_potts::exact::{density_of_states, ising_torus};
    // The enumerated q = 3 torus: CSV with its `#` head, JSON lines, and the
    // library's numbers to the last digit.
    let csv = tmp("exact-q3.csv");
    let o = warpmc(&[
        "potts",
        "exact",
        "--q",
        "3",
        "--size",
        "6",
        "--temps",
        "0.8,1.2",
        "--json",
        "--out",
        csv.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let dos = density_of_states(3, 6, 6);
    let lines: Vec<serde_json::Value> =
        String::from_utf8_lossy(&o.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    for (v, t) in lines.iter().zip([0.8, 1.2]) {
        let m = dos.moments(t, 1.0);
        assert_eq!((v["L"].as_u64(), v["height"].as_u64(), v["q"].as_u64()), (Some(6), Some(6), Some(3)));
        assert_eq!(v["temperature"].as_f64(), Some(t));
        assert_eq!(v["energy"].as_f64(), Some(m.energy));
        assert_eq!(v["specific_heat"].as_f64(), Some(m.specific_heat));
        assert!(v["method"].as_str().unwrap().contains("enumeration") && v["warpmc"].is_string(), "{v}");
    }
    let text = std::fs::read_to_string(&csv).unwrap();
    let body: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert!(text.starts_with("# warpmc ") && text.contains("q = 3") && text.contains("enumeration"), "{text}");
    assert_eq!(body[0], "L,height,temperature,energy,specific_heat");
    let first: Vec<f64> = body[1].split(',').map(|x| x.parse().unwrap()).collect();
    assert_eq!(first, vec![6.0, 6.0, 0.8, dos.moments(0.8, 1.0).energy, dos.moments(0.8, 1.0).specific_heat]);

    // A Metropolis run on the same torus agrees within its error bars.
    let o = warpmc(&[
        "potts",
        "run",
        "--backend",
        "cpu",
        "--q",
        "3",
        "--size",
        "6",
        "--temps",
        "0.8,1.2",
        "--therm",
        "2000",
        "--sweeps",
        "60000",
        "--measure-every",
        "5",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for (v, t) in physics(&o.stdout).iter().zip([0.8, 1.2]) {
        let m = dos.moments(t, 1.0);
        for (key, exact) in [("energy", m.energy), ("specific_heat", m.specific_heat)] {
            let (x, e) = (v[key].as_f64().unwrap(), v[format!("{key}_err")].as_f64().unwrap());
            assert!(((x - exact) / e).abs() < 4.5, "T = {t}: {key} {x} ± {e}, exact {exact}");
        }
    }

    // Kaufman's torus for q = 2, any size, and a rectangle.
    let o = warpmc(&["potts", "exact", "--size", "16,48", "--height", "20", "--temp", "1.1", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<serde_json::Value> =
        String::from_utf8_lossy(&o.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    for (v, l) in lines.iter().zip([16, 48]) {
        let m = ising_torus(l, 20, 1.1, 1.0).unwrap();
        assert_eq!((v["L"].as_u64(), v["height"].as_u64()), (Some(l as u64), Some(20)));
        assert_eq!(v["energy"].as_f64(), Some(m.energy));
        assert!(v["method"].as_str().unwrap().contains("Kaufman"), "{v}");
    }
    // The table names its columns.
    let o = warpmc(&["potts", "exact", "--size", "8", "--temps", "1.0:1.2:0.1"]);
    assert!(o.status.success() && String::from_utf8_lossy(&o.stdout).lines().count() == 5, "{}", stderr(&o));
    // A tiny specific heat keeps its digits in the table.
    let o = warpmc(&["potts", "exact", "--size", "16", "--temp", "0.1"]);
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    let shown: f64 = text.lines().last().and_then(|l| l.split_whitespace().last()).unwrap().parse().unwrap();
    let c = ising_torus(16, 16, 0.1, 1.0).unwrap().specific_heat;
    assert!(c > 0.0 && c < 1e-12 && ((shown - c) / c).abs() < 1e-10, "{text}");

    for (args, needle) in [
        (&["--q", "3", "--size", "9", "--temp", "1"][..], "reaches 7 × 7 for q = 3"),
        (&["--size", "0", "--temp", "1"][..], "both sides ≥ 1"),
        (&["--size", "8"][..], "missing --temp or --temps"),
        (&["--size", "15", "--temp", "1", "--coupling", "-1"][..], "needs both sides even, or a torus small enough"),
        (&["--size", "8", "--temp", "-1"][..], "positive and finite"),
        (&["--size", "8", "--temps", "1,x"][..], "'x' is not a number"),
        (&["--size", "8", "--temp", "1", "--coupling", "inf"][..], "finite"),
        // Beyond the run's bound the sums leave f64 (-inf, NaN).
        (&["--size", "16", "--temp", "1", "--coupling", "1e308"][..], "2|J| must be at most 1e70"),
        (&["--q", "3", "--size", "4", "--temp", "1", "--coupling", "-1e71"][..], "2|J| must be at most 1e70"),
        (&["--q", "1", "--size", "8", "--temp", "1"][..], "q must be from 2 to 255"),
        (&["--size", "16,16777217", "--temp", "1"][..], "sides up to 16777216"),
    ] {
        let all: Vec<&str> = ["potts", "exact"].iter().copied().chain(args.iter().copied()).collect();
        assert_one_line_error(&all, needle);
    }
}

#[test]
fn a_checkpoint_that_is_not_a_regular_file_and_a_repeated_size_are_refused() {
    let args = small(&["--temp", "1", "--sweeps", "20", "--checkpoint", "/dev/null"]);
    assert_one_line_error(&args.iter().map(String::as_str).collect::<Vec<_>>(), "a checkpoint must be a regular file");
    // A list is one --size with commas; a second --size is a mistake, not a
    // second size.
    assert_one_line_error(
        &["potts", "run", "--q", "2", "--size", "16", "--size", "32", "--temp", "1"],
        "'--size <L>' cannot be used multiple times",
    );
}

/// A temperature listed twice runs twice, with a warning; with `continue`
/// a repeat is a return trip (a hysteresis loop) and passes in silence.
#[test]
fn a_repeated_temperature_is_warned_of_unless_the_chain_continues() {
    let warned = |o: &Output| stderr(o).lines().filter(|l| l.contains("listed more than once")).count();
    let o = run_small(&["--temps", "1,2,1,2,3", "--therm", "5", "--sweeps", "20", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(warned(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("temperatures 1, 2 are listed"), "{}", stderr(&o));
    assert_eq!(physics(&o.stdout).len(), 5);
    let o = run_small(&["--temps", "1,2,1", "--continue", "--therm", "5", "--sweeps", "20", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(warned(&o), 0, "{}", stderr(&o));
}

/// A reader of the table that goes away (`| head -1`) does not end a run
/// that writes files: it goes on without printing and writes them all.
/// (2,501 JSON rows overflow the pipe's buffer, so the run meets the closed
/// pipe.)
#[test]
fn a_closed_stdout_does_not_end_a_run_that_writes_files() {
    let csv = tmp("closed-stdout.csv");
    let _ = std::fs::remove_file(&csv);
    let mut child = Command::new(bin())
        .args(["potts", "run", "--q", "2", "--size", "8", "--temps", "1.0:3.5:0.001", "--therm", "2", "--sweeps", "20"])
        .args(["--measure-every", "1", "--backend", "cpu", "--json", "--out", csv.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read the first line and close the pipe, as `head -1` does.
    {
        use std::io::BufRead;
        let mut first = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("standard output was closed; the run goes on"), "{}", stderr(&o));
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows = text.lines().filter(|l| !l.starts_with('#')).count();
    assert_eq!(rows, 1 + 2501);
}

#[test]
fn exact_finds_a_bad_out_path_before_computing() {
    // Four seconds per temperature at the largest side: the error must
    // come before the values, not minutes later.
    let temps = (0..40).map(|i| format!("{}", 1.0 + 0.01 * i as f64)).collect::<Vec<_>>().join(",");
    let started = Instant::now();
    let args = ["potts", "exact", "--size", "16777216", "--temps", &temps, "--out", "/nonexistent/dir/x.csv"];
    assert_one_line_error(&args, "/nonexistent/dir");
    assert!(started.elapsed() < Duration::from_secs(20), "the error came after the work");
    // "-" would be a file of that name, as for `potts run --out -`.
    let dash = ["potts", "exact", "--size", "4", "--temp", "1", "--out", "-"];
    assert_one_line_error(&dash, "--out -: this output is written to a file");
}

/// No output of a run may be another output's lock file (the lock's
/// removal at the end would take the output with it).
#[test]
fn an_output_named_as_anothers_lock_is_refused() {
    let dir = tmp("lock-names");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let at = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let cases = [(at("c.ckpt"), at(".c.ckpt.lock")), (at(".r.csv.lock"), at("r.csv"))];
    for (checkpoint, out) in &cases {
        let args =
            small(&["--temps", "1.0", "--therm", "1", "--sweeps", "10", "--checkpoint", checkpoint, "--out", out]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_one_line_error(&args, "name one of them otherwise");
    }
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "files were left");
}

#[test]
fn lists_and_modes_that_contradict_themselves_are_refused() {
    // A size named twice would print its rows twice, as `potts run` refuses.
    assert_one_line_error(&["potts", "exact", "--size", "4,8,4", "--temp", "1"], "--size lists 4 twice");
    // A second --size is refused, as `potts run` refuses it, rather than
    // added to the first's list.
    let args = ["potts", "exact", "--size", "4", "--size", "6", "--temp", "1"];
    assert_one_line_error(&args, "cannot be used multiple times");
    // The bench's two studies are one or the other, not the second silently.
    let o = warpmc(&["potts", "bench", "--backend", "cpu", "--autocorrelation", "--swendsen-wang"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
}

/// In a study of several sizes each JSON row's provenance names its own
/// lattice, the CSV's summary line lists them all, and the snapshot (of
/// the last size) carries that size's.
#[test]
fn each_size_of_a_study_has_its_own_provenance() {
    let csv = tmp("sizes-provenance.csv");
    let png = tmp("sizes-provenance.png");
    let o = warpmc(&[
        "potts",
        "run",
        "--backend",
        "cpu",
        "--q",
        "2",
        "--size",
        "8,16",
        "--temps",
        "1.0,1.2",
        "--therm",
        "20",
        "--sweeps",
        "40",
        "--json",
        "--out",
        csv.to_str().unwrap(),
        "--snapshot",
        png.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows: Vec<serde_json::Value> =
        String::from_utf8_lossy(&o.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 4);
    for r in &rows {
        let l = r["L"].as_u64().unwrap();
        assert_eq!((r["run"]["width"].as_u64(), r["run"]["height"].as_u64()), (Some(l), Some(l)), "{r}");
        assert_eq!(r["run"]["sizes"], serde_json::json!([8, 16]));
        // The configuration is the study's at the row's own size.
        let config = &r["run"]["config"];
        assert_eq!((config["size"].as_u64(), config["height"].as_u64()), (Some(l), Some(l)), "{r}");
        assert_eq!(config["sizes"], serde_json::json!([8, 16]));
    }
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.lines().nth(1).unwrap().contains("8 x 8, 16 x 16 tori"), "{text}");
    assert!(!text.contains("# incomplete"), "a finished study is whole: {text}");
    let reader = png::Decoder::new(std::io::Cursor::new(std::fs::read(&png).unwrap())).read_info().unwrap();
    assert_eq!((reader.info().width, reader.info().height), (16, 16));
    let chunk = reader.info().utf8_text.iter().find(|t| t.keyword == "warpmc-provenance").unwrap();
    let run: serde_json::Value = serde_json::from_str(&chunk.get_text().unwrap()).unwrap();
    assert_eq!((run["width"].as_u64(), run["height"].as_u64()), (Some(16), Some(16)));
}

/// A finished run leaves its end in the checkpoint (even one shorter than
/// the time between checkpoints): resuming it gives the same results.
#[test]
fn a_finished_run_checkpoints_its_end() {
    let ckpt = tmp("finished-end.ckpt");
    let _ = std::fs::remove_file(&ckpt);
    let protocol = ["--q", "3", "--size", "12", "--temps", "0.9,1.0", "--therm", "50", "--sweeps", "200"];
    let whole = run_small_with(&protocol, &["--json", "--checkpoint", ckpt.to_str().unwrap()]);
    assert!(whole.status.success(), "{}", stderr(&whole));
    assert!(ckpt.exists(), "no checkpoint after the run");
    let resumed = warpmc(&["potts", "run", "--json", "--resume", ckpt.to_str().unwrap()]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert_eq!(physics(&resumed.stdout), physics(&whole.stdout));
    // A run that wrote no snapshot keeps no lattice: a snapshot asked of
    // it is refused, not a lattice that was never swept written.
    let snapshot = tmp("finished-snapshot.npy");
    let _ = std::fs::remove_file(&snapshot);
    let args = ["potts", "run", "--resume", ckpt.to_str().unwrap(), "--snapshot", snapshot.to_str().unwrap()];
    assert_one_line_error(&args, "checkpoint of a finished run that wrote no snapshot");
    assert!(!snapshot.exists());
    // One that wrote a snapshot keeps its last lattice, and writes it again.
    let first = tmp("finished-first.npy");
    let _ = std::fs::remove_file(&ckpt);
    let _ = std::fs::remove_file(&first);
    let o = run_small_with(&protocol, &["--checkpoint", ckpt.to_str().unwrap(), "--snapshot", first.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = warpmc(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&snapshot).unwrap(), std::fs::read(&first).unwrap());
}

/// A finished run's checkpoint gives its results again without sweeping:
/// on the screen, and in the CSV that --out names; the checkpoint itself is
/// left untouched (it may be an archived, read-only file).
#[test]
fn resuming_a_finished_run_writes_its_csv() {
    let (ckpt, first, again) = (tmp("finished.ckpt"), tmp("finished-1.csv"), tmp("finished-2.csv"));
    for p in [&ckpt, &first, &again] {
        let _ = std::fs::remove_file(p);
    }
    let o = run_small(&[
        "--temps",
        "1.0,1.1",
        "--therm",
        "10",
        "--sweeps",
        "100",
        "--checkpoint",
        ckpt.to_str().unwrap(),
        "--out",
        first.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let long_ago = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
    std::fs::File::options().write(true).open(&ckpt).unwrap().set_modified(long_ago).unwrap();
    let held = std::fs::read(&ckpt).unwrap();
    let o = warpmc(&["potts", "run", "--resume", ckpt.to_str().unwrap(), "--out", again.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = common::csv_physics(&again);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows, common::csv_physics(&first));
    assert_eq!(std::fs::read(&ckpt).unwrap(), held);
    assert_eq!(std::fs::metadata(&ckpt).unwrap().modified().unwrap(), long_ago, "the checkpoint was written again");
}

/// A results file that cannot be written (here /dev/full, as a full disk)
/// does not end the run: it warns once, runs to the end, saves the
/// checkpoint and the series, and says how to get the CSV from the
/// checkpoint, which then gives it whole.
#[test]
fn a_results_file_that_cannot_be_written_loses_no_results() {
    if !Path::new("/dev/full").exists() {
        println!("SKIPPED a_results_file_that_cannot_be_written_loses_no_results: no /dev/full");
        return;
    }
    let (ckpt, series, csv) = (tmp("full.ckpt"), tmp("full.npy"), tmp("full.csv"));
    for p in [&ckpt, &series, &csv] {
        let _ = std::fs::remove_file(p);
    }
    let o = run_small(&[
        "--temps",
        "1.0,1.1,1.2",
        "--therm",
        "10",
        "--sweeps",
        "100",
        "--checkpoint",
        ckpt.to_str().unwrap(),
        "--series",
        series.to_str().unwrap(),
        "--out",
        "/dev/full",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.lines().filter(|l| l.starts_with("warning:") && l.contains("goes on")).count(), 1, "{err}");
    let last = err.lines().rev().find(|l| l.starts_with("error")).unwrap();
    assert!(last.contains(&format!("--resume {}", ckpt.display())), "{err}");
    assert!(series.exists(), "the series was not written: {err}");
    let o = warpmc(&["potts", "run", "--resume", ckpt.to_str().unwrap(), "--out", csv.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(common::csv_physics(&csv).len(), 3);
}

/// `--config -` reads the TOML from standard input; its errors name it.
#[test]
fn a_configuration_can_come_from_standard_input() {
    let run = |toml: &str| {
        let mut child = Command::new(bin())
            .args(["potts", "run", "--backend", "cpu", "--json", "--config", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), toml.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    };
    let o = run("q = 3\nsize = 6\ntemps = [1.0, 1.2]\ntherm = 10\nsweeps = 50\n");
    assert!(o.status.success(), "{}", stderr(&o));
    let from_flags = warpmc(&[
        "potts",
        "run",
        "--backend",
        "cpu",
        "--json",
        "--q",
        "3",
        "--size",
        "6",
        "--temps",
        "1.0,1.2",
        "--therm",
        "10",
        "--sweeps",
        "50",
    ]);
    assert!(from_flags.status.success(), "{}", stderr(&from_flags));
    assert_eq!(physics(&o.stdout), physics(&from_flags.stdout));
    let o = run("q = \"3\"\nsize = 6\ntemps = [1.0]\n");
    assert!(stderr(&o).contains("standard input: q = \"3\": expected a whole number from 2 to 255"), "{}", stderr(&o));
}

/// A lattice of millions of short rows is counted without a census per
/// row held at once: with q = 255 those took 2 KiB a row, 4 GiB for this
/// 2 × 2,097,152 lattice of 4 MiB, and the run aborted on a failed
/// allocation instead of measuring.
#[test]
fn a_lattice_of_millions_of_short_rows_is_measured_in_little_memory() {
    let o = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4194304 && exec \"$0\" \"$@\"")
        .arg(bin())
        .args(["potts", "run", "--backend", "cpu", "--q", "255", "--size", "2", "--height", "2097152"])
        .args([
            "--temp",
            "1",
            "--therm",
            "0",
            "--sweeps",
            "1",
            "--measure-every",
            "1",
            "--algorithm",
            "heat-bath",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 1);
}

/// Where the finished run's files cannot be written (a file-size limit
/// stands in for a full disk), every one that failed is named, the final
/// checkpoint's with what the file then holds, and the run fails.
#[test]
fn a_finished_run_whose_files_cannot_be_written_names_each_failure() {
    let dir = tmp("file-limit");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let o = Command::new("sh")
        .arg("-c")
        // Writes beyond 8 KiB fail with EFBIG: warpmc ignores SIGXFSZ,
        // which would otherwise kill it at the first such write.
        .arg("ulimit -f 16 && exec \"$0\" \"$@\"")
        .arg(bin())
        .args(["potts", "run", "--backend", "cpu", "--q", "3", "--size", "64", "--temps", "0.95,1.0,1.05"])
        .args(["--therm", "100", "--sweeps", "6000", "--measure-every", "10", "--seed", "5"])
        .args(["--out", "a.csv", "--series", "a.npy", "--checkpoint", "a.ckpt"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("a.ckpt") && err.contains("the finished run's checkpoint was not written"), "{err}");
    assert!(err.lines().any(|l| l.starts_with("error: a.npy")), "{err}");
    // The table has every row.
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().filter(|l| l.trim_start().starts_with("64 ")).count(), 3);
    // No temporary file of a failed write is left.
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(!left.iter().any(|n| n.to_string_lossy().starts_with(".warpmc-")), "{left:?}");
}

/// Wolff from a random start below T_c is warned of (its sweeps are sized
/// for equilibrium clusters, far larger than a random lattice's); not from
/// an ordered start, nor above T_c.
#[test]
fn wolff_from_a_random_start_below_tc_is_warned_of() {
    let warned = |extra: &[&str]| {
        let mut args = vec!["--therm", "5", "--sweeps", "20", "--algorithm", "wolff"];
        args.extend(extra);
        let o = run_small(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o).contains("wolff from a random start below T_c")
    };
    // q = 3: T_c = 1/ln(1 + √3) ≈ 0.995.
    assert!(warned(&["--temp", "0.8", "--init", "random"]));
    assert!(!warned(&["--temp", "0.8", "--init", "ordered"]));
    assert!(!warned(&["--temp", "1.2", "--init", "random"]));
}

/// The ordered start puts every site in a state the field favours: state 1
/// when h < 0 disfavours state 0. From state 0 a chain at low temperature
/// stays in that metastable state for the whole run (a review measured
/// e hundreds of error bars from the exact value, q = 3 on 4 × 4, h = -0.1).
#[test]
fn an_ordered_start_under_a_negative_field_is_in_a_favoured_state() {
    let args = [
        "potts",
        "run",
        "--backend",
        "cpu",
        "--q",
        "3",
        "--size",
        "4",
        "--temp",
        "0.5",
        "--field",
        "-0.1",
        "--therm",
        "200",
        "--sweeps",
        "4000",
        "--measure-every",
        "1",
        "--algorithm",
        "heat-bath",
        "--json",
    ];
    let o = warpmc(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(o.stdout.split(|&b| b == b'\n').next().unwrap()).unwrap();
    // The exact value, by enumerating the 3^16 states of the torus with the
    // field term -h δ(s, 0) per site: -1.995360.
    let (e, err) = (v["energy"].as_f64().unwrap(), v["energy_err"].as_f64().unwrap());
    assert!((e + 1.995360).abs() < 5.0 * err + 1e-3, "e = {e} ± {err}");
    assert_eq!(v["run"]["config"]["init"], "ordered");
}

/// In a study of several sizes each row's provenance names its own size's
/// update rule and backend (L = 32 runs a byte per spin, L = 64 bit
/// planes), also for the sizes a resumed run only reports from its
/// checkpoint (where the runner made is the last size's).
#[test]
fn each_size_of_a_study_has_its_own_rule_and_backend_in_its_provenance() {
    let (ckpt, csv, again) = (tmp("sizes-resumed.ckpt"), tmp("sizes-resumed.csv"), tmp("sizes-resumed-again.csv"));
    for p in [&ckpt, &csv, &again] {
        let _ = std::fs::remove_file(p);
    }
    let runs = |o: &Output| -> Vec<(u64, String, String)> {
        stdout(o)
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                let run = &v["run"];
                (v["L"].as_u64().unwrap(), run["algorithm"].to_string(), run["backend"].to_string())
            })
            .collect()
    };
    let mut args = vec!["--threads", "1", "potts", "run", "--backend", "cpu", "--q", "3", "--size", "32,64"];
    args.extend(["--temps", "0.9,1.0", "--therm", "50", "--sweeps", "200", "--json"]);
    args.extend(["--checkpoint", ckpt.to_str().unwrap(), "--out", csv.to_str().unwrap()]);
    let o = warpmc(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = runs(&o);
    assert_eq!(rows.len(), 4);
    for (l, algorithm, backend) in &rows {
        let (rule, storage) =
            if *l == 32 { ("one random word per site", "a byte per spin") } else { ("bit-sliced", "bit planes") };
        assert!(algorithm.contains(rule) && backend.contains(storage), "L = {l}: {algorithm}, {backend}");
    }
    // The finished run reported again from its checkpoint, by a process
    // with other threads: the same provenance row by row (the backend that
    // ran each size), and the CSV header names L = 32's backend.
    let o = warpmc(&[
        "--threads",
        "2",
        "potts",
        "run",
        "--resume",
        ckpt.to_str().unwrap(),
        "--json",
        "--out",
        again.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(runs(&o), rows);
    let backend_line =
        |p: &Path| std::fs::read_to_string(p).unwrap().lines().find(|l| l.contains("; backend: ")).map(str::to_string);
    assert_eq!(backend_line(&again), backend_line(&csv));
    assert!(backend_line(&csv).unwrap().contains("a byte per spin"));
    // The CSV header gives each size's rule and backend.
    let header = std::fs::read_to_string(&csv).unwrap();
    let line_of = |l: &str| header.lines().find(|x| x.starts_with(&format!("# L = {l}: "))).unwrap_or("").to_string();
    let (l32, l64) = (line_of("32"), line_of("64"));
    assert!(l32.contains("one random word per site") && l32.contains("a byte per spin"), "{header}");
    assert!(l64.contains("bit-sliced") && l64.contains("bit planes"), "{header}");
}

/// `potts inspect` tells how far a checkpoint's run has got, in text and
/// JSON, without changing the file; anything else is one line.
#[test]
fn inspect_tells_a_checkpoints_progress() {
    use warpmc_potts::checkpoint::encode;
    use warpmc_potts::{ConfigFile, RunState, Temperatures};
    let ckpt = tmp("inspect.ckpt");
    let cfg = ConfigFile {
        q: Some(3),
        size: Some(8),
        temps: Some(Temperatures::List(vec![0.9, 1.1])),
        therm: Some(5),
        sweeps: Some(20),
        ..Default::default()
    };
    let cfg = cfg.resolve().unwrap();
    std::fs::write(&ckpt, encode(&cfg, &RunState::new(&cfg))).unwrap();
    let c = ckpt.to_str().unwrap();
    let o = warpmc(&["potts", "inspect", c]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("q = 3") && text.contains("8 × 8") && text.contains("2 temperatures, 0.9 … 1.1"), "{text}");
    assert!(text.contains("progress: 0 of 2 temperatures finished") && text.contains("--resume"), "{text}");
    let json = |o: &Output| serde_json::from_str::<serde_json::Value>(&stdout(o)).unwrap();
    let v = json(&warpmc(&["potts", "inspect", c, "--json"]));
    assert_eq!(
        (v["finished"].as_bool(), v["format"].as_u64(), v["temperatures"].as_u64()),
        (Some(false), Some(10), Some(2))
    );
    // A finished run's: the same file afterwards.
    let _ = std::fs::remove_file(&ckpt);
    let o = run_small(&["--temps", "0.9,1.1", "--therm", "5", "--sweeps", "20", "--checkpoint", c]);
    assert!(o.status.success(), "{}", stderr(&o));
    let before = std::fs::read(&ckpt).unwrap();
    let v = json(&warpmc(&["potts", "inspect", c, "--json"]));
    assert_eq!((v["finished"].as_bool(), v["temperatures_finished"].as_u64()), (Some(true), Some(2)));
    assert!(stdout(&warpmc(&["potts", "inspect", c])).contains("progress: finished"));
    assert_eq!(std::fs::read(&ckpt).unwrap(), before);
    let other = tmp("inspect-other.txt");
    std::fs::write(&other, "not a checkpoint").unwrap();
    assert_one_line_error(&["potts", "inspect", other.to_str().unwrap()], "not a warpmc Potts checkpoint");
    assert_one_line_error(&["potts", "inspect", "/nonexistent/x.ckpt"], "/nonexistent/x.ckpt");
}

/// One command line for a batch job that may be requeued: with
/// --resume-existing it starts the run, continues it after a stop, gives
/// its results again once finished (without writing the checkpoint), and
/// refuses a checkpoint of another run or a file that holds something else.
#[test]
fn a_requeued_command_line_starts_continues_and_repeats_its_run() {
    fn strs(a: &[String]) -> Vec<&str> {
        a.iter().map(String::as_str).collect()
    }
    let ckpt = tmp("requeued.ckpt");
    let _ = std::fs::remove_file(&ckpt);
    let whole = run_small_with(CONTINUED, &["--json"]);
    assert!(whole.status.success(), "{}", stderr(&whole));
    let c = ckpt.to_str().unwrap();
    let job = |extra: &[&str]| -> Vec<String> {
        ["potts", "run", "--backend", "cpu", "--json", "--checkpoint-every", "0.05", "--resume-existing"]
            .iter()
            .chain(CONTINUED)
            .chain(extra)
            .map(|s| s.to_string())
            .collect()
    };
    let first = job(&["--checkpoint", c]);
    let mut child = Command::new(bin()).args(&first).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    wait_for_file(&ckpt, "no checkpoint appeared");
    std::thread::sleep(Duration::from_millis(300));
    let finished_early = child.try_wait().unwrap().is_some();
    Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    let stopped = child.wait_with_output().unwrap();
    assert!(!finished_early, "the run finished before it could be stopped; make it longer");
    assert_eq!(stopped.status.code(), Some(143), "{}", stderr(&stopped));
    assert!(stderr(&stopped).contains("holds no checkpoint yet: starting"), "{}", stderr(&stopped));
    assert!(stderr(&stopped).contains("the same command (with --resume-existing) continues"), "{}", stderr(&stopped));

    // Requeued: the same command line continues the run to the very bits
    // of an uninterrupted one.
    let again = warpmc(&strs(&first));
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(physics(&again.stdout), physics(&whole.stdout));

    // Run once more after the end: the results again, the file untouched.
    let long_ago = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    std::fs::File::options().write(true).open(&ckpt).unwrap().set_modified(long_ago).unwrap();
    let held = std::fs::read(&ckpt).unwrap();
    let repeat = warpmc(&strs(&first));
    assert!(repeat.status.success(), "{}", stderr(&repeat));
    assert_eq!(physics(&repeat.stdout), physics(&whole.stdout));
    assert_eq!(std::fs::metadata(&ckpt).unwrap().modified().unwrap(), long_ago, "the checkpoint was written again");

    // Another run (here another seed) is refused with what differs, and
    // leaves the checkpoint as it was.
    let other = job(&["--checkpoint", c, "--seed", "7"]);
    assert_one_line_error(&strs(&other), "seed 7 here, 1 there");
    let notes = tmp("requeued-notes.txt");
    std::fs::write(&notes, b"my notes").unwrap();
    let on_notes = job(&["--checkpoint", notes.to_str().unwrap()]);
    assert_one_line_error(&strs(&on_notes), "not a warpmc checkpoint");
    assert_eq!(std::fs::read(&notes).unwrap(), b"my notes");
    assert_eq!(std::fs::read(&ckpt).unwrap(), held);
    // It goes with --checkpoint, and not with --resume or --force.
    assert_one_line_error(&strs(&job(&[])), "--checkpoint");
    assert_one_line_error(&strs(&job(&["--checkpoint", c, "--force"])), "--force");
}

/// Standard output redirected to a file that an output also names (`--out
/// r.csv > r.csv`): the results printed would go into a file the run then
/// replaces, so it is refused before any work, as two outputs on one file
/// are; a checkpoint's summary into a full disk is one error line.
#[test]
fn standard_output_on_an_output_file_is_refused_and_inspect_reports_a_full_disk() {
    let out = tmp("stdout-too.csv");
    std::fs::write(&out, b"").unwrap();
    let o = |args: &[&str]| {
        let file = std::fs::OpenOptions::new().append(true).open(&out).unwrap();
        Command::new(bin()).args(args).stdout(file).output().unwrap()
    };
    let p = out.to_str().unwrap();
    let run = small(&["--temp", "1", "--therm", "5", "--sweeps", "20", "--json", "--out", p]);
    let exact = ["potts", "exact", "--size", "4", "--temp", "1", "--out", p];
    for args in [run.iter().map(String::as_str).collect::<Vec<_>>(), exact.to_vec()] {
        let got = o(&args);
        assert_one_line_failure(&args, &got, "standard output and --out name the same file");
        assert_eq!(std::fs::read(&out).unwrap(), b"", "{args:?} wrote");
    }
    // Another file on standard output is fine.
    let other = tmp("stdout-other.txt");
    let file = std::fs::File::create(&other).unwrap();
    let fine = Command::new(bin()).args(&run).stdout(file).output().unwrap();
    assert!(fine.status.success(), "{}", stderr(&fine));
    assert!(std::fs::read_to_string(&other).unwrap().starts_with('{'));

    let ckpt = tmp("inspect-full.ckpt");
    let _ = std::fs::remove_file(&ckpt);
    let made = run_small(&["--temp", "1", "--therm", "5", "--sweeps", "20", "--checkpoint", ckpt.to_str().unwrap()]);
    assert!(made.status.success(), "{}", stderr(&made));
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        println!("SKIPPED the rest of standard_output_on_an_output_file_is_refused: no /dev/full");
        return;
    };
    for json in [false, true] {
        let mut args = vec!["potts", "inspect", ckpt.to_str().unwrap()];
        if json {
            args.push("--json");
        }
        let got = Command::new(bin()).args(&args).stdout(full.try_clone().unwrap()).output().unwrap();
        assert_one_line_failure(&args, &got, "writing to standard output");
    }
}

/// `--resume A --checkpoint B` writes the run's state to B, the file
/// --checkpoint names, even where B is a hard link to A: A keeps the state
/// it was resumed from.
#[test]
fn a_resumed_run_checkpoints_to_the_file_checkpoint_names_even_a_hard_link() {
    let (a, b) = (tmp("linked-a.ckpt"), tmp("linked-b.ckpt"));
    for p in [&a, &b] {
        let _ = std::fs::remove_file(p);
    }
    let mut args: Vec<&str> = vec!["potts", "run", "--backend", "cpu", "--checkpoint-every", "0.05"];
    args.extend(CONTINUED);
    args.extend(["--checkpoint", a.to_str().unwrap()]);
    let child = Command::new(bin()).args(&args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    wait_for_file(&a, "no checkpoint appeared");
    std::thread::sleep(Duration::from_millis(200));
    Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    let stopped = child.wait_with_output().unwrap();
    assert_eq!(stopped.status.code(), Some(143), "the run ended before it was stopped: {}", stderr(&stopped));
    std::fs::hard_link(&a, &b).unwrap();
    let held = std::fs::read(&a).unwrap();
    let o = warpmc(&["potts", "run", "--resume", a.to_str().unwrap(), "--checkpoint", b.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&a).unwrap(), held, "the checkpoint read was written");
    assert_ne!(std::fs::read(&b).unwrap(), held, "the finished run's state is not in the file --checkpoint names");
}

/// A run that saw only a few excitations (q = 255 Metropolis on a 2 × 2
/// torus at T = 0.25: one burst in 200,000 sweeps) is flagged too_short,
/// with a warning that says why; the same model at a temperature where it
/// moves all the time is not.
#[test]
fn a_run_of_a_few_rare_excitations_is_too_short() {
    let run = |temp: &str| {
        warpmc(&[
            "potts",
            "run",
            "--backend",
            "cpu",
            "--q",
            "255",
            "--size",
            "2",
            "--temp",
            temp,
            "--therm",
            "2000",
            "--sweeps",
            "200000",
            "--measure-every",
            "1",
            "--seed",
            "3",
            "--json",
        ])
    };
    let o = run("0.25");
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = physics(&o.stdout);
    assert_eq!(rows[0]["too_short"].as_bool(), Some(true), "{}", rows[0]);
    assert!(rows[0]["energy_err"].as_f64().unwrap() > 0.0, "{}", rows[0]);
    assert!(stderr(&o).contains("fewer than 10 excursions to one side of its mean"), "{}", stderr(&o));
    let o = run("2.0");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(physics(&o.stdout)[0]["too_short"].as_bool(), Some(false), "{}", stderr(&o));
}

/// A results file is the study it records: `--config results.csv` (or the
/// `--json` lines) runs it again to the same rows, and flags change it.
#[test]
fn a_results_file_runs_its_study_again() {
    let studies: [&[&str]; 2] = [
        &["--q", "3", "--size", "8", "--height", "6", "--coupling", "0.8", "--field", "0.1", "--temps", "0.9,1.0"],
        &["--q", "2", "--size", "8,12", "--temps", "2.0,2.2,2.4", "--tempering", "--exchange-every", "3"],
    ];
    for (k, study) in studies.into_iter().enumerate() {
        let csv = tmp(&format!("rerun-{k}.csv"));
        let common =
            ["potts", "run", "--backend", "cpu", "--json", "--samples", "2", "--therm", "50", "--sweeps", "400"];
        let mut first: Vec<&str> = common.to_vec();
        first.extend_from_slice(study);
        first.extend_from_slice(&["--init", "random", "--seed", "11", "--out", csv.to_str().unwrap()]);
        let o = warpmc(&first);
        assert!(o.status.success(), "{}", stderr(&o));
        let rows = physics(&o.stdout);
        let jsonl = tmp(&format!("rerun-{k}.jsonl"));
        std::fs::write(&jsonl, &o.stdout).unwrap();
        for results in [&csv, &jsonl] {
            let again = warpmc(&["potts", "run", "--json", "--config", results.to_str().unwrap()]);
            assert!(again.status.success(), "{}", stderr(&again));
            assert_eq!(physics(&again.stdout), rows, "{study:?} from {}", results.display());
        }
        let other = warpmc(&["potts", "run", "--json", "--config", csv.to_str().unwrap(), "--seed", "12"]);
        assert!(other.status.success(), "{}", stderr(&other));
        let other = physics(&other.stdout);
        assert_eq!(other.len(), rows.len());
        assert_ne!(other[0]["energy"], rows[0]["energy"], "another seed, another chain");
        assert_eq!(other[0]["run"]["seed"], 12);
    }
    let bad = tmp("rerun-bad.jsonl");
    std::fs::write(&bad, "{\"L\": 8}\n").unwrap();
    assert_one_line_error(&["potts", "run", "--config", bad.to_str().unwrap()], "holds no configuration");
}
