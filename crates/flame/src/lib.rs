//! Fractal flames compatible with flam3 3.1.1 genomes.
//!
//! - [`genome`]: the flame description and its XML reader;
//! - [`palette`]: palettes and flam3's numbered palette file;
//! - [`variations`]: flam3's 99 variations;
//! - [`interpolate`]: flames between the control points of a sequence;
//! - [`render`]: the CPU renderer (chaos game, histogram, density
//!   estimation, tone mapping, spatial filter);
//! - [`image`]: PNG output and image comparison (PSNR).

#![deny(missing_docs)]

pub mod genome;
pub mod image;
pub mod interpolate;
pub mod palette;
pub mod render;
pub mod variations;

pub use genome::{Flame, XForm};
