//! `warpmc bench reduce|scan|sort|transpose|atomics|shuffle` as a user meets
//! them: bad input is one line and a non-zero exit before any GPU is looked
//! for; without a GPU each says in one line that it needs one; with one, a
//! tiny run prints its table or its JSON rows.

mod common;
use common::{stderr, stdout, warpmc, warpmc_within};

#[test]
fn bad_bench_arguments_get_one_line_and_a_nonzero_exit() {
    for args in [
        &["bench", "reduce", "--n", "0"][..],
        &["bench", "scan", "--n", "0"][..],
        &["bench", "reduce", "--exclusive"][..],
        &["bench", "sort", "--n", "0"][..],
        &["bench", "transpose", "--shapes", "0x5"][..],
        &["bench", "transpose", "--kernels", "fastest"][..],
        &["bench", "transpose", "--batch", "0"][..],
        &["bench", "atomics", "--runs", "0"][..],
        &["bench", "atomics", "--edge", "2000", "--per-cell", "1000"][..],
        &["bench", "shuffle", "--reps", "0"][..],
        &["bench", "shuffle-diversity", "--rounds", "18446744073709551615", "--no-images"][..],
        &["potts", "bench", "--seconds", "1e308"][..],
        &["potts", "bench", "--sizes", "64,64"][..],
        &["potts", "bench", "--q", "2,2"][..],
        &["potts", "bench", "--sizes", "131072", "--backend", "cpu", "--ensembles", "off"][..],
        &["potts", "bench", "--autocorrelation", "--tau-sizes", "8,8"][..],
        &["potts", "bench", "--autocorrelation", "--tau-seconds", "1e308"][..],
        &["potts", "bench", "--autocorrelation", "--tau-length", "inf"][..],
        &["potts", "bench", "--autocorrelation", "--tau-algorithms", "wolff,heat-bath,wolff"][..],
        &["potts", "bench", "--backend", "cpu", "--ensembles", "only", "--ensemble-small", "64x99999999999"][..],
    ] {
        let o = warpmc(args);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(stdout(&o).is_empty(), "{args:?} printed before failing: {}", stdout(&o));
        let e = stderr(&o);
        assert!(e.starts_with("error: ") && e.lines().count() == 1, "{args:?}: {e:?}");
        assert!(!e.contains("panicked"), "{e}");
    }
}

