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

/// Run again with --skip-existing, an animation renders only the frames
/// whose files are missing or are not finished frames of its size; the
/// others are left byte for byte, and the contact sheet still shows them.
#[test]
fn skip_existing_renders_only_missing_or_unfinished_frames() {
    let dir = temp_dir("skip");
    let genome = example("test.flam3");
    let prefix = dir.join("f.").to_string_lossy().into_owned();
    let sheet = dir.join("sheet.png").to_string_lossy().into_owned();
    let first = dir.join("first.png").to_string_lossy().into_owned();
    let o = warpmc(&animate_args(&genome, &["-o", &prefix, "--contact-sheet", &first]));
    assert!(o.status.success(), "{}", stderr(&o));
    let frame = |t: i64| dir.join(format!("f.{t:05}.png"));
    let before: Vec<Vec<u8>> = (10..=13).map(|t| std::fs::read(frame(t)).unwrap()).collect();
    // Frame 11 gone, frame 12 cut short, frame 13 another size.
    std::fs::remove_file(frame(11)).unwrap();
    std::fs::write(frame(12), &before[2][..100]).unwrap();
    // A frame whose header is right but whose end is missing, or whose
    // pixel data has a byte changed, is damaged: rendered again too
    // (checked first, on copies at frame 11's name).
    let run_again = || warpmc(&animate_args(&genome, &["-o", &prefix, "--skip-existing", "--contact-sheet", &sheet]));
    let damaged = [before[1][..before[1].len() - 12].to_vec(), {
        let mut b = before[1].clone();
        let middle = b.len() - 200;
        b[middle] ^= 0x10;
        b
    }];
    for bytes in damaged {
        std::fs::write(frame(11), &bytes).unwrap();
        let o = run_again();
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stderr(&o).contains("f.00011.png: a damaged PNG"), "{}", stderr(&o));
        assert!(std::fs::read(frame(11)).unwrap() == before[1], "frame 11 rendered again");
        std::fs::write(frame(12), &before[2][..100]).unwrap();
    }
    std::fs::remove_file(frame(11)).unwrap();
    let small = dir.join("small.").to_string_lossy().into_owned();
    let mut args = animate_args(&genome, &["-o", &small]);
    args[8] = "0.05";
    assert!(warpmc(&args).status.success());
    std::fs::copy(dir.join("small.00013.png"), frame(13)).unwrap();
    let o = warpmc(&animate_args(&genome, &["-o", &prefix, "--skip-existing", "--contact-sheet", &sheet]));
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("1 frame(s) already written were left as they were"), "{err}");
    assert!(
        err.contains("f.00012.png: not a readable PNG") && err.contains("f.00013.png: 32x24, not the frame's 64x48"),
        "{err}"
    );
    // The same seed renders the same frames: every file is as at first.
    for (t, bytes) in (10..=13).zip(&before) {
        assert!(std::fs::read(frame(t)).unwrap() == *bytes, "frame {t}");
    }
    let o = warpmc(&["flame", "compare", &first, &sheet]);
    assert!(
        o.status.success() && String::from_utf8_lossy(&o.stdout).trim() == "inf",
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // Frames of other channels or bits are not this run's: rendered again.
    // Once every frame is there, nothing is left to render.
    let sixteen = || warpmc(&animate_args(&genome, &["-o", &prefix, "--skip-existing", "--bits", "16"]));
    let o = sixteen();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o).matches("RGB of 8 bits, not the frame's RGB of 16 bits; rendering it again").count(), 4);
    let o = sixteen();
    assert!(o.status.success() && stderr(&o).contains("no frame was left to render"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("frames/s"), "{}", stderr(&o));
    // Nothing to write with a video.
    let video = dir.join("v.mp4").to_string_lossy().into_owned();
    let o = warpmc(&animate_args(&genome, &["--skip-existing", "--video", &video]));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn video_through_ffmpeg_and_refused_without_it() {
    let dir = temp_dir("video");
    let genome = example("test.flam3");
    let prefix = dir.join("f.").to_string_lossy().into_owned();
    let video = dir.join("out.mp4");
    let v = video.to_string_lossy().into_owned();
    if ffmpeg_available() {
        let o = warpmc(&animate_args(&genome, &["-o", &prefix, "--video", &v, "--fps", "12"]));
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stderr(&o).contains("-o/--prefix is not used with --video"), "{}", stderr(&o));
        let bytes = std::fs::read(&video).unwrap();
        assert_eq!(&bytes[4..8], b"ftyp", "an MP4 file");
        assert!(!dir.join("f.00010.png").exists(), "frames go to the video, not to PNG files");
        // Nothing but the video is left in the directory.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        // A container whose codec ffmpeg chooses is warned of; one ffmpeg
        // cannot write is refused in one line, without that warning.
        let avi = dir.join("out.avi").to_string_lossy().into_owned();
        let o = warpmc(&animate_args(&genome, &["--video", &avi]));
        assert!(o.status.success() && stderr(&o).contains("--crf does not set"), "{}", stderr(&o));
        assert!(!stderr(&o).contains("is not used with --video"), "{}", stderr(&o));
        let xyz = dir.join("out.xyz").to_string_lossy().into_owned();
        let o = warpmc(&animate_args(&genome, &["--video", &xyz]));
        assert!(!o.status.success() && stderr(&o).lines().count() == 1, "{}", stderr(&o));
        std::fs::remove_file(dir.join("out.avi")).unwrap();
    } else {
        println!("note: no ffmpeg here; only the refusal is tested");
    }
    // Without ffmpeg on the PATH: one line says so, before anything is
    // rendered, and the exit status is not 0.
    let empty = dir.join("no-ffmpeg");
    std::fs::create_dir_all(&empty).unwrap();
    let o = Command::new(bin())
        .args(animate_args(&genome, &["-o", &prefix, "--video", &dir.join("other.mp4").to_string_lossy()]))
        .env("PATH", &empty)
        .output()
        .unwrap();
    assert!(!o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("needs ffmpeg") && e.contains("not on the PATH") && e.lines().count() == 1, "{e}");
    assert!(!dir.join("f.00010.png").exists() && !dir.join("other.mp4").exists(), "nothing rendered");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An ffmpeg that is there but broken, or that ends in the middle of the
/// video (a full disk, a crash): the message says what it did, the run
/// fails, and no partial video is left.
#[test]
fn a_failing_ffmpeg_is_named_and_leaves_no_partial_video() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("video-fake");
    let genome = example("test.flam3");
    let prefix = dir.join("f.").to_string_lossy().into_owned();
    let bin_dir = dir.join("bin");
    let out_dir = dir.join("out");
    std::fs::create_dir_all(&bin_dir).unwrap();
    std::fs::create_dir_all(&out_dir).unwrap();
    let video = out_dir.join("film.mp4").to_string_lossy().into_owned();
    let run_with = |script: &str| {
        let fake = bin_dir.join("ffmpeg");
        std::fs::write(&fake, script).unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
        Command::new(bin())
            .args(animate_args(&genome, &["-o", &prefix, "--video", &video]))
            .env("PATH", path)
            .output()
            .unwrap()
    };
    // `ffmpeg -version` fails.
    let o = run_with("#!/bin/sh\nexit 1\n");
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("fails `ffmpeg -version` (exit status: 1)") && e.lines().count() == 1, "{e}");
    // Passes -version and the test video, then ends after reading a little
    // of the first frame.
    let o = run_with(concat!(
        "#!/bin/sh\n",
        "case \"$*\" in *-version*) exit 0;; esac\n",
        "for last; do :; done\n",
        "case \"$last\" in */probe.*) cat > /dev/null; exit 0;; esac\n",
        "head -c 100 > /dev/null\n",
        "echo 'fake ffmpeg: no space left' >&2\n",
        "exit 3\n",
    ));
    assert!(!o.status.success());
    let e = stderr(&o);
    let last = e.lines().last().unwrap_or_default();
    assert!(last.contains("ffmpeg") && last.contains("(exit status: 3)") && last.contains("was not written"), "{e}");
    assert!(e.contains("fake ffmpeg: no space left"), "ffmpeg's own message: {e}");
    assert_eq!(std::fs::read_dir(&out_dir).unwrap().count(), 0, "no video and no partial file");
    // Reads every frame and writes a file, but reports an error and ends
    // with status 0 (as ffmpeg does when the disk fills as it writes the
    // file's index): the video there before stays.
    std::fs::write(&video, b"an earlier video").unwrap();
    let o = run_with(concat!(
        "#!/bin/sh\n",
        "case \"$*\" in *-version*) exit 0;; esac\n",
        "for last; do :; done\n",
        "cat > \"$last\"\n",
        "echo 'Error writing trailer: No space left on device' >&2\n",
        "exit 0\n",
    ));
    assert!(!o.status.success());
    let e = stderr(&o);
    let last = e.lines().last().unwrap_or_default();
    assert!(last.contains("ffmpeg reported an error") && last.contains("was not written"), "{e}");
    assert!(e.contains("Error writing trailer"), "ffmpeg's own message: {e}");
    assert_eq!(std::fs::read(&video).unwrap(), b"an earlier video", "the earlier video stays");
    assert_eq!(std::fs::read_dir(&out_dir).unwrap().count(), 1, "no partial file");
    // Reads every frame, says nothing and ends with status 0, but writes
    // no file: said so, not a file to move that is not there.
    let o = run_with(concat!(
        "#!/bin/sh\n",
        "case \"$*\" in *-version*) exit 0;; esac\n",
        "for last; do :; done\n",
        "case \"$last\" in */probe.*) cat > \"$last\"; exit 0;; esac\n",
        "cat > /dev/null\n",
        "exit 0\n",
    ));
    assert!(!o.status.success());
    let e = stderr(&o);
    let errors: Vec<&str> = e.lines().filter(|l| l.starts_with("error")).collect();
    assert!(errors.len() == 1 && errors[0].contains("ffmpeg finished without writing the video"), "{e}");
    assert_eq!(std::fs::read(&video).unwrap(), b"an earlier video", "the earlier video stays");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Video settings that would lose what the frames hold are refused before
