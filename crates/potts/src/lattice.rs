//! Lattice states in the natural row-major layout, start states, and the
//! census (equal-neighbour bonds and state counts) every observable is
//! computed from.

use rayon::prelude::*;
use warpmc_rng::philox_block;

use crate::model::PottsModel;

/// A spin configuration, row-major: site (x, y) is `spins[y * width + x]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lattice {
    width: usize,
    height: usize,
    q: u32,
    spins: Vec<u8>,
}

/// How a run starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InitialState {
    /// Every spin in the state the field favours: 0, or 1 when h < 0 (a
    /// ground state for J > 0), so that a chain below the transition does
    /// not start in a metastable state.
    Ordered,
    /// Every spin uniform in {0, …, q−1} (infinite temperature).
    Random,
}

impl std::str::FromStr for InitialState {
    type Err = crate::PottsError;
    fn from_str(s: &str) -> crate::Result<Self> {
        match s {
            "ordered" => Ok(InitialState::Ordered),
            "random" => Ok(InitialState::Random),
            _ => {
                Err(crate::PottsError::InvalidInput(format!("unknown start state '{s}' (expected ordered or random)")))
            }
        }
    }
}

/// Counter step reserved for drawing random start states; sweep steps are
/// 2·sweep + colour < 2³² − 1.
pub(crate) const INIT_STEP: u64 = u32::MAX as u64;

impl Lattice {
    /// A lattice for `model` in the given start state. A random start draws
    /// site i's spin from word i mod 4 of Philox block
    /// (seed, stream, INIT_STEP·2³² + ⌊i/4⌋), mapped to [0, q) by a
    /// multiply-shift (bias below q/2³²).
    pub fn new(model: &PottsModel, init: InitialState, seed: u64, stream: u64) -> Self {
        let (width, height, q) = (model.width(), model.height(), model.q());
        let ordered = u8::from(model.field() < 0.0 && q > 1);
        let mut spins = vec![ordered; width * height];
        if init == InitialState::Random {
            spins.par_chunks_mut(4096).enumerate().for_each(|(chunk, out)| {
                let base = chunk * 4096;
                for (k, s) in out.iter_mut().enumerate() {
                    let i = base + k;
                    let w = philox_block(seed, stream, (INIT_STEP << 32) | (i as u64 >> 2))[i & 3];
                    *s = ((w as u64 * q as u64) >> 32) as u8;
                }
            });
        }
        Lattice { width, height, q, spins }
    }

    /// A lattice from raw spins (row-major). `None` if the length does not
    /// match, a spin is ≥ q, or q is not one a model takes (2 to
    /// [`MAX_Q`](crate::model::MAX_Q)).
    pub fn from_spins(width: usize, height: usize, q: u32, spins: Vec<u8>) -> Option<Self> {
        ((2..=crate::model::MAX_Q).contains(&q)
            && width.checked_mul(height) == Some(spins.len())
            && spins.iter().all(|&s| (s as u32) < q))
        .then_some(Lattice { width, height, q, spins })
    }

    /// Columns.
    pub fn width(&self) -> usize {
        self.width
    }
    /// Rows.
    pub fn height(&self) -> usize {
        self.height
    }
    /// Number of states.
    pub fn q(&self) -> u32 {
        self.q
    }
    /// The spins, row-major.
    pub fn spins(&self) -> &[u8] {
        &self.spins
    }
    /// Spin at column x, row y.
    ///
    /// # Panics
    ///
    /// If x ≥ width or y ≥ height (a column past the end is not read
    /// from the next row).
    pub fn get(&self, x: usize, y: usize) -> u8 {
        assert!(
            x < self.width && y < self.height,
            "site ({x}, {y}) is outside the {} × {} lattice",
            self.width,
            self.height
        );
        self.spins[y * self.width + x]
    }

    /// Counts equal-neighbour bonds and sites per state (CPU reference of the
    /// device census).
    pub fn census(&self) -> Census {
        let (w, h, q) = (self.width, self.height, self.q as usize);
        let row = |y: usize| {
            let row = &self.spins[y * w..(y + 1) * w];
            let below = &self.spins[((y + 1) % h) * w..((y + 1) % h + 1) * w];
            let mut counts = vec![0u64; q];
            let mut bonds = 0u64;
            for x in 0..w {
                let s = row[x];
                counts[s as usize] += 1;
                bonds += (s == row[(x + 1) % w]) as u64 + (s == below[x]) as u64;
            }
            Census::new(bonds, counts)
        };
        // Small lattices (cluster updates measure after every sweep) on the
        // calling thread: the pool would cost more than the count.
        if w * h < 1 << 14 {
            Census::sum(q, (0..h).map(row))
        } else {
            Census::par_sum(q, (0..h).into_par_iter().map(row))
        }
    }
}

