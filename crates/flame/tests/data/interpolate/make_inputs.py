#!/usr/bin/env python3
"""Writes the control-point files of the interpolation tests (*.in.flam3).

The flam3 reference outputs (*.out.flam3) are made from them by regen.sh.
Palettes are generated here so that every entry differs.
"""
import colorsys
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def palette(hue0, sat=0.8, val=0.9, alpha_every=0, grey_every=0, hexform=True):
    """256 colours; as a hex <palette> unless colour elements are asked for
    (or alpha is: colour elements with rgba are premultiplied by flam3)."""
    lines = []
    hexes = []
    for i in range(256):
        h = (hue0 + i / 256.0) % 1.0
        s = sat * (0.5 + 0.5 * ((i * 37) % 11) / 10.0)
        v = val * (0.4 + 0.6 * ((i * 17) % 13) / 12.0)
        if grey_every and i % grey_every == 0:
            s = 0.0
        r, g, b = (round(255 * x) for x in colorsys.hsv_to_rgb(h, s, v))
        hexes.append(f"{r:02X}{g:02X}{b:02X}")
        if alpha_every and i % alpha_every == 0:
            lines.append(f'   <color index="{i}" rgba="{r} {g} {b} {128 + (i % 100)}"/>')
        else:
            lines.append(f'   <color index="{i}" rgb="{r} {g} {b}"/>')
    if hexform and not alpha_every:
        rows = ["      " + "".join(hexes[i:i + 8]) for i in range(0, 256, 8)]
        return '   <palette count="256" format="RGB">\n' + "\n".join(rows) + "\n   </palette>"
    return "\n".join(lines)


def flame(attrs, xforms, pal):
    a = " ".join(f'{k}="{v}"' for k, v in attrs.items())
    return f"<flame {a}>\n" + "\n".join(xforms) + "\n" + pal + "\n</flame>"


def xform(coefs, vars_, weight=None, color=0.0, speed=0.5, animate=1, opacity=1, post=None, chaos=None, final=False):
    tag = "finalxform" if final else "xform"
    parts = []
    if not final:
        parts.append(f'weight="{weight}"')
    parts.append(f'color="{color}" color_speed="{speed}"')
    if not final:
        parts.append(f'animate="{animate}"')
    parts.append(f'opacity="{opacity}"')
    parts += [f'{k}="{v}"' for k, v in vars_.items()]
    parts.append(f'coefs="{coefs}"')
    if post:
        parts.append(f'post="{post}"')
    if chaos:
        parts.append(f'chaos="{chaos}"')
    return f"   <{tag} " + " ".join(parts) + "/>"


CAMERA0 = dict(size="641 481", center="0.25 -0.5", scale="120", rotate="10", zoom="0.5", supersample="1",
               filter="0.6", filter_shape="gaussian", quality="50", passes="1", temporal_samples="100",
               background="0 0.1 0.2", brightness="3", gamma="3.5", highlight_power="1", vibrancy="0.8",
               estimator_radius="7", estimator_minimum="0.5", estimator_curve="0.3", gamma_threshold="0.02")
CAMERA1 = dict(size="800 600", center="-0.75 1.5", scale="200", rotate="-50", zoom="1.5", supersample="3",
               filter="1.4", filter_shape="box", quality="150", passes="4", temporal_samples="201",
               background="1 0.5 0", brightness="5", gamma="2.5", highlight_power="3", vibrancy="0.4",
               estimator_radius="11", estimator_minimum="1.5", estimator_curve="0.7", gamma_threshold="0.04")


def write(name, flames):
    with open(os.path.join(HERE, name + ".in.flam3"), "w") as f:
        f.write("<flames>\n" + "\n".join(flames) + "\n</flames>\n")


def with_(d, **kw):
    d = dict(d)
    d.update({k.replace("__", "_"): v for k, v in kw.items()})
    return d


