//! Where `warpmc flame animate` puts its frames: PNG files, a video encoded
//! by ffmpeg, a contact sheet. Frames are written on their own threads,
//! fed through a bounded channel, so that writing frame k overlaps the
//! render of frame k + 1.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use warpmc_flame::image::{Bits, PngCompression, quantize, write_png, write_png_with};
use warpmc_flame::render::{RenderStats, RenderedFrame};

/// A rendered frame on its way to the writers.
pub(crate) struct FrameOut {
    /// The frame's time (its file number).
    pub(crate) time: i64,
    /// Its position in the animation (0-based).
    pub(crate) index: usize,
    pub(crate) frame: RenderedFrame,
    /// PNG text chunks (PNG frames only).
    pub(crate) text: Vec<(String, String)>,
    /// PNG compressed text chunks: the frame's genome as `flam3_genome`.
    pub(crate) compressed: Vec<(String, String)>,
    /// Already in its file (`--skip-existing`): read back for the contact
    /// sheet only, not written again.
    pub(crate) on_disk: bool,
}

/// Whether ffmpeg can be run: why not, where `ffmpeg -version` cannot be
/// started or does not succeed within [`PROBE_WAIT`].
pub(crate) fn ffmpeg_runs() -> Result<(), String> {
    let child = Command::new("ffmpeg").arg("-version").stdout(Stdio::null()).stderr(Stdio::null()).spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err("ffmpeg is not on the PATH".into()),
        Err(e) => return Err(format!("ffmpeg could not be started ({e})")),
    };
    match wait_at_most(&mut child, PROBE_WAIT) {
        Ok(Some(status)) if status.success() => Ok(()),
        Ok(Some(status)) => Err(format!("the ffmpeg on the PATH fails `ffmpeg -version` ({status})")),
        Ok(None) => {
            Err(format!("the ffmpeg on the PATH did not answer `ffmpeg -version` within {} s", PROBE_WAIT.as_secs()))
        }
        Err(e) => Err(format!("waiting for `ffmpeg -version`: {e}")),
    }
}

/// Whether ffmpeg can be run (see [`ffmpeg_runs`]).
#[cfg(test)]
fn ffmpeg_available() -> bool {
    ffmpeg_runs().is_ok()
}

/// How frames become a video: what ffmpeg must know of them besides their
/// size.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Encoding {
    /// RGBA frames, written as ProRes 4444 with alpha (.mov only).
    pub(crate) transparent: bool,
    pub(crate) fps: FrameRate,
    /// H.264's constant-quality factor.
    pub(crate) crf: u8,
    /// Width over height of a pixel (`--pixel-aspect`), written as the
    /// video's sample aspect ratio so that players show the frames
    /// unstretched.
    pub(crate) pixel_aspect: f64,
    /// Interlaced frames (`--fields`: the even rows at t, the odd rows at
    /// t + 0.5), encoded as interlaced H.264, top field first.
    pub(crate) fields: bool,
}

impl Encoding {
    /// The size of the pictures of a video of the container `ext` names:
    /// 4:2:0 chroma (H.264, VP9, and the other containers' default codecs)
    /// needs even sides, and a height that is a multiple of 4 when
    /// interlaced (each field's chroma again takes two rows); ProRes 4444
    /// (a transparent .mov) and GIF take any size.
    fn picture(&self, ext: &str, width: u32, height: u32) -> (u32, u32) {
        if (self.transparent && ext == "mov") || ext == "gif" {
            return (width, height);
        }
        let rows = if self.fields { 4 } else { 2 };
        (width.next_multiple_of(2), height.next_multiple_of(rows))
    }
}

/// Whether a video file's container takes H.264 (warpmc's codec for it).
fn takes_h264(ext: &str) -> bool {
    matches!(ext, "mp4" | "m4v" | "mkv" | "mov")
}

/// Refuses video settings that would lose what the frames hold: an alpha
/// channel anywhere but in a .mov (ProRes 4444) or a .webm (VP9 with
/// alpha; H.264 and the other containers' default codecs drop it, leaving
/// unassociated colours at full strength), 16-bit samples (the video takes 8-bit frames), and
/// interlaced frames in anything but H.264 (which warpmc writes
/// interlaced; other codecs would take them for progressive frames).
pub(crate) fn check_video_options(video: &Path, transparent: bool, bits: Bits, fields: bool) -> anyhow::Result<()> {
    let ext = video.extension().map(|e| e.to_string_lossy().to_lowercase()).unwrap_or_default();
    if fields && (transparent || !takes_h264(&ext)) {
        bail!(
            "--fields with --video {}: interlaced video is written as H.264 only (.mp4, .m4v, .mkv or .mov, without \
             --transparent); write PNG frames (leave out --video) for other codecs",
            video.display()
        );
    }
    if transparent && !matches!(ext.as_str(), "mov" | "webm") {
        bail!(
            "--transparent with --video {}: this video would have no alpha channel; write a .mov (ProRes 4444 with \
             alpha), a .webm (VP9 with alpha) or PNG frames (leave out --video)",
            video.display()
        );
    }
    if bits == Bits::Sixteen {
        bail!("--bits 16 with --video: the video takes 8-bit frames; leave out one of them");
    }
    Ok(())
}

/// A warning for a container whose codec warpmc does not choose (.avi,
/// .flv, .ogv, …): ffmpeg encodes it with its default codec and bit rate
/// (for .avi MPEG-4 Part 2 at 200 kb/s), and `--crf` does not reach it;
/// for a GIF, a note of what the format keeps.
pub(crate) fn default_codec_warning(video: &Path, transparent: bool) -> Option<String> {
    let ext = video.extension().map(|e| e.to_string_lossy().to_lowercase()).unwrap_or_default();
    if ext == "gif" {
        return Some(format!(
            "note: --video {}: a GIF holds 256 colours a frame (each frame gets its own palette, dithered) and \
             delays in hundredths of a second (30 fps plays as 3, 3 and 4 hundredths); --crf does not apply",
            video.display()
        ));
    }
    // No extension is refused later (`probe`), with its own message.
    (!transparent && !ext.is_empty() && !takes_h264(&ext) && ext != "webm").then(|| {
        format!(
            "warning: --video {}: warpmc chooses the codec for .mp4, .m4v, .mkv, .mov (H.264) and .webm (VP9) only; \
             this video gets ffmpeg's default codec and bit rate for its container, which --crf does not set and \
             which can be far below the frames' quality",
            video.display()
        )
    })
}

