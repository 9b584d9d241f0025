"""warpmc.flame: render() against `warpmc flame render`'s PNGs, info()."""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

from warpmc import flame

SIERPINSKI = """<flame name="sierpinski" size="37 29" center="0.5 0.5" scale="28" quality="30">
  <xform weight="1" coefs="0.5 0 0 0.5 0 0" linear="1" color="0"/>
  <xform weight="1" coefs="0.5 0 0 0.5 0.5 0" linear="0.7" spherical="0.3" color="0.5"/>
  <xform weight="1" coefs="0.5 0 0 0.5 0 0.5" linear="1" color="1"/>
  <color index="0" rgb="255 60 0"/><color index="255" rgb="0 90 255"/>
</flame>"""


def read_png(path: Path) -> np.ndarray:
    """Pixels of a non-interlaced 8- or 16-bit RGB(A) PNG: (H, W, channels)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
    width, height, depth, colour, _, _, interlace = header
    assert interlace == 0 and colour in (2, 6) and depth in (8, 16)
    channels = 3 if colour == 2 else 4
    bpp = channels * depth // 8
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows = np.zeros((height, stride), dtype=np.int64)
    prev = np.zeros(stride, dtype=np.int64)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = np.frombuffer(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)], dtype=np.uint8).astype(np.int64)
        out = np.zeros(stride, dtype=np.int64)
        for i in range(stride):
            a = out[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 0:
                pred = 0
            elif f == 1:
                pred = a
            elif f == 2:
                pred = b
            elif f == 3:
                pred = (a + b) // 2
            else:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            out[i] = (line[i] + pred) & 0xFF
        rows[y], prev = out, out
    pixels = rows.astype(np.uint8).reshape(height, width, bpp)
    if depth == 16:
        pixels = pixels.reshape(height, width, channels, 2).astype(np.uint16)
        return (pixels[..., 0] << 8) | pixels[..., 1]
    return pixels.reshape(height, width, channels)


@pytest.mark.parametrize("bits", [8, 16])
def test_render_equals_the_cli_png(cli, tmp_path, bits):
    genome = tmp_path / "s.flam3"
    genome.write_text(SIERPINSKI)
    png = tmp_path / "s.png"
    cli("flame", "render", str(genome), "-o", str(png), "--seed", "3", "--bits", str(bits), "-q", "2",
        "--backend", "cpu", "--quiet")
    image = flame.render(genome, quality_scale=2, seed=3, backend="cpu", bits=bits)
    assert image.shape == (29, 37, 4)
    assert image.dtype == (np.uint8 if bits == 8 else np.uint16)
    assert np.array_equal(image[..., :3], read_png(png))
    assert (image[..., 3] == np.iinfo(image.dtype).max).all()


def test_transparent_alpha_equals_the_cli_png(cli, tmp_path):
    genome = tmp_path / "s.flam3"
    genome.write_text(SIERPINSKI)
    png = tmp_path / "t.png"
    cli("flame", "render", str(genome), "-o", str(png), "--transparent", "--backend", "cpu", "--quiet")
    image = flame.render(str(genome), backend="cpu", transparent=True)
    assert np.array_equal(image, read_png(png))
    assert (image[..., 3] == 0).any() and (image[..., 3] > 0).any()


def test_early_clip_equals_the_cli_png(cli, tmp_path):
    genome = tmp_path / "s.flam3"
    genome.write_text(SIERPINSKI)
    png = tmp_path / "e.png"
    cli("flame", "render", str(genome), "-o", str(png), "--early-clip", "--seed", "2", "--backend", "cpu", "--quiet")
    image = flame.render(str(genome), seed=2, backend="cpu", early_clip=True)
    assert np.array_equal(image[..., :3], read_png(png))
    assert not np.array_equal(image, flame.render(str(genome), seed=2, backend="cpu"))


def test_pixel_aspect_equals_the_cli_png(cli, tmp_path):
    genome = tmp_path / "s.flam3"
    genome.write_text(SIERPINSKI)
    png = tmp_path / "a.png"
    cli("flame", "render", str(genome), "-o", str(png), "--pixel-aspect", "0.7", "--backend", "cpu", "--quiet")
    image = flame.render(str(genome), backend="cpu", pixel_aspect=0.7)
    assert np.array_equal(image[..., :3], read_png(png))
    assert not np.array_equal(image, flame.render(str(genome), backend="cpu"))
    with pytest.raises(ValueError, match="pixel aspect ratio must be positive"):
        flame.render(SIERPINSKI, backend="cpu", pixel_aspect=0.0)
    with pytest.raises(TypeError, match="pixel_aspect must be a number"):
        flame.render(SIERPINSKI, backend="cpu", pixel_aspect="1")


def test_switches_take_booleans_and_palettes_a_path():
    # A non-empty string is true to Python: "no" must not turn a switch on.
    for name in ("transparent", "early_clip", "strict"):
        with pytest.raises(TypeError, match=f"{name} must be True or False, not str"):
            flame.render(SIERPINSKI, backend="cpu", **{name: "no"})
    assert flame.render(SIERPINSKI, backend="cpu", transparent=np.bool_(False)).shape == (29, 37, 4)
    with pytest.raises(TypeError, match="path of flam3-palettes.xml, not its XML text"):
        flame.render(SIERPINSKI, backend="cpu", palettes=SIERPINSKI)
    with pytest.raises(TypeError, match="path of flam3-palettes.xml, not int"):
        flame.info(SIERPINSKI, palettes=3)
    with pytest.raises(TypeError, match="quality_scale must be a number, not str"):
        flame.render(SIERPINSKI, backend="cpu", quality_scale="3")
    with pytest.raises(ValueError, match="size_scale = 10000000… .401 digits.: out of range"):
        flame.render(SIERPINSKI, backend="cpu", size_scale=10**400)


def test_sixteen_bits_are_eight_bits_with_more_precision():
    a8 = flame.render(SIERPINSKI, seed=1, backend="cpu")
    a16 = flame.render(SIERPINSKI, seed=1, backend="cpu", bits=16)
    assert np.array_equal(a16[..., :3] >> 8, a8[..., :3])
    assert (a16[..., :3] & 0xFF).any()


def test_the_seed_decides_the_image():
    a = flame.render(SIERPINSKI, seed=5, backend="cpu")
    assert np.array_equal(a, flame.render(SIERPINSKI, seed=5, backend="cpu"))
    assert not np.array_equal(a, flame.render(SIERPINSKI, seed=6, backend="cpu"))
    assert a[..., :3].any()


def test_scales_and_flame_choice():
    two = SIERPINSKI.replace("<flame ", "<flames><flame ", 1) + SIERPINSKI.replace(
        'name="sierpinski" size="37 29"', 'name="second" size="20 10"'
    ) + "</flames>"
    assert flame.render(two, backend="cpu", size_scale=0.5, quality_scale=0.5).shape == (14, 18, 4)
    assert flame.render(two, flame=1, backend="cpu").shape == (10, 20, 4)
    assert flame.render(two, flame="second", backend="cpu").shape == (10, 20, 4)
    with pytest.raises(ValueError, match="2 flame"):
        flame.render(two, flame=2, backend="cpu")
    with pytest.raises(ValueError, match="no flame named 'third'"):
        flame.render(two, flame="third", backend="cpu")
    twins = two.replace('name="second"', 'name="sierpinski"')
    with pytest.raises(ValueError, match=r"2 flames are named 'sierpinski' \(flames 0, 1\)"):
        flame.render(twins, flame="sierpinski", backend="cpu")


def test_bad_genomes_raise_the_cli_message(cli, tmp_path):
    bad = tmp_path / "bad.flam3"
    bad.write_text('<flame size="64"/>')
    with pytest.raises(ValueError) as e:
        flame.render(bad, backend="cpu")
    out = cli("flame", "render", str(bad), "-o", str(tmp_path / "x.png"), "--backend", "cpu", check=False)
    assert out.returncode != 0
    assert f"error: {e.value}" in out.stderr.splitlines()
    with pytest.raises(OSError, match="cannot read"):
        flame.render(tmp_path / "missing.flam3")
    with pytest.raises(ValueError, match="bits must be 8 or 16"):
        flame.render(SIERPINSKI, bits=12)
    # Integers out of range or of the wrong kind are named.
    for kwargs, error, text in [
        ({"seed": -1}, ValueError, "seed = -1"),
        ({"seed": 2**64}, ValueError, "seed = 18446744073709551616"),
        ({"seed": 1.5}, TypeError, "seed must be an integer"),
        ({"bits": 2**70}, ValueError, "bits = "),
        ({"flame": 2**70}, ValueError, "flame = "),
    ]:
        with pytest.raises(error, match=text):
            flame.render(SIERPINSKI, backend="cpu", **kwargs)
    # A numbered palette needs flam3's palette file: a missing one or a
    # directory is a file problem, as the README promises.
    numbered = SIERPINSKI.replace('quality="30"', 'quality="30" palette="7"')
    # Each raises the OSError subclass Python's open() would.
    for palettes, error in ((tmp_path / "no-palettes.xml", FileNotFoundError), (tmp_path, IsADirectoryError)):
        with pytest.raises(error, match="palette file"):
            flame.render(numbered, backend="cpu", palettes=palettes)
        with pytest.raises(error, match="palette file"):
            flame.info(numbered, palettes=palettes)
    with pytest.raises(TypeError):
        flame.render(b"<flame/>")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_is_refused_not_waited_on(tmp_path):
    # Opening it would wait for a writer, where Ctrl-C cannot reach.
    fifo = tmp_path / "genome.fifo"
    os.mkfifo(fifo)
    numbered = SIERPINSKI.replace('quality="30"', 'quality="30" palette="7"')
    for call in (
        lambda: flame.info(fifo),
        lambda: flame.render(fifo, backend="cpu"),
        lambda: flame.render(numbered, backend="cpu", palettes=fifo),
    ):
        with pytest.raises(ValueError, match="FIFO"):
            call()


def test_unknown_variations_warn_or_fail_under_strict():
    odd = SIERPINSKI.replace('linear="1" color="0"', 'linear="1" no_such_variation="1" color="0"')
    with pytest.warns(UserWarning, match="no_such_variation"):
        image = flame.render(odd, backend="cpu")
    assert image[..., :3].any()
    with pytest.raises(ValueError, match="no_such_variation"):
        flame.render(odd, backend="cpu", strict=True)
    info = flame.info(odd)
    assert info["supported"] is False and "no_such_variation" in info["unsupported"]
    with pytest.raises(ValueError, match="no_such_variation"):
        flame.info(odd, strict=True)


def test_info_describes_each_flame(tmp_path):
    info = flame.info(SIERPINSKI)
    assert info["renders"] and info["supported"] and info["warnings"] == []
    (f,) = info["flames"]
    assert (f["name"], f["width"], f["height"], f["xforms"], f["final_xform"]) == ("sierpinski", 37, 29, 3, False)
    assert f["variations"] == ["linear", "spherical"]
    assert f["quality"] == 30
    path = tmp_path / "s.flam3"
    path.write_text(SIERPINSKI)
    assert flame.info(path) == info


def test_info_says_what_the_cli_says(cli, tmp_path):
    curves = SIERPINSKI.replace('quality="30"', 'quality="30" overall_curve="0 0 0.5 0.7 1 1"')
    huge = SIERPINSKI.replace('quality="30"', 'quality="1e300"')
    for genome in (SIERPINSKI, curves, huge):
        path = tmp_path / "g.flam3"
        path.write_text(genome)
        text = cli("flame", "info", str(path)).stdout
        info = flame.info(genome)
        (f,) = info["flames"]
        beyond = [line for line in text.splitlines() if "beyond flam3's" in line]
        assert f["beyond_flam3"] == (beyond[0].split(": ", 1)[1].split(", ") if beyond else [])
        assert info["renders"] == ("renders: yes" in text) == f["renders"]
        assert (f["why_not"] is None) == f["renders"]
        if not f["renders"]:
            assert f"renders: no (flame 0: {f['why_not']})" in text
    assert flame.info(curves)["flames"][0]["beyond_flam3"] == ["colour curves"]
    assert "iterations" in flame.info(huge)["flames"][0]["why_not"]
    # What else --strict refuses: a keyword flam3 does not know.
    sinc = SIERPINSKI.replace('quality="30"', 'quality="30" filter_shape="sinc"')
    path = tmp_path / "sinc.flam3"
    path.write_text(sinc)
    out = cli("flame", "info", str(path), "--strict", check=False)
    assert out.returncode != 0
    with pytest.raises(ValueError) as e:
        flame.info(sinc, strict=True)
    assert f"error: {e.value}".replace("<genome>", str(path)) in out.stderr.splitlines()
    assert flame.info(sinc)["warnings"]
    # No flame at all: nothing to describe.
    with pytest.raises(ValueError, match="no <flame> elements"):
        flame.info("<flames/>")


def test_paths_may_be_bytes_path_objects_but_bytes_are_not_a_genome(tmp_path):
    class BytesPath:
        def __init__(self, path):
            self.path = os.fsencode(path)

        def __fspath__(self):
            return self.path

    path = tmp_path / "s.flam3"
    path.write_text(SIERPINSKI)
    assert flame.info(BytesPath(path)) == flame.info(path)
    with pytest.raises(TypeError, match=r"not bytes: decode XML text \(.decode\(\)\) or a path"):
        flame.info(SIERPINSKI.encode())


def test_a_frame_of_the_animation_is_flame_animates(cli, tmp_path):
    # Two keyframes given out of time order, one with motion blur.
    later = SIERPINSKI.replace('name="sierpinski"', 'name="b" time="10" temporal_samples="3"').replace(
        'coefs="0.5 0 0 0.5 0.5 0"', 'coefs="0.4 0.2 -0.2 0.4 0.5 0.1"'
    )
    genome = "<flames>" + later + SIERPINSKI.replace('name="sierpinski"', 'name="a" time="0"') + "</flames>"
    path = tmp_path / "anim.flam3"
    path.write_text(genome)
    out = cli("flame", "animate", str(path), "--begin", "4", "--end", "4", "--seed", "5", "--backend", "cpu",
              "--prefix", str(tmp_path / "f"), "--quiet")
    (png,) = tmp_path.glob("f*.png")
    with pytest.warns(UserWarning, match="not in time order"):
        frame = flame.render(genome, time=4, seed=5, backend="cpu")
    assert np.array_equal(frame[..., :3], read_png(png)[..., :3]), out.stderr
    # Between the keyframes the frame is neither of them.
    with pytest.warns(UserWarning):
        assert not np.array_equal(frame, flame.render(genome, time=0, seed=5, backend="cpu"))
    with pytest.raises(TypeError, match="not both"):
        flame.render(genome, time=4, flame=0)
    with pytest.raises(ValueError, match="time"):
        flame.render(genome, time=float("nan"))
    twins = genome.replace('time="10"', 'time="0"')
    with pytest.raises(ValueError, match="both have time 0"):
        flame.render(twins, time=4)


def test_render_on_the_gpu_is_the_same_picture(gpu):
    cpu = flame.render(SIERPINSKI, quality_scale=20, seed=2, backend="cpu").astype(np.float64)
    cuda = flame.render(SIERPINSKI, quality_scale=20, seed=2, backend="cuda").astype(np.float64)
    assert cuda.shape == cpu.shape
    # Different random streams: the same picture within Monte Carlo noise.
    mse = np.mean((cpu[..., :3] - cuda[..., :3]) ** 2)
    assert 10 * np.log10(255**2 / max(mse, 1e-12)) > 20


def test_a_flame_is_chosen_by_an_integer_or_a_name_only():
    assert np.array_equal(flame.render(SIERPINSKI, flame=np.int64(0), seed=1), flame.render(SIERPINSKI, flame=0, seed=1))
    for bad in (True, 1.5, b"0"):
        with pytest.raises(TypeError, match="flame must be an index"):
            flame.render(SIERPINSKI, flame=bad)
    assert np.array_equal(flame.render(SIERPINSKI, flame=None, seed=1), flame.render(SIERPINSKI, seed=1))


def test_xml_text_with_a_byte_order_mark_is_a_genome_not_a_path():
    # Text read with encoding="utf-8" keeps a file's BOM.
    plain = flame.render(SIERPINSKI, seed=2, backend="cpu")
    with_bom = flame.render("\ufeff" + SIERPINSKI, seed=2, backend="cpu")
    assert np.array_equal(with_bom, plain)
    assert flame.info("\ufeff" + SIERPINSKI) == flame.info(SIERPINSKI)
    with pytest.raises(TypeError, match="not its XML text"):
        flame.render(SIERPINSKI, palettes="\ufeff<palettes/>")


def test_a_genome_path_that_is_not_utf8_is_read(tmp_path):
    # Python holds the byte 0xff of a file name as a surrogate escape.
    name = os.fsdecode(b"sierpinski-\xff.flam3")
    path = tmp_path / name
    path.write_text(SIERPINSKI)
    plain = flame.render(SIERPINSKI, seed=2, backend="cpu")
    for given in (path, str(path)):
        assert np.array_equal(flame.render(given, seed=2, backend="cpu"), plain)
        assert flame.info(given) == flame.info(SIERPINSKI)
    with pytest.raises(FileNotFoundError, match="missing-"):
        flame.render(tmp_path / os.fsdecode(b"missing-\xfe.flam3"))


def test_switches_and_words_of_the_wrong_kind_name_themselves():
    genome = '<flame size="8 8" quality="1"><xform weight="1" coefs="1 0 0 1 0 0" linear="1" color="0"/></flame>'
    with pytest.raises(TypeError, match="backend must be a string"):
        flame.render(genome, backend=None)
    with pytest.raises(TypeError, match="strict must be True or False, not str"):
        flame.info(genome, strict="no")
