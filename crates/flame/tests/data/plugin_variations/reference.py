#!/usr/bin/env python3
"""Expected values for tests/plugin_variations.rs, written from the
formulas (Fractorium's definitions of crop, flatten, linear3D and its pre_
and post_ variations; flam3's disc, bubble, gaussian_blur, bipolar,
spherical and linear) independently of warpmc's code.

Random variations read their uniforms from the fixed list U, in order (the
test's RandomSource hands out the same list). Run: python3 reference.py
and paste the printed lines into the test's EXPECTED table.
"""
import math

U = [0.125, 0.625, 0.3, 0.9, 0.45, 0.05, 0.7, 0.2]


class Draws:
    def __init__(self):
        self.i = 0

    def __call__(self):
        u = U[self.i % len(U)]
        self.i += 1
        return u


def linear(x, y, w, r):
    return w * x, w * y


def disc(x, y, w, r):
    a = math.atan2(x, y) / math.pi
    rr = math.pi * math.hypot(x, y)
    return w * math.sin(rr) * a, w * math.cos(rr) * a


def bubble(x, y, w, r):
    k = w / (0.25 * (x * x + y * y) + 1)
    return k * x, k * y


def spherical(x, y, w, r):
    k = w / (x * x + y * y + 1e-10)
    return k * x, k * y


def gaussian_blur(x, y, w, r):
    a = r() * 2 * math.pi
    g = w * (r() + r() + r() + r() - 2)
    return g * math.cos(a), g * math.sin(a)


def bipolar(shift):
    def f(x, y, w, r):
        t = x * x + y * y + 1
        x2 = 2 * x
        ang = 0.5 * math.atan2(2 * y, x * x + y * y - 1) - shift * math.pi / 2
        if ang > math.pi / 2:
            ang = -math.pi / 2 + math.fmod(ang + math.pi / 2, math.pi)
        elif ang < -math.pi / 2:
            ang = math.pi / 2 - math.fmod(math.pi / 2 - ang, math.pi)
        return w * 0.25 * (2 / math.pi) * math.log((t + x2) / (t - x2)), w * (2 / math.pi) * ang
    return f


def crop(left, top, right, bottom, scatter, zero):
    x0, x1 = min(left, right), max(left, right)
    y0, y1 = min(top, bottom), max(top, bottom)
    bw = (x1 - x0) / 2 * scatter
    bh = (y1 - y0) / 2 * scatter

    def f(x, y, w, r):
        if (x < x0 or x > x1 or y < y0 or y > y1) and zero:
            return 0.0, 0.0
        if x < x0:
            x = x0 + r() * bw
        elif x > x1:
            x = x1 - r() * bw
        if y < y0:
            y = y0 + r() * bh
        elif y > y1:
            y = y1 - r() * bh
        return w * x, w * y
    return f


GRAD12 = [(1, 1, 0), (-1, 1, 0), (1, -1, 0), (-1, -1, 0), (1, 0, 1), (-1, 0, 1),
          (1, 0, -1), (-1, 0, -1), (0, 1, 1), (0, -1, 1), (0, 1, -1), (0, -1, -1)]
M32 = 0xFFFFFFFF


def lattice_gradient(i, j, k):
    """Wellons's lowbias32 of the lattice point's mix, modulo 12."""
    h = ((i * 0x8DA6B343) ^ (j * 0xD8163841) ^ (k * 0xCB1AB31F)) & M32
    h ^= h >> 16
    h = (h * 0x7FEB352D) & M32
    h ^= h >> 15
    h = (h * 0x846CA68B) & M32
    h ^= h >> 16
    return GRAD12[h % 12]


def simplex3(x, y, z):
    """Gustavson's 3-D simplex noise (2005), gradients by lattice_gradient,
    kernel (0.5 - d^2)^4 (continuous) scaled by 76."""
    s = (x + y + z) / 3
    i, j, k = math.floor(x + s), math.floor(y + s), math.floor(z + s)
    t = (i + j + k) / 6
    d = (x - (i - t), y - (j - t), z - (k - t))
    # Corners visited in the order of the offsets' sizes, largest first.
    order = sorted(range(3), key=lambda a: -d[a])
    # Ties as the usual nested comparisons break them.
    dx, dy, dz = d
    if dx >= dy:
        order = [0, 1, 2] if dy >= dz else ([0, 2, 1] if dx >= dz else [2, 0, 1])
    else:
        order = [2, 1, 0] if dy < dz else ([1, 2, 0] if dx < dz else [1, 0, 2])
    offsets = [(0, 0, 0)]
    o = [0, 0, 0]
    for a in order:
        o = list(o)
        o[a] = 1
        offsets.append(tuple(o))
    n = 0.0
    for c, off in enumerate(offsets):
        v = [d[a] - off[a] + c / 6 for a in range(3)]
        tt = 0.5 - sum(q * q for q in v)
        if tt > 0:
            g = lattice_gradient(i + off[0], j + off[1], k + off[2])
            n += tt ** 4 * sum(g[a] * v[a] for a in range(3))
    return 76 * n