/// A note for frames the video pads (see [`Encoding::picture`]).
pub(crate) fn padding_note(video: &Path, encoding: &Encoding, width: u32, height: u32) -> Option<String> {
    let ext = video.extension().map(|e| e.to_string_lossy().to_lowercase()).unwrap_or_default();
    let (w, h) = encoding.picture(&ext, width, height);
    ((w, h) != (width, height)).then(|| {
        let why = if encoding.fields {
            "interlaced H.264 takes even widths and heights that are multiples of 4"
        } else {
            "4:2:0 video takes even sides"
        };
        format!(
            "note: the video is {w}x{h}, not {width}x{height} ({why}): the last column or rows are repeated to fill \
             it"
        )
    })
}

/// A video being encoded by ffmpeg from raw frames on its stdin, into a
/// file beside the target that replaces it when the encoding succeeds (so
/// an interrupted or failed encoding leaves what was there untouched).
pub(crate) struct Video {
    child: Child,
    stdin: Option<ChildStdin>,
    /// Where ffmpeg writes: a hidden file beside `target`, or `target`
    /// itself when that is a device or FIFO.
    partial: PathBuf,
    /// The file the video becomes: the path given, or the file its
    /// symlinks point to.
    target: PathBuf,
    /// The path as given, for messages.
    shown: PathBuf,
    size: (u32, u32),
    channels: usize,
    /// The times of the frames handed to ffmpeg so far, in order.
    pushed: Vec<i64>,
    /// ffmpeg's messages, passed on to warpmc's standard error by a
    /// thread of their own that sets this when ffmpeg says anything: at
    /// `-loglevel error` it speaks only of errors, and some (a full disk at
    /// the end of the file) come with exit status 0.
    complained: Arc<std::sync::atomic::AtomicBool>,
    messages: Option<JoinHandle<()>>,
    /// The partial video, listed for removal should warpmc end at once.
    _listed: Option<warpmc_host::output::Unfinished>,
}

/// ffmpeg's exit status after a signal (SIGTERM, SIGINT), which it answers
/// by closing the video of the frames it has encoded.
const FFMPEG_STOPPED_BY_SIGNAL: i32 = 255;

/// A video's frame rate as a ratio of whole numbers, as ffmpeg takes it:
/// `30`, `29.97` (2997/100) or `30000/1001` (NTSC's exact rate).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FrameRate {
    num: u64,
    den: u64,
}

impl FrameRate {
    /// The most frames per second a video may have.
    const MAX: u64 = 1000;

    /// `--fps`'s value: a whole number, a decimal or a ratio N/D, more than
    /// 0 and at most 1000 frames per second.
    pub(crate) fn parse(text: &str) -> Result<FrameRate, String> {
        let bad = || {
            format!(
                "'{text}' is not a frame rate in (0, {}]: give frames per second as a whole number (30), a decimal \
                 (29.97) or a ratio (30000/1001)",
                Self::MAX
            )
        };
        let digits = |s: &str| -> Option<u64> {
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            s.parse().ok()
        };
        let t = text.trim();
        let (num, den) = if let Some((n, d)) = t.split_once('/') {
            (digits(n.trim()).ok_or_else(bad)?, digits(d.trim()).ok_or_else(bad)?)
        } else if let Some((whole, frac)) = t.split_once('.') {
            // At most nine decimals, so that the ratio fits.
            if frac.len() > 9 || (whole.is_empty() && frac.is_empty()) {
                return Err(bad());
            }
            let scale = 10u64.pow(frac.len() as u32);
            let whole = if whole.is_empty() { 0 } else { digits(whole).ok_or_else(bad)? };
            let frac = if frac.is_empty() { 0 } else { digits(frac).ok_or_else(bad)? };
            (whole.checked_mul(scale).and_then(|w| w.checked_add(frac)).ok_or_else(bad)?, scale)
        } else {
            (digits(t).ok_or_else(bad)?, 1)
        };
        // 0 < num / den <= MAX, in integers.
        if num == 0 || den == 0 || num > Self::MAX.saturating_mul(den) {
            return Err(bad());
        }
        let g = gcd(num, den);
        Ok(FrameRate { num: num / g, den: den / g })
    }

    /// As ffmpeg's `-r` takes it.
    fn ffmpeg(self) -> String {
        if self.den == 1 { self.num.to_string() } else { format!("{}/{}", self.num, self.den) }
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

impl Video {
    /// Starts ffmpeg for `width × height` frames: H.264 (yuv420p, padded
    /// as [`Encoding::picture`] says) at constant quality for MP4, MKV and
    /// MOV targets, the container's default codec otherwise; with
    /// `transparent`, RGBA frames as ProRes 4444 with alpha (MOV only, see
    /// [`check_video_options`]).
    pub(crate) fn start(target: &Path, width: u32, height: u32, encoding: Encoding) -> anyhow::Result<Video> {
        let ext = target.extension().map(|e| e.to_string_lossy().to_lowercase()).unwrap_or_default();
        // The video is made beside the file a symlink points to and renamed
        // over that file, so the link stays a link; a device or FIFO is
        // written in place.
        let (file, special) = warpmc_host::output::final_target(target)?;
        // A partial video a killed run left is removed by the next run's
        // check of the directory (`check_writable`).
        let partial = if special { file.clone() } else { warpmc_host::output::partial_path(&file) };
        // ffmpeg fails on a container or codec it cannot write only once
        // it has a frame: two black frames written to a scratch file first
        // find that out before any frame is rendered.
        probe(target, &ext, width, height, encoding)?;
        let mut cmd = ffmpeg_command(&ext, width, height, encoding);
        cmd.arg(&partial).stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::piped());
        // A process group of its own: Ctrl-C in the terminal reaches warpmc
        // alone, which ends ffmpeg's input so that the frames so far make a
        // whole video (`keep`); ffmpeg stopped by the signal would leave none.
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn().context("starting ffmpeg")?;
        let listed = (!special).then(|| warpmc_host::output::Unfinished::new(&partial));
        let stdin = child.stdin.take();
        let complained = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let messages = child.stderr.take().map(|stderr| {
            let complained = complained.clone();
            std::thread::spawn(move || {
                use std::io::BufRead;
                for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
                    complained.store(true, std::sync::atomic::Ordering::SeqCst);
                    eprintln!("{line}");
                }
            })
        });
        Ok(Video {
            child,
            stdin,
            partial,
            target: file,
            shown: target.to_path_buf(),
            size: (width, height),
            channels: if encoding.transparent { 4 } else { 3 },
            pushed: Vec::new(),
            complained,
            messages,
            _listed: listed,
        })
    }

