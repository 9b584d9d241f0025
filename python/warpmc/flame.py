"""Fractal flames (Draves and Reckase) from flam3 genomes, rendered on every
CPU core or on a CUDA GPU into numpy arrays.

>>> import numpy as np
>>> from warpmc import flame
>>> sierpinski = '''<flame size="48 40" center="0.5 0.5" scale="36" quality="20">
...   <xform weight="1" coefs="0.5 0 0 0.5 0 0" linear="1" color="0"/>
...   <xform weight="1" coefs="0.5 0 0 0.5 0.5 0" linear="1" color="0.5"/>
...   <xform weight="1" coefs="0.5 0 0 0.5 0 0.5" linear="1" color="1"/>
...   <color index="0" rgb="255 60 0"/><color index="255" rgb="0 90 255"/>
... </flame>'''
>>> image = flame.render(sierpinski, seed=1, backend="cpu")
>>> image.shape, image.dtype
((40, 48, 4), dtype('uint8'))
>>> flame.info(sierpinski)["flames"][0]["variations"]
['linear']
"""

from __future__ import annotations

import json
import numbers
import os
import warnings
from typing import Any, Callable, Optional, Union

import numpy as np

from . import _native
from ._numbers import as_float

__all__ = ["render", "info"]

Genome = Union[str, "os.PathLike[str]"]


def _source(genome: Genome) -> tuple[str, bool]:
    """The genome as (text, whether it is XML): a string that starts with
    ``<`` is XML (after a byte-order mark, which text read from a file with
    encoding "utf-8" rather than "utf-8-sig" keeps, and white space),
    anything else a path."""
    if isinstance(genome, os.PathLike):
        # A path object may give bytes (os.PathLike[bytes]).
        return os.fsdecode(os.fspath(genome)), False
    if isinstance(genome, (bytes, bytearray)):
        raise TypeError(
            "genome must be a path or an XML string, not bytes: decode XML text (.decode()) or a path (os.fsdecode)"
        )
    if not isinstance(genome, str):
        raise TypeError(f"genome must be a path or an XML string, not {type(genome).__name__}")
    if _is_xml(genome):
        return genome.removeprefix(_BOM), True
    return genome, False


_BOM = "\ufeff"


def _is_xml(text: str) -> bool:
    """Whether `text` is XML rather than a path: its first character after
    a byte-order mark and white space is ``<``."""
    return text.removeprefix(_BOM).lstrip().startswith("<")


def _palette_path(palettes: Optional[Union[str, os.PathLike]]) -> Optional[str]:
    """The palette file's path, or None; XML text is not a path."""
    if palettes is None:
        return None
    if not isinstance(palettes, (str, os.PathLike)):
        raise TypeError(f"palettes must be the path of flam3-palettes.xml, not {type(palettes).__name__}")
    path = os.fsdecode(os.fspath(palettes))
    if _is_xml(path):
        raise TypeError("palettes must be the path of flam3-palettes.xml, not its XML text")
    return path


def _real(name: str, value: Any) -> float:
    """``value`` as a float: a TypeError naming ``name`` for anything but a
    number (a string such as "3" included, as for the integer arguments)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    return as_float(name, value)


def _whole(name: str, value: Any, low: int, high: int) -> int:
    """``value`` as an int from ``low`` to ``high``: a TypeError or a
    ValueError naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, not {type(value).__name__}")
    v = int(value)
    if not low <= v <= high:
        raise ValueError(f"{name} = {v}: expected a whole number from {low} to {high}")
    return v