/// What every observable is computed from: the number of bonds whose two
/// spins are equal, and the number of sites in each state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Census {
    equal_bonds: u64,
    counts: Vec<u64>,
}

impl Census {
    /// A census of `equal_bonds` equal-neighbour bonds and `counts[s]`
    /// sites in state s (one entry per state).
    pub fn new(equal_bonds: u64, counts: Vec<u64>) -> Self {
        Census { equal_bonds, counts }
    }

    /// Adds up the censuses of the parts of a lattice with `q` states
    /// (each count stops at `u64::MAX`, which no lattice reaches).
    pub fn sum(q: usize, parts: impl IntoIterator<Item = Census>) -> Census {
        parts.into_iter().fold(Census { equal_bonds: 0, counts: vec![0; q] }, Census::plus)
    }

    /// [`Census::sum`] of parts made in parallel, added up as they come
    /// (never all held at once: a lattice of millions of short rows would
    /// need gigabytes for its rows' censuses).
    pub(crate) fn par_sum(q: usize, parts: impl ParallelIterator<Item = Census>) -> Census {
        let zero = || Census { equal_bonds: 0, counts: vec![0; q] };
        parts.fold(zero, Census::plus).reduce(zero, Census::plus)
    }

    fn plus(mut self, part: Census) -> Census {
        self.equal_bonds = self.equal_bonds.saturating_add(part.equal_bonds);
        self.counts.iter_mut().zip(part.counts).for_each(|(a, b)| *a = a.saturating_add(b));
        self
    }

    /// Σ_⟨ij⟩ δ(sᵢ, sⱼ) over the 2N bonds.
    pub fn equal_bonds(&self) -> u64 {
        self.equal_bonds
    }

    /// Sites in state 0, 1, …, q−1.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// Sites in the most populated state.
    pub fn max_count(&self) -> u64 {
        self.counts.iter().copied().max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_census_sum_stops_at_the_largest_count_rather_than_overflowing() {
        let huge = || Census::new(u64::MAX - 1, vec![u64::MAX, 1]);
        let sum = Census::sum(2, [huge(), huge()]);
        assert_eq!((sum.equal_bonds(), sum.counts()), (u64::MAX, &[u64::MAX, 2][..]));
        let lattice = Lattice::from_spins(3, 2, 3, vec![0, 1, 2, 2, 2, 0]).unwrap();
        let parts = (0..2).map(|y| {
            let row = Lattice::from_spins(3, 1, 3, lattice.spins()[3 * y..3 * y + 3].to_vec()).unwrap();
            Census::new(0, row.census().counts().to_vec())
        });
        assert_eq!(Census::sum(3, parts).counts(), lattice.census().counts());
    }

    #[test]
    fn the_ordered_start_is_in_a_state_the_field_favours() {
        let state_of = |h: f64| {
            let m = PottsModel::new(3, 4, 6).unwrap().with_field(h).unwrap();
            let l = Lattice::new(&m, InitialState::Ordered, 1, 2);
            let s = l.spins[0];
            assert!(l.spins.iter().all(|&x| x == s));
            s
        };
        assert_eq!((state_of(0.5), state_of(0.0), state_of(-0.5)), (0, 0, 1));
    }

    #[test]
    fn a_site_is_read_from_its_own_row() {
        let l = Lattice::from_spins(3, 2, 4, vec![0, 1, 2, 3, 0, 1]).unwrap();
        assert_eq!((l.get(0, 0), l.get(2, 0), l.get(0, 1), l.get(2, 1)), (0, 2, 3, 1));
        let past_the_row = std::panic::catch_unwind(|| l.get(3, 0));
        assert!(past_the_row.is_err(), "column 3 of a 3-wide lattice was read");
        assert!(std::panic::catch_unwind(|| l.get(0, 2)).is_err());
    }
}
