//! Splitting a flame into horizontal strips (flam3-genome's `strip=`), so
//! that an image too large for memory is rendered a strip at a time.

use crate::error::{FlameError, Result};
use crate::genome::Flame;

/// The `nstrips` strips of `flame`, top to bottom: each `height / nstrips`
/// pixels high (integer division, as flam3-genome: the last
/// `height % nstrips` rows are in no strip), with the camera
/// moved so that the strips' images stacked give the flame's image (in the
/// flame's rotated frame). The height must be at least `nstrips`. The
/// strips have no `<motion>` elements (flam3-genome strips them out).
pub fn strip(flame: &Flame, nstrips: u32) -> Result<Vec<Flame>> {
    if nstrips == 0 {
        return Err(FlameError::invalid("the number of strips must be positive"));
    }
    if flame.height < nstrips {
        return Err(FlameError::invalid(format!(
            "a flame {} pixels high cannot be cut into {nstrips} strips",
            flame.height
        )));
    }
    // Each strip is a whole flame: its palette (8 KiB), xforms and
    // variations.
    let per_strip = std::mem::size_of::<Flame>()
        + 8192
        + (flame.xforms.len() + 1) * (std::mem::size_of::<crate::genome::XForm>() + 512);
    warpmc_host::check_allocation(
        &format!("cutting a flame into {nstrips} strips"),
        (per_strip as u64).saturating_mul(u64::from(nstrips)),
    )
    .map_err(FlameError::OutOfHostMemory)?;
    let h = flame.height / nstrips;
    let ppu = flame.scale * flame.zoom.exp2();
    let old = flame.center;
    Ok((0..nstrips)
        .map(|k| {
            let mut s = flame.clone();
            for x in s.xforms.iter_mut().chain(s.final_xform.as_mut()) {
                x.motion.clear();
            }
            s.height = h;
            let mut c = [old[0], old[1] - f64::from(nstrips - 1) * f64::from(h) / (2.0 * ppu)];
            c[1] += f64::from(h) * f64::from(k) / ppu;
            s.center = rotate_by(c, old, flame.rotate);
            s
        })
        .collect())
}

/// `p` turned about `center` by `degrees` the way the camera's `rotate`
/// turns the image (flam3's `rotate_by`).
fn rotate_by(p: [f64; 2], center: [f64; 2], degrees: f64) -> [f64; 2] {
    let th = degrees.to_radians();
    let (c, s) = (th.cos(), -th.sin());
    let (x, y) = (p[0] - center[0], p[1] - center[1]);
    [c * x - s * y + center[0], s * x + c * y + center[1]]
}