def render(
    genome: Genome,
    quality_scale: float = 1.0,
    size_scale: float = 1.0,
    seed: int = 0,
    backend: str = "auto",
    bits: int = 8,
    *,
    flame: Union[int, str, None] = None,
    time: Optional[float] = None,
    transparent: bool = False,
    early_clip: bool = False,
    pixel_aspect: float = 1.0,
    palettes: Optional[Union[str, os.PathLike]] = None,
    strict: bool = False,
    progress: Optional[Callable[[float], Any]] = None,
) -> np.ndarray:
    """Renders a flame and returns its pixels: a numpy array of shape
    (height, width, 4), RGBA, ``uint8`` for ``bits=8`` or ``uint16`` for
    ``bits=16`` (flam3's 16-bit scale: colours 256 times the 8-bit ones,
    up to 65280, and opaque alpha 65535). The values are those ``warpmc
    flame render`` writes to a PNG with the same arguments; alpha is
    opaque unless ``transparent``.

    - ``genome``: a flam3 genome file (``.flam3``, ``.flame``) or its XML
      text. ``flame``: which of its flames, by index or by name (the
      first by default).
    - ``time``: instead of one flame, the frame at this time of the
      animation the genome's flames are the keyframes of, as ``warpmc flame
      animate`` (and flam3-animate) renders it: the flames interpolated at
      ``time``, with their temporal samples (motion blur). The same seed
      gives the animation's frame bit for bit.
    - ``quality_scale``, ``size_scale``: multiply the genome's quality
      (samples per pixel) and its size, as flam3-render's ``qs`` and ``ss``.
    - ``seed``: the same seed gives the same image (on one backend).
    - ``backend``: ``"auto"``, ``"cpu"`` or ``"cuda"``.
    - ``early_clip``: tone-map each supersampled cell before the spatial
      filter, as flam3-render's ``earlyclip=1`` (``--early-clip``).
    - ``pixel_aspect``: the width of a pixel over its height, for displays
      with non-square pixels, as flam3-render's ``pixel_aspect``
      (``--pixel-aspect``).
    - ``palettes``: flam3-palettes.xml, for genomes with numbered palettes.
    - ``strict``: a variation warpmc does not know, or a keyword flam3 does
      not know (``filter_shape="sinc"``), is an error instead of a warning
      (the variation is dropped and the keyword's default kept, as
      flam3-render does).

    Runs with the GIL released; Ctrl-C stops it with KeyboardInterrupt.
    """
    text, is_xml = _source(genome)
    if time is not None:
        if flame is not None:
            raise TypeError("give flame (one flame) or time (a frame of the animation), not both")
        time = _real("time", time)
    if flame is None:
        flame = 0
    if isinstance(flame, bool) or not isinstance(flame, (numbers.Integral, str)):
        raise TypeError(f"flame must be an index (int) or a name (str), not {type(flame).__name__}")
    index, name = (int(flame), None) if isinstance(flame, numbers.Integral) else (0, flame)
    if index < 0:
        raise ValueError(f"flame {flame}: an index counts from 0")
    index = _whole("flame", index, 0, 2**64 - 1)
    seed = _whole("seed", seed, 0, 2**64 - 1)
    bits = _whole("bits", bits, 8, 16)
    if bits not in (8, 16):
        raise ValueError(f"bits must be 8 or 16, not {bits}")
    for switch, value in (("transparent", transparent), ("early_clip", early_clip), ("strict", strict)):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{switch} must be True or False, not {type(value).__name__}")
    if not isinstance(backend, str):
        raise TypeError(f"backend must be a string, 'auto', 'cpu' or 'cuda', not {type(backend).__name__}")
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a function, not {type(progress).__name__}")
    paths = _palette_path(palettes)
    array, notes = _native.flame_render(
        text,
        is_xml,
        index,
        name,
        _real("quality_scale", quality_scale),
        _real("size_scale", size_scale),
        seed,
        backend,
        bits,
        bool(transparent),
        bool(early_clip),
        _real("pixel_aspect", pixel_aspect),
        paths,
        bool(strict),
        time,
        progress,
    )
    for note in notes:
        warnings.warn(note, stacklevel=2)
    return array


def info(genome: Genome, *, palettes: Optional[Union[str, os.PathLike]] = None, strict: bool = False) -> dict[str, Any]:
    """What a genome (a path or XML text) holds, as ``warpmc flame info``
    reports it: a dict with

    - ``flames``: one dict each: ``index``, ``name``, ``width``, ``height``,
      ``supersample``, ``quality``, ``time``, ``xforms``, ``final_xform``,
      ``variations`` (the names used), ``beyond_flam3`` (what flam3-render
      would drop: Fractorium's variations, and "colour curves" where its
      curves change the image), ``unsupported`` (what warpmc dropped),
      ``renders`` (whether ``render`` with its default settings draws it)
      and ``why_not`` (the reason when it does not, else None);
    - ``renders``: whether every flame renders;
    - ``supported`` and ``unsupported``: whether warpmc implements every
      variation, and the names it dropped;
    - ``warnings``: the reader's warnings, one line each.

    A genome with no ``<flame>`` is a ValueError. With ``strict``, so is
    what ``flame info --strict`` refuses: a variation or attribute warpmc
    does not know, or a value flam3 does not take.
    """
    if not isinstance(strict, (bool, np.bool_)):
        raise TypeError(f"strict must be True or False, not {type(strict).__name__}")
    text, is_xml = _source(genome)
    paths = _palette_path(palettes)
    return json.loads(_native.flame_info(text, is_xml, paths, bool(strict)))