    fn push(&mut self, frame: &RenderedFrame, time: i64) -> anyhow::Result<()> {
        if (frame.width, frame.height) != self.size {
            bail!(
                "a frame of {} × {} in a video of {} × {}: every frame of a video has one size",
                frame.width,
                frame.height,
                self.size.0,
                self.size.1
            );
        }
        let q = quantize(frame, Bits::Eight);
        debug_assert_eq!(q.channels, self.channels);
        let bytes: Vec<u8> = q.samples.iter().map(|&v| v as u8).collect();
        let stdin = self.stdin.as_mut().context("ffmpeg's input is closed")?;
        if let Err(e) = stdin.write_all(&bytes) {
            // Most often ffmpeg has ended (a full disk, a crash, a kill):
            // its status says how, and its own message, if any, came
            // before.
            drop(self.stdin.take());
            let how = match wait_at_most(&mut self.child, PROBE_WAIT) {
                Ok(Some(status)) => format!("ffmpeg ended ({status}) before the last frame"),
                _ => format!("ffmpeg stopped reading frames ({e}) and was stopped"),
            };
            // Its messages first, so that they come before this one.
            self.complained();
            bail!("{how}; {} was not written (ffmpeg's own message, if it gave one, is above)", self.shown.display());
        }
        self.pushed.push(time);
        Ok(())
    }

