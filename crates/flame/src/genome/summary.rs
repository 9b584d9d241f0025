//! What `warpmc flame info` (and Python's `flame.info`) says of each flame
//! of a genome, worked out once for both.

use super::ParsedGenome;
use crate::render::{RenderSettings, check_iterable, frame_cost};

/// One flame of a read genome as `flame info` describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct FlameSummary {
    /// The variations its xforms (the final one included) use, each once,
    /// in flam3's order.
    pub variations: Vec<&'static str>,
    /// What flam3-render would drop from it: the variations beyond flam3's
    /// 99, and "colour curves" where Fractorium's curves change the image.
    pub beyond_flam3: Vec<&'static str>,
    /// What the reader dropped from it because warpmc does not implement it
    /// ([`ParsedGenome::skipped_by_flame`]).
    pub unsupported: Vec<String>,
    /// Whether `flame render` with its default settings renders it: the
    /// chaos game can iterate it and its frame's filters and number of
    /// iterations are within bounds (the memory the render needs depends
    /// on the machine and the backend, and is left to the render). The
    /// error says why not.
    pub renders: Result<(), String>,
}

impl ParsedGenome {
    /// Each flame as `flame info` describes it, in file order.
    pub fn summaries(&self) -> Vec<FlameSummary> {
        self.flames
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let mut used: Vec<_> =
                    f.xforms.iter().chain(&f.final_xform).flat_map(|x| x.variations.iter().map(|v| v.kind)).collect();
                used.sort();
                used.dedup();
                let mut beyond_flam3: Vec<&'static str> =
                    used.iter().filter(|k| !k.is_flam3()).map(|k| k.name()).collect();
                // Fractorium's colour curves change the finished image;
                // flam3 ignores them.
                if f.curves.as_ref().is_some_and(super::Curves::is_set) {
                    beyond_flam3.push("colour curves");
                }
                let renders = check_iterable(f)
                    .and_then(|()| frame_cost(std::slice::from_ref(f), f.time, &RenderSettings::default()))
                    .map(|_| ())
                    .map_err(|e| e.to_string());
                FlameSummary {
                    variations: used.iter().map(|k| k.name()).collect(),
                    beyond_flam3,
                    unsupported: self.skipped_by_flame.get(i).cloned().unwrap_or_default(),
                    renders,
                }
            })
            .collect()
    }
}
