//! The `warpmc` command as a user meets it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::{bin, stderr, warpmc};

#[test]
fn philox_dump_starts_with_random123_known_answer() {
    let o = warpmc(&["rng", "dump", "--generator", "philox", "--count", "4"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let words: Vec<u32> = o.stdout.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    // Seed 0, stream 0, block 0 = Philox4x32-10 of zero counter and key.
    assert_eq!(words, [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]);
}

#[test]
fn dump_matches_the_library_for_both_generators_and_interleaving() {
    use warpmc_rng::{Domain, Mwc, PhiloxStream, RandomSource};
    let o =
        warpmc(&["rng", "dump", "-g", "mwc", "--seed", "0x10", "--stream", "5", "--count", "1000", "--format", "hex"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut g = Mwc::for_unit(16, 5);
    let want: String = (0..1000).map(|_| format!("{:08x}\n", g.next_u32())).collect();
    assert_eq!(String::from_utf8(o.stdout).unwrap(), want);

    let o = warpmc(&["rng", "dump", "-g", "philox", "--seed", "3", "--stream", "7", "--streams", "3", "--count", "10"]);
    let got: Vec<u32> = o.stdout.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    let mut s: Vec<PhiloxStream> = (7..10).map(|i| PhiloxStream::new(3, Domain::User.stream(i))).collect();
    let want: Vec<u32> = (0..10).map(|i| s[i % 3].next_u32()).collect();
    assert_eq!(got, want);

    // The Potts words: unit 0's 64 (rows alternating generators), then unit 1's.
    let o = warpmc(&["rng", "dump", "-g", "potts", "--seed", "9", "--stream", "2", "--count", "136"]);
    let got: Vec<u32> = o.stdout.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    let stream = warpmc_potts::algorithm::chain_stream(0, 2);
    let mut want = Vec::new();
    for unit in 0..3 {
        let mut g = warpmc_potts::algorithm::unit_generators(9, stream, 0, 0, unit);
        for row in 0..8 {
            for _ in 0..8 {
                want.push(g[row % 2].next_u32());
            }
        }
    }
    assert_eq!(got, want[..136]);
}

#[test]
fn dump_stops_quietly_when_the_reader_goes_away() {
    use std::io::Read;
    let mut child = Command::new(bin())
        .args(["rng", "dump", "-g", "philox"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut buf = vec![0u8; 1 << 16];
    child.stdout.as_mut().unwrap().read_exact(&mut buf).unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "exit {:?}: {}", out.status, stderr(&out));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
}

#[test]
fn user_mistakes_get_one_line_and_a_nonzero_exit() {
    for args in [
        &["rng", "dump", "-g", "mwc", "--stream", "0x1000000000000"][..],
        &["rng", "dump", "-g", "philox", "--streams", "0"][..],
        &["rng", "multipliers", "--start", "0x100000000", "--count", "1"][..],
        &["--threads", "0", "devices"][..],
        &["--threads", "100000", "devices"][..],
        &["rng", "multipliers", "--count", "18446744073709551615", "--start", "100"][..],
        &["rng", "multipliers", "--count", "5", "--start", "100"][..],
        // Checked before a GPU is looked for.
        &["bench", "transpose", "--min-time=-1"][..],
        &["bench", "transpose", "--min-time", "nan"][..],
        &["bench", "transpose", "--runs", "0"][..],
    ] {
        let o = warpmc(args);
        assert!(!o.status.success(), "{args:?} succeeded");
        let e = stderr(&o);
        assert!(e.starts_with("error: ") && e.lines().count() == 1, "{args:?}: {e:?}");
        assert!(!e.contains("panicked"), "{e}");
    }
    let o = Command::new(bin()).arg("devices").env("RAYON_NUM_THREADS", "100000").output().unwrap();
    assert!(!o.status.success() && stderr(&o).contains("RAYON_NUM_THREADS=100000"), "{}", stderr(&o));
    // rayon would ignore a value it cannot parse and use every core.
    for bad in ["abc", "-2", "4.5"] {
        let o = Command::new(bin()).arg("devices").env("RAYON_NUM_THREADS", bad).output().unwrap();
        let e = stderr(&o);
        assert!(!o.status.success() && e.contains("is not a number of threads") && e.lines().count() == 1, "{e}");
    }
    let o = Command::new(bin()).args(["--threads", "1", "devices"]).env("RAYON_NUM_THREADS", "abc").output().unwrap();
    assert!(o.status.success(), "--threads takes precedence: {}", stderr(&o));
    let o = Command::new(bin()).arg("devices").env("RAYON_NUM_THREADS", "0").output().unwrap();
    assert!(o.status.success(), "0 means every core: {}", stderr(&o));
    // Argument syntax errors come from clap: exit status 2, no panic.
    let o = warpmc(&["rng", "dump", "--generator", "xorshift"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("possible values: philox, mwc"));
    // A negative number is a value, told what is wrong with it, in every
    // command (not "unexpected argument '-5'").
    for (args, value) in [
        (&["--threads", "-2", "devices"][..], "-2"),
        (&["potts", "run", "--q", "2", "--size", "8", "--temp", "1", "--sweeps", "-5"][..], "-5"),
        (&["bench", "transpose", "--runs", "-3"][..], "-3"),
        (&["rng", "dump", "--count", "-1"][..], "-1"),
    ] {
        let o = warpmc(args);
        let e = stderr(&o);
        assert!(!o.status.success() && e.contains(&format!("invalid value '{value}'")), "{args:?}: {e}");
        assert!(e.lines().count() == 1 && !e.contains("unexpected argument"), "{args:?}: {e}");
    }
    // Also with a negative exponent, which clap alone takes for an option,
    // after a long or a short option.
    let genome = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/flames/test.flam3");
    for (args, words) in [
        (&["potts", "run", "--q", "3", "--size", "8", "--temp", "1", "--field", "-1e-80"][..], "the field h = -1e-80"),
        (
            &["flame", "render", genome, "-o", "x.png", "--backend", "cpu", "-s", "-1e-3"][..],
            "size scale must be positive",
        ),
    ] {
        let o = warpmc(args);
        let e = stderr(&o);
        assert!(!o.status.success() && e.contains(words), "{args:?}: {e}");
        assert!(e.trim().lines().count() == 1 && !e.contains("unexpected argument"), "{args:?}: {e}");
    }
}

#[test]
fn multipliers_command_reproduces_the_table() {
    let o = warpmc(&["rng", "multipliers", "--count", "50"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let got: Vec<u32> = String::from_utf8(o.stdout).unwrap().lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(got[..], warpmc_rng::multipliers::table()[..50]);
    let o = warpmc(&["rng", "multipliers", "--count", "300", "--start", "4250000000", "--verify"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("verified: 300 multipliers"), "{}", stderr(&o));
    // Starting above the table: the extra multipliers are not a mismatch.
    let o = warpmc(&["rng", "multipliers", "--count", "300", "--start", "4278300000", "--verify"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // A range the table does not cover is said so, not "verified".
    let o = warpmc(&["rng", "multipliers", "--count", "5", "--start", "3000000000", "--verify"]);
    assert!(!o.status.success() && stderr(&o).contains("does not overlap"), "{}", stderr(&o));
}

#[test]
fn multipliers_out_writes_the_table_format() {
    let path = warpmc_testkit::scratch_dir("cli").join("multipliers.u32le");
    let o = warpmc(&["rng", "multipliers", "--count", "20", "--out", path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes, warpmc_rng::multipliers::to_le_bytes(&warpmc_rng::multipliers::table()[..20]));
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn multipliers_out_to_a_missing_directory_fails_before_the_search() {
    // The whole table's search takes minutes; the bad path must not wait
    // for it.
    let started = std::time::Instant::now();
    let o = warpmc(&["rng", "multipliers", "--out", "/nonexistent/dir/table.u32le"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("/nonexistent/dir"), "{}", stderr(&o));
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "found only after the search");
}

#[test]
fn help_teaches() {
    let o = warpmc(&["rng", "dump", "--help"]);
    let h = String::from_utf8(o.stdout).unwrap();
    assert!(h.contains("dieharder -a -g 200") && h.contains("--streams"), "{h}");
    let o = warpmc(&["--help"]);
    let h = String::from_utf8(o.stdout).unwrap();
    assert!(h.contains("devices") && h.contains("rng"), "{h}");
    // A command without its subcommand shows the whole help (exit status 2),
    // not an argument error shortened to one line.
    for args in [&[][..], &["potts"][..], &["flame", "genome"][..]] {
        let o = warpmc(args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(e.contains("Usage:") && e.contains("Commands:") && !e.starts_with("error"), "{args:?}: {e}");
    }
}

#[test]
fn version_names_the_program_after_any_subcommand() {
    let want = format!("warpmc {}\n", env!("CARGO_PKG_VERSION"));
    for args in [&["--version"][..], &["-V"], &["potts", "run", "-V"], &["flame", "genome", "random", "--version"]] {
        let o = warpmc(args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert_eq!(String::from_utf8(o.stdout).unwrap(), want, "{args:?}");
    }
}

/// `warpmc ARGS > /dev/full`: a standard output that cannot take what is
/// printed is one error line naming it, never a panic or a silent success.
fn to_dev_full(args: &[&str]) -> Option<Output> {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").ok()?;
    Some(Command::new(bin()).args(args).stdout(full).output().unwrap())
}

#[test]
fn help_version_and_tables_into_a_full_disk_or_a_closed_pipe() {
    for args in [&["-V"][..], &["potts", "run", "--version"], &["--help"], &["potts", "bench", "--help"]] {
        let Some(o) = to_dev_full(args) else {
            println!("SKIPPED help_version_and_tables_into_a_full_disk_or_a_closed_pipe: no /dev/full");
            return;
        };
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(err.lines().count() == 1 && err.contains("error: writing to standard output"), "{args:?}: {err}");
    }
    // A reader that goes away (`| head -1`) after the first line of a
    // benchmark table ends it quietly.
    let mut child = Command::new(bin())
        .args(["potts", "bench", "--backend", "cpu", "--sizes", "16,32,64,128", "--seconds", "0.05"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::BufRead;
        let mut first = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "exit {:?}: {}", o.status, stderr(&o));
    assert!(!stderr(&o).lines().any(|l| l.starts_with("error")), "{}", stderr(&o));
}

// ---- `warpmc devices` on machines without a usable GPU ---------------------
//
// A stand-in libcuda.so, built from C here, plays each kind of broken
// machine: a driver that fails to start, one that sees no devices, one too
// old to have the entry points warpmc needs, and a GPU with no NVRTC.

const FAKE_DRIVER: &str = r#"
#include <stdlib.h>
#include <string.h>
typedef int CUresult;
static int mode(void) { const char* m = getenv("FAKE_CUDA_MODE"); return m ? atoi(m) : 0; }
CUresult cuInit(unsigned f) { (void)f; return mode() == 1 ? 100 : 0; }
CUresult cuDriverGetVersion(int* v) { *v = 13000; return 0; }
CUresult cuGetErrorName(CUresult e, const char** s) { *s = e == 100 ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_UNKNOWN"; return 0; }
CUresult cuGetErrorString(CUresult e, const char** s) { *s = e == 100 ? "no CUDA-capable device is detected" : "unknown error"; return 0; }
CUresult cuDeviceGetCount(int* n) { *n = mode() == 3 ? 1 : 0; return 0; }
CUresult cuDeviceGet(int* d, int i) { *d = i; return 0; }
CUresult cuDeviceGetName(char* name, int len, int d) { (void)d; strncpy(name, "Fake GPU 9000", len); return 0; }
CUresult cuDeviceGetAttribute(int* v, int attr, int d) { (void)d; *v = attr == 75 ? 9 : attr == 76 ? 0 : 132; return 0; }
CUresult cuDeviceTotalMem_v2(size_t* b, int d) { (void)d; *b = (size_t)80 << 30; return 0; }
#define STUB(name) CUresult name(void) { return 999; }
STUB(cuDevicePrimaryCtxRetain) STUB(cuDevicePrimaryCtxRelease_v2) STUB(cuCtxSetCurrent)
STUB(cuCtxGetCurrent) STUB(cuCtxSynchronize) STUB(cuCtxGetStreamPriorityRange) STUB(cuStreamCreateWithPriority)
STUB(cuStreamSynchronize) STUB(cuMemAlloc_v2)
STUB(cuMemAllocAsync) STUB(cuMemFree_v2) STUB(cuMemGetInfo_v2) STUB(cuMemFreeAsync)
STUB(cuMemcpyHtoDAsync_v2) STUB(cuMemcpyDtoHAsync_v2) STUB(cuMemcpyDtoDAsync_v2) STUB(cuMemsetD8Async)
STUB(cuModuleLoadData) STUB(cuModuleGetFunction) STUB(cuModuleUnload) STUB(cuLaunchKernel)
STUB(cuEventCreate) STUB(cuEventRecord) STUB(cuEventSynchronize) STUB(cuEventDestroy_v2)
#ifndef OLD_DRIVER
STUB(cuEventElapsedTime_v2)
#endif
"#;

/// Builds the stand-in driver into its own directory; `None` without a C
/// compiler.
fn fake_driver(old: bool) -> Option<PathBuf> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let dir = warpmc_testkit::scratch_dir("fake-cuda").join(if old { "old" } else { "new" });
    std::fs::create_dir_all(&dir).ok()?;
    std::fs::write(dir.join("fake.c"), FAKE_DRIVER).ok()?;
    let mut cmd = Command::new(cc);
    cmd.args(["-shared", "-fPIC", "-o"]).arg(dir.join("libcuda.so")).arg(dir.join("fake.c"));
    if old {
        cmd.arg("-DOLD_DRIVER");
    }
    match cmd.output() {
        Ok(o) if o.status.success() => Some(dir),
        _ => None,
    }
}

fn devices_with(dir: &Path, mode: &str, json: bool) -> Output {
    let mut cmd = Command::new(bin());
    cmd.arg("devices").env("LD_LIBRARY_PATH", dir).env("FAKE_CUDA_MODE", mode).env("WARPMC_NVRTC", dir.join("absent"));
    if json {
        cmd.arg("--json");
    }
    cmd.output().unwrap()
}

#[test]
fn devices_explains_every_kind_of_missing_gpu() {
    let (Some(dir), Some(old_dir)) = (fake_driver(false), fake_driver(true)) else {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "SKIPPED devices_explains_every_kind_of_missing_gpu: no C compiler");
        return;
    };
    let cases = [
        (
            &dir,
            "1",
            "no CUDA device (the CUDA driver did not start: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected))",
        ),
        (&dir, "2", "no CUDA device (the driver reports no devices)"),
        (&old_dir, "2", "lacks cuEventElapsedTime_v2: the NVIDIA driver is too old"),
        (&dir, "3", "no CUDA device (WARPMC_NVRTC="),
    ];
    for (d, mode, expect) in cases {
        let o = devices_with(d, mode, false);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "mode {mode}: {}", stderr(&o));
        assert!(out.contains(expect), "mode {mode}: expected {expect:?} in\n{out}");
        assert!(out.contains("CPU backend:"), "{out}");
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    }
    // With a device but no NVRTC the GPU is still listed.
    let o = devices_with(&dir, "3", false);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("GPU 0: Fake GPU 9000") && out.contains("132 SMs"), "{out}");
    let o = devices_with(&dir, "3", true);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["cuda_usable"], false);
    assert_eq!(v["devices"][0]["name"], "Fake GPU 9000");
    assert!(v["nvrtc"]["error"].as_str().unwrap().contains("WARPMC_NVRTC"));
    // WARPMC_DEVICE naming a GPU the machine lacks, or no ordinal at all:
    // the listing, then one line and a failure, as every GPU command gives.
    for (value, expect) in [
        ("1", "WARPMC_DEVICE=1 names no GPU of this machine (it has GPU 0 only)"),
        ("abc", "WARPMC_DEVICE=abc is not a device ordinal"),
    ] {
        for json in [false, true] {
            let mut cmd = Command::new(bin());
            cmd.arg("devices").env("LD_LIBRARY_PATH", &dir).env("FAKE_CUDA_MODE", "3").env("WARPMC_DEVICE", value);
            if json {
                cmd.arg("--json");
            }
            let o = cmd.output().unwrap();
            assert_eq!(o.status.code(), Some(1), "{value} {json}: {}", stderr(&o));
            assert!(stderr(&o).contains(expect) && stderr(&o).lines().count() == 1, "{value}: {}", stderr(&o));
            assert!(String::from_utf8_lossy(&o.stdout).contains("Fake GPU 9000"), "{value} {json}");
        }
    }
    let o = Command::new(bin())
        .arg("devices")
        .env("LD_LIBRARY_PATH", &dir)
        .env("FAKE_CUDA_MODE", "3")
        .env("WARPMC_DEVICE", "0")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&old_dir);
}

#[test]
fn devices_on_this_machine_never_fails() {
    let o = warpmc(&["devices"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("CPU backend:"), "{out}");
    // The command reports what the library finds.
    let usable = warpmc_gpu::probe().unusable_reason().is_none();
    assert_eq!(out.contains("GPU 0: "), usable, "{out}");
    assert_eq!(out.contains("no CUDA device ("), !usable, "{out}");
    let o = warpmc(&["devices", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["cpu_threads"].as_u64().unwrap() >= 1);
    assert_eq!(v["cuda_usable"], usable);
    if usable {
        let d = &v["devices"][0];
        assert!(d["sm_count"].as_u64().unwrap() >= 1 && d["total_memory"].as_u64().unwrap() > 0, "{d}");
    }
}

#[test]
fn a_short_multiplier_table_never_replaces_a_file() {
    let dir = warpmc_testkit::scratch_dir("cli");
    std::fs::create_dir_all(&dir).unwrap();
    let table = dir.join("t.u32le");
    std::fs::write(&table, b"the old table").unwrap();
    let o = warpmc(&["rng", "multipliers", "--count", "100", "--start", "10", "--out", table.to_str().unwrap()]);
    assert!(!o.status.success() && stderr(&o).contains("nothing written"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&table).unwrap(), b"the old table");
}

#[test]
fn four_billion_interleaved_streams_are_refused_not_an_abort() {
    let args = ["rng", "dump", "-g", "philox", "--count", "4", "--streams", "4294967295"];
    let o = common::warpmc_within(4 << 20, &args);
    assert!(!o.status.success() && stderr(&o).contains("of host memory"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked") && o.status.code() == Some(1), "{}", stderr(&o));
}
