//! What every CLI test file needs: the binary under test and its output as
//! text.

// Each test file uses its own subset of these helpers.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// The binary under test: Cargo's build of it, or `WARPMC_BIN` (used when
/// the packed tests run on a GPU machine next to a packed binary).
///
/// The first call also gives the stop signals their default action in this
/// process, so that the programs it starts inherit them: warpmc keeps a
/// stop signal ignored if it was at its start (as under `nohup`), and the
/// tests that send one must not depend on how the test run was started.
/// It also makes sure the programs find a palette file ([`palettes`]).
pub(crate) fn bin() -> PathBuf {
    static SET_UP: std::sync::Once = std::sync::Once::new();
    SET_UP.call_once(|| {
        for signal in [libc::SIGHUP, libc::SIGINT, libc::SIGTERM, libc::SIGXCPU, libc::SIGUSR1, libc::SIGUSR2] {
            // SAFETY: setting a signal's disposition to SIG_DFL installs no
            // handler; nothing in the test harness relies on these signals.
            unsafe {
                libc::signal(signal, libc::SIG_DFL);
            }
        }
        if let Some(file) = palettes() {
            // For warpmc, and for flam3 (`flam3_palettes`) in the tests
            // that compare with it. SAFETY: the tests read the environment
            // only through std (Command, env::var), whose lock orders these
            // writes before their reads.
            unsafe {
                std::env::set_var("FLAM3_PALETTES", &file);
                std::env::set_var("flam3_palettes", &file);
            }
        }
    });
    std::env::var_os("WARPMC_BIN").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_warpmc")))
}

/// Runs warpmc with `args` to completion.
pub(crate) fn warpmc(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().expect("warpmc runs")
}

/// Standard error as text.
pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Standard output as text.
pub(crate) fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs warpmc with `args` under `ulimit -v kib` (an address-space limit
/// the memory checks read), with two threads and two malloc arenas so that
/// the limit is the program's, not the thread stacks'. Memory tests mean the
/// same under it on a laptop and on a 128 GiB GPU host.
pub(crate) fn warpmc_within(kib: u64, args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
        .arg(bin())
        .args(["--threads", "2"])
        .args(args)
        .env("MALLOC_ARENA_MAX", "2")
        .output()
        .expect("sh runs")
}

/// The CSV rows of a `potts run --out` file without its `#` lines and the
/// columns that name how they were computed (rate, backend).
pub(crate) fn csv_physics(path: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut rows = text.lines().filter(|l| !l.starts_with('#'));
    let header: Vec<&str> = rows.next().expect("a header").split(',').collect();
    let keep: Vec<usize> = (0..header.len()).filter(|&i| !matches!(header[i], "flips_per_ns" | "backend")).collect();
    rows.map(|r| {
        let fields: Vec<&str> = r.split(',').collect();
        keep.iter().map(|&i| fields[i]).collect::<Vec<_>>().join(",")
    })
    .collect()
}

/// The palette file for the programs the tests start, where warpmc would
/// find none by itself (no `$FLAM3_PALETTES` or `$flam3_palettes`, no
/// flam3 installed): the copy beside a checkout (`../shared/palettes`, as
/// on the machines that run the packed GPU tests), else palettes made up
/// here. The genomes the tests render name flam3's palettes by number; the
/// tests that compare with flam3 itself run only where flam3 is
/// installed, with its own file.
fn palettes() -> Option<PathBuf> {
    let named = ["FLAM3_PALETTES", "flam3_palettes"].iter().any(|v| std::env::var_os(v).is_some_and(|v| !v.is_empty()));
    if named || std::path::Path::new("/usr/share/flam3/flam3-palettes.xml").is_file() {
        return None;
    }
    let beside = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/palettes/flam3-palettes.xml");
    if beside.is_file() {
        return Some(beside);
    }
    // 701 palettes (flam3's numbers 0-700) of smooth made-up colours.
    // One file for every test binary, placed whole by a rename.
    let file = std::env::temp_dir().join("warpmc-test-palettes.xml");
    let part = std::env::temp_dir().join(format!("warpmc-test-palettes-{}.xml", std::process::id()));
    let mut xml = String::from("<palettes>\n");
    for n in 0..701u32 {
        let data: String = (0..256u32)
            .map(|i| {
                let c = |k: u32| (n * k + i * (k % 7 + 1)) % 256;
                format!("00{:02x}{:02x}{:02x}", c(37), c(101), c(173))
            })
            .collect();
        xml.push_str(&format!("<palette number=\"{n}\" name=\"made-up-{n}\" data=\"{data}\"/>\n"));
    }
    xml.push_str("</palettes>\n");
    std::fs::write(&part, xml).and_then(|()| std::fs::rename(&part, &file)).ok()?;
    println!(
        "note: no flam3-palettes.xml on this machine (Debian's flam3-utils has it): the tests use made-up palettes"
    );
    Some(file)
}