    /// Whether ffmpeg, which has ended, said anything (an error): its
    /// messages are waited for a bounded time (a child of ffmpeg could
    /// hold the pipe open).
    fn complained(&mut self) -> bool {
        if let Some(messages) = self.messages.take() {
            let deadline = Instant::now() + std::time::Duration::from_secs(5);
            while !messages.is_finished() && Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            if messages.is_finished() {
                let _ = messages.join();
            }
        }
        self.complained.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// After an interruption: ends the input so that ffmpeg closes the
    /// video of the frames so far, and keeps it under a name of its own
    /// beside the target (the file a symlink points to),
    /// `NAME.frames-FIRST-LAST.EXT` (or `….1.EXT`, `….2.EXT`, … where that
    /// is taken), never over an existing file and never over the target,
    /// which stays as it was. The kept file and its
    /// frames' times, or None where nothing was kept.
    fn keep(mut self) -> Option<(PathBuf, (i64, i64))> {
        drop(self.stdin.take());
        // An ffmpeg that does not end once its input has (stalled) is
        // stopped, and its video not kept.
        let status = wait_at_most(&mut self.child, PROBE_WAIT);
        let complained = self.complained();
        // Ended by its input: every frame handed over is in the video.
        // Ended by a signal of its own: those it had read, which ffprobe
        // counts (none kept where it cannot).
        let frames = match status {
            Ok(Some(_)) if complained || self.partial == self.target => None,
            Ok(Some(s)) if s.success() => Some(self.pushed.len()),
            Ok(Some(s)) if s.code() == Some(FFMPEG_STOPPED_BY_SIGNAL) => {
                encoded_frames(&self.partial).map(|n| n.min(self.pushed.len()))
            }
            _ => None,
        };
        let span = frames.filter(|&n| n > 0).map(|n| (self.pushed[0], self.pushed[n - 1]));
        let kept = match span {
            Some((first, last)) => {
                let stem = self.target.file_stem().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                let ext = self.target.extension().map(|e| e.to_string_lossy().into_owned()).unwrap_or_default();
                // The first free name of NAME.frames-FIRST-LAST.EXT,
                // NAME.frames-FIRST-LAST.1.EXT, … A hard link fails where
                // the name is taken, so nothing is replaced; where the file
                // system has no hard links, a rename to a name that is free.
                (0..100).find_map(|n| {
                    let again = if n == 0 { String::new() } else { format!(".{n}") };
                    let kept = self.target.with_file_name(format!("{stem}.frames-{first}-{last}{again}.{ext}"));
                    let placed = match std::fs::hard_link(&self.partial, &kept) {
                        Ok(()) => true,
                        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
                        Err(_) => !kept.exists() && std::fs::rename(&self.partial, &kept).is_ok(),
                    };
                    placed.then_some((kept, (first, last)))
                })
            }
            None => None,
        };
        self.remove_partial();
        kept
    }

    /// Ends the input, waits for ffmpeg and moves the video into place.
    fn finish(mut self) -> anyhow::Result<()> {
        drop(self.stdin.take());
        let status = self.child.wait().context("waiting for ffmpeg")?;
        let complained = self.complained();
        // Stopped by a signal of its own (a batch system stopping the job)
        // just as its input ended: the video is whole if it holds every
        // frame.
        let whole = status.success()
            || (status.code() == Some(FFMPEG_STOPPED_BY_SIGNAL)
                && self.partial != self.target
                && encoded_frames(&self.partial) == Some(self.pushed.len()));
        if !whole || complained {
            self.remove_partial();
            if whole {
                bail!(
                    "ffmpeg reported an error (above), though its exit status says it finished; {} was not written",
                    self.shown.display()
                );
            }
            bail!("ffmpeg failed ({status}); {} was not written", self.shown.display());
        }
        if self.partial == self.target {
            return Ok(());
        }
        // An ffmpeg that says it finished but wrote nothing (a wrapper
        // script, an output option that sent the video elsewhere).
        if std::fs::symlink_metadata(&self.partial).is_err() {
            bail!("ffmpeg finished without writing the video; {} was not written", self.shown.display());
        }
        if let Err(e) = std::fs::rename(&self.partial, &self.target) {
            // The whole video stays where ffmpeg wrote it, for the user to
            // move (dropping it must not remove it).
            let at = std::mem::replace(&mut self.partial, self.target.clone());
            self._listed = None;
            bail!(
                "moving the video into place at {}: {e}; the video is in {} (move it before another warpmc run \
                 there takes it for a killed run's leftover)",
                self.shown.display(),
                at.display()
            );
        }
        Ok(())
    }

    /// Stops ffmpeg and removes the partial video (as dropping it does).
    fn abandon(self) {
        drop(self);
    }

    /// Removes the partial video, unless ffmpeg wrote into a device or FIFO
    /// in place.
    fn remove_partial(&self) {
        if self.partial != self.target {
            let _ = std::fs::remove_file(&self.partial);
        }
    }
}

/// A video dropped on any path (an error that returns early) stops ffmpeg
/// and removes its partial file; after `finish` or `keep` there is nothing
/// left to do.
impl Drop for Video {
    fn drop(&mut self) {
        drop(self.stdin.take());
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        self.remove_partial();
    }
}

/// The ffmpeg command that encodes raw `width × height` frames from its
/// standard input into a video of the container `ext` names (the output
/// path is left to add): see [`Video::start`].
fn ffmpeg_command(ext: &str, width: u32, height: u32, encoding: Encoding) -> Command {
    let Encoding { transparent, fps, crf, pixel_aspect, fields } = encoding;
    let mut cmd = Command::new("ffmpeg");
    cmd.args(["-hide_banner", "-loglevel", "error", "-y", "-f", "rawvideo"])
        .args(["-pix_fmt", if transparent { "rgba" } else { "rgb24" }])
        .args(["-s", &format!("{width}x{height}"), "-r", &fps.ffmpeg(), "-i", "pipe:0"]);
    let mut filters = Vec::new();
    let (w, h) = encoding.picture(ext, width, height);
    if (w, h) != (width, height) {
        // The added column and rows repeat the frame's last ones: padding
        // of another colour would show as a line at the edge, and 4:2:0
        // chroma would bleed it into the frame's last column.
        filters.push(format!("pad={w}:{h},fillborders=right={}:bottom={}:mode=smear", w - width, h - height));
    }
    // Players size the picture by its sample aspect ratio (setsar's max
    // denominator 1000 keeps NTSC's 10:11 exact).
    filters.push(format!("setsar=sar={pixel_aspect}:max=1000"));
    if fields {
        filters.push("setfield=tff".into());
    }
    // The frames are sRGB and the video HD: converted with BT.709's matrix
    // and tagged so, as players and editors assume for HD (ffmpeg's
    // default matrix, BT.601, untagged, shifts the colours where they do).
    let bt709 = |format: &str| {
        let interlaced = if fields { ":interl=1" } else { "" };
        format!(
            "scale=out_color_matrix=bt709:out_range=tv{interlaced},format={format},\
             setparams=colorspace=bt709:color_primaries=bt709:color_trc=bt709:range=tv"
        )
    };
    let tags = ["-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709", "-color_range", "tv"];
    if transparent && ext == "webm" {
        // VP9 keeps the alpha channel as a second stream beside the colours
        // (alternate reference frames would drop it), as browsers play it.
        filters.push(bt709("yuva420p"));
        cmd.args(["-vf", &filters.join(",")])
            .args(["-c:v", "libvpx-vp9", "-crf", &crf.to_string(), "-b:v", "0", "-row-mt", "1", "-auto-alt-ref", "0"])
            .args(["-deadline", "good", "-cpu-used", "4"])
            .args(tags);
    } else if transparent {
        // ProRes 4444 keeps the alpha channel, unassociated as in the
        // PNG frames (`check_video_options` allows only .mov and .webm).
        filters.push(bt709("yuva444p10le"));
        cmd.args(["-vf", &filters.join(",")]).args(["-c:v", "prores_ks", "-profile:v", "4444"]).args(tags);
    } else if takes_h264(ext) {
        filters.push(bt709("yuv420p"));
        cmd.args(["-vf", &filters.join(",")])
            .args(["-c:v", "libx264", "-preset", "medium", "-crf", &crf.to_string()])
            .args(tags);
        if fields {
            // The container's field order too (Matroska's would say
            // bottom first without it).
            cmd.args(["-flags", "+ildct+ilme", "-field_order", "tt"]);
        }
    } else if ext == "webm" {
        // VP9 at the same constant quality (ffmpeg's default for WebM
        // would keep the frames' RGB, which browsers do not play).
        filters.push(bt709("yuv420p"));
        cmd.args(["-vf", &filters.join(",")])
            .args(["-c:v", "libvpx-vp9", "-crf", &crf.to_string(), "-b:v", "0", "-row-mt", "1"])
            .args(["-deadline", "good", "-cpu-used", "4"])
            .args(tags);
    } else if ext == "gif" {
        // A palette of its own for each frame, made from that frame and
        // used for it at once (ffmpeg's default maps every frame to one
        // fixed palette: about 20 dB against the frames; a palette over the
        // whole video would hold every frame in memory until the last).
        filters.push(
            "split[frame][copy];[frame]palettegen=stats_mode=single[palette];[copy][palette]paletteuse=new=1".into(),
        );
        cmd.args(["-vf", &filters.join(",")]);
    } else {
        cmd.args(["-vf", &filters.join(",")]);
    }
    if matches!(ext, "mp4" | "m4v" | "mov") {
        cmd.args(["-movflags", "+faststart"]);
    }
    cmd
}

/// An error, naming ffmpeg's reason, unless ffmpeg writes two black frames
/// into a scratch video of `target`'s container with these settings: one
/// as wide as the video and at most 67 rows high, one as high and at most
/// 67 columns wide, so that a codec's limit on either side (libx264 takes
/// at most 16,384) shows before any frame is rendered.
fn probe(target: &Path, ext: &str, width: u32, height: u32, encoding: Encoding) -> anyhow::Result<()> {
    let refused = |why: &str| {
        anyhow!("--video {}: ffmpeg cannot write this video ({why}); name a .mp4, .mkv or .mov file", target.display())
    };
    if ext.is_empty() {
        return Err(refused("no extension names its container"));
    }
    // Thin frames that pad alike (the same remainder modulo 4): a frame of
    // the full size may be gigabytes.
    let thin = |side: u32| side.min(64 + side % 4);
    let mut shapes = vec![(width, thin(height))];
    if height > thin(height) {
        shapes.push((thin(width), height));
    }
    for (w, h) in shapes {
        match probe_shape(ext, w, h, encoding) {
            Ok(true) => {}
            Ok(false) => bail!(
                "--video {}: ffmpeg did not write a two-frame test video within {} s and was stopped (is the \
                 ffmpeg on the PATH stalled?)",
                target.display(),
                PROBE_WAIT.as_secs()
            ),
            Err(why) => return Err(refused(&why)),
        }
    }
    Ok(())
}

/// ffmpeg's first line of complaint, if it cannot write two black frames
/// of `width` × `height`; false where it did not end within
/// [`PROBE_WAIT`].
fn probe_shape(ext: &str, width: u32, height: u32, encoding: Encoding) -> Result<bool, String> {
    let dir = tempfile::Builder::new()
        .prefix("warpmc-video-")
        .tempdir()
        .map_err(|e| format!("making a scratch directory: {e}"))?;
    // Removed also by a second Ctrl-C, which ends warpmc at once.
    let _listed = warpmc_host::output::Unfinished::new(dir.path());
    let mut cmd = ffmpeg_command(ext, width, height, encoding);
    cmd.arg(dir.path().join(format!("probe.{ext}"))).stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::piped());
    // Out of the terminal's process group, as the video's own ffmpeg: a
    // Ctrl-C now is warpmc's to answer (after this test), not a failure of
    // ffmpeg's to report.
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn().map_err(|e| format!("starting ffmpeg: {e}"))?;
    let frame = vec![0u8; width as usize * height as usize * if encoding.transparent { 4 } else { 3 }];
    // Written and read on threads of their own, so that an ffmpeg that
    // reads nothing (stalled, or another program of that name) is waited
    // for a bounded time, not for ever. A write error means ffmpeg stopped;
    // its status says why.
    let stdin = child.stdin.take();
    let writer = std::thread::spawn(move || {
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(&frame).and_then(|()| stdin.write_all(&frame));
        }
    });
    let mut stderr = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        if let Some(e) = stderr.as_mut() {
            let _ = std::io::Read::read_to_end(e, &mut text);
        }
        String::from_utf8_lossy(&text).into_owned()
    });
    let Some(status) = wait_at_most(&mut child, PROBE_WAIT).map_err(|e| format!("waiting for ffmpeg: {e}"))? else {
        // The threads may wait on pipes that a child of ffmpeg still holds:
        // they are left to end with the process.
        return Ok(false);
    };
    let _ = writer.join();
    let message = reader.join().unwrap_or_default();
    if status.success() {
        return Ok(true);
    }
    Err(message.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("no message").to_string())
}

