//! `warpmc.flame`: rendering a flam3 genome into a numpy array, and what a
//! genome file holds.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use warpmc_flame::genome::{ParseOptions, ParsedGenome, parse_file, parse_str};
use warpmc_flame::image::{Bits, quantize_rgba};
use warpmc_flame::interpolate::Keyframes;
use warpmc_flame::palette::PaletteLibrary;
use warpmc_flame::render::cuda::CudaRenderer;
use warpmc_flame::render::{RenderSettings, RenderedFrame, frame_cost, render_with_progress};
use warpmc_flame::{Flame, FlameError};
use warpmc_gpu::Device;

use crate::devices;
use crate::errors;
use crate::signals::{Done, Signals};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(flame_render, m)?)?;
    m.add_function(wrap_pyfunction!(flame_info, m)?)?;
    Ok(())
}

/// A genome as Python gives it: XML text, or a file's path (any path the
/// operating system takes, bytes that are not UTF-8 included: Python holds
/// those as surrogate escapes, which a Rust string cannot).
enum Source {
    Xml(String),
    File(PathBuf),
}

impl Source {
    fn new(source: &Bound<'_, PyAny>, is_xml: bool) -> PyResult<Source> {
        Ok(if is_xml { Source::Xml(source.extract()?) } else { Source::File(source.extract()?) })
    }

    /// What the source names in messages.
    fn label(&self) -> String {
        match self {
            Source::Xml(_) => "<genome>".to_string(),
            Source::File(path) => path.display().to_string(),
        }
    }
}

/// The genome `source`, read as `warpmc flame render` reads it.
fn read(source: &Source, palettes: Option<PathBuf>, strict: bool) -> Result<ParsedGenome, FlameError> {
    if let Source::File(path) = source {
        refuse_fifo(path, "genome")?;
    }
    if let Some(p) = &palettes {
        refuse_fifo(p, "palette file")?;
    }
    PaletteLibrary::check_named(palettes.as_deref())?;
    let opts = ParseOptions { strict, palette_file: palettes };
    match source {
        Source::Xml(text) => parse_str(text, "<genome>", &opts),
        Source::File(path) => parse_file(path, &opts),
    }
}

/// Refuses a FIFO: opening one waits for a writer, in native code that
/// Ctrl-C cannot reach (the command line reads them, for `<(...)`).
fn refuse_fifo(path: &Path, what: &str) -> Result<(), FlameError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo()) {
            return Err(FlameError::Invalid(format!(
                "{}: the {what} is a FIFO, which would wait for a writer where Ctrl-C cannot stop it: read it in \
                 Python and pass its text",
                path.display()
            )));
        }
    }
    let _ = (path, what);
    Ok(())
}

/// Renders one frame on `device`, checking its cost first (iterations
/// that can be counted, memory for the render and for the returned array).
fn render_on(
    device: &Device,
    (flames, time): (&[Flame], f64),
    settings: &RenderSettings,
    bits: Bits,
    progress: &(dyn Fn(f64) + Sync),
) -> Result<(RenderedFrame, Vec<u16>), FlameError> {
    let frame = match device {
        Device::Cuda(gpu) => {
            let r = CudaRenderer::new(gpu.clone());
            r.frame_cost(flames, time, settings)?.check_host_memory()?;
            r.render_with_progress(flames, time, settings, progress)?
        }
        Device::Cpu { .. } => {
            frame_cost(flames, time, settings)?.check_host_memory()?;
            render_with_progress(flames, time, settings, progress)?
        }
    };
    let bytes = frame.pixels.len() as u64 * 4 * if bits == Bits::Eight { 3 } else { 4 };
    warpmc_host::check_allocation("the rendered image as an array", bytes).map_err(FlameError::OutOfHostMemory)?;
    let samples = quantize_rgba(&frame, bits);
    Ok((frame, samples))
}

