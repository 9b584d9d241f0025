//! Subcommands of `warpmc`.

/// `println!` without its panic, in a function returning
/// `anyhow::Result`: see [`write_stdout`].
macro_rules! stdoutln {
    () => {
        $crate::cmd::write_stdout(format_args!("\n"))?
    };
    ($($arg:tt)*) => {
        $crate::cmd::write_stdout(format_args!("{}\n", format_args!($($arg)*)))?
    };
}

/// `eprintln!` without its panic: a note, warning or progress line that
/// standard error cannot take (a full disk, a closed pipe) is dropped and
/// the command goes on, so that a long run still writes its results.
///
/// The line is formatted first and written whole: standard error is
/// unbuffered, and `writeln!` would write each piece of the format
/// separately, so that under mpirun another process's line could land in
/// the middle of this one.
macro_rules! noteln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let line = format!("{}\n", format_args!($($arg)*));
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }};
}

mod bench;
mod bench_atomics;
mod bench_flame;
mod bench_shuffle;
mod bench_transpose;
mod devices;
mod flame;
mod flame_animate;
mod flame_genome;
mod potts;
mod potts_bench;
mod potts_exact;
mod potts_inspect;
mod potts_mpi;
#[cfg(feature = "mpi")]
pub(crate) use potts_mpi::help_under_mpirun;
mod rng;

use anyhow::Context;
use clap::{Parser, Subcommand};

/// Monte Carlo on NVIDIA GPUs, with a CPU backend that gives the same answers.
///
/// warpmc runs on any machine: with a CUDA device (NVIDIA driver plus NVRTC
/// from a CUDA 12 or 13 toolkit) kernels are compiled at run time for that
/// device; without one everything runs on the CPU cores.
#[derive(Debug, Parser)]
#[command(name = "warpmc", version, about, long_about, propagate_version = true)]
pub(crate) struct Cli {
    /// CPU threads for CPU work (default: all cores, or RAYON_NUM_THREADS).
    #[arg(long, global = true, value_name = "N")]
    threads: Option<usize>,

    #[command(subcommand)]
    command: Command,
}

impl Cli {
    /// Parses the command line, with a negative number taken as a value
    /// wherever an option takes one: `--begin -2` is a frame time and
    /// `--fps -1` is told its range, where clap would call "-1" an unknown
    /// option.
    pub(crate) fn try_parse_args() -> Result<Self, clap::Error> {
        let mut command = negative_numbers_are_values(<Self as clap::CommandFactory>::command());
        let args = numbers_joined_to_options(&command, std::env::args_os().collect());
        let mut matches = command.try_get_matches_from_mut(args)?;
        <Self as clap::FromArgMatches>::from_arg_matches_mut(&mut matches).map_err(|e| e.format(&mut command))
    }
}

/// Prints what clap answered for --help or --version, and gives the exit
/// status: clap's, or 1 where standard output could not take the text (a
/// full disk; a reader that went away, `| head -1`, is no failure). The
/// version is the program's whatever subcommand it follows (clap would
/// print `warpmc-potts-run 0.1.0` after `potts run`).
pub(crate) fn print_clap_answer(answer: &clap::Error) -> i32 {
    let printed = if answer.kind() == clap::error::ErrorKind::DisplayVersion {
        write_stdout(format_args!("warpmc {}\n", env!("CARGO_PKG_VERSION")))
    } else {
        use std::io::Write;
        answer.print().and_then(|()| std::io::stdout().flush()).map_err(|e| match e.kind() {
            std::io::ErrorKind::BrokenPipe => QuietExit(0).into(),
            _ => anyhow::Error::new(e).context("writing to standard output"),
        })
    };
    match printed {
        Ok(()) => answer.exit_code(),
        Err(e) if e.downcast_ref::<QuietExit>().is_some() => answer.exit_code(),
        Err(e) => {
            print_error(&format!("{e:#}"));
            1
        }
    }
}

/// `command` and its subcommands, every option that takes a value
/// accepting a negative number as one.
fn negative_numbers_are_values(command: clap::Command) -> clap::Command {
    command
        .mut_args(|a| if a.get_action().takes_values() { a.allow_negative_numbers(true) } else { a })
        .mut_subcommands(negative_numbers_are_values)
}