/// The frames in the video file at `path`, as ffprobe counts its packets
/// (None where ffprobe cannot be run or cannot read the file).
fn encoded_frames(path: &Path) -> Option<usize> {
    let mut child = Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", "v:0", "-count_packets"])
        .args(["-show_entries", "stream=nb_read_packets", "-of", "csv=p=0"])
        .arg(path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut text);
        text
    });
    let status = wait_at_most(&mut child, PROBE_WAIT).ok()??;
    let text = reader.join().ok()?;
    if !status.success() {
        return None;
    }
    text.trim().parse().ok()
}

/// How long ffmpeg may take over the two small frames of the test video,
/// or to close a video after an interruption.
const PROBE_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// `child`'s exit status, or None (it is killed) where it has not ended
/// within `limit`.
fn wait_at_most(child: &mut Child, limit: std::time::Duration) -> std::io::Result<Option<std::process::ExitStatus>> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A grid of small frames.
pub(crate) struct ContactSheet {
    path: PathBuf,
    columns: usize,
    rows: usize,
    /// Show frame i when i is a multiple of `every`.
    every: usize,
    thumb: (usize, usize),
    pixels: Vec<[f64; 4]>,
    transparent: bool,
}

/// Most frames a contact sheet shows (evenly spaced through longer
/// animations).
const SHEET_FRAMES: usize = 100;
/// Width of a contact sheet, at most.
const SHEET_WIDTH: usize = 1920;

impl ContactSheet {
    /// A sheet for `frames` frames of `width × height`.
    /// Every how many frames of an animation of `frames` one is shown.
    fn every(frames: u64) -> usize {
        (frames as usize).div_ceil(SHEET_FRAMES).max(1)
    }

    /// Whether frame `index` of an animation of `frames` is on the sheet.
    pub(crate) fn shows(frames: u64, index: usize) -> bool {
        index.is_multiple_of(Self::every(frames))
    }

    pub(crate) fn new(path: &Path, frames: u64, width: u32, height: u32, transparent: bool) -> ContactSheet {
        let every = Self::every(frames);
        let shown = (frames as usize).div_ceil(every).max(1);
        let columns = (shown as f64).sqrt().ceil() as usize;
        let rows = shown.div_ceil(columns);
        let tw = (SHEET_WIDTH / columns).clamp(1, width as usize);
        let th = ((tw as f64 * f64::from(height) / f64::from(width)).round() as usize).max(1);
        ContactSheet {
            path: path.to_path_buf(),
            columns,
            rows,
            every,
            thumb: (tw, th),
            pixels: vec![[0.0, 0.0, 0.0, if transparent { 0.0 } else { 1.0 }]; columns * tw * rows * th],
            transparent,
        }
    }

    /// Puts frame `index` on the sheet when it is one the sheet shows: each
    /// thumbnail pixel is the mean of the frame's pixels it covers.
    pub(crate) fn add(&mut self, index: usize, frame: &RenderedFrame) {
        if !index.is_multiple_of(self.every) {
            return;
        }
        let slot = index / self.every;
        let (tw, th) = self.thumb;
        let (x0, y0) = ((slot % self.columns) * tw, (slot / self.columns) * th);
        let (w, h) = (frame.width as usize, frame.height as usize);
        let sheet_w = self.columns * tw;
        for ty in 0..th {
            let (ya, yb) = (ty * h / th, ((ty + 1) * h / th).max(ty * h / th + 1).min(h));
            for tx in 0..tw {
                let (xa, xb) = (tx * w / tw, ((tx + 1) * w / tw).max(tx * w / tw + 1).min(w));
                let mut sum = [0.0; 4];
                for y in ya..yb {
                    for p in &frame.pixels[y * w + xa..y * w + xb] {
                        for k in 0..4 {
                            sum[k] += p[k];
                        }
                    }
                }
                let n = ((yb - ya) * (xb - xa)).max(1) as f64;
                self.pixels[(y0 + ty) * sheet_w + x0 + tx] = sum.map(|s| s / n);
            }
        }
    }

    fn write(self) -> anyhow::Result<()> {
        let (tw, th) = self.thumb;
        let sheet = RenderedFrame {
            width: (self.columns * tw) as u32,
            height: (self.rows * th) as u32,
            pixels: self.pixels,
            transparent: self.transparent,
            stats: RenderStats::default(),
        };
        write_png(&sheet, Bits::Eight, &self.path, &[])?;
        Ok(())
    }
}

/// What the writers produce.
pub(crate) struct Outputs {
    /// PNG files PREFIXNNNNN.png (when there is no video).
    pub(crate) png_prefix: Option<String>,
    pub(crate) bits: Bits,
    pub(crate) compression: PngCompression,
    pub(crate) video: Option<Video>,
    pub(crate) sheet: Option<ContactSheet>,
}

impl Outputs {
    /// The PNG file of the frame at `time`.
    pub(crate) fn frame_path(prefix: &str, time: i64) -> PathBuf {
        PathBuf::from(format!("{prefix}{time:05}.png"))
    }
}

/// Seconds the writers spent, summed over their threads.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WriteTimes {
    pub(crate) frames: usize,
    pub(crate) seconds: f64,
}

/// The writer threads: PNG frames are encoded on several threads at once
/// (in any order); a video takes its frames in order on one.
pub(crate) struct Writers {
    sender: Option<SyncSender<FrameOut>>,
    threads: Vec<JoinHandle<anyhow::Result<WriteTimes>>>,
    shared: Arc<Shared>,
}

struct Shared {
    png_prefix: Option<String>,
    bits: Bits,
    compression: PngCompression,
    video: Mutex<Option<Video>>,
    sheet: Mutex<Option<ContactSheet>>,
    /// Frames handed over and not yet written (or failed), with the
    /// condition their writers signal as each is done.
    pending: Mutex<usize>,
    done: Condvar,
}

/// Counts a frame a writer took as done, however its writing ends.
struct FrameDone<'a>(&'a Shared);