/// Renders flame `index` (or the one named `name`) of the genome, or with
/// `time` the frame of its animation at that time (as `flame animate`
/// renders it), and returns (pixels as an (H, W, 4) array, warnings from
/// reading it).
#[pyfunction]
#[pyo3(signature = (source, is_xml, index, name, quality_scale, size_scale, seed, backend, bits, transparent, early_clip, pixel_aspect, palettes, strict, time=None, progress=None))]
#[allow(clippy::too_many_arguments)]
fn flame_render<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    is_xml: bool,
    index: usize,
    name: Option<String>,
    quality_scale: f64,
    size_scale: f64,
    seed: u64,
    backend: &str,
    bits: u8,
    transparent: bool,
    early_clip: bool,
    pixel_aspect: f64,
    palettes: Option<PathBuf>,
    strict: bool,
    time: Option<f64>,
    progress: Option<Py<PyAny>>,
) -> PyResult<(Bound<'py, PyAny>, Vec<String>)> {
    let bits = match bits {
        8 => Bits::Eight,
        16 => Bits::Sixteen,
        _ => return Err(pyo3::exceptions::PyValueError::new_err(format!("bits must be 8 or 16, not {bits}"))),
    };
    let device = devices::select(backend.parse().map_err(errors::gpu)?).map_err(errors::gpu)?;
    let source = Source::new(source, is_xml)?;
    let mut parsed = py.detach(|| read(&source, palettes, strict)).map_err(errors::flame)?;
    let n = parsed.flames.len();
    let at = source.label();
    let settings = RenderSettings {
        quality_scale,
        size_scale,
        seed,
        transparent,
        early_clip,
        pixel_aspect,
        ..RenderSettings::default()
    };
    if let Some(t) = time {
        if !t.is_finite() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!("time = {t}: give a finite number")));
        }
        let keyframes = Keyframes::new(std::mem::take(&mut parsed.flames), &at, false).map_err(errors::flame)?;
        let settings = RenderSettings { temporal_samples: Some(keyframes.temporal_samples_at(t)), ..settings };
        parsed.warnings.extend(keyframes.warnings);
        let signals = Signals::with_progress(progress);
        return render_frame(py, &device, (&keyframes.flames, t), settings, bits, parsed.warnings, &signals);
    }
    let i = match &name {
        Some(name) => {
            let named: Vec<usize> =
                (0..n).filter(|&i| parsed.flames[i].name.as_deref() == Some(name.as_str())).collect();
            match named[..] {
                [i] => i,
                [] => return Err(errors::flame(FlameError::Invalid(format!("{at}: no flame named '{name}'")))),
                _ => {
                    let which = named.iter().map(usize::to_string).collect::<Vec<_>>().join(", ");
                    return Err(errors::flame(FlameError::Invalid(format!(
                        "{at}: {} flames are named '{name}' (flames {which}); choose one by its index",
                        named.len()
                    ))));
                }
            }
        }
        None if n == 0 => return Err(errors::flame(FlameError::Invalid(format!("{at}: no <flame> elements")))),
        None if index >= n => {
            return Err(errors::flame(FlameError::Invalid(format!(
                "{at}: flame {index}, but the file has {n} flame(s) (0 to {})",
                n - 1
            ))));
        }
        None => index,
    };
    let flame = std::slice::from_ref(&parsed.flames[i]);
    let signals = Signals::with_progress(progress);
    render_frame(py, &device, (flame, parsed.flames[i].time), settings, bits, parsed.warnings, &signals)
}

