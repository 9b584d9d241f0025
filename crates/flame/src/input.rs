//! Reading input files with a bound on their size, so that a path such as
//! `/dev/zero`, or a file far larger than any genome, is one clear error
//! instead of a process that grows until it is killed.

use std::io::Read;
use std::path::Path;

use warpmc_host::memory::human_bytes;

use crate::error::{FlameError, Result};

/// The largest genome or palette file read: the largest genome files in
/// use (Electric Sheep's sequences, Fractorium's libraries) are a few tens
/// of megabytes, and parsing takes several times a file's size in memory.
pub const MAX_GENOME_BYTES: u64 = 256 << 20;

/// The largest PNG file read (`flame compare`): a 16-bit RGBA image of
/// 16384 × 16384 pixels is 2 GiB uncompressed, and far less as a PNG.
pub const MAX_IMAGE_BYTES: u64 = 1 << 30;

/// The bytes of `path`, an error naming it when it cannot be read or holds
/// more than `limit` bytes (`kind`, "genome file", says what it was read
/// as).
pub fn read_file(path: &Path, limit: u64, kind: &str) -> Result<Vec<u8>> {
    let io = |error| FlameError::Io { path: path.to_path_buf(), action: "read", error };
    let file = std::fs::File::open(path).map_err(io)?;
    // A regular file too large is refused before it is read; a device or
    // a pipe says its size only by being read.
    if file.metadata().is_ok_and(|m| m.is_file() && m.len() > limit) {
        return Err(too_large(&path.display().to_string(), limit, kind));
    }
    read_bounded(file, limit).map_err(io)?.ok_or_else(|| too_large(&path.display().to_string(), limit, kind))
}

/// Everything `reader` gives, or `None` when that is more than `limit`
/// bytes.
pub fn read_bounded(reader: impl Read, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    reader.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

/// The error for an input (`source`, a path or "standard input") longer
/// than `limit` bytes.
pub fn too_large(source: &str, limit: u64, kind: &str) -> FlameError {
    FlameError::Invalid(format!(
        "{source}: more than {}, the most warpmc reads as a {kind}; is this the right file?",
        human_bytes(limit)
    ))
}