impl Drop for FrameDone<'_> {
    fn drop(&mut self) {
        let mut pending = lock(&self.0.pending);
        *pending = pending.saturating_sub(1);
        self.0.done.notify_all();
    }
}

impl Writers {
    /// Starts the writers; `png_threads` of them when frames go to PNG
    /// files, one for a video. The channel holds as many frames as there
    /// are writers, so at most twice that many frames are in memory.
    pub(crate) fn start(outputs: Outputs, png_threads: usize) -> Writers {
        let n = if outputs.video.is_some() { 1 } else { png_threads.max(1) };
        let (sender, receiver) = sync_channel::<FrameOut>(n);
        let receiver = Arc::new(Mutex::new(receiver));
        let shared = Arc::new(Shared {
            png_prefix: outputs.png_prefix,
            bits: outputs.bits,
            compression: outputs.compression,
            video: Mutex::new(outputs.video),
            sheet: Mutex::new(outputs.sheet),
            pending: Mutex::new(0),
            done: Condvar::new(),
        });
        let threads = (0..n)
            .map(|_| {
                let (receiver, shared) = (receiver.clone(), shared.clone());
                std::thread::spawn(move || write_frames(&receiver, &shared))
            })
            .collect();
        Writers { sender: Some(sender), threads, shared }
    }

    /// Hands a frame to the writers (waiting while they are busy); an error
    /// when they stopped, with their error.
    pub(crate) fn send(&mut self, frame: FrameOut) -> anyhow::Result<()> {
        let sender = self.sender.as_ref().context("the writers were closed")?;
        *lock(&self.shared.pending) += 1;
        if sender.send(frame).is_err() {
            *lock(&self.shared.pending) -= 1;
            // A writer stopped on an error; it says which.
            self.sender = None;
            self.join()?;
            bail!("the frame writers stopped");
        }
        Ok(())
    }

    fn join(&mut self) -> anyhow::Result<WriteTimes> {
        self.sender = None;
        let mut times = WriteTimes::default();
        let mut first_error = None;
        for t in self.threads.drain(..) {
            match t.join() {
                Ok(Ok(w)) => {
                    times.frames += w.frames;
                    times.seconds += w.seconds;
                }
                Ok(Err(e)) => {
                    first_error.get_or_insert(e);
                }
                Err(_) => {
                    first_error.get_or_insert(anyhow!("a frame writer panicked"));
                }
            }
        }
        // The video stays for the caller to finish, keep or abandon.
        first_error.map_or(Ok(times), Err)
    }

    /// Waits until the frames handed over so far are written (or the
    /// writers have stopped): the memory they hold is free again.
    pub(crate) fn wait_idle(&self) {
        let mut pending = lock(&self.shared.pending);
        while *pending > 0 && !self.threads.iter().all(|t| t.is_finished()) {
            pending = self
                .shared
                .done
                .wait_timeout(pending, Duration::from_millis(50))
                .map_or_else(|e| e.into_inner().0, |r| r.0);
        }
    }

    /// Waits for every frame to be written, then closes the video and
    /// writes the contact sheet.
    pub(crate) fn finish(mut self) -> anyhow::Result<WriteTimes> {
        let times = match self.join() {
            Ok(times) => times,
            Err(e) => {
                if let Some(v) = lock(&self.shared.video).take() {
                    v.abandon();
                }
                return Err(e);
            }
        };
        if let Some(v) = lock(&self.shared.video).take() {
            v.finish()?;
        }
        if let Some(s) = lock(&self.shared.sheet).take() {
            s.write().map_err(|e| anyhow!(SheetNotWritten(e)))?;
        }
        Ok(times)
    }

    /// Waits for the frames handed over so far to be written, and drops the
    /// video (after an error): PNG frames already written stay.
    pub(crate) fn abandon(mut self) {
        let _ = self.join();
        if let Some(v) = lock(&self.shared.video).take() {
            v.abandon();
        }
    }

    /// After an interruption: waits for the frames handed over so far to be
    /// written (PNG frames stay), and keeps the video of them under a name
    /// of its own ([`Video::keep`]), returned with its first and last time.
    /// A frame that could not be written (ffmpeg, stopped by the signal
    /// too, had closed the video) leaves the frames before it.
    pub(crate) fn keep(mut self) -> Option<(PathBuf, (i64, i64))> {
        let _ = self.join();
        let video = lock(&self.shared.video).take()?;
        video.keep()
    }
}

/// Writers dropped without [`Writers::finish`], [`Writers::abandon`] or
/// [`Writers::keep`] (an error returned between frames) still write the
/// frames handed over: a finished frame is never lost. A video is
/// abandoned, as after an error.
impl Drop for Writers {
    fn drop(&mut self) {
        if self.threads.is_empty() {
            return;
        }
        let _ = self.join();
        if let Some(v) = lock(&self.shared.video).take() {
            v.abandon();
        }
    }
}

/// The contact sheet could not be written, after every frame was: the
/// error of [`Writers::finish`] then, so that the caller can say so.
#[derive(Debug)]
pub(crate) struct SheetNotWritten(anyhow::Error);

