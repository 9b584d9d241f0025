//! `mpirun -np N warpmc potts run …` (a build with the mpi feature, under
//! Open MPI's mpirun) as a user runs it: for 1, 2 and 4 processes, one
//! lattice cut into strips and an ensemble dealt out give one process's
//! output bit for bit (timing aside); a checkpoint written by two processes
//! stopped with SIGTERM resumes under one and under four; Ctrl-C on mpirun
//! or SIGTERM to any one process leaves a checkpoint; a failing process
//! ends the job with one message, the first keeping what was measured;
//! processes started with different arguments are refused; bad input is
//! one line.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{bin, stderr, warpmc};

const RANKS: [usize; 3] = [1, 2, 4];

/// Longest a job may take before the test calls it hung.
const HUNG: Duration = Duration::from_secs(300);

fn tmp(name: &str) -> PathBuf {
    let d = warpmc_testkit::scratch_dir("cli-mpi");
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// `mpirun -np n warpmc args…`, not yet waited for. Two cores run four
/// processes (--oversubscribe); the root user of a CI container may run
/// them (Open MPI asks for both variables, and ignores them for others).
fn spawn_mpi(n: usize, args: &[&str], env: &[(&str, &str)]) -> Child {
    let mut cmd = Command::new("mpirun");
    cmd.args(["--oversubscribe", "-np", &n.to_string()]);
    for (k, _) in env {
        cmd.args(["-x", k]);
    }
    cmd.arg(bin())
        .args(args)
        .envs(env.iter().copied())
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mpirun runs (Open MPI's openmpi-bin)")
}

/// Waits for a job, failing the test (and killing the job) if it hangs.
fn wait(mut child: Child, what: &str) -> Output {
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > HUNG {
            let _ = child.kill();
            panic!("{what}: still running after {HUNG:?}: hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Runs `mpirun -np n warpmc args…` to its end. Open MPI 4's mpirun now
/// and then reports a process that finished properly as "rank R with PID 0
/// … exiting improperly" and fails the job (open-mpi/ompi#7833, a race in
/// its runtime, more frequent on a loaded machine): such a job is run once
/// more.
fn mpi(n: usize, args: &[&str]) -> Output {
    let what = format!("{n} processes: {args:?}");
    let out = wait(spawn_mpi(n, args, &[]), &what);
    if !out.status.success() && stderr(&out).contains("with PID 0 on") {
        eprintln!("{what}: Open MPI reported PID 0 exiting improperly; running it again");
        return wait(spawn_mpi(n, args, &[]), &what);
    }
    out
}

/// The JSON lines of a run without the timing and provenance (which names
/// the processes).
fn physics(stdout: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            let o = v.as_object_mut().unwrap();
            o.remove("flips_per_ns");
            o.remove("run");
            v
        })
        .collect()
}

/// What a run leaves: its results, and the bytes of its files.
#[derive(Debug, PartialEq)]
struct Outcome {
    results: Vec<serde_json::Value>,
    files: Vec<Vec<u8>>,
}

/// Runs `protocol` with --json, the series and (when `snapshot`) the final
/// lattice written to files named after `tag`, on `ranks` processes (or
/// one process without mpirun for `None`).
fn outcome(ranks: Option<usize>, protocol: &[&str], snapshot: bool, tag: &str) -> Outcome {
    let series = tmp(&format!("{tag}-{ranks:?}.npy"));
    let lattice = tmp(&format!("{tag}-{ranks:?}-lattice.npy"));
    let mut args = vec!["potts", "run", "--backend", "cpu", "--json", "--series", series.to_str().unwrap()];
    if snapshot {
        args.extend(["--snapshot", lattice.to_str().unwrap()]);
    }
    args.extend(protocol);
    let out = match ranks {
        None => warpmc(&args),
        Some(n) => mpi(n, &args),
    };
    assert!(out.status.success(), "{ranks:?} processes, {protocol:?}: {}", stderr(&out));
    let mut files = vec![std::fs::read(&series).unwrap()];
    if snapshot {
        files.push(std::fs::read(&lattice).unwrap());
    }
    Outcome { results: physics(&out.stdout), files }
}

/// Every rank count gives the outcome of one process.
fn same_on_every_rank_count(protocol: &[&str], snapshot: bool, tag: &str) {
    let one = outcome(None, protocol, snapshot, tag);
    assert!(!one.results.is_empty());
    for n in RANKS {
        let got = outcome(Some(n), protocol, snapshot, tag);
        assert_eq!(got.results, one.results, "{n} processes, {protocol:?}: the results differ");
        assert!(got.files == one.files, "{n} processes, {protocol:?}: the series or the lattice differ");
    }
}

#[test]
fn one_lattice_in_strips_is_one_process_bit_for_bit() {
    // The one-word-per-site rule: a field, a height of 3½ row-blocks, a
    // width of 2¾ units, each temperature continuing from the last (one
    // lattice at a time: strips under auto).
    same_on_every_rank_count(
        &[
            "--q",
            "3",
            "--size",
            "22",
            "--height",
            "26",
            "--field",
            "0.3",
            "--temps",
            "0.9,1.0",
            "--continue",
            "--init",
            "random",
            "--therm",
            "40",
            "--sweeps",
            "200",
            "--measure-every",
            "4",
        ],
        true,
        "site-words",
    );
    // The bit-sliced rule, five row-blocks, asked for by name.
    same_on_every_rank_count(
        &[
            "--q",
            "9",
            "--size",
            "128",
            "--height",
            "40",
            "--temp",
            "0.72",
            "--init",
            "random",
            "--therm",
            "40",
            "--sweeps",
            "200",
            "--measure-every",
            "4",
            "--decompose",
            "strips",
        ],
        true,
        "sliced",
    );
    // Two row-blocks: four processes leave two without a strip.
    same_on_every_rank_count(
        &["--q", "2", "--size", "16", "--height", "10", "--temp", "1.1", "--therm", "40", "--sweeps", "200"],
        true,
        "two-blocks",
    );
}

#[test]
fn an_ensemble_dealt_out_is_one_process_bit_for_bit() {
    // Three temperatures × three samples, dealt out unevenly.
    same_on_every_rank_count(
        &[
            "--q",
            "4",
            "--size",
            "24",
            "--height",
            "18",
            "--field",
            "-0.2",
            "--temps",
            "0.8:1.0:0.1",
            "--samples",
            "3",
            "--init",
            "random",
            "--therm",
            "40",
            "--sweeps",
            "150",
            "--measure-every",
            "3",
        ],
        true,
        "ensemble",
    );
    // A study of two sizes, every lattice cut into strips.
    same_on_every_rank_count(
        &[
            "--q",
            "2",
            "--size",
            "16,32",
            "--temps",
            "1.0,1.2",
            "--samples",
            "2",
            "--therm",
            "30",
            "--sweeps",
            "120",
            "--measure-every",
            "3",
            "--decompose",
            "strips",
        ],
        false,
        "sizes",
    );
}

#[test]
fn tempering_across_processes_is_one_process_bit_for_bit() {
    let protocol = [
        "--q",
        "2",
        "--size",
        "16",
        "--temps",
        "1.0:1.3:0.05",
        "--samples",
        "2",
        "--tempering",
        "--exchange-every",
        "3",
        "--therm",
        "40",
        "--sweeps",
        "240",
        "--measure-every",
        "4",
    ];
    same_on_every_rank_count(&protocol, false, "tempering");
    let mut strips = protocol.to_vec();
    strips.extend(["--decompose", "strips"]);
    same_on_every_rank_count(&strips, false, "tempering-strips");
}

/// The processes mpirun started (its children), by reading /proc.
fn processes_of(mpirun: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        // /proc/PID/stat: "PID (COMMAND) STATE PPID …"; the command may hold
        // spaces and brackets, so the fields are counted from the last ')'.
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else { continue };
        if rest.split_whitespace().nth(1).and_then(|p| p.parse::<u32>().ok()) == Some(mpirun) {
            found.push(pid);
        }
    }
    found
}

fn signal(pid: u32, name: &str) {
    Command::new("kill").args([&format!("-{name}"), &pid.to_string()]).status().unwrap();
}

/// Waits for a run's first checkpoint file.
fn first_checkpoint(path: &std::path::Path) {
    let started = Instant::now();
    while !path.exists() {
        assert!(started.elapsed() < HUNG, "no checkpoint appeared");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_checkpoint_of_two_processes_resumes_under_one_and_four() {
    let protocol =
        ["--q", "9", "--size", "128", "--temps", "0.6:0.9:0.1", "--continue", "--therm", "100", "--sweeps", "2000"];
    let mut whole_args = vec!["potts", "run", "--backend", "cpu", "--json"];
    whole_args.extend(protocol);
    let whole = warpmc(&whole_args);
    assert!(whole.status.success(), "{}", stderr(&whole));

    let ckpt = tmp("two.ckpt");
    let _ = std::fs::remove_file(&ckpt);
    let mut args = whole_args.clone();
    args.extend(["--checkpoint-every", "0.05", "--checkpoint", ckpt.to_str().unwrap()]);
    let child = spawn_mpi(2, &args, &[]);
    first_checkpoint(&ckpt);
    // SIGTERM to every process, as a batch system ends a job (and as
    // mpirun does a second after Ctrl-C: that path has its own test).
    for pid in processes_of(child.id()) {
        signal(pid, "TERM");
    }
    let stopped = wait(child, "the interrupted run");
    let err = stderr(&stopped);
    assert!(
        physics(&stopped.stdout).len() < physics(&whole.stdout).len(),
        "the run finished before it was interrupted; make it longer: {err}"
    );
    assert!(err.contains("interrupted: state saved"), "{err}");
    let written = std::fs::read(&ckpt).unwrap();
    for n in [1, 4] {
        let copy = tmp(&format!("two-resumed-{n}.ckpt"));
        std::fs::write(&copy, &written).unwrap();
        let resumed = mpi(n, &["potts", "run", "--json", "--backend", "cpu", "--resume", copy.to_str().unwrap()]);
        assert!(resumed.status.success(), "{n} processes: {}", stderr(&resumed));
        assert_eq!(physics(&resumed.stdout), physics(&whole.stdout), "resumed on {n} processes");
        // The checkpoint now holds the finished run, as one process leaves
        // it: its results at once, and no lattice to snapshot.
        let again = warpmc(&["potts", "run", "--json", "--resume", copy.to_str().unwrap()]);
        assert!(again.status.success(), "{n} processes: {}", stderr(&again));
        assert_eq!(physics(&again.stdout), physics(&whole.stdout), "the finished checkpoint of {n} processes");
        let snapshot = tmp(&format!("two-resumed-{n}.png"));
        let refused =
            warpmc(&["potts", "run", "--resume", copy.to_str().unwrap(), "--snapshot", snapshot.to_str().unwrap()]);
        assert!(stderr(&refused).contains("is the checkpoint of a finished run"), "{n}: {}", stderr(&refused));
    }
}

/// A run of `n` processes far too long to end by itself, whose only
/// checkpoint is the one a stop asks for: `stop` is called with mpirun's
/// pid once the first process has named the run, and the run must then
/// end with that checkpoint written and no results.
fn stopped_with_a_checkpoint(n: usize, tag: &str, stop: impl FnOnce(u32)) {
    let ckpt = tmp(&format!("{tag}.ckpt"));
    let _ = std::fs::remove_file(&ckpt);
    let args = [
        "potts",
        "run",
        "--backend",
        "cpu",
        "--q",
        "3",
        "--size",
        "32",
        "--temps",
        "1.0",
        "--sweeps",
        "100000000",
        "--checkpoint-every",
        "3600",
        "--checkpoint",
        ckpt.to_str().unwrap(),
    ];
    let mut child = spawn_mpi(n, &args, &[]);
    // The first process names the run when it starts it.
    let (lines, started) = std::sync::mpsc::channel();
    let reader = BufReader::new(child.stderr.take().unwrap());
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        for line in reader.lines().map_while(Result::ok) {
            let _ = lines.send(line.clone());
            text += &line;
            text.push('\n');
        }
        text
    });
    loop {
        match started.recv_timeout(HUNG) {
            Ok(line) if line.starts_with("potts:") => break,
            Ok(_) => {}
            Err(e) => panic!("{tag}: the run did not start: {e}"),
        }
    }
    stop(child.id());
    let stopped = wait(child, tag);
    let err = err.join().unwrap();
    assert!(err.contains("interrupted: state saved"), "{tag}: {err}");
    assert!(!err.contains("panicked"), "{tag}: {err}");
    assert!(ckpt.exists(), "{tag}: no checkpoint was written: {err}");
    assert!(stopped.stdout.is_empty(), "{tag}: the run finished: {err}");
}

#[test]
fn ctrl_c_on_mpirun_saves_the_state() {
    // Open MPI 4's mpirun answers Ctrl-C with SIGCONT to its processes,
    // SIGTERM a second later and SIGKILL a second after that
    // (odls_base_sigkill_timeout): the processes have that second to agree,
    // gather the lattice and write it.
    stopped_with_a_checkpoint(2, "ctrl-c", |mpirun| signal(mpirun, "INT"));
}

/// A job that fails: it ends (no process left waiting), non-zero, with one
/// `error:` line naming the process and the cause.
fn assert_fails_once(out: &Output, needle: &str) {
    assert!(!out.status.success());
    let err = stderr(out);
    assert!(!err.contains("panicked"), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains(needle), "expected '{needle}' in: {err}");
}

#[test]
fn a_failing_process_ends_the_job_with_one_message() {
    // Each temperature continues from the last, so the others go on to the
    // next one while process 1 fails at the end of the first.
    let args = [
        "potts",
        "run",
        "--backend",
        "cpu",
        "--q",
        "3",
        "--size",
        "32",
        "--temps",
        "0.9,1.0,1.1",
        "--continue",
        "--therm",
        "50",
        "--sweeps",
        "2000",
    ];
    let (csv, series) = (tmp("failing.csv"), tmp("failing.npy"));
    let _ = (std::fs::remove_file(&csv), std::fs::remove_file(&series));
    let mut keeping = args.to_vec();
    keeping.extend(["--out", csv.to_str().unwrap(), "--series", series.to_str().unwrap()]);
    let child = spawn_mpi(2, &keeping, &[("WARPMC_MPI_TEST_FAIL_RANK", "1")]);
    assert_fails_once(&wait(child, "a failing process"), "process 1 of 2: failing on purpose");
    // The first process kept what was measured, as one process would.
    assert_eq!(common::csv_physics(&csv).len(), 1, "{}", std::fs::read_to_string(&csv).unwrap());
    assert!(std::fs::metadata(&series).unwrap().len() > 0);
    // The first process cannot write its results (a full disk): it says
    // so, the others end with it (no MPI_Abort).
    let mut full = args.to_vec();
    full.extend(["--out", "/dev/full"]);
    let out = mpi(2, &full);
    assert_fails_once(&out, "error: /dev/full: No space left on device");
    assert!(!stderr(&out).contains("MPI_ABORT"), "{}", stderr(&out));
}

#[test]
fn a_process_whose_lattices_fail_leaves_the_measurements_taken() {
    // Four samples of each temperature, two on each process; process 1's
    // sweeps fail (its GPU, say) partway through the second temperature.
    let protocol = [
        "--backend",
        "cpu",
        "--q",
        "3",
        "--size",
        "16",
        "--temps",
        "1,1.1,1.2",
        "--continue",
        "--samples",
        "4",
        "--therm",
        "10",
        "--sweeps",
        "2000",
        "--measure-every",
        "100",
    ];
    let (one, csv, series) = (tmp("lattices-one.csv"), tmp("lattices-fail.csv"), tmp("lattices-fail.npy"));
    let _ = (std::fs::remove_file(&csv), std::fs::remove_file(&series));
    let mut args = vec!["potts", "run", "--out", one.to_str().unwrap(), "--force"];
    args.extend(protocol);
    let whole = warpmc(&args);
    assert!(whole.status.success(), "{}", stderr(&whole));
    let mut args = vec!["potts", "run", "--decompose", "ensemble", "--out", csv.to_str().unwrap()];
    args.extend(["--series", series.to_str().unwrap()]);
    args.extend(protocol);
    let child = spawn_mpi(2, &args, &[("WARPMC_MPI_TEST_FAIL_SWEEPS", "1@30")]);
    assert_fails_once(&wait(child, "a process whose sweeps fail"), "process 1 of 2: failing on purpose");
    let kept = common::csv_physics(&csv);
    assert!(!kept.is_empty() && kept.len() < 3, "{kept:?}");
    assert_eq!(kept[..], common::csv_physics(&one)[..kept.len()], "the temperatures finished before the failure");
    assert!(std::fs::metadata(&series).unwrap().len() > 0);
    // A strip's neighbours wait for it at every half-sweep: a failing strip
    // ends every process at once.
    let args = ["potts", "run", "--decompose", "strips", "--backend", "cpu", "--q", "3", "--size", "16", "--temp", "1"];
    let child = spawn_mpi(2, &args, &[("WARPMC_MPI_TEST_FAIL_SWEEPS", "1@2")]);
    assert_fails_once(&wait(child, "a strip whose sweeps fail"), "process 1 of 2: failing on purpose");
}

#[test]
fn processes_started_with_other_arguments_are_refused() {
    // mpirun's form for processes of different commands: `-np 1 A : -np 1 B`.
    // Processes that disagree about the run would give wrong results or
    // wait for each other for ever.
    let run = ["potts", "run", "--backend", "cpu", "--q", "3", "--size", "16", "--temp", "1", "--sweeps", "100"];
    let other_arguments = "process 1 of 2: this process was started with other arguments than process 0";
    for (other, says) in [
        (&["--seed", "7"][..], other_arguments),
        (&["--therm", "7"], other_arguments),
        // Only the second process refuses its arguments: the first would
        // wait for it for ever.
        (&["--size", "32"], "process 1 of 2: the argument '--size <L>' cannot be used multiple times"),
    ] {
        let out = Command::new("mpirun")
            .args(["--oversubscribe", "-np", "1"])
            .arg(bin())
            .args(run)
            .arg(":")
            .args(["-np", "1"])
            .arg(bin())
            .args(run)
            .args(other)
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .output()
            .unwrap();
        assert_fails_once(&out, says);
    }
}

/// `--help` or `--version` on one process beside a run on the other ends
/// the job with one line, whichever process has which; on every process,
/// the help is printed once and the job succeeds.
#[test]
fn help_on_one_process_beside_a_run_ends_the_job() {
    let run = ["potts", "run", "--backend", "cpu", "--q", "3", "--size", "16", "--temp", "1", "--sweeps", "100"];
    let job = |first: &[&str], second: &[&str]| {
        let child = Command::new("mpirun")
            .args(["--oversubscribe", "-np", "1"])
            .arg(bin())
            .args(first)
            .arg(":")
            .args(["-np", "1"])
            .arg(bin())
            .args(second)
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait(child, &format!("{first:?} : {second:?}"))
    };
    let other_arguments = "process 1 of 2: this process was started with other arguments than process 0";
    for help in [&["--help"][..], &["--version"], &["potts", "--help"], &["potts"]] {
        assert_fails_once(&job(&run, help), other_arguments);
        assert_fails_once(&job(help, &run), other_arguments);
    }
    let out = job(&["--help"], &["--help"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // (Open MPI gives its processes a terminal, so the help may be styled.)
    assert_eq!(String::from_utf8_lossy(&out.stdout).matches("warpmc runs on any machine").count(), 1, "{out:?}");
}

/// The processes mpirun started for a job, by rank (Open MPI puts the rank
/// in each one's environment).
fn process_of_rank(mpirun: u32, rank: usize) -> u32 {
    let wanted = format!("OMPI_COMM_WORLD_RANK={rank}");
    let started = Instant::now();
    loop {
        for pid in processes_of(mpirun) {
            let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            if env.split(|&b| b == 0).any(|v| v == wanted.as_bytes()) {
                return pid;
            }
        }
        assert!(started.elapsed() < HUNG, "no process of rank {rank}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn sigterm_to_any_process_stops_every_process_with_a_checkpoint() {
    // The last process alone is told to stop; the others learn of it.
    stopped_with_a_checkpoint(3, "sigterm-last", |mpirun| signal(process_of_rank(mpirun, 2), "TERM"));
}

#[test]
fn bad_input_under_mpirun_is_one_line() {
    let out = mpi(4, &["potts", "run", "--backend", "cpu", "--q", "1", "--size", "8", "--temp", "1"]);
    assert_fails_once(&out, "q must be between 2 and 255");
    let out = mpi(2, &["potts", "run", "--bogus"]);
    let err = stderr(&out);
    assert!(!out.status.success());
    assert_eq!(err.matches("unexpected argument '--bogus'").count(), 1, "{err}");
    // Only `potts run` shares its work.
    let out = mpi(2, &["rng", "dump", "--generator", "philox", "--count", "4"]);
    assert_fails_once(&out, "only `warpmc potts run`");
}

#[test]
fn nccl_halos_off_the_gpu_are_one_line() {
    // NCCL trades between GPUs: strips on the CPU are refused with the
    // reason, by one process, and nothing waits.
    let run = ["potts", "run", "--backend", "cpu", "--q", "2", "--size", "64", "--temp", "1", "--sweeps", "10"];
    let out = mpi(2, &[&run[..], &["--decompose", "strips", "--halo", "nccl"]].concat());
    assert_fails_once(&out, "process 0 cannot trade edge rows through NCCL: its strips run on the cpu, not a GPU");
    let out = mpi(2, &[&run[..], &["--halo", "nvlink"]].concat());
    assert!(!out.status.success());
    assert!(stderr(&out).contains("unknown halo transport 'nvlink' (expected mpi or nccl)"), "{}", stderr(&out));
}

#[test]
fn the_first_process_alone_writes_files() {
    let csv = tmp("first.csv");
    let out = mpi(
        2,
        &[
            "potts",
            "run",
            "--backend",
            "cpu",
            "--q",
            "2",
            "--size",
            "16",
            "--temp",
            "1.2",
            "--therm",
            "20",
            "--sweeps",
            "100",
            "--out",
            csv.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.lines().filter(|l| !l.starts_with('#')).count(), 2, "{text}");
    // The table is printed once.
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 2);
}
