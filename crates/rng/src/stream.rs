//! Stream naming: every random number in warpmc has a name.
//!
//! A number is identified by (seed, stream, counter): the seed is the user's
//! run seed, the stream says *who* draws (a lattice site, a work unit, a
//! pixel, a test case) and the counter says *which* draw. With Philox the
//! name is the whole story: the 128-bit Philox counter is
//! `[counter_lo, counter_hi, stream_lo, stream_hi]` and the key is
//! `[seed_lo, seed_hi]`, so a kernel thread or a CPU core can compute any
//! number of any stream directly, and the answer cannot depend on thread
//! geometry or scheduling.
//!
//! The top [`DOMAIN_BITS`] bits of a stream id name the [`Domain`] that owns
//! it, so the Potts simulator, the flame renderer and MWC seeding can never
//! draw each other's numbers by accident even when they share a seed.

use crate::convert::RandomSource;
use crate::philox::{Counter, Key, philox4x32_10};

/// Bits of a stream id that name its [`Domain`].
pub const DOMAIN_BITS: u32 = 16;
/// Bits of a stream id left for the index within a domain.
pub const STREAM_INDEX_BITS: u32 = 64 - DOMAIN_BITS;
/// The largest stream index a domain can name.
pub const MAX_STREAM_INDEX: u64 = (1 << STREAM_INDEX_BITS) - 1;

/// The registry of stream domains: one per part of warpmc that draws random
/// numbers. New users add a variant here (never renumber one), so that ids
/// stay stable across versions and runs stay reproducible.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum Domain {
    /// Streams chosen freely by a user or a command (`warpmc rng dump`).
    User = 0,
    /// Seeding of per-work-unit multiply-with-carry generators.
    MwcSeeding = 1,
    /// The Potts simulator.
    Potts = 2,
    /// The fractal-flame renderer.
    Flame = 3,
    /// Warp-level primitives and their tests and benchmarks.
    Prims = 4,
    /// The flame genome tools (random genomes, mutation, crossing).
    FlameGenome = 5,
    /// Replica-exchange decisions of Potts parallel tempering.
    Tempering = 6,
    /// Bond activations of Potts Swendsen–Wang updates.
    SwendsenWangBonds = 7,
    /// New cluster states of Potts Swendsen–Wang updates.
    SwendsenWangClusters = 8,
    /// Tests of this crate.
    Test = 0xffff,
}

impl Domain {
    /// The full stream id of stream `index` in this domain.
    ///
    /// # Panics
    ///
    /// If `index` exceeds [`MAX_STREAM_INDEX`] (2⁴⁸ − 1); callers that take
    /// indices from users check with [`Domain::try_stream`] first.
    ///
    /// ```
    /// use warpmc_rng::Domain;
    /// assert_eq!(Domain::User.stream(5), 5);
    /// assert_eq!(Domain::Potts.stream(1), (2 << 48) | 1);
    /// ```
    #[inline]
    pub const fn stream(self, index: u64) -> u64 {
        assert!(index <= MAX_STREAM_INDEX, "stream index exceeds 2^48 - 1");
        ((self as u64) << STREAM_INDEX_BITS) | index
    }

    /// Like [`Domain::stream`], but `None` for an index that does not fit.
    #[inline]
    pub const fn try_stream(self, index: u64) -> Option<u64> {
        if index <= MAX_STREAM_INDEX { Some(self.stream(index)) } else { None }
    }
}

/// The Philox key of a seed.
#[inline(always)]
pub const fn seed_key(seed: u64) -> Key {
    [seed as u32, (seed >> 32) as u32]
}

/// The Philox counter of block `counter` of stream `stream`.
#[inline(always)]
pub const fn block_counter(stream: u64, counter: u64) -> Counter {
    [counter as u32, (counter >> 32) as u32, stream as u32, (stream >> 32) as u32]
}