#[test]
fn unknown_names_are_refused_by_the_parser() {
    for (args, what) in [
        (&["bench", "reduce", "--types", "f16"][..], "unknown element type 'f16'"),
        (&["bench", "scan", "--ops", "product"][..], "unknown operator 'product'"),
        (&["bench", "sort", "--keys", "u8"][..], "unknown element type 'u8'"),
        (&["bench", "transpose", "--types", "u32"][..], "unknown element type 'u32'"),
        (&["bench", "atomics", "--strategies", "fast"][..], "unknown strategy 'fast'"),
        (&["bench", "atomics", "--orders", "unknown"][..], "unknown key order 'unknown'"),
        (&["bench", "atomics", "--types", "f16"][..], "unknown value type 'f16'"),
        (&["bench", "atomics", "--flame-size", "0x5"][..], "has no pixels"),
        (&["bench", "shuffle", "--experiments", "gather"][..], "unknown experiment 'gather'"),
        (&["bench", "shuffle", "--types", "fp16"][..], "unknown element type 'fp16'"),
    ] {
        let o = warpmc(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let e = stderr(&o);
        assert!(e.contains(what), "{args:?}: {e}");
        assert!(!e.contains("panicked"), "{e}");
    }
}

/// Either a GPU runs the smallest case and prints it, or the command says
/// in one line that it needs one.
#[test]
fn each_bench_runs_or_says_it_needs_a_gpu() {
    let cases: [(&str, &[&str]); 6] = [
        ("reduce", &["bench", "reduce", "--n", "1000", "--types", "u32", "--runs", "1"]),
        ("scan", &["bench", "scan", "--n", "1000", "--types", "f64", "--exclusive", "--runs", "1"]),
        ("sort", &["bench", "sort", "--n", "1000", "--keys", "i32", "--values", "--runs", "1"]),
        (
            "transpose",
            &["bench", "transpose", "--shapes", "33x31", "--types", "u8", "--kernels", "copy,best", "--min-time", "0"],
        ),
        (
            "atomics",
            &["bench", "atomics", "--workloads", "small", "--small-n", "1000", "--strategies", "plain", "--runs", "1"],
        ),
        ("shuffle", &["bench", "shuffle", "--experiments", "reduce", "--types", "int32", "--reps", "8", "--runs", "1"]),
    ];
    for (what, args) in cases {
        let o = warpmc(args);
        if o.status.success() {
            assert!(!stdout(&o).trim().is_empty(), "{what}: printed nothing");
        } else {
            let e = stderr(&o);
            assert!(e.starts_with(&format!("error: bench {what} needs a CUDA device")), "{what}: {e}");
            assert_eq!(e.lines().count(), 1, "{what}: {e}");
        }
    }
}

/// With a GPU, `--json` rows carry the fields the table prints (and that
/// scripts/bench-vs-cupy.py reads).
#[test]
fn json_rows_have_the_documented_fields() {
    let o = warpmc(&["bench", "reduce", "--n", "4096", "--types", "f32", "--runs", "1", "--json"]);
    if !o.status.success() {
        return; // no GPU: the test above checks the message
    }
    let line = stdout(&o).lines().next().expect("one row").to_string();
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    for key in ["label", "elements", "ms", "gbs", "giga_elements_per_s", "copy_gbs", "of_copy"] {
        assert!(v.get(key).is_some(), "{key} missing from {line}");
    }
    assert_eq!(v["label"], "reduce sum f32");
    let o = warpmc(&["bench", "transpose", "--shapes", "64x32", "--types", "f32", "--kernels", "copy,best", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for line in stdout(&o).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["check"], true, "{line}");
        for key in
            ["routine", "type", "rows", "cols", "batch", "ms", "gbs", "of_copy_kernel", "memcpy_gbs", "of_memcpy"]
        {
            assert!(v.get(key).is_some(), "{key} missing from {line}");
        }
    }
}

#[test]
fn a_full_or_closed_stdout_is_one_line_or_a_quiet_end_never_a_panic() {
    use std::process::{Command, Stdio};
    let full = || std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    for args in [
        &["devices"][..],
        &["devices", "--json"][..],
        &["bench", "shuffle-diversity", "--rounds", "1", "--no-images"][..],
    ] {
        let o = Command::new(common::bin()).args(args).stdout(full()).output().unwrap();
        let e = stderr(&o);
        assert!(!o.status.success() && e.contains("No space left"), "{args:?}: {e}");
        assert!(!e.contains("panicked") && e.lines().count() == 1, "{args:?}: {e}");
        // A reader that has gone: a quiet end.
        let mut child =
            Command::new(common::bin()).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success() && o.stderr.is_empty(), "{args:?}: {}", stderr(&o));
    }
}

/// The large-ensemble settings shape CUDA rows only: without a GPU (or
/// with --backend cpu) the run says they are not timed.
#[test]
fn cuda_only_ensemble_settings_are_named_when_only_the_cpu_runs() {
    let tiny = ["potts", "bench", "--backend", "cpu", "--ensembles", "only", "--ensemble-small", "16x4", "--q", "2"];
    let with = |extra: &[&'static str]| {
        let args: Vec<&str> = tiny.iter().copied().chain(extra.iter().copied()).chain(["--seconds", "0.01"]).collect();
        let o = warpmc(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(stdout(&o).contains("cpu-ensemble"), "{}", stdout(&o));
        stderr(&o)
    };
    assert!(with(&["--ensemble-large", "64x2"]).contains("--ensemble-large and --ensemble-single set CUDA rows"));
    assert!(with(&["--ensemble-single", "64"]).contains("are not timed"));
    assert!(!with(&[]).contains("--ensemble-large"));
}

/// A size too large for memory after one that fits is refused before the
/// first is timed (under a 4 GiB address-space limit, as on any machine).
#[test]
fn potts_bench_checks_every_size_before_timing_the_first() {
    let args = ["potts", "bench", "--sizes", "64,65536", "--q", "9", "--backend", "cpu", "--ensembles", "off"];
    let o = warpmc_within(4 << 20, &args);
    assert!(!o.status.success(), "{args:?} succeeded");
    assert!(stdout(&o).is_empty(), "{args:?} printed before failing: {}", stdout(&o));
    let e = stderr(&o);
    assert!(e.starts_with("error: a 65536 × 65536 lattice needs") && e.lines().count() == 1, "{e:?}");
}
