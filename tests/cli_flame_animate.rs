//! `warpmc flame animate` as a user meets it: PNG frames, a video through
//! ffmpeg (or a note and PNG frames without it), a contact sheet, and
//! outputs that are checked before the first frame.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{bin, stderr, warpmc};

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/flames").join(name).to_string_lossy().into_owned()
}

fn temp_dir(name: &str) -> PathBuf {
    let d = warpmc_testkit::scratch_dir("cli-animate").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A short, small animation of test.flam3 (two flames, times 0 and 100).
fn animate_args<'a>(genome: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "flame",
        "animate",
        genome,
        "--begin",
        "10",
        "--end",
        "13",
        "-s",
        "0.1",
        "-q",
        "0.2",
        "--backend",
        "cpu",
        "--temporal-samples",
        "20",
        "--quiet",
    ];
    a.extend_from_slice(extra);
    a
}

fn ffmpeg_available() -> bool {
    Command::new("ffmpeg").arg("-version").output().is_ok_and(|o| o.status.success())
}

#[test]
fn frames_and_contact_sheet_are_written() {
    let dir = temp_dir("frames");
    let genome = example("test.flam3");
    let prefix = dir.join("f.").to_string_lossy().into_owned();
    let sheet = dir.join("sheet.png").to_string_lossy().into_owned();
    let o = warpmc(&animate_args(&genome, &["-o", &prefix, "--contact-sheet", &sheet]));
    assert!(o.status.success(), "{}", stderr(&o));
    // A summary and where the sheet went, not a line per frame.
    assert_eq!(stderr(&o).lines().count(), 2, "{}", stderr(&o));
    for t in 10..=13 {
        let frame = dir.join(format!("f.{t:05}.png"));
        assert!(frame.exists(), "{} missing", frame.display());
        let o = warpmc(&["flame", "compare", "--text", "flam3_samples", frame.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    // Four 64 × 48 frames: a 2 × 2 grid of frame-sized thumbnails.
    let o = warpmc(&["flame", "compare", &sheet, &sheet]);
    assert!(o.status.success(), "{}", stderr(&o));
    let png = std::fs::read(&sheet).unwrap();
    let (w, h) =
        (u32::from_be_bytes(png[16..20].try_into().unwrap()), u32::from_be_bytes(png[20..24].try_into().unwrap()));
    assert_eq!((w, h), (128, 96));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn video_through_ffmpeg_or_frames_with_a_note() {
    let dir = temp_dir("video");
    let genome = example("test.flam3");
    let prefix = dir.join("f.").to_string_lossy().into_owned();
    let video = dir.join("out.mp4");
    let v = video.to_string_lossy().into_owned();
    if ffmpeg_available() {
        let o = warpmc(&animate_args(&genome, &["-o", &prefix, "--video", &v, "--fps", "12"]));
        assert!(o.status.success(), "{}", stderr(&o));
        let bytes = std::fs::read(&video).unwrap();
        assert_eq!(&bytes[4..8], b"ftyp", "an MP4 file");
        assert!(!dir.join("f.00010.png").exists(), "frames go to the video, not to PNG files");
        // Nothing but the video is left in the directory.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    } else {
        println!("note: no ffmpeg here; only the fallback is tested");
    }
    // Without ffmpeg on the PATH: one line says so and the frames are PNGs.
    let empty = dir.join("no-ffmpeg");
    std::fs::create_dir_all(&empty).unwrap();
    let o = Command::new(bin())
        .args(animate_args(&genome, &["-o", &prefix, "--video", &dir.join("other.mp4").to_string_lossy()]))
        .env("PATH", &empty)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let notes: Vec<String> = stderr(&o).lines().filter(|l| l.contains("ffmpeg")).map(String::from).collect();
    assert_eq!(notes.len(), 1, "{}", stderr(&o));
    assert!(dir.join("f.00010.png").exists() && dir.join("f.00013.png").exists());
    assert!(!dir.join("other.mp4").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unwritable_outputs_fail_before_rendering() {
    let dir = temp_dir("unwritable");
    let genome = example("test.flam3");
    let prefix = dir.join("f.").to_string_lossy().into_owned();
    for extra in [&["--video", "/nonexistent/dir/out.mp4"][..], &["--contact-sheet", "/nonexistent/dir/s.png"][..]] {
        let mut args = extra.to_vec();
        args.extend_from_slice(&["-o", &prefix]);
        let o = warpmc(&animate_args(&genome, &args));
        assert!(!o.status.success());
        let e = stderr(&o);
        assert!(e.contains("/nonexistent/dir") && e.lines().count() == 1, "{e}");
        assert!(!dir.join("f.00010.png").exists(), "no frame before the error");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
