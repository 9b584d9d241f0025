//! `warpmc`: the command-line front end. Argument parsing, progress and
//! output only; the work lives in the library crates under `crates/`.

// The doc comments of this crate are clap's --help texts, written for a
// terminal: `<flame>` there names an XML element, not an HTML tag.
#![allow(rustdoc::invalid_html_tags)]

mod cmd;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cmd::Cli::parse();
    match cmd::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line, the whole cause chain, no backtrace: user mistakes and
            // environment problems are reported, never panicked on.
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
