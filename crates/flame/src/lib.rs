//! Fractal flames compatible with flam3 3.1.1 genomes (Draves and Reckase,
//! "The Fractal Flame Algorithm"): reading genomes, flam3's 99 variations
//! and 39 of Fractorium's, and a renderer whose images match flam3-render's within its own Monte
//! Carlo noise, on every CPU core or (with the `cuda` feature, on by
//! default) on a CUDA device.
//!
//! - [`genome`]: the flame description and its XML reader;
//! - [`palette`]: palettes and flam3's numbered palette file;
//! - [`variations`]: flam3's 99 variations, 39 of Fractorium's beyond
//!   them, and the `pre_`/`post_` forms of all;
//! - [`interpolate`]: flames between the control points of a sequence;
//! - [`render`]: the renderer (chaos game, histogram, density estimation,
//!   tone mapping, spatial filter); `render::cuda` runs it on a GPU (the
//!   `cuda` feature);
//! - [`image`]: PNG encoding and decoding, and image comparison (PSNR).
//!
//! Every fallible function returns [`FlameError`], whose messages are one
//! line naming the file, the flame and the attribute where there are such.
//!
//! ```
//! use warpmc_flame::genome::{ParseOptions, parse_str};
//! use warpmc_flame::image::{Bits, decode_png, encode_png, psnr, psnr_pixels, quantized_pixels};
//! use warpmc_flame::render::{RenderSettings, render};
//!
//! // The Sierpinski triangle: three maps halving towards three corners.
//! let xml = r#"<flame size="48 40" center="0.5 0.5" scale="36" quality="20">
//!   <xform weight="1" coefs="0.5 0 0 0.5 0 0" linear="1" color="0"/>
//!   <xform weight="1" coefs="0.5 0 0 0.5 0.5 0" linear="1" color="0.5"/>
//!   <xform weight="1" coefs="0.5 0 0 0.5 0 0.5" linear="1" color="1"/>
//!   <color index="0" rgb="255 60 0"/><color index="255" rgb="0 90 255"/>
//! </flame>"#;
//! let flames = parse_str(xml, "sierpinski", &ParseOptions::default())?.flames;
//!
//! // Two renders with different seeds differ only by Monte Carlo noise.
//! let a = render(&flames, 0.0, &RenderSettings { seed: 1, ..RenderSettings::default() })?;
//! let b = render(&flames, 0.0, &RenderSettings { seed: 2, ..RenderSettings::default() })?;
//! let noise = psnr_pixels(&quantized_pixels(&a), &quantized_pixels(&b))?;
//! assert!(noise > 20.0 && noise.is_finite(), "{noise} dB");
//!
//! // A PNG in memory, with a text chunk as flam3 writes them.
//! let text = [("flam3_samples".to_string(), a.stats.iterations.to_string())];
//! let png = encode_png(&a, Bits::Eight, &text)?;
//! let decoded = decode_png(&png)?;
//! assert_eq!((decoded.width, decoded.height), (48, 40));
//! assert_eq!(psnr(&decoded, &decoded)?, f64::INFINITY);
//! # Ok::<(), warpmc_flame::FlameError>(())
//! ```
//!
//! Rendering on a GPU takes a device from `warpmc_gpu` (see
//! `render::cuda::CudaRenderer`). Without the `cuda` feature (on by
//! default) the crate renders on the CPU only and has no CUDA dependency.

#![deny(missing_docs)]

mod error;
pub mod genome;
pub mod image;
pub mod input;
pub mod interpolate;
pub mod palette;
pub mod render;
pub mod variations;
mod xml;

pub use error::{FlameError, Result};
pub use genome::{Flame, XForm};