/// Renders the frame of `flames` at `time` with the GIL released, Ctrl-C
/// (or an exception from the progress callback `signals` calls) stopping
/// it, and returns (its pixels as an (H, W, 4) array, `warnings`).
fn render_frame<'py>(
    py: Python<'py>,
    device: &Device,
    frame_of: (&[Flame], f64),
    settings: RenderSettings,
    bits: Bits,
    warnings: Vec<String>,
    signals: &Signals,
) -> PyResult<(Bound<'py, PyAny>, Vec<String>)> {
    let cancel = Arc::new(AtomicBool::new(false));
    let settings = RenderSettings { cancel: Some(cancel.clone()), ..settings };
    let report = |f: f64| signals.set_progress(Done::Fraction(f));
    let stop = |f: f64| {
        report(f);
        if signals.stop() {
            cancel.store(true, Ordering::Relaxed);
        }
    };
    crate::fork::check_threads()?;
    let rendered = py.detach(|| match device {
        // The CPU's density estimation and spatial filter call no hook (they
        // read the cancel flag between rows, and can take a minute on a
        // large frame with a wide filter): the render runs on a thread of
        // its own while this one, Python's main thread, runs the signal
        // handlers.
        Device::Cpu { .. } => signals.watch(&cancel, || render_on(device, frame_of, &settings, bits, &report)),
        Device::Cuda(_) => render_on(device, frame_of, &settings, bits, &stop),
    });
    let (frame, samples) = match rendered {
        Ok(r) => r,
        Err(FlameError::Interrupted) => return Err(signals.raised()),
        Err(e) => return Err(errors::flame(e)),
    };
    signals.finish(py, Done::Fraction(1.0));
    if signals.was_raised() {
        return Err(signals.raised());
    }
    let shape = [frame.height as usize, frame.width as usize, 4];
    let array = match bits {
        Bits::Eight => {
            let bytes: Vec<u8> = samples.iter().map(|&s| s as u8).collect();
            PyArray1::from_vec(py, bytes).reshape(shape)?.into_any()
        }
        Bits::Sixteen => PyArray1::from_vec(py, samples).reshape(shape)?.into_any(),
    };
    Ok((array, warnings))
}

/// What a genome file holds, as JSON: its flames (size, quality, xforms,
/// variations, what was dropped, whether each renders), whether all
/// render, and every warning; what `warpmc flame info` prints.
#[pyfunction]
#[pyo3(signature = (source, is_xml, palettes, strict))]
fn flame_info(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    is_xml: bool,
    palettes: Option<PathBuf>,
    strict: bool,
) -> PyResult<String> {
    let source = Source::new(source, is_xml)?;
    // Read leniently, so that what is unsupported is listed; `strict`
    // makes it an error afterwards, as `flame info --strict` does,
    // together with what else a strict read refuses.
    let (parsed, strict_error) = py
        .detach(|| {
            let parsed = read(&source, palettes.clone(), false)?;
            let strict_error = if strict { read(&source, palettes, true).err() } else { None };
            Ok::<_, FlameError>((parsed, strict_error))
        })
        .map_err(errors::flame)?;
    if parsed.flames.is_empty() {
        return Err(errors::flame(FlameError::Invalid(format!("{}: no <flame> elements", source.label()))));
    }
    if strict && !parsed.skipped.is_empty() {
        return Err(errors::flame(FlameError::UnknownVariation(format!(
            "{}: unknown variations or attributes: {}",
            source.label(),
            parsed.skipped.join(", ")
        ))));
    }
    if let Some(e) = strict_error {
        return Err(errors::flame(e));
    }
    let summaries = parsed.summaries();
    let flames: Vec<serde_json::Value> = parsed
        .flames
        .iter()
        .zip(&summaries)
        .enumerate()
        .map(|(i, (f, s))| {
            serde_json::json!({
                "index": i,
                "name": f.name,
                "width": f.width,
                "height": f.height,
                "supersample": f.supersample,
                "quality": f.quality,
                "time": f.time,
                "xforms": f.xforms.len(),
                "final_xform": f.final_xform.is_some(),
                "variations": s.variations,
                "beyond_flam3": s.beyond_flam3,
                "unsupported": s.unsupported,
                "renders": s.renders.is_ok(),
                "why_not": s.renders.as_ref().err(),
            })
        })
        .collect();
    let info = serde_json::json!({
        "flames": flames,
        "renders": summaries.iter().all(|s| s.renders.is_ok()),
        "supported": parsed.skipped.is_empty(),
        "unsupported": parsed.skipped,
        "warnings": parsed.warnings,
    });
    Ok(info.to_string())
}