# Two control points, log affines: different xform counts, a final xform on
# one side only, chaos, parametric variation on one side only (its
# parameters are carried over), a spherical xform facing a padding xform,
# post maps, half-turn rotations, HSV-circular palettes mixed with RGB.
basic = [
    flame(with_(CAMERA0, time="0", interpolation_type="log", palette_interpolation="hsv_circular",
                hsv_rgb_palette_blend="0.25"),
          [xform("0.433013 0.25 -0.25 0.433013 0.1 -0.2", {"linear": 0.7, "julian": 0.3, "julian_power": 3,
                                                          "julian_dist": 0.5},
                 weight=0.5, color=0.1, speed=0.3, chaos="1 0.5 0"),
           xform("-0.6 0 0 -0.6 0.3 0.4", {"swirl": 1}, weight=0.25, color=0.9, speed=0.8, opacity=0.7,
                 post="1 0.2 -0.2 1 0.05 0"),
           xform("0.5 0 0 0.5 0 0", {"spherical": 0.8, "linear": 0.2}, weight=0.25, color=0.5, chaos="2 0 1.5"),
           xform("0.9 0.1 -0.1 0.9 0 0", {"swirl": 0.5, "linear": 0.5}, color=0.3, speed=0, final=True)],
          palette(0.0, grey_every=17)),
    flame(with_(CAMERA1, time="4", interpolation_type="log", palette_interpolation="rgb"),
          [xform("-0.69282 0.4 -0.4 -0.69282 -0.1 0.2", {"linear": 1}, weight=1.5, color=0.6, speed=0.6,
                 animate=0, opacity=0.2, post="0.5 0 0 0.5 0 0.1", chaos="0.25 3"),
           xform("0 0.5 -0.5 0 0.2 0.2", {"swirl": 0.5, "sinusoidal": 0.5}, weight=0.75, color=0.2, speed=0.1)],
          palette(0.55, sat=0.6, grey_every=23)),
]
write("basic", basic)

# Padding xforms shaped after their neighbours (log): rings2 + blob (both
# normalised), fan + rings (swapped axes), curl + super_shape, perspective,
# ngon (hole rule). The first flame has one xform, the second six.
padding = [
    flame(with_(CAMERA0, time="0", interpolation_type="log", palette_interpolation="hsv"),
          [xform("0.8 0.1 -0.1 0.8 0 0", {"linear": 1}, weight=1, color=0.2)], palette(0.1)),
    flame(with_(CAMERA1, time="4", interpolation_type="log", palette_interpolation="hsv"),
          [xform("0.7 0 0 0.7 0.1 0", {"linear": 1}, weight=1, color=0.4),
           xform("0.5 0.2 -0.2 0.5 0 0.3", {"rings2": 0.6, "blob": 0.4, "rings2_val": 0.7, "blob_low": 0.2,
                                           "blob_high": 0.9, "blob_waves": 3},
                 weight=0.5, color=0.8),
           xform("0.3 0.4 -0.4 0.3 0.2 0", {"fan": 0.5, "rings": 0.5}, weight=0.5, color=0.3),
           xform("0.6 -0.1 0.1 0.6 -0.2 0", {"curl": 0.5, "super_shape": 0.5, "curl_c1": 0.4, "curl_c2": 0.2,
                                           "super_shape_m": 5, "super_shape_n1": 1.5, "super_shape_n2": 0.5,
                                           "super_shape_n3": 0.7, "super_shape_rnd": 0.1,
                                           "super_shape_holes": 0.2},
                 weight=0.5, color=0.6),
           xform("0.4 0 0 0.4 0 -0.3", {"perspective": 1, "perspective_angle": 0.6, "perspective_dist": 2.5},
                 weight=0.5, color=0.7),
           xform("0.5 0 0.3 0.5 0 0", {"ngon": 0.7, "linear": 0.3, "ngon_sides": 6, "ngon_power": 2,
                                      "ngon_circle": 0.5, "ngon_corners": 1},
                 weight=0.5, color=0.9)],
          palette(0.7)),
]
write("padding", padding)

# The same shapes under linear affine interpolation: no hole rule (the
# ngon neighbour leaves a linear padding xform); rectangles and fan2.
padding_linear = [
    flame(with_(CAMERA0, time="0", interpolation_type="linear", palette_interpolation="hsv"),
          [xform("0.8 0.1 -0.1 0.8 0 0", {"linear": 1}, weight=1, color=0.2, post="1 0.1 0 1 0 0")],
          palette(0.1)),
    flame(with_(CAMERA1, time="4", interpolation_type="linear", palette_interpolation="hsv"),
          [xform("-0.7 0 0 -0.7 0.1 0", {"linear": 1}, weight=1, color=0.4, post="0.9 0 0 1.1 0.2 0"),
           xform("0.5 0 0.3 0.5 0 0", {"ngon": 0.7, "linear": 0.3, "ngon_sides": 6}, weight=0.5, color=0.9),
           xform("0.5 0.2 -0.2 0.5 0 0.3", {"rectangles": 0.5, "fan2": 0.5, "rectangles_x": 0.3,
                                           "rectangles_y": 0.6, "fan2_x": 0.2, "fan2_y": 0.8},
                 weight=0.5, color=0.8)],
          palette(0.7)),
]
write("padding_linear", padding_linear)