def crackle(cellsize, power, distort, scale, z):
    s = cellsize / 2

    def centre(cx, cy):
        e = simplex3(cx * 2.5, cy * 2.5, z * 2.5)
        f = simplex3(cy * 2.5 + 30.2, cx * 2.5 - 12.1, z * 2.5 + 19.8)
        return ((cx + distort * e) * s, (cy + distort * f) * s)

    def f(x, y, w, r):
        if s == 0:
            return 0.0, 0.0
        blur = (r() + r()) / 2 + (r() - 0.5) / 4
        theta = 2 * math.pi * r()
        u = (blur * math.sin(theta), blur * math.cos(theta))
        cx, cy = math.floor(u[0] / s), math.floor(u[1] / s)
        near = [(cx + di, cy + dj) for di in (-1, 0, 1) for dj in (-1, 0, 1)]
        dist = [math.dist(centre(*c), u) for c in near]
        cx, cy = near[dist.index(min(dist))]
        c = centre(cx, cy)
        ratios = []
        for di in (-1, 0, 1):
            for dj in (-1, 0, 1):
                if (di, dj) == (0, 0):
                    continue
                q = centre(cx + di, cy + dj)
                dq = (q[0] - c[0], q[1] - c[1])
                dd = dq[0] ** 2 + dq[1] ** 2
                ratios.append(1.0 if dd == 0 else 2 * ((u[0] - c[0]) * dq[0] + (u[1] - c[1]) * dq[1]) / dd)
        el = max(ratios)
        rr = (el + 1e-100) ** power * scale / (el + 1e-100)
        return w * ((u[0] - c[0]) * rr + c[0]), w * ((u[1] - c[1]) * rr + c[1])
    return f


def xform(pre, regular, post, x, y):
    """pre/post: (function, weight, summed); regular: (function, weight)."""
    r = Draws()
    for f, w, summed in pre:
        dx, dy = f(x, y, w, r)
        x, y = (x + dx, y + dy) if summed else (dx, dy)
    if regular:
        sx = sy = 0.0
        for f, w in regular:
            dx, dy = f(x, y, w, r)
            sx, sy = sx + dx, sy + dy
    else:
        sx, sy = x, y
    for f, w, summed in post:
        dx, dy = f(sx, sy, w, r)
        sx, sy = (sx + dx, sy + dy) if summed else (dx, dy)
    return sx, sy


CASES = [
    # name, xform, point
    ("crop inside", ([], [(crop(-1, -2, 1, 2, 0, 0), 0.75)], []), (0.5, -1.5)),
    ("crop outside to the edge", ([], [(crop(1, 2, -1, -2, 0, 0), 1.0)], []), (3.0, -5.0)),
    ("crop outside scattered", ([], [(crop(-1, -2, 1, 2, 0.5, 0), 2.0)], []), (-3.0, 2.5)),
    ("crop outside to zero", ([], [(crop(-1, -2, 1, 2, 0.5, 1), 2.0), (linear, 0.5)], []), (-3.0, 0.5)),
    ("flatten adds nothing", ([], [(linear, 0.5), (lambda x, y, w, r: (0.0, 0.0), 3.0)], []), (0.3, -0.7)),
    ("linear3D", ([], [(linear, 1.25)], []), (0.3, -0.7)),
    ("pre_disc then linear", ([(disc, 0.8, False)], [(linear, 1.5)], []), (0.3, -0.7)),
    ("pre_gaussian_blur then bubble", ([(gaussian_blur, 2.0, True)], [(bubble, 1.0)], []), (0.3, -0.7)),
    ("pre_crop alone passes", ([(crop(-2, -2, 2, 2, 0, 0), 1.0, False)], [], []), (0.3, -2.7)),
    (
        "bipolar then post_crop",
        ([], [(bipolar(-0.137), 6.0)], [(crop(-1000, -1, 1000, 1, 0, 0), 1.0, False)]),
        (0.4, 0.1),
    ),
    (
        "pre_crop, spherical, post_disc",
        ([(crop(-0.5, -0.5, 0.5, 0.5, 1, 0), 1.0, False)], [(spherical, 0.5)], [(disc, 1.0, False)]),
        (0.9, -0.2),
    ),
    ("crackle on a regular grid", ([], [(crackle(0.4, -0.4, 0.0, 0.6, 0.6), 1.0)], []), (5.0, 5.0)),
    ("crackle distorted", ([], [(crackle(0.4, -0.4, 0.2, 0.6, 0.6), 1.0)], []), (5.0, 5.0)),
    ("crackle, other cells", ([], [(crackle(0.15, 0.3, 0.9, 1.5, -2.0), 0.7)], []), (5.0, 5.0)),
    ("pre_crackle sums", ([(crackle(1.0, 0.2, 0.5, 1.0, 0.0), 0.5, True)], [(linear, 1.0)], []), (0.25, -0.5)),
]

if __name__ == "__main__":
    for name, (pre, regular, post), (x, y) in CASES:
        ox, oy = xform(pre, regular, post, x, y)
        print(f'    ("{name}", {ox!r}, {oy!r}),')
