//! `warpmc`: the command-line front end. Argument parsing, progress and
//! output only; the work lives in the library crates under `crates/`.

// The doc comments of this crate are clap's --help texts, written for a
// terminal: `<flame>` there names an XML element, not an HTML tag.
#![allow(rustdoc::invalid_html_tags)]

mod cmd;

use std::process::ExitCode;

fn main() -> ExitCode {
    // NVLink SHARP stays off in NCCL (warpmc never creates multicast
    // objects), set before anything can start NCCL or another thread.
    // SAFETY: the first statement of main: no other thread exists yet to
    // read the environment while it changes.
    unsafe { std::env::set_var("NCCL_NVLS_ENABLE", "0") };
    // Past a file-size limit (`ulimit -f`, a batch system's quota) a write
    // then fails with EFBIG, which is reported and leaves the previous file
    // whole, instead of SIGXFSZ killing the process with nothing said and
    // nothing saved. ffmpeg inherits it and reports the failure too.
    // SAFETY: setting a signal's disposition to SIG_IGN has no handler to
    // run, and no other thread exists yet.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    let cli = match cmd::Cli::try_parse_args() {
        Ok(cli) => cli,
        // --help or --version on a process of an mpirun job of several:
        // the others may be running, and waiting for it in MPI.
        #[cfg(feature = "mpi")]
        Err(e) if is_help(&e) && warpmc_mpi::Launch::from_env().is_some_and(|l| l.size > 1) => {
            cmd::help_under_mpirun(e)
        }
        // Under mpirun every process parses the same flags: the first
        // prints the error (or --help) and sets the job's status, and the
        // others leave quietly (unless the first is left waiting).
        Err(e) if warpmc_mpi::Launch::from_env().is_some_and(|l| l.rank > 0) => later_process_refuses(&e),
        // --help, --version, and the help of a command given without its
        // subcommand, as clap prints them.
        Err(e) if is_help(&e) => std::process::exit(cmd::print_clap_answer(&e)),
        Err(e) => {
            cmd::print_error(&one_line(&e.render().to_string()));
            std::process::exit(e.exit_code());
        }
    };
    match cmd::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if let Some(q) = e.downcast_ref::<cmd::QuietExit>() {
                return ExitCode::from(q.0 as u8);
            }
            if cmd::reader_gone(&e) {
                return ExitCode::SUCCESS;
            }
            // One line, the whole cause chain, no backtrace: user mistakes and
            // environment problems are reported, never panicked on.
            cmd::print_error(&format!("{e:#}"));
            ExitCode::FAILURE
        }
    }
}

/// A process other than the first that cannot parse its arguments under
/// mpirun. Started with the same flags as the first (as it should be), it
/// leaves quietly: the first prints the error, and its status ends the job
/// while this process waits. Started with other flags, the first is
/// waiting for it in MPI for ever: after the wait this process says why
/// and ends the job with clap's status.
fn later_process_refuses(e: &clap::Error) -> ! {
    if is_help(e) {
        std::process::exit(0);
    }
    std::thread::sleep(std::time::Duration::from_secs(3));
    let (rank, size) = warpmc_mpi::Launch::from_env().map_or((0, 1), |l| (l.rank, l.size));
    cmd::print_error(&format!(
        "process {rank} of {size}: {} (every process of a run must be started with the same command)",
        one_line(&e.render().to_string())
    ));
    std::process::exit(e.exit_code());
}

/// Whether clap's answer is what was asked for (--help, --version, or the
/// help of a command given without its subcommand), not a mistake.
fn is_help(e: &clap::Error) -> bool {
    !e.use_stderr() || e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
}

/// clap's message for a mistake in the arguments as one line (its
/// "error: " prefix dropped, for print_error to add): the message and its
/// tips, without the usage block and the pointer to --help that follow.
fn one_line(rendered: &str) -> String {
    let mut parts = Vec::new();
    for line in rendered.lines().map(str::trim) {
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        if !line.is_empty() {
            parts.push(line);
        }
    }
    let text = parts.iter().fold(String::new(), |text, part| match (text.is_empty(), part.starts_with("tip:")) {
        (true, _) => part.to_string(),
        (false, true) => format!("{text}; {part}"),
        (false, false) => format!("{text} {part}"),
    });
    text.strip_prefix("error: ").unwrap_or(&text).to_string()
}