/// The four words of block `counter` of stream `stream` under `seed`: words
/// 4·counter to 4·counter + 3 of that stream.
///
/// ```
/// use warpmc_rng::{philox_block, PhiloxStream, RandomSource};
/// let block = philox_block(7, 3, 10);
/// let mut s = PhiloxStream::at(7, 3, 40);
/// assert_eq!([s.next_u32(), s.next_u32(), s.next_u32(), s.next_u32()], block);
/// ```
#[inline]
pub fn philox_block(seed: u64, stream: u64, counter: u64) -> [u32; 4] {
    philox4x32_10(block_counter(stream, counter), seed_key(seed))
}

/// A sequential reader of one Philox stream: word i of stream s under seed k
/// is word i mod 4 of block ⌊i/4⌋. A reader addresses 2⁶⁴ words per stream
/// and wraps after that.
///
/// The reader holds only the name, a position and the current block, so it
/// is as cheap to make anywhere as it is to clone, and
/// `PhiloxStream::at(seed, stream, i)` continues exactly where another reader
/// stood after `i` words.
#[derive(Clone, Debug)]
pub struct PhiloxStream {
    key: Key,
    stream: u64,
    /// Index of the next word to return.
    position: u64,
    /// Block ⌊position/4⌋ when position is not a multiple of 4.
    buf: [u32; 4],
}

impl PhiloxStream {
    /// The start of stream `stream` under `seed`.
    pub fn new(seed: u64, stream: u64) -> Self {
        Self::at(seed, stream, 0)
    }

    /// Stream `stream` under `seed`, positioned before word `position`.
    pub fn at(seed: u64, stream: u64, position: u64) -> Self {
        let key = seed_key(seed);
        let buf =
            if position.is_multiple_of(4) { [0; 4] } else { philox4x32_10(block_counter(stream, position / 4), key) };
        PhiloxStream { key, stream, position, buf }
    }

    /// The stream id this reader draws from.
    pub fn stream(&self) -> u64 {
        self.stream
    }

    /// The index of the next word this reader will return.
    pub fn position(&self) -> u64 {
        self.position
    }
}

impl RandomSource for PhiloxStream {
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        let lane = (self.position % 4) as usize;
        if lane == 0 {
            self.buf = philox4x32_10(block_counter(self.stream, self.position / 4), self.key);
        }
        self.position = self.position.wrapping_add(1);
        self.buf[lane]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_reads_blocks_in_order() {
        let mut s = PhiloxStream::new(0xdead_beef_0123, Domain::Test.stream(9));
        for block in 0..50u64 {
            let want = philox_block(0xdead_beef_0123, Domain::Test.stream(9), block);
            for w in want {
                assert_eq!(s.next_u32(), w);
            }
        }
        assert_eq!(s.position(), 200);
    }

    #[test]
    fn seeking_matches_reading() {
        let mut a = PhiloxStream::new(3, 4);
        for i in 0..123u64 {
            let mut b = PhiloxStream::at(3, 4, i);
            assert_eq!(b.position(), i);
            assert_eq!(b.next_u32(), a.next_u32(), "position {i}");
        }
    }

    #[test]
    fn name_parts_all_matter() {
        let base = philox_block(1, 2, 3);
        assert_ne!(base, philox_block(2, 2, 3));
        assert_ne!(base, philox_block(1 | (1 << 40), 2, 3));
        assert_ne!(base, philox_block(1, 3, 3));
        assert_ne!(base, philox_block(1, 2 | (1 << 50), 3));
        assert_ne!(base, philox_block(1, 2, 4));
        assert_ne!(base, philox_block(1, 2, 3 | (1 << 33)));
    }

    #[test]
    fn domains_do_not_overlap() {
        assert_eq!(Domain::User.stream(MAX_STREAM_INDEX), MAX_STREAM_INDEX);
        assert_eq!(Domain::MwcSeeding.stream(0), 1 << 48);
        assert_eq!(Domain::Test.try_stream(MAX_STREAM_INDEX + 1), None);
    }

    #[test]
    #[should_panic(expected = "stream index")]
    fn oversized_index_panics() {
        let _ = Domain::User.stream(1 << 48);
    }
}