/// anything is rendered, with ffmpeg or without: alpha outside a .mov or
/// .webm, and 16-bit samples.
#[test]
fn videos_that_would_drop_alpha_or_bits_are_refused_first() {
    let dir = temp_dir("video-options");
    let genome = example("test.flam3");
    let prefix = dir.join("f.").to_string_lossy().into_owned();
    let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let (mp4, mkv, webm, mov) = (path("a.mp4"), path("a.mkv"), path("a.webm"), path("a.mov"));
    for (extra, expected) in [
        (&["--video", &mp4, "--transparent"][..], "no alpha channel"),
        (&["--video", &mkv, "--transparent"][..], "no alpha channel"),
        (&["--video", &mov, "--bits", "16"][..], "8-bit frames"),
    ] {
        let mut args = extra.to_vec();
        args.extend_from_slice(&["-o", &prefix]);
        let o = warpmc(&animate_args(&genome, &args));
        assert!(!o.status.success(), "{extra:?} succeeded");
        let e = stderr(&o);
        assert!(e.contains(expected) && e.lines().count() == 1, "{extra:?}: {e}");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "{extra:?}: nothing written");
    }
    if ffmpeg_available() {
        // A .mov keeps the alpha channel (ProRes 4444).
        let o = warpmc(&animate_args(&genome, &["--video", &mov, "--transparent"]));
        assert!(o.status.success(), "{}", stderr(&o));
        let probe = Command::new("ffprobe")
            .args(["-v", "error", "-show_entries", "stream=codec_name,pix_fmt", "-of", "csv=p=0"])
            .arg(&mov)
            .output();
        if let Some(p) = probe.ok().filter(|p| p.status.success()) {
            let text = String::from_utf8_lossy(&p.stdout).into_owned();
            assert!(text.contains("prores") && text.contains("yuva"), "{text}");
        }
        // So does a .webm (VP9, its alpha in a second stream that the
        // container marks), at an odd size too (4:2:0 pads it).
        let mut args = animate_args(&genome, &["--video", &webm, "--transparent"]);
        let scale = args.iter().position(|a| *a == "-s").unwrap() + 1;
        args[scale] = "0.105";
        let o = warpmc(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let probe = Command::new("ffprobe")
            .args(["-v", "error", "-show_entries", "stream=codec_name,width:stream_tags=alpha_mode", "-of", "csv=p=0"])
            .arg(&webm)
            .output();
        if let Some(p) = probe.ok().filter(|p| p.status.success()) {
            let text = String::from_utf8_lossy(&p.stdout).into_owned();
            assert_eq!(text.trim(), "vp9,68,1", "67 pixels wide, padded to 68, with alpha");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A frame wider than libx264 takes (16,384) is refused in one line
/// before the first frame is rendered, not by ffmpeg after it.
#[test]
fn a_video_too_wide_for_its_codec_is_refused_first() {
    if !ffmpeg_available() {
        println!("SKIPPED: no ffmpeg here");
        return;
    }
    let dir = temp_dir("video-wide");
    let genome = dir.join("wide.flam3");
    let flame = |t: u32| {
        format!(
            r#"<flame time="{t}" size="16386 2" scale="20" quality="1" palette="15"><xform weight="1" linear="1" coefs="0.5 0 0 0.5 0 0"/></flame>"#
        )
    };
    std::fs::write(&genome, format!("<anim>{}{}</anim>", flame(0), flame(2))).unwrap();
    let video = dir.join("wide.mp4");
    let o = warpmc(&[
        "flame",
        "animate",
        &genome.to_string_lossy(),
        "--backend",
        "cpu",
        "--quiet",
        "--video",
        &video.to_string_lossy(),
    ]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.starts_with("error: --video") && e.contains("16386") && e.trim().lines().count() == 1, "{e}");
    assert!(!video.exists());
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

/// Two flames of the same three xforms at times `t0` and `t1`, the second
/// with its own coefficients and palette; `first` and `second` are more
/// attributes of each, and the size and quality when they are not 64 × 48
/// and 200.
fn sequence(t0: f64, t1: f64, first: &str, second: &str) -> String {
    let flame = |t: f64, palette: u32, attrs: &str, coefs: [&str; 3]| {
        let mut attrs = attrs.to_string();
        for default in [r#"size="64 48""#, r#"quality="200""#] {
            if !attrs.contains(&default[..default.find('=').unwrap() + 1]) {
                attrs = format!("{attrs} {default}");
            }
        }
        format!(
            r#"<flame time="{t}" palette="{palette}" scale="20" filter="0.5" brightness="4" gamma="4" estimator_radius="0" {attrs}>
  <xform weight="0.5" color="0" spherical="1" coefs="{}"/>
  <xform weight="0.3" color="0.5" linear="1" coefs="{}"/>
  <xform weight="0.2" color="1" julia="0.7" linear="0.3" coefs="{}"/>
</flame>"#,
            coefs[0], coefs[1], coefs[2]
        )
    };
    format!(
        "<anim>\n{}\n{}\n</anim>\n",
        flame(t0, 15, first, ["0.6 0.2 -0.3 0.7 0.1 0.2", "0.5 0 0 0.5 0.5 0.3", "-0.4 0.5 0.5 0.4 -0.3 0.1"]),
        flame(t1, 29, second, ["-0.5 0.5 0.4 0.6 0.2 -0.1", "0.4 -0.3 0.3 0.4 -0.4 0.2", "0.5 0.3 -0.3 0.5 0.3 -0.2"])
    )
}

fn flam3_animate_available() -> bool {
    Command::new("flam3-animate").env("in", "/nonexistent").stdin(std::process::Stdio::null()).output().is_ok()
}

/// flam3-animate's frames of `genome` (env `begin`, `end` as given, and
/// `more`) with `seed`, under `prefix`.
fn flam3_animate(genome: &Path, prefix: &str, seed: &str, range: Option<(i64, i64)>, more: &[(&str, &str)]) {
    let mut cmd = Command::new("flam3-animate");
    cmd.env("in", genome).env("prefix", prefix).env("isaac_seed", seed).env("nthreads", "1").env("verbose", "0");
    cmd.envs(more.iter().copied());
    if let Some((b, e)) = range {
        cmd.env("begin", b.to_string()).env("end", e.to_string());
    }
    let o = cmd.stdin(std::process::Stdio::null()).output().unwrap();
    assert!(o.status.success(), "flam3-animate {}: {}", genome.display(), stderr(&o));
}

fn psnr(a: &Path, b: &Path) -> f64 {
    let o = warpmc(&["flame", "compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    String::from_utf8_lossy(&o.stdout).trim().parse().unwrap()
}

/// The frame files under `dir` whose names start with `stem`, sorted.
fn frames_named(dir: &Path, stem: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(stem))
        .map(|n| n[stem.len()..].to_string())
        .collect();
    v.sort();
    v
}

#[test]
fn frames_between_flames_match_flam3_animate() {
    // What flam3-animate takes from the flame interpolated at the frame's
    // time rather than from the first flame: the supersampling (a flame
    // with supersample 2 half way), the temporal samples (1 and 1000:
    // about 500 at t = 1, a motion blur over two time units), and the
    // default frame range (the last flame's time excluded); the frame size
    // is the first flame's throughout.
    if !flam3_animate_available() {
        println!(
            "SKIPPED frames_between_flames_match_flam3_animate: flam3-animate is not installed (Debian: flam3-utils)"
        );
        return;
    }
    let dir = temp_dir("flam3-animate");
    let cases = [
        ("supersample", sequence(0.0, 10.0, "", r#"supersample="2""#), Some(5)),
        (
            "temporal",
            sequence(0.0, 2.0, r#"temporal_samples="1" temporal_filter_width="2""#, r#"temporal_filter_width="2""#),
            Some(1),
        ),
        ("size", sequence(0.0, 10.0, "", r#"size="80 60""#), Some(5)),
    ];
    for (name, xml, time) in cases {
        let g = dir.join(format!("{name}.flam3"));
        std::fs::write(&g, xml).unwrap();
        let t = time.unwrap();
        for seed in ["a", "b"] {
            flam3_animate(&g, &dir.join(format!("{name}.flam3-{seed}.")).to_string_lossy(), seed, Some((t, t)), &[]);
        }
        let prefix = dir.join(format!("{name}.warpmc.")).to_string_lossy().into_owned();
        let (ts, te) = (t.to_string(), t.to_string());
        let o = warpmc(&[
            "flame",
            "animate",
            g.to_str().unwrap(),
            "--begin",
            &ts,
            "--end",
            &te,
            "-o",
            &prefix,
            "--backend",
            "cpu",
            "--quiet",
        ]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        if name == "size" {
            assert!(stderr(&o).contains("warning: flame") && stderr(&o).contains("64x48"), "{}", stderr(&o));
        }
        let frame = |who: &str| dir.join(format!("{name}.{who}.{t:05}.png"));
        let floor = psnr(&frame("flam3-a"), &frame("flam3-b"));
        let ours = frame("warpmc");
        let against = (psnr(&ours, &frame("flam3-a")) + psnr(&ours, &frame("flam3-b"))) / 2.0;
        assert!(against > floor - 2.0, "{name}: {against:.2} dB against flam3, whose seeds differ by {floor:.2} dB");
    }

    // The default range: flam3-animate renders from the first flame's time
    // up to the frame before the last flame's, times truncated.
    for (name, t0, t1) in [("range-a", 0.0, 2.7), ("range-b", 0.6, 3.0), ("range-c", -2.5, 1.0)] {
        let g = dir.join(format!("{name}.flam3"));
        let small = r#"quality="1" size="8 6" temporal_samples="1""#;
        std::fs::write(&g, sequence(t0, t1, small, small)).unwrap();
        flam3_animate(&g, &dir.join(format!("{name}.flam3.")).to_string_lossy(), "a", None, &[]);
        let prefix = dir.join(format!("{name}.warpmc.")).to_string_lossy().into_owned();
        let o = warpmc(&["flame", "animate", g.to_str().unwrap(), "-o", &prefix, "--backend", "cpu", "--quiet"]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let theirs = frames_named(&dir, &format!("{name}.flam3."));
        assert!(!theirs.is_empty());
        assert_eq!(frames_named(&dir, &format!("{name}.warpmc.")), theirs, "{name}");
    }
}

#[test]
fn each_frame_takes_the_temporal_samples_of_its_time() {
    // Times 0 and 2 with 1 and 1001 temporal samples: the frame at t = 1
    // has 501, the same bits as asking for 501 explicitly, and not those
    // of the first flame's 1.
    let dir = temp_dir("temporal-samples");
    let g = dir.join("ts.flam3");
    let small = r#"quality="5" size="24 16" temporal_filter_width="2""#;
    std::fs::write(
        &g,
        sequence(0.0, 2.0, &format!(r#"{small} temporal_samples="1""#), &format!(r#"{small} temporal_samples="1001""#)),
    )
    .unwrap();
    let render = |name: &str, extra: &[&str]| {
        let prefix = dir.join(format!("{name}.")).to_string_lossy().into_owned();
        let mut args = vec![
            "flame",
            "animate",
            g.to_str().unwrap(),
            "--begin",
            "1",
            "--end",
            "1",
            "-o",
            &prefix,
            "--backend",
            "cpu",
        ];
        args.extend_from_slice(extra);
        args.push("--quiet");
        let o = warpmc(&args);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        std::fs::read(dir.join(format!("{name}.00001.png"))).unwrap()
    };
    let interpolated = render("interpolated", &[]);
    assert_eq!(interpolated, render("explicit", &["--temporal-samples", "501"]));
    assert_ne!(interpolated, render("first", &["--temporal-samples", "1"]));
    let o = warpmc(&["flame", "animate", g.to_str().unwrap(), "--temporal-samples", "0", "--backend", "cpu"]);
    assert!(!o.status.success() && stderr(&o).contains("--temporal-samples"), "{}", stderr(&o));
}

/// A keyframe of temporal_samples="0" (flam3-animate renders its frames
/// white): one warning, and its frames take one sample.
#[test]
fn a_keyframe_of_no_temporal_samples_warns_and_takes_one() {
    let dir = temp_dir("temporal-samples-zero");
    let g = dir.join("ts0.flam3");
    let small = r#"quality="5" size="24 16""#;
    std::fs::write(
        &g,
        sequence(0.0, 2.0, &format!(r#"{small} temporal_samples="0""#), &format!(r#"{small} temporal_samples="0""#)),
    )
    .unwrap();
    let render = |name: &str, extra: &[&str]| {
        let prefix = dir.join(format!("{name}.")).to_string_lossy().into_owned();
        let mut args = vec![
            "flame",
            "animate",
            g.to_str().unwrap(),
            "--begin",
            "0",
            "--end",
            "0",
            "-o",
            &prefix,
            "--backend",
            "cpu",
        ];
        args.extend_from_slice(extra);
        args.push("--quiet");
        let o = warpmc(&args);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        (std::fs::read(dir.join(format!("{name}.00000.png"))).unwrap(), stderr(&o))
    };
    let (zero, warned) = render("zero", &[]);
    assert_eq!(warned.matches("temporal_samples=\"0\"").count(), 1, "{warned}");
    assert!(warned.contains("take 1") && warned.contains("white"), "{warned}");
    let (one, quiet) = render("one", &["--temporal-samples", "1"]);
    assert_eq!(zero, one, "a keyframe of no samples renders as one sample");
    assert!(!quiet.contains("temporal_samples"), "--temporal-samples replaces the genome's: {quiet}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn fields_match_flam3_animate() {
    // flam3-animate's fields=1: the even rows at the frame's time, the odd
    // rows half a frame later, each field half the height with rows twice
    // as tall; an odd height leaves the last row empty. Also with pixels
    // that are not square (the fields' shift is half a pixel's width), a
    // rotation and supersampling.
    if !flam3_animate_available() {
        println!("SKIPPED fields_match_flam3_animate: flam3-animate is not installed (Debian: flam3-utils)");
        return;
    }
    let dir = temp_dir("fields");
    let cases = [
        ("square", r#"size="80 61" quality="2000""#, "1"),
        ("aspect", r#"size="80 60" quality="2000" supersample="2" rotate="30""#, "0.8"),
    ];
    for (name, attrs, aspect) in cases {
        let g = dir.join(format!("{name}.flam3"));
        std::fs::write(&g, sequence(0.0, 10.0, attrs, attrs)).unwrap();
        for seed in ["a", "b"] {
            let prefix = dir.join(format!("{name}.flam3-{seed}.")).to_string_lossy().into_owned();
            flam3_animate(&g, &prefix, seed, Some((3, 3)), &[("fields", "1"), ("pixel_aspect", aspect)]);
        }
        let render = |who: &str, extra: &[&str]| {
            let prefix = dir.join(format!("{name}.{who}.")).to_string_lossy().into_owned();
            let mut args = vec!["flame", "animate", g.to_str().unwrap(), "--begin", "3", "--end", "3", "-o", &prefix];
            args.extend(["--pixel-aspect", aspect, "--backend", "cpu", "--quiet"]);
            args.extend(extra);
            let o = warpmc(&args);
            assert!(o.status.success(), "{name}: {}", stderr(&o));
        };
        render("warpmc", &["--fields"]);
        render("whole", &[]);
        let frame = |who: &str| dir.join(format!("{name}.{who}.00003.png"));
        let floor = psnr(&frame("flam3-a"), &frame("flam3-b"));
        let against = |who: &str| (psnr(&frame(who), &frame("flam3-a")) + psnr(&frame(who), &frame("flam3-b"))) / 2.0;
        let (fields, whole) = (against("warpmc"), against("whole"));
        println!(
            "{name}: fields {fields:.2} dB, whole frames {whole:.2} dB against flam3, whose seeds differ by {floor:.2} dB"
        );
        assert!(fields > floor - 2.0, "{name}: {fields:.2} dB against flam3, whose seeds differ by {floor:.2} dB");
        // What the comparison tells apart: the frame without fields.
        assert!(whole < floor - 6.0, "{name}: a whole frame is {whole:.2} dB from flam3's fields (floor {floor:.2})");
        if name == "square" {
            let img = warpmc_flame::image::read_png(&frame("warpmc")).unwrap();
            assert!(img.pixels[60 * 80..].iter().all(|p| p[..3] == [0.0; 3]), "the 61st row is not empty");
        }
    }
}

/// Negative numbers are values, not options: a negative frame time is a
/// time like any other (flam3-animate's begin=-2), and a negative rate
/// gets the range it must lie in rather than clap's "unexpected argument".
#[test]
fn negative_numbers_are_values() {
    let dir = temp_dir("negative");
    let genome = example("test.flam3");
    let prefix = dir.join("n.").to_string_lossy().into_owned();
    let mut args = animate_args(&genome, &["-o", &prefix]);
    let at = args.iter().position(|a| *a == "--begin").unwrap();
    args.splice(at..at + 4, ["--begin", "-2", "--end", "-1"]);
    let o = warpmc(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    for t in ["-0002", "-0001"] {
        assert!(
            dir.join(format!("n.{t}.png")).exists(),
            "frame {t}: {:?}",
            std::fs::read_dir(&dir).unwrap().collect::<Vec<_>>()
        );
    }
    for (flag, words) in [
        ("--fps", "is not a frame rate in (0, 1000]"),
        ("--crf", "not in 0..=51"),
        ("--dtime", "--dtime must be at least 1"),
    ] {
        let o = warpmc(&animate_args(&genome, &["-o", &prefix, flag, "-1"]));
        let err = stderr(&o);
        assert!(!o.status.success() && err.contains(words) && !err.contains("unexpected argument"), "{flag}: {err}");
    }
    // Frame times beyond flam3-animate's ints (whose full i64 span would
    // overflow the frame count) are refused in one line.
    for (begin, end) in [("-9223372036854775808", "9223372036854775807"), ("0", "2147483648")] {
        let mut args = animate_args(&genome, &["-o", &prefix]);
        let at = args.iter().position(|a| *a == "--begin").unwrap();
        args.splice(at..at + 4, ["--begin", begin, "--end", end]);
        let o = warpmc(&args);
        let err = stderr(&o);
        assert!(!o.status.success() && err.contains("beyond the frame times"), "{begin}..{end}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // The same for the default range, from the genome's times.
    let late = dir.join("late.flam3");
    std::fs::write(&late, sequence(0.0, 3e9, r#"quality="1" size="8 6""#, r#"quality="1" size="8 6""#)).unwrap();
    let o = warpmc(&["flame", "animate", late.to_str().unwrap(), "-o", &prefix, "--backend", "cpu"]);
    let err = stderr(&o);
    assert!(
        !o.status.success() && err.contains("the default --end (one before the last flame's time, 3000000000)"),
        "{err}"
    );
}

/// Keyframes out of time order are sorted with a warning; two at one time
/// are refused in one line (flam3-animate refuses both).
#[test]
fn keyframes_out_of_order_warn_and_two_at_one_time_are_refused() {
    let dir = temp_dir("order");
    let flame = |t: &str, c: &str| {
        format!(
            r#"<flame time="{t}" size="16 12" scale="8" quality="5" estimator_radius="0"><xform weight="1" linear="1" coefs="{c}"/><color index="0" rgb="255 255 255"/></flame>"#
        )
    };
    let write = |name: &str, flames: &[String]| {
        let p = dir.join(name);
        std::fs::write(&p, format!("<anim>{}</anim>", flames.concat())).unwrap();
        p.to_string_lossy().into_owned()
    };
    let prefix = dir.join("o.").to_string_lossy().into_owned();
    let common = ["--backend", "cpu", "-o", &prefix, "--temporal-samples", "2"];
    let unsorted = write("unsorted.flam3", &[flame("2", "0.5 0 0 0.5 0 0"), flame("0", "0.6 0 0 0.6 0.1 0")]);
    let mut args = vec!["flame", "animate", &unsorted];
    args.extend_from_slice(&common);
    let o = warpmc(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("not in time order; sorted by time"), "{}", stderr(&o));
    assert!(dir.join("o.00000.png").exists() && dir.join("o.00001.png").exists());
    let twice = write("twice.flam3", &[flame("1", "0.5 0 0 0.5 0 0"), flame("1", "0.6 0 0 0.6 0.1 0")]);
    let mut args = vec!["flame", "animate", &twice];
    args.extend_from_slice(&common);
    let o = warpmc(&args);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("flames #0 and #1 both have time 1"), "{err}");
}

#[test]
fn a_log_is_told_the_progress_and_an_interrupted_animation_where_to_go_on() {
    use std::io::BufRead;
    use std::process::Stdio;
    let dir = temp_dir("interrupted");
    let genome = example("test.flam3");
    let prefix = dir.join("f.").to_string_lossy().into_owned();
    // Frames of a few seconds each on one thread; standard error a pipe,
    // as in a batch job's log.
    let mut child = Command::new(bin())
        .args(["--threads", "1", "flame", "animate", &genome, "--begin", "10", "--end", "13", "-s", "0.1"])
        .args(["-q", "4000", "--backend", "cpu", "-o", &prefix])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines().map_while(Result::ok);
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let first_frame = line.starts_with("frame 1/4 rendered (time 10) after ");
        seen.push(line);
        if first_frame {
            break;
        }
    }
    assert!(seen.last().is_some_and(|l| l.contains("to go")), "no progress line: {seen:?}");
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    seen.extend(lines);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{seen:?}");
    let last = seen.last().unwrap();
    let t: i64 = last
        .strip_prefix("interrupted: the frames before time ")
        .and_then(|r| r.split(' ').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{seen:?}"));
    assert!(
        last.ends_with(&format!("(go on with --begin {t}, or run the same command with --skip-existing)")),
        "{last}"
    );
    assert!((11..=13).contains(&t), "{last}");
    for time in 10..t {
        assert!(Path::new(&format!("{prefix}{time:05}.png")).exists(), "frame {time} missing: {last}");
    }
}

#[test]
fn frame_times_are_whole_numbers() {
    let genome = example("test.flam3");
    for (flag, value, says) in [
        ("--begin", "0.5", "frame times are whole numbers, as in flam3-animate (0.5 is not)"),
        ("--dtime", "2.5", "frame times are whole numbers"),
        // As written, not as 300 zeros.
        ("--dtime", "1e-300", "(1e-300 is not)"),
        ("--end", "1e30", "beyond the range of frame times"),
        ("--end", "ten", "'ten' is not a whole number"),
    ] {
        let o =
            warpmc(&["flame", "animate", &genome, flag, value, "--backend", "cpu", "--quiet", "-o", "/nonexistent/f"]);
        assert_eq!(o.status.code(), Some(2), "{flag} {value}");
        let e = stderr(&o);
        assert!(e.contains(says) && e.trim().lines().count() == 1, "{flag} {value}: {e}");
    }
    // Whole numbers written as decimals are taken: the error is the output's.
    let o = warpmc(&[
        "flame",
        "animate",
        &genome,
        "--begin",
        "1e1",
        "--end",
        "11.0",
        "--backend",
        "cpu",
        "--quiet",
        "-o",
        "/nonexistent/f",
    ]);
    let e = stderr(&o);
    assert!(o.status.code() != Some(2) && e.contains("/nonexistent"), "{e}");
}

/// A long `flame animate --video DIR/film.mp4` on the CPU, some frames
/// into its video: warpmc, its ffmpeg's process number, and the partial
/// video's path; None (with a SKIPPED line) without ffmpeg and ffprobe.
fn video_run_under_way(dir: &Path, test: &str) -> Option<(std::process::Child, String, PathBuf)> {
    let has_ffprobe = Command::new("ffprobe").arg("-version").output().is_ok_and(|o| o.status.success());
    if !ffmpeg_available() || !has_ffprobe {
        println!("SKIPPED {test}: needs ffmpeg and ffprobe");
        return None;
    }
    let genome = example("test.flam3");
    let video = dir.join("film.mp4");
    let args = ["flame", "animate", &genome, "--begin", "0", "--end", "100000", "-s", "0.1", "-q", "0.5"];
    let warpmc = Command::new(bin())
        .args(args)
        .args(["--backend", "cpu", "--quiet", "--video", video.to_str().unwrap()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once ffmpeg has opened its output, a few frames in.
    let started = std::time::Instant::now();
    let partial = loop {
        let found = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().contains("-partial-film.mp4")));
        if let Some(p) = found {
            break p;
        }
        assert!(started.elapsed().as_secs() < 60, "no partial video appeared");
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    std::thread::sleep(std::time::Duration::from_millis(300));
    let pgrep = Command::new("pgrep").args(["-P", &warpmc.id().to_string(), "ffmpeg"]).output().unwrap();
    let ffmpeg = String::from_utf8(pgrep.stdout).unwrap().trim().to_string();
    assert!(!ffmpeg.is_empty(), "ffmpeg is running");
    Some((warpmc, ffmpeg, partial))
}

/// The files in `dir`.
fn names_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect()
}

/// A batch system that stops a job sends SIGTERM to every process of it:
/// ffmpeg then closes the video of the frames it has read, and warpmc
/// keeps it under a name of its own, however the two signals fall.
#[test]
fn a_video_whose_ffmpeg_was_stopped_too_is_kept() {
    let dir = temp_dir("video-term");
    let Some((warpmc, ffmpeg, partial)) = video_run_under_way(&dir, "a_video_whose_ffmpeg_was_stopped_too_is_kept")
    else {
        return;
    };
    Command::new("kill").args(["-TERM", &ffmpeg, &warpmc.id().to_string()]).status().unwrap();
    let out = warpmc.wait_with_output().unwrap();
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(143), "{e}");
    let kept = names_in(&dir);
    assert!(kept.iter().any(|n| n.starts_with("film.frames-0-") && n.ends_with(".mp4")), "{kept:?}: {e}");
    assert!(!partial.exists() && !dir.join("film.mp4").exists(), "{kept:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// ffmpeg stopped alone (by another process): the run fails, and the video
/// ffmpeg closed of the frames it had read is kept under a name of its own,
/// which the error names.
#[test]
fn a_video_whose_ffmpeg_alone_was_stopped_is_kept() {
    let dir = temp_dir("video-term-ffmpeg");
    let Some((warpmc, ffmpeg, _)) = video_run_under_way(&dir, "a_video_whose_ffmpeg_alone_was_stopped_is_kept") else {
        return;
    };
    Command::new("kill").args(["-TERM", &ffmpeg]).status().unwrap();
    let out = warpmc.wait_with_output().unwrap();
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{e}");
    assert!(e.contains("exit status: 255") && e.contains("the frames of times 0 to "), "{e}");
    assert!(e.contains("(go on with --begin ") && e.lines().count() == 1, "{e}");
    let kept = names_in(&dir);
    assert!(kept.len() == 1 && kept[0].starts_with("film.frames-0-") && e.contains(&kept[0]), "{kept:?}: {e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A temporal filter so wide that its samples extrapolate the keyframes to
/// no quality at all is refused with the sample's time and the width named
/// (flam3-animate hangs on it).
#[test]
fn a_temporal_sample_beyond_the_keyframes_is_named_in_the_error() {
    let dir = temp_dir("wide-temporal-filter");
    let text = std::fs::read_to_string(example("test.flam3")).unwrap();
    let genome = dir.join("wide.flam3");
    std::fs::write(&genome, text.replacen("<flame ", r#"<flame temporal_filter_width="1e200" "#, 1)).unwrap();
    let prefix = dir.join("f").to_string_lossy().into_owned();
    let o = warpmc(&animate_args(genome.to_str().unwrap(), &["-o", &prefix]));
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("quality must be greater than zero")
            && err.contains("a temporal sample of the frame at time 10 (temporal_filter_width 9e199)"),
        "{err}"
    );
}

/// A frame that cannot be written (here a full device) ends the run with
/// what to do next: the frames before it are whole, and --skip-existing
/// renders the rest. A prefix written as ffmpeg's pattern or as a file name
/// is warned of, with the names it gives.
#[test]
fn a_frame_that_cannot_be_written_says_how_to_go_on() {
    let dir = temp_dir("frame-write-fails");
    let genome = example("test.flam3");
    let prefix = dir.join("f").to_string_lossy().into_owned();
    std::os::unix::fs::symlink("/dev/full", dir.join("f00012.png")).unwrap();
    let o = warpmc(&animate_args(&genome, &["-o", &prefix]));
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("f00012.png: No space left on device") && e.lines().count() == 1, "{e}");
    assert!(e.contains("the same command with --skip-existing renders the rest"), "{e}");
    assert!(dir.join("f00010.png").is_file() && dir.join("f00011.png").is_file(), "{:?}", names_in(&dir));

    for pattern in ["g%04d.png", "g.png"] {
        let prefix = dir.join(pattern).to_string_lossy().into_owned();
        let o = warpmc(&animate_args(&genome, &["-o", &prefix]));
        let e = stderr(&o);
        assert!(o.status.success(), "{e}");
        assert!(e.contains(&format!("{pattern}00010.png, as flam3-animate names them")), "{e}");
        let meant = dir.join("g00010.png");
        assert!(e.contains(&format!("gives {}", meant.display())), "{e}");
        assert!(dir.join(format!("{pattern}00010.png")).is_file(), "{:?}", names_in(&dir));
    }
    // Mended, the same command with --skip-existing finishes the frames.
    std::fs::remove_file(dir.join("f00012.png")).unwrap();
    let o = warpmc(&animate_args(&genome, &["-o", &prefix, "--skip-existing"]));
    let e = stderr(&o);
    assert!(o.status.success() && !e.contains("warning"), "{e}");
    // Frames 10 and 11, and 13 too where a writer thread had it before
    // frame 12 failed.
    assert!(["2 frame(s) already", "3 frame(s) already"].iter().any(|n| e.contains(n)), "{e}");
    assert!(e.contains("1 frame(s) of 64x48") || e.contains("2 frame(s) of 64x48"), "{e}");
    assert!((10..=13).all(|t| dir.join(format!("f{t:05}.png")).is_file()), "{:?}", names_in(&dir));
    // A contact sheet that cannot be written, after every frame was: the
    // same command writes it from the frames.
    let sheet = dir.join("sheet.png");
    std::os::unix::fs::symlink("/dev/full", &sheet).unwrap();
    let with_sheet = ["-o", &prefix, "--skip-existing", "--contact-sheet", sheet.to_str().unwrap()];
    let o = warpmc(&animate_args(&genome, &with_sheet));
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("every frame was written: once that is mended, the same command writes the contact sheet"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A GIF gets a palette made for each frame: its frames, decoded, are
/// close to the PNG frames of the same render (ffmpeg's default fixed
/// palette gave about 22 dB here).
#[test]
fn a_gif_keeps_each_frames_colours() {
    if !ffmpeg_available() {
        println!("SKIPPED a_gif_keeps_each_frames_colours: needs ffmpeg");
        return;
    }
    let dir = temp_dir("gif");
    let genome = example("test.flam3");
    let prefix = dir.join("f").to_string_lossy().into_owned();
    let gif = dir.join("v.gif").to_string_lossy().into_owned();
    let o = warpmc(&animate_args(&genome, &["-o", &prefix]));
    assert!(o.status.success(), "{}", stderr(&o));
    let o = warpmc(&animate_args(&genome, &["--video", &gif]));
    let e = stderr(&o);
    assert!(o.status.success() && e.contains("each frame gets its own palette"), "{e}");
    let decoded = dir.join("g%02d.png");
    let o = Command::new("ffmpeg")
        .args(["-hide_banner", "-loglevel", "error", "-i", &gif, "-vsync", "passthrough"])
        .arg(&decoded)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    for (k, t) in (10..=13).enumerate() {
        let db = psnr(&dir.join(format!("f{t:05}.png")), &dir.join(format!("g{:02}.png", k + 1)));
        assert!(db > 35.0, "frame {t}: {db} dB");
    }
    assert!(!dir.join("g05.png").exists(), "four frames: {:?}", names_in(&dir));
    std::fs::remove_dir_all(&dir).unwrap();
}