# "old" (compat) interpolation: no parameter carry-over, plain identity
# padding (linear 1), linear affines; julian only on one side.
compat = [
    flame(with_(CAMERA0, time="0", interpolation_type="old", palette_interpolation="hsv_circular"),
          [xform("0.8 0.1 -0.1 0.8 0 0", {"linear": 0.5, "julian": 0.5, "julian_power": 4, "julian_dist": -1},
                 weight=1, color=0.2)],
          palette(0.3)),
    flame(with_(CAMERA1, time="4", interpolation_type="old", palette_interpolation="hsv_circular"),
          [xform("-0.7 0.2 0 -0.7 0.1 0", {"linear": 1}, weight=1, color=0.4),
           xform("0.5 0 0.3 0.5 0 0", {"spherical": 1}, weight=0.5, color=0.9)],
          palette(0.9)),
]
write("compat", compat)

# Palette modes (and alpha).
for mode in ["hsv", "rgb", "sweep", "hsv_circular"]:
    pals = [
        flame(with_(CAMERA0, time="0", palette_interpolation=mode, hsv_rgb_palette_blend="0.4"),
              [xform("0.8 0.1 -0.1 0.8 0 0", {"linear": 1}, weight=1)], palette(0.05, alpha_every=5, hexform=False)),
        flame(with_(CAMERA1, time="4", palette_interpolation=mode),
              [xform("0.7 0 0 0.7 0.1 0", {"linear": 1}, weight=1)],
              palette(0.6, sat=1.0, grey_every=7, hexform=False)),
    ]
    write("palette_" + mode, pals)

# Smooth (Catmull-Rom) through five control points with varying xform
# counts; the middle segments use four control points.
smooth = []
for k in range(5):
    ang = 0.7 * k
    import math
    c, s = math.cos(ang), math.sin(ang)
    sc = 0.5 + 0.1 * k
    xfs = [xform(f"{sc*c:.6f} {sc*s:.6f} {-sc*s:.6f} {sc*c:.6f} {0.1*k} {-0.05*k}",
                 {"linear": 0.5 + 0.1 * k, "julia": 0.5 - 0.1 * k} if k % 2 else {"linear": 1},
                 weight=0.5 + 0.25 * k, color=0.2 * k, speed=0.1 * k, opacity=1 - 0.1 * k,
                 chaos=f"{1 + k} {0.5 * k}")]
    xfs.append(xform(f"0.5 0 0 {0.4 + 0.1 * k} 0 {0.1 * k}", {"swirl": 1, "pdj": 0.1 * k, "pdj_a": k,
                                                            "pdj_b": -k, "pdj_c": 0.5, "pdj_d": 0.25 * k},
                     weight=0.5, color=1 - 0.2 * k))
    if k % 2 == 1:
        xfs.append(xform("0.3 0.3 -0.3 0.3 0.5 0.5", {"spherical": 1}, weight=0.3, color=0.5))
    attrs = dict(CAMERA0 if k % 2 == 0 else CAMERA1)
    attrs.update(time=str(10 * k), interpolation="smooth", interpolation_type="log",
                 palette_interpolation="hsv_circular", scale=str(100 + 30 * k * k))
    smooth.append(flame(attrs, xfs, palette(0.2 * k, grey_every=0)))
write("smooth", smooth)

# Stagger: two control points, four standard xforms.
stagger = []
for k in range(2):
    xfs = [xform(f"{0.5 + 0.1 * i} {0.2 * k} {-0.2 * k} {0.5 + 0.1 * i} {0.1 * i} {0.3 * k}", {"linear": 1},
                 weight=0.25 + 0.5 * k, color=(i + k) % 2) for i in range(4)]
    attrs = dict(CAMERA0 if k == 0 else CAMERA1)
    attrs.update(time=str(8 * k), interpolation_type="log")
    stagger.append(flame(attrs, xfs, palette(0.3 * k)))
write("stagger", stagger)

# flam3-genome sequences (sheep_loop / sheep_edge): an xform that animates
# on one side only (asymmetric winding), a padding xform, a final xform.
seq = [
    flame(with_(CAMERA0, time="0", interpolation_type="log"),
          [xform("0.6 0.2 -0.2 0.6 0.1 0", {"linear": 1}, weight=0.5, color=0.1, animate=1),
           xform("0.5 -0.3 0.3 0.5 -0.2 0.1", {"linear": 0.5, "swirl": 0.5}, weight=0.5, color=0.9, animate=0),
           xform("0.9 0 0 0.9 0 0", {"linear": 1}, color=0.3, speed=0, final=True)],
          palette(0.15)),
    flame(with_(CAMERA1, time="1", interpolation_type="log"),
          [xform("-0.4 0.3 -0.3 -0.4 0.2 0.2", {"linear": 1}, weight=0.5, color=0.4, animate=0),
           xform("0.3 0.5 -0.5 0.3 0 -0.1", {"swirl": 1}, weight=0.5, color=0.2, animate=1),
           xform("0.4 0 0 0.4 0.3 0", {"rings2": 1, "rings2_val": 0.4}, weight=0.3, color=0.7, animate=1)],
          palette(0.65)),
]
write("sequence", seq)
