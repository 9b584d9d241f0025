//! Regression tests for outputs that destroyed what was at their path: one
//! test per defect found by the hostile-input campaign on the CPU backend.
#![cfg(unix)]

use std::fs;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, PermissionsExt, symlink};
use std::path::Path;

use warpmc_host::output::{NamedFile, check_distinct, check_writable, write, write_bytes};

#[test]
fn writing_to_dev_null_keeps_it_a_device() {
    let before = fs::symlink_metadata("/dev/null").unwrap();
    assert!(before.file_type().is_char_device());
    write_bytes(Path::new("/dev/null"), b"discarded").unwrap();
    assert!(fs::symlink_metadata("/dev/null").unwrap().file_type().is_char_device());
    check_writable(Path::new("/dev/null")).unwrap();
}

#[test]
fn dev_full_reports_no_space() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let e = write(Path::new("/dev/full"), |out| out.write_all(&[0u8; 1 << 16])).unwrap_err();
    assert_eq!(e.cause.raw_os_error(), Some(28), "{e}"); // ENOSPC
    assert!(fs::symlink_metadata("/dev/full").unwrap().file_type().is_char_device());
}

#[test]
fn a_symlinked_output_stays_a_link_to_the_file_it_names() {
    let scratch = tempfile::tempdir().unwrap();
    let here = tempfile::tempdir().unwrap();
    let target = scratch.path().join("run.ckpt");
    fs::write(&target, b"old").unwrap();
    let link = here.path().join("run.ckpt");
    symlink(&target, &link).unwrap();
    write_bytes(&link, b"new").unwrap();
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(fs::read(&target).unwrap(), b"new");
    // A relative link to a file that does not exist yet creates that file.
    let rel = here.path().join("rel.out");
    symlink("sub/made.out", &rel).unwrap();
    fs::create_dir(here.path().join("sub")).unwrap();
    write_bytes(&rel, b"made").unwrap();
    assert_eq!(fs::read(here.path().join("sub/made.out")).unwrap(), b"made");
    assert!(fs::symlink_metadata(&rel).unwrap().file_type().is_symlink());
}

#[test]
fn the_targets_permissions_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("private.ckpt");
    fs::write(&p, b"old").unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o600)).unwrap();
    write_bytes(&p, b"new").unwrap();
    assert_eq!(fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
    fs::set_permissions(&p, fs::Permissions::from_mode(0o640)).unwrap();
    write_bytes(&p, b"newer").unwrap();
    assert_eq!(fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o640);
}

#[test]
fn two_runs_writing_one_file_do_not_kill_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("shared.csv");
    std::thread::scope(|s| {
        for t in 0..2u8 {
            let p = &p;
            s.spawn(move || {
                for round in 0..10 {
                    let body = vec![b'a' + t; 100_000 + round];
                    write_bytes(p, &body).unwrap();
                }
            });
        }
    });
    // Whole files only: one writer's last body, never a mixture.
    let got = fs::read(&p).unwrap();
    assert!(got.iter().all(|&b| b == got[0]) && got.len() >= 100_000);
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "temporary files left behind");
}

#[test]
fn names_of_up_to_255_bytes_are_written() {
    let dir = tempfile::tempdir().unwrap();
    for len in [245, 250, 255] {
        let p = dir.path().join("x".repeat(len));
        write_bytes(&p, b"ok").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"ok");
    }
}

#[test]
fn a_fifo_is_written_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        return; // no mkfifo here
    }
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut got = Vec::new();
            fs::File::open(&fifo).unwrap().read_to_end(&mut got).unwrap();
            got
        })
    };
    write_bytes(&fifo, b"through the pipe").unwrap();
    assert_eq!(reader.join().unwrap(), b"through the pipe");
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
}

fn distinct(files: &[NamedFile<'_>]) -> Result<(), String> {
    check_distinct(files)
}

#[test]
fn two_outputs_at_one_path_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.npy");
    let e = distinct(&[NamedFile::output("--series", &a), NamedFile::output("--snapshot", &a)]).unwrap_err();
    assert!(e.contains("--series and --snapshot name the same file"), "{e}");
    // Spelled differently, not yet existing.
    let b = dir.path().join("sub/../a.npy");
    fs::create_dir(dir.path().join("sub")).unwrap();
    assert!(distinct(&[NamedFile::output("--out", &a), NamedFile::output("--series", &b)]).is_err());
    // Existing, through a symlink and a hard link.
    fs::write(&a, b"x").unwrap();
    let link = dir.path().join("link.npy");
    symlink(&a, &link).unwrap();
    let hard = dir.path().join("hard.npy");
    fs::hard_link(&a, &hard).unwrap();
    assert!(distinct(&[NamedFile::output("--out", &link), NamedFile::output("--series", &a)]).is_err());
    assert!(distinct(&[NamedFile::output("--out", &hard), NamedFile::output("--series", &link)]).is_err());
    // Different files pass.
    let c = dir.path().join("c.npy");
    distinct(&[NamedFile::output("--out", &a), NamedFile::output("--series", &c)]).unwrap();
}

#[test]
fn an_output_onto_an_input_is_refused_and_two_inputs_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("cfg.toml");
    fs::write(&cfg, b"q = 2").unwrap();
    let e = distinct(&[NamedFile::input("--config", &cfg), NamedFile::output("--out", &cfg)]).unwrap_err();
    assert!(e.contains("--out would overwrite --config"), "{e}");
    let e = distinct(&[NamedFile::output("--out", &cfg), NamedFile::input("GENOME", &cfg)]).unwrap_err();
    assert!(e.contains("--out would overwrite GENOME"), "{e}");
    distinct(&[NamedFile::input("A", &cfg), NamedFile::input("B", &cfg)]).unwrap();
    // Devices may take several outputs.
    let null = Path::new("/dev/null");
    distinct(&[NamedFile::output("--out", null), NamedFile::output("--series", null)]).unwrap();
}

#[test]
fn a_directory_that_takes_no_files_is_named_not_the_temporary_file() {
    let e = check_writable(Path::new("/proc/warpmc-test-output")).unwrap_err().to_string();
    assert!(e.contains("cannot create a file in /proc"), "{e}");
    assert!(!e.contains(".warpmc-"), "{e}");
}

#[test]
fn an_output_ending_in_a_slash_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("y.png/");
    let e = check_writable(&out).unwrap_err().to_string();
    assert!(e.contains("names a directory"), "{e}");
    assert!(write_bytes(&out, b"x").is_err());
    assert!(!dir.path().join("y.png").exists());
}

#[test]
fn thousands_of_outputs_are_checked_at_once() {
    // A file of many flames names an output per flame: the check must not
    // compare every pair (50,000 outputs took minutes that way).
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<_> = (0..50_000).map(|i| dir.path().join(format!("f{i}.png"))).collect();
    let input = dir.path().join("genome.flam3");
    fs::write(&input, "<flame/>").unwrap();
    let mut files: Vec<NamedFile<'_>> = vec![NamedFile::input("GENOME", &input)];
    files.extend(paths.iter().map(|p| NamedFile::output("--out", p)));
    distinct(&files).unwrap();
    // The clash is found wherever it is: the last output onto the first.
    files.push(NamedFile::output("--name", &paths[0]));
    let e = distinct(&files).unwrap_err();
    assert!(e.contains("--out and --name name the same file"), "{e}");
    files.pop();
    files.push(NamedFile::output("--last", &input));
    let e = distinct(&files).unwrap_err();
    assert!(e.contains("--last would overwrite GENOME"), "{e}");
}