/// `args` with `--name VALUE` written as `--name=VALUE` (`-n VALUE` as
/// `-nVALUE`) where VALUE is a negative number clap does not take for one
/// (a negative exponent: `--field -1e-3`) and some subcommand's `--name`
/// takes a value.
fn numbers_joined_to_options(command: &clap::Command, args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    fn value_options(c: &clap::Command, out: &mut std::collections::HashSet<String>) {
        for a in c.get_arguments().filter(|a| a.get_action().takes_values()) {
            out.extend(a.get_long().map(|long| format!("--{long}")));
            out.extend(a.get_short().map(|short| format!("-{short}")));
        }
        for sub in c.get_subcommands() {
            value_options(sub, out);
        }
    }
    let mut takes_value = std::collections::HashSet::new();
    value_options(command, &mut takes_value);
    let mut out: Vec<std::ffi::OsString> = Vec::with_capacity(args.len());
    let mut args = args.into_iter().peekable();
    while let Some(a) = args.next() {
        if a == "--" {
            out.push(a);
            out.extend(args);
            break;
        }
        let negative_number = |v: &std::ffi::OsString| {
            v.to_str().is_some_and(|v| v.starts_with('-') && v.len() > 1 && v.parse::<f64>().is_ok())
        };
        if a.to_str().is_some_and(|name| takes_value.contains(name))
            && let Some(v) = args.next_if(negative_number)
        {
            let long = a.to_str().is_some_and(|name| name.starts_with("--"));
            let mut joined = a;
            if long {
                joined.push("=");
            }
            joined.push(v);
            out.push(joined);
        } else {
            out.push(a);
        }
    }
    out
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List CUDA devices (or say why there are none) and the CPU threads in use.
    Devices(devices::DevicesArgs),
    /// Random-number streams: dump raw output for test batteries, regenerate
    /// the MWC multiplier table.
    Rng(rng::RngArgs),
    /// Benchmarks, each beside a yardstick measured in the same run: the
    /// shuffle experiments of Demouth (GTC 2013), device reduce, scan, sort,
    /// transpose and atomics beside the copy bandwidth, flame renders and
    /// animation, the Potts kernels beside the baseline kernel of Ferrero et
    /// al. (2012).
    Bench(bench::BenchArgs),
    /// q-state Potts / Ising Monte Carlo: temperature sweeps with
    /// measurements, checkpoints and snapshots; benchmarks.
    Potts(potts::PottsArgs),
    /// Fractal flames from flam3 genomes: render, animate, describe, make
    /// and change genomes (flam3-genome's tools), and compare images.
    Flame(flame::FlameArgs),
}

/// An error another process reports: exit with this status and print
/// nothing. Under mpirun the quiet processes exit with status 0, since
/// mpirun ends every process as soon as one exits with another, perhaps
/// before the reporting process has printed; the job's status is the
/// reporting process's.
#[derive(Debug)]
pub(crate) struct QuietExit(pub(crate) i32);

/// Prints `error: {message}` as one line in one write, so that the line
/// stays whole when mpirun gathers the output of several processes. A line
/// break inside the message (a file name that holds one) is written `\n`,
/// except in NVRTC's log of a kernel it could not compile, which is kept
/// as NVRTC wrote it, a line per diagnostic, to be read.
pub(crate) fn print_error(message: &str) {
    use std::io::Write;
    let message = message.trim_end();
    let line = if message.contains("NVRTC could not compile") {
        format!("error: {message}\n")
    } else {
        format!("error: {}\n", message.replace('\n', "\\n").replace('\r', "\\r"))
    };
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

impl std::fmt::Display for QuietExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit status {}", self.0)
    }
}

impl std::error::Error for QuietExit {}

