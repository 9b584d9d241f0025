//! `warpmc`: the command-line front end. Argument parsing, progress and
//! output only; the work lives in the library crates under `crates/`.

// The doc comments of this crate are clap's --help texts, written for a
// terminal: `<flame>` there names an XML element, not an HTML tag.
#![allow(rustdoc::invalid_html_tags)]

mod cmd;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = match cmd::Cli::try_parse() {
        Ok(cli) => cli,
        // Under mpirun every process parses the same flags: the first
        // prints the error (or --help) and sets the job's status; the
        // others leave quietly, with status 0 so that mpirun does not end
        // the first before it has printed.
        Err(_) if warpmc_mpi::Launch::from_env().is_some_and(|l| l.rank > 0) => std::process::exit(0),
        Err(e) => e.exit(),
    };
    match cmd::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if let Some(q) = e.downcast_ref::<cmd::QuietExit>() {
                return ExitCode::from(q.0 as u8);
            }
            // One line, the whole cause chain, no backtrace: user mistakes and
            // environment problems are reported, never panicked on.
            cmd::print_error(&format!("{e:#}"));
            ExitCode::FAILURE
        }
    }
}