impl std::fmt::Display for SheetNotWritten {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

impl std::error::Error for SheetNotWritten {}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn write_frames(receiver: &Mutex<Receiver<FrameOut>>, shared: &Shared) -> anyhow::Result<WriteTimes> {
    let mut times = WriteTimes::default();
    loop {
        let next = lock(receiver).recv();
        let Ok(out) = next else { return Ok(times) };
        let _done = FrameDone(shared);
        let start = Instant::now();
        if let Some(sheet) = lock(&shared.sheet).as_mut() {
            sheet.add(out.index, &out.frame);
        }
        if out.on_disk {
            continue;
        }
        if let Some(v) = lock(&shared.video).as_mut() {
            v.push(&out.frame, out.time)?;
        } else if let Some(prefix) = &shared.png_prefix {
            let path = Outputs::frame_path(prefix, out.time);
            write_png_with(&out.frame, shared.bits, &path, &out.text, &out.compressed, shared.compression)?;
        }
        times.frames += 1;
        times.seconds += start.elapsed().as_secs_f64();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// H.264 at 10 frames/s, square pixels, progressive.
    fn plain() -> Encoding {
        Encoding { transparent: false, fps: FrameRate::parse("10").unwrap(), crf: 23, pixel_aspect: 1.0, fields: false }
    }

    #[test]
    fn containers_whose_codec_ffmpeg_chooses_are_warned_of() {
        for ext in ["avi", "flv", "ogv", "gif", "ts", "AVI"] {
            let w = default_codec_warning(Path::new(&format!("a.{ext}")), false);
            assert!(w.is_some_and(|w| w.contains("--crf")), "{ext}");
        }
        for ext in ["mp4", "m4v", "mkv", "MOV", "webm", ""] {
            assert_eq!(default_codec_warning(Path::new(&format!("a.{ext}")), false), None, "{ext}");
        }
        // ProRes 4444, chosen by warpmc.
        assert_eq!(default_codec_warning(Path::new("a.mov"), true), None);
    }

    #[test]
    fn frame_rates_are_whole_decimal_or_ratios_up_to_1000() {
        for (text, ffmpeg) in [
            ("30", "30"),
            ("29.97", "2997/100"),
            ("30000/1001", "30000/1001"),
            (" 24000 / 1001 ", "24000/1001"),
            ("60/2", "30"),
            ("23.976", "2997/125"),
            (".5", "1/2"),
            ("25.", "25"),
            ("1000", "1000"),
            ("0.000000001", "1/1000000000"),
        ] {
            assert_eq!(FrameRate::parse(text).map(FrameRate::ffmpeg), Ok(ffmpeg.to_string()), "{text}");
        }
        for bad in [
            "0",
            "0.0",
            "-1",
            "1001",
            "1000.0001",
            "1/0",
            "0/5",
            "",
            ".",
            "/",
            "1/",
            "nan",
            "inf",
            "1e3",
            "+30",
            "3 0",
            "0.0000000001",
            "99999999999999999999",
            "18446744073709551615/1",
        ] {
            let e = FrameRate::parse(bad).unwrap_err();
            assert!(e.contains("is not a frame rate"), "{bad}: {e}");
        }
    }

    fn frame(w: u32, h: u32, value: f64) -> RenderedFrame {
        RenderedFrame {
            width: w,
            height: h,
            pixels: vec![[value, value / 2.0, 0.0, 1.0]; (w * h) as usize],
            transparent: false,
            stats: RenderStats::default(),
        }
    }

    #[test]
    fn writers_dropped_after_an_error_still_write_the_frames_handed_over() {
        let dir = warpmc_testkit::scratch_dir("writers-drop");
        std::fs::create_dir_all(&dir).unwrap();
        let prefix = format!("{}/f", dir.display());
        let outputs = Outputs {
            png_prefix: Some(prefix.clone()),
            bits: Bits::Eight,
            compression: PngCompression::Fast,
            video: None,
            sheet: None,
        };
        let mut writers = Writers::start(outputs, 2);
        for t in 0..5 {
            let out = FrameOut {
                time: t,
                index: t as usize,
                frame: frame(64, 48, 200.0),
                text: vec![],
                compressed: vec![],
                on_disk: false,
            };
            writers.send(out).unwrap();
        }
        // Waiting for them: every frame handed over is written.
        writers.wait_idle();
        assert_eq!(*lock(&writers.shared.pending), 0);
        for t in 5..8 {
            let out = FrameOut {
                time: t,
                index: t as usize,
                frame: frame(64, 48, 100.0),
                text: vec![],
                compressed: vec![],
                on_disk: false,
            };
            writers.send(out).unwrap();
        }
        // Dropped as an error returned between frames drops them: the
        // writer threads are done (they held the other references) before
        // the process could exit.
        let shared = writers.shared.clone();
        drop(writers);
        assert_eq!(Arc::strong_count(&shared), 1, "writer threads still running");
        for t in 0..8 {
            let png = warpmc_flame::image::read_png(&Outputs::frame_path(&prefix, t)).unwrap();
            assert_eq!((png.width, png.height), (64, 48), "frame {t}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn contact_sheet_places_frames_in_a_grid_of_means() {
        let dir = warpmc_testkit::scratch_dir("sheet");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("sheet.png");
        // 7 frames of 37 × 23: a 3 × 3 grid, thumbnails as wide as the frame.
        let mut s = ContactSheet::new(&path, 7, 37, 23, false);
        assert_eq!((s.columns, s.rows, s.every), (3, 3, 1));
        assert_eq!(s.thumb, (37, 23));
        for i in 0..7 {
            s.add(i, &frame(37, 23, 10.0 * i as f64));
        }
        let sw = 3 * 37;
        // Frame 5 sits in row 1, column 2.
        assert_eq!(s.pixels[23 * sw + 2 * 37 + 5], [50.0, 25.0, 0.0, 1.0]);
        s.write().unwrap();
        let png = warpmc_flame::image::read_png(&path).unwrap();
        assert_eq!((png.width, png.height), (111, 69));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn long_animations_show_evenly_spaced_frames() {
        let s = ContactSheet::new(Path::new("unused.png"), 1001, 1920, 1080, false);
        assert_eq!(s.every, 11);
        assert!(1001usize.div_ceil(s.every) <= s.columns * s.rows);
        assert!(s.columns * s.thumb.0 <= SHEET_WIDTH);
    }

    #[test]
    fn video_frames_reach_ffmpeg_and_the_file_appears_only_at_the_end() {
        if !ffmpeg_available() {
            println!("SKIPPED video_frames_reach_ffmpeg_and_the_file_appears_only_at_the_end: no ffmpeg");
            return;
        }
        let dir = warpmc_testkit::scratch_dir("video");
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("out.mp4");
        let mut v = Video::start(&target, 33, 17, plain()).unwrap();
        for i in 0..5 {
            v.push(&frame(33, 17, 40.0 * i as f64), i as i64).unwrap();
        }
        assert!(v.push(&frame(32, 17, 0.0), 9).is_err(), "a frame of another size");
        assert!(!target.exists());
        v.finish().unwrap();
        let bytes = std::fs::read(&target).unwrap();
        assert!(bytes.len() > 100 && &bytes[4..8] == b"ftyp", "an MP4 file");
        let leftovers = std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(leftovers, 1, "no partial file left");
        // Through a symlink: the file it points to is replaced, the link
        // stays a link.
        let link = dir.join("link.mp4");
        std::os::unix::fs::symlink("out.mp4", &link).unwrap();
        let mut v = Video::start(&link, 33, 17, plain()).unwrap();
        v.push(&frame(33, 17, 200.0), 0).unwrap();
        v.finish().unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_ne!(std::fs::read(&target).unwrap(), bytes, "the video behind the link is the new one");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2, "no partial file left");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// ffprobe's `key=value|…` line for the video stream's `entries`.
    fn stream_entries(path: &Path, entries: &str) -> String {
        let out = Command::new("ffprobe")
            .args(["-v", "error", "-select_streams", "v:0", "-show_entries", &format!("stream={entries}")])
            .args(["-of", "compact=p=0"])
            .arg(path)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// The first picture of a video as 8-bit RGB, decoded by ffmpeg.
    fn first_picture(path: &Path) -> Vec<u8> {
        let out = Command::new("ffmpeg")
            .args(["-v", "error", "-i"])
            .arg(path)
            .args(["-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
            .output()
            .unwrap();
        out.stdout
    }

    #[test]
    fn videos_carry_their_pixels_shape_and_colours_as_players_read_them() {
        if !ffmpeg_available() {
            println!("SKIPPED videos_carry_their_pixels_shape_and_colours_as_players_read_them: no ffmpeg");
            return;
        }
        let dir = warpmc_testkit::scratch_dir("video-shape");
        std::fs::create_dir_all(&dir).unwrap();
        let encode = |name: &str, encoding: Encoding| {
            let path = dir.join(name);
            let mut v = Video::start(&path, 33, 17, encoding).unwrap();
            for t in 0..2 {
                v.push(&RenderedFrame { transparent: encoding.transparent, ..frame(33, 17, 230.0) }, t).unwrap();
            }
            v.finish().unwrap();
            path
        };
        // Odd sides: the added column and row repeat the frame's edge (a
        // black fill would decode near 0 and darken the last column).
        let path = encode("odd.mp4", plain());
        assert_eq!(stream_entries(&path, "width,height"), "width=34|height=18");
        let rgb = first_picture(&path);
        assert_eq!(rgb.len(), 34 * 18 * 3);
        let red = |x: usize, y: usize| i32::from(rgb[(y * 34 + x) * 3]);
        for (x, y) in [(32, 5), (33, 5), (5, 16), (5, 17), (33, 17)] {
            assert!((red(x, y) - 230).abs() <= 8, "red at ({x}, {y}): {}", red(x, y));
        }
        assert_eq!(
            stream_entries(&path, "color_space,color_transfer,color_primaries"),
            "color_space=bt709|color_transfer=bt709|color_primaries=bt709"
        );
        // Non-square pixels are the stream's sample aspect ratio.
        let path = encode("ntsc.mp4", Encoding { pixel_aspect: 0.90909, ..plain() });
        assert_eq!(stream_entries(&path, "sample_aspect_ratio"), "sample_aspect_ratio=10:11");
        // Fields: interlaced, top field first, the height padded to a
        // multiple of 4.
        for name in ["fields.mp4", "fields.mkv"] {
            let path = encode(name, Encoding { fields: true, ..plain() });
            assert_eq!(stream_entries(&path, "height,field_order"), "height=20|field_order=tt", "{name}");
        }
        // WebM: VP9 in 4:2:0, which browsers play.
        let path = encode("web.webm", plain());
        assert_eq!(stream_entries(&path, "codec_name,pix_fmt,width"), "codec_name=vp9|width=34|pix_fmt=yuv420p");
        // ProRes with alpha, tagged BT.709 as the H.264 videos.
        let path = encode("alpha.mov", Encoding { transparent: true, ..plain() });
        assert_eq!(
            stream_entries(&path, "width,height,color_space,color_primaries"),
            "width=33|height=17|color_space=bt709|color_primaries=bt709"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn containers_ffmpeg_cannot_write_are_refused_at_the_start() {
        if !ffmpeg_available() {
            println!("SKIPPED containers_ffmpeg_cannot_write_are_refused_at_the_start: no ffmpeg");
            return;
        }
        let dir = warpmc_testkit::scratch_dir("video-probe");
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["out.png", "out.txt", "out.flam3", "out"] {
            let e = Video::start(&dir.join(name), 4001, 17, plain()).err().expect(name).to_string();
            assert!(e.contains("ffmpeg cannot write this video") && e.lines().count() == 1, "{name}: {e}");
        }
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "nothing written");
        // Containers it writes pass, at odd sizes too.
        for name in ["ok.mkv", "ok.webm"] {
            let v = Video::start(&dir.join(name), 4001, 17, plain()).unwrap();
            v.abandon();
        }
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "nothing left");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_interrupted_video_is_kept_beside_the_target_never_over_a_file() {
        if !ffmpeg_available() {
            println!("SKIPPED an_interrupted_video_is_kept_beside_the_target_never_over_a_file: no ffmpeg");
            return;
        }
        let dir = warpmc_testkit::scratch_dir("video-keep");
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("out.mp4");
        std::fs::write(&target, b"an earlier video").unwrap();
        let start = |n: i64| {
            let mut v = Video::start(&target, 33, 17, plain()).unwrap();
            for t in 3..3 + n {
                v.push(&frame(33, 17, 40.0 * t as f64), t).unwrap();
            }
            v
        };
        let (kept, times) = start(4).keep().expect("a video of the frames so far");
        assert_eq!(kept, dir.join("out.frames-3-6.mp4"));
        assert_eq!(times, (3, 6));
        assert_eq!(&std::fs::read(&kept).unwrap()[4..8], b"ftyp", "an MP4 file");
        assert_eq!(std::fs::read(&target).unwrap(), b"an earlier video", "the target is untouched");
        // The name taken: the next free one, nothing replaced.
        let before = std::fs::read(&kept).unwrap();
        let (again, _) = start(4).keep().expect("kept under another name");
        assert_eq!(again, dir.join("out.frames-3-6.1.mp4"));
        assert_eq!(std::fs::read(&kept).unwrap(), before);
        // No frame encoded: nothing to keep.
        assert!(start(0).keep().is_none());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 3, "no partial file left");
        // ffmpeg stopped by a signal of its own too (a batch system stops
        // every process of the job): it closes the video of the frames it
        // had read, which is kept with their times.
        let v = start(4);
        // ffmpeg opens its output once it has read a frame, long after it
        // set up its signal handlers, and writes the container's header
        // once its encoder is set up: stopped between the two, it leaves
        // no video to keep (nothing was encoded).
        let opened = Instant::now();
        while !v.partial.metadata().is_ok_and(|m| m.len() > 0) {
            assert!(opened.elapsed().as_secs() < 60, "ffmpeg never opened its output");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        // SAFETY: kill only sends a signal to ffmpeg, our child. (ffmpeg
        // ends once its input does, which keep closes.)
        unsafe { libc::kill(v.child.id() as libc::pid_t, libc::SIGTERM) };
        if Command::new("ffprobe").arg("-version").output().is_ok_and(|o| o.status.success()) {
            let (kept, (first, last)) = v.keep().expect("the video ffmpeg closed");
            assert!(first == 3 && (3..=6).contains(&last), "{first}..{last}");
            let name = kept.file_name().unwrap().to_string_lossy().into_owned();
            assert!(name.starts_with(&format!("out.frames-3-{last}")) && name.ends_with(".mp4"), "{name}");
            assert_eq!(&std::fs::read(&kept).unwrap()[4..8], b"ftyp", "an MP4 file");
        } else {
            println!("note: no ffprobe here; the video of an ffmpeg stopped by a signal is not kept");
            assert!(v.keep().is_none());
        }
        assert_eq!(std::fs::read(&target).unwrap(), b"an earlier video", "the target is untouched");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