pub(crate) fn run(cli: Cli) -> anyhow::Result<()> {
    let launch = warpmc_mpi::Launch::from_env().filter(|l| l.size > 1);
    // What the first process also meets (started with the same command) it
    // reports, and its status ends the job; a later process reports it
    // only if the first is still waiting for it after a while.
    let refuse = |e: anyhow::Error| match launch {
        Some(l) if l.rank != 0 => later_process_fails(l.rank, l.size, &e),
        _ => e,
    };
    // Only `potts run` shares its work among processes; any other command
    // would run once in every process mpirun started.
    if launch.is_some() && !matches!(&cli.command, Command::Potts(p) if p.splits_across_processes()) {
        return Err(refuse(anyhow::anyhow!(
            "only `warpmc potts run` splits its work among the processes mpirun starts; run this command without \
             mpirun"
        )));
    }
    configure_threads(cli.threads).map_err(refuse)?;
    match cli.command {
        Command::Devices(args) => devices::run(args),
        Command::Rng(args) => rng::run(args),
        Command::Potts(args) => potts::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Flame(args) => flame::run(args),
    }
}

/// A process other than the first, under mpirun, that cannot go on for a
/// reason the first meets too when started with the same command: the
/// first then prints it, and its status ends the job while this process
/// waits. Started otherwise (another command, another build), the first
/// may be waiting for this process in MPI for ever: after the wait this
/// process says why and ends the job.
pub(crate) fn later_process_fails(rank: usize, size: usize, e: &anyhow::Error) -> ! {
    std::thread::sleep(std::time::Duration::from_secs(3));
    print_error(&format!("process {rank} of {size}: {e:#}"));
    std::process::exit(1);
}

/// The `--threads` given, for the commands a run prints to continue it.
pub(crate) static THREADS_GIVEN: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

/// The CPU thread pool: `--threads`, or rayon's own reading of
/// `RAYON_NUM_THREADS` once it is checked.
fn configure_threads(threads: Option<usize>) -> anyhow::Result<()> {
    // More threads than this never help (the CPU backends split work by
    // core) and would take minutes to start, or fail half-way.
    const MOST_THREADS: usize = 1024;
    // rayon reads RAYON_NUM_THREADS itself, quietly ignoring a value it
    // cannot parse (0 means every core).
    if threads.is_none()
        && let Some(v) = std::env::var_os("RAYON_NUM_THREADS").filter(|v| !v.is_empty())
    {
        let shown = v.to_string_lossy();
        match shown.trim().parse::<usize>() {
            Ok(n) if n > MOST_THREADS => {
                anyhow::bail!("RAYON_NUM_THREADS={n} is more than the {MOST_THREADS} CPU threads warpmc starts at most")
            }
            Ok(_) => {}
            Err(_) => anyhow::bail!(
                "RAYON_NUM_THREADS={shown:?} is not a number of threads (a whole number, 0 for every core); set one \
                 or unset it"
            ),
        }
    }
    if let Some(n) = threads {
        let _ = THREADS_GIVEN.set(n);
        anyhow::ensure!(n >= 1, "--threads must be at least 1");
        anyhow::ensure!(
            n <= MOST_THREADS,
            "--threads must be at most {MOST_THREADS} (this machine has {} cores)",
            std::thread::available_parallelism().map_or(1, |c| c.get())
        );
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global()
            .context("could not set up the CPU thread pool")?;
    }
    Ok(())
}

/// Writes to standard output as `print!` does, without its panic: a
/// reader that went away (`| head -1`) ends the program quietly with status
/// 0, as it ends `cat`; any other failure (`> /dev/full`) is an error.
pub(crate) fn write_stdout(args: std::fmt::Arguments<'_>) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_fmt(args).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(QuietExit(0).into()),
        Err(e) => Err(anyhow::Error::new(e).context("writing to standard output")),
    }
}

/// Standard output for a command that prints many lines with `writeln!`
/// (benchmark tables): a failure names standard output, and a
/// reader that went away (`| head -1`) ends the program quietly with status
/// 0, as it ends `cat` (see [`reader_gone`]).
pub(crate) struct Stdout(std::io::StdoutLock<'static>);

/// The cause inside the error of a write to [`Stdout`] whose reader went
/// away.
#[derive(Debug)]
struct StdoutReaderGone;

impl std::fmt::Display for StdoutReaderGone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("writing to standard output: its reader has gone")
    }
}

impl std::error::Error for StdoutReaderGone {}

impl Stdout {
    pub(crate) fn lock() -> Self {
        Stdout(std::io::stdout().lock())
    }

    fn named(e: std::io::Error) -> std::io::Error {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::io::Error::new(e.kind(), StdoutReaderGone)
        } else {
            std::io::Error::new(e.kind(), format!("writing to standard output: {e}"))
        }
    }
}

impl std::io::Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf).map_err(Self::named)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush().map_err(Self::named)
    }
}

/// Whether `e` comes from a write to [`Stdout`] whose reader went away:
/// no failure, the program ends quietly.
pub(crate) fn reader_gone(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .is_some_and(|inner| inner.is::<StdoutReaderGone>())
    })
}

/// A duration in the largest unit that keeps it readable.
pub(crate) fn duration(secs: f64) -> String {
    const UNITS: [(f64, &str); 5] =
        [(365.25 * 86400.0, "years"), (86400.0, "days"), (3600.0, "hours"), (60.0, "minutes"), (1.0, "seconds")];
    let (size, name) = UNITS.iter().find(|(size, _)| secs >= 2.0 * size).copied().unwrap_or((1.0, "seconds"));
    let n = secs / size;
    match n {
        _ if secs < 1.0 => "less than a second".to_string(),
        n if n < 1.5 => format!("1 {}", name.trim_end_matches('s')),
        n if n < 1e6 => format!("{n:.0} {name}"),
        n => format!("{n:.1e} {name}"),
    }
}

/// An estimate of a duration: "about 3 minutes", or "less than a
/// second" (which needs no "about").
pub(crate) fn about(secs: f64) -> String {
    match duration(secs) {
        d if d.starts_with("less") => d,
        d => format!("about {d}"),
    }
}

/// Parses an unsigned integer in decimal or with a `0x` prefix in hex.
pub(crate) fn parse_u64(s: &str) -> Result<u64, String> {
    let t = s.replace('_', "");
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => t.parse::<u64>(),
    };
    r.map_err(|_| format!("'{s}' is not an unsigned 64-bit integer (decimal, or hex with 0x)"))
}

/// The signal that asked the job to stop when it was not SIGINT (SIGTERM
/// from a batch system, SIGHUP from a closed terminal, SIGXCPU at a soft
/// CPU-time limit, SIGUSR1 or SIGUSR2 sent ahead of a time limit); 0
/// otherwise. It is handled as Ctrl-C, and
/// only the exit status tells them apart.
static STOPPED_BY: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// Stop signals other than SIGINT that have come and not yet been taken
/// by [`stop_on_signals`]'s handler: each is handed on as a SIGINT, and the
/// handler needs to know which of those were a person's Ctrl-C.
static UNTAKEN_STOP_SIGNALS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Whether the SIGINT being handled was handed on by [`on_stop_signal`]
/// (a SIGTERM, SIGHUP, …) rather than sent as itself.
fn take_stop_signal() -> bool {
    use std::sync::atomic::Ordering::SeqCst;
    UNTAKEN_STOP_SIGNALS.fetch_update(SeqCst, SeqCst, |n| n.checked_sub(1)).is_ok()
}

/// Signals, besides SIGINT, that stop a job as Ctrl-C does.
const STOP_SIGNALS: [libc::c_int; 5] = [libc::SIGTERM, libc::SIGHUP, libc::SIGXCPU, libc::SIGUSR1, libc::SIGUSR2];

extern "C" fn on_stop_signal(signal: libc::c_int) {
    STOPPED_BY.store(signal, std::sync::atomic::Ordering::SeqCst);
    UNTAKEN_STOP_SIGNALS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    // SAFETY: raise is async-signal-safe; ctrlc's SIGINT handler takes it
    // from here as it takes Ctrl-C.
    unsafe {
        libc::raise(libc::SIGINT);
    }
}

/// Whether `signal` was ignored when the program started: the way a job
/// is shielded from it (`nohup` ignores SIGHUP), which a program keeps.
fn ignored(signal: libc::c_int) -> bool {
    // SAFETY: sigaction with a null new action only reads the disposition
    // into `old`, a zeroed sigaction the call fills in.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

/// Calls `handler` on Ctrl-C (SIGINT), SIGHUP, SIGTERM, SIGXCPU, SIGUSR1
/// and SIGUSR2, from a thread of its own, and remembers which of the last
/// five came for [`interrupted_status`]. Those five stay ignored if they
/// were when the program started (under `nohup`, a closed terminal does not
/// stop the job). SIGINT is always heard, even where a shell started the
/// job ignoring it (a background job of a script): a SIGINT sent on purpose
/// (`kill -INT`, a test harness) saves and stops the job, and one from the
/// terminal does no worse.
pub(crate) fn on_interrupt(handler: impl FnMut() + Send + 'static) -> anyhow::Result<()> {
    use anyhow::Context as _;
    // Read before ctrlc installs its own handlers of SIGTERM and SIGHUP.
    let shielded: Vec<bool> = STOP_SIGNALS.iter().map(|&s| ignored(s)).collect();
    ctrlc::set_handler(handler).context("installing the Ctrl-C handler")?;
    for (signal, shielded) in STOP_SIGNALS.into_iter().zip(shielded) {
        let action = if shielded { libc::SIG_IGN } else { on_stop_signal as *const () as libc::sighandler_t };
        // SAFETY: on_stop_signal is an extern "C" function of the signature
        // a handler has, and does only async-signal-safe things (an atomic
        // store, raise); it replaces ctrlc's SIGTERM handler, whose
        // work it hands on (and ctrlc's SIGHUP handler likewise), or
        // SIG_IGN puts back the disposition the program started with.
        let previous = unsafe { libc::signal(signal, action) };
        anyhow::ensure!(previous != libc::SIG_ERR, "installing the handler of signal {signal}");
    }
    Ok(())
}

/// A Ctrl-C this soon after the first stop signal is the same request, not
/// a second one: `timeout -s INT` and some batch systems signal the
/// process and then its process group, microseconds apart.
const SAME_REQUEST: std::time::Duration = std::time::Duration::from_millis(300);

/// Refuses an output path that holds a Potts run's checkpoint (hours of
/// a run that no image, genome or table should replace; these commands
/// have no --force: move the checkpoint first), then checks that the path
/// can be written ([`warpmc_host::output::check_writable`]).
pub(crate) fn check_output(option: &str, path: &std::path::Path) -> anyhow::Result<()> {
    use warpmc_potts::checkpoint::{FileContents, probe};
    if matches!(probe(path), Ok(FileContents::Checkpoint)) {
        anyhow::bail!("{option} {}: the file holds a potts run's checkpoint; name another file", path.display());
    }
    warpmc_host::output::check_writable(path)?;
    Ok(())
}

/// The first Ctrl-C, SIGHUP or other stop signal ([`on_interrupt`]) sets
/// `stop` (the job stops at its next check, saving what it has); a Ctrl-C
/// (SIGINT) that comes later calls `again`, which ends the process at
/// once. Other stop signals that come later change nothing: batch systems
/// and mpirun send SIGTERM more than once (SLURM signals mpirun and the
/// processes, and mpirun passes its own on a second later), and the job
/// must go on saving. A signal other than SIGINT ignored when the program
/// started stays ignored.
pub(crate) fn stop_on_signals(
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    mut again: impl FnMut() + Send + 'static,
) -> anyhow::Result<()> {
    let mut first: Option<std::time::Instant> = None;
    on_interrupt(move || {
        let not_a_ctrl_c = take_stop_signal();
        match first {
            None => {
                first = Some(std::time::Instant::now());
                stop.store(true, std::sync::atomic::Ordering::SeqCst);
                // An output waiting for a FIFO's reader gives up, so that
                // the orderly stop (the checkpoint, the other outputs) goes
                // on.
                warpmc_host::output::stop_waiting();
            }
            Some(_) if not_a_ctrl_c => {}
            Some(at) if at.elapsed() < SAME_REQUEST => {}
            Some(_) => again(),
        }
    })
}

/// The exit status of a command stopped by a signal, as shells report
/// them: 128 + the signal's number (143 after SIGTERM, 129 after SIGHUP,
/// 152 after SIGXCPU), 130 after Ctrl-C.
pub(crate) fn interrupted_status() -> i32 {
    match STOPPED_BY.load(std::sync::atomic::Ordering::SeqCst) {
        0 => 130,
        signal => 128 + signal,
    }
}
