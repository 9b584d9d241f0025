#!/usr/bin/env python3
"""Expected values for tests/plugin_variations.rs, written from the
formulas (Fractorium's definitions of its variations beyond flam3's, and
of the pre_ and post_ forms; flam3's disc, bubble, gaussian_blur, bipolar,
spherical and linear) independently of warpmc's code.

Random variations read their uniforms from the fixed list U and their
32-bit words (random bits, Fractorium's Crand) from the fixed list W, each
in order (the test's RandomSource hands out the same lists).

Parameters are given as Fractorium reads them from a file: each passes
through Fractorium's rule for it (its range, integer rounding, nonzero)
before the variation is prepared.

Run: python3 reference.py > cases.txt (the file the test reads).
"""
import math

U = [0.125, 0.625, 0.3, 0.9, 0.45, 0.05, 0.7, 0.2]
W = [0x9E3779B9, 0x12345678, 0xDEADBEEF, 0x00000001, 0xFFFFFFFE, 0x7F4A7C15]

EPS = 2.220446049250313e-16  # Fractorium's EPS in double: the machine epsilon
INF = math.inf
PI = math.pi


class Draws:
    def __init__(self):
        self.i = 0
        self.j = 0

    def __call__(self):
        u = U[self.i % len(U)]
        self.i += 1
        return u

    def word(self):
        w = W[self.j % len(W)]
        self.j += 1
        return w

    def bit(self):
        return self.word() & 1

    def crand(self):
        """Fractorium's Crand: Rand(32767), an integer below 32767."""
        return (self.word() * 32767) >> 32


def zeps(x):
    return EPS if x == 0 else x


def clamp(v, lo=-INF, hi=INF):
    """C++'s max(min(v, hi), lo): NaN stays NaN."""
    m = hi if hi < v else v
    return lo if m < lo else m


def c_int(v):
    """x86's conversion of a double to int: truncation, INT_MIN when out of
    range or NaN."""
    if v != v or v <= -2147483649.0 or v >= 2147483648.0:
        return -2147483648
    return int(v)


def as_integer(v, lo=-INF, hi=INF):
    """Fractorium's INTEGER parameter: floor(v + 0.5), clamped, as an int
    (NaN: the lowest integer, clamped)."""
    f = math.floor(v + 0.5) if math.isfinite(v + 0.5) else (v + 0.5)
    f = lo if f != f else clamp(f, lo, hi)
    return float(c_int(f))


def as_nonzero(v, lo=-INF, hi=INF):
    d = clamp(v, lo, hi)
    if -1e-6 < d < 1e-6:
        return -EPS if d < 0 else EPS
    return d


def as_integer_nonzero(v, lo=-INF, hi=INF):
    i = as_integer(v, lo, hi)
    if i == 0:
        return -1.0 if v < 0 else 1.0
    return i


def div(a, b):
    """a / b as IEEE arithmetic divides (Python raises at zero)."""
    if b == 0:
        if a == 0 or a != a:
            return math.nan
        return math.copysign(INF, a) * math.copysign(1.0, b)
    return a / b


def fmod(a, b):
    try:
        return math.fmod(a, b)
    except ValueError:
        return math.nan


def safe(f, *a):
    """A libm call as C makes it: NaN where Python raises a domain error,
    infinity where it overflows."""
    try:
        return f(*a)
    except ValueError:
        return math.nan
    except OverflowError:
        return INF


def sin(x):
    return safe(math.sin, x)


def cos(x):
    return safe(math.cos, x)


def tan(x):
    return safe(math.tan, x)


def log(x):
    if x == 0:
        return -INF
    return safe(math.log, x)


def sqrt(x):
    return safe(math.sqrt, x)


def exp(x):
    return safe(math.exp, x)


def acos(x):
    return safe(math.acos, x)


def pw(x, y):
    try:
        return math.pow(x, y)
    except (ValueError, ZeroDivisionError):
        return math.nan if x >= 0 or x != x else math.nan
    except OverflowError:
        return INF


# ---- flam3's variations the older cases combine with Fractorium's forms.

def linear(x, y, w, r, p):
    return w * x, w * y


def disc(x, y, w, r, p):
    a = math.atan2(x, y) / PI
    rr = PI * math.hypot(x, y)
    return w * math.sin(rr) * a, w * math.cos(rr) * a


def bubble(x, y, w, r, p):
    k = w / (0.25 * (x * x + y * y) + 1)
    return k * x, k * y


def spherical(x, y, w, r, p):
    k = w / (x * x + y * y + 1e-10)
    return k * x, k * y


def gaussian_blur(x, y, w, r, p):
    a = r() * 2 * PI
    g = w * (r() + r() + r() + r() - 2)
    return g * math.cos(a), g * math.sin(a)


def bipolar(x, y, w, r, p):
    shift = p["shift"]
    t = x * x + y * y + 1
    x2 = 2 * x
    ang = 0.5 * math.atan2(2 * y, x * x + y * y - 1) - shift * PI / 2
    if ang > PI / 2:
        ang = -PI / 2 + math.fmod(ang + PI / 2, PI)
    elif ang < -PI / 2:
        ang = PI / 2 - math.fmod(PI / 2 - ang, PI)
    return w * 0.25 * (2 / PI) * math.log((t + x2) / (t - x2)), w * (2 / PI) * ang


def log_var(x, y, w, r, p):
    """flam3's log with Fractorium's log_base (at least EPS): the real part
    log_base(r²) / 2."""
    base = clamp(p["base"], EPS)
    return log(x * x + y * y) * (w * 0.5 / log(base)), w * math.atan2(y, x)


def flatten(x, y, w, r, p):
    return 0.0, 0.0


# ---- Fractorium's crop and crackle.

def crop(x, y, w, r, p):
    left, top, right, bottom = p["left"], p["top"], p["right"], p["bottom"]
    x0, x1 = min(left, right), max(left, right)
    y0, y1 = min(top, bottom), max(top, bottom)
    scatter = clamp(p["scatter_area"], -1, 1)
    bw = (x1 - x0) / 2 * scatter
    bh = (y1 - y0) / 2 * scatter
    if (x < x0 or x > x1 or y < y0 or y > y1) and as_integer(p["zero"], 0, 1):
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


def crackle(x, y, w, r, p):
    # Fractorium's range: cellsize at least 0.0001.
    s = max(p["cellsize"], 0.0001) / 2
    power, distort, scale, z = p["power"], p["distort"], p["scale"], p["z"]

    def centre(cx, cy):
        e = simplex3(cx * 2.5, cy * 2.5, z * 2.5)
        f = simplex3(cy * 2.5 + 30.2, cx * 2.5 - 12.1, z * 2.5 + 19.8)
        return ((cx + distort * e) * s, (cy + distort * f) * s)

    if s == 0:
        return 0.0, 0.0
    blur = (r() + r()) / 2 + (r() - 0.5) / 4
    theta = 2 * PI * r()
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
    zl = el if el != 0 else 2.220446049250313e-16  # Fractorium's Zeps
    rr = abs(zl) ** power * scale / zl
    return w * ((u[0] - c[0]) * rr + c[0]), w * ((u[1] - c[1]) * rr + c[1])


# ---- Fractorium's blurs.

def gaussian(x, y, w, r, p):
    angle = r() * 2 * PI
    rad = w * (r() + r() + r() + r() - 2)
    return rad * cos(angle) + x, rad * sin(angle) + y


def sineblur(x, y, w, r, p):
    power = clamp(p["power"], 0)
    ang = r() * 2 * PI
    u = r()
    if power == 1:
        rad = w * (acos(u * 2 - 1) / PI)
    else:
        rad = w * (acos(exp(log(u) * power) * 2 - 1) / PI)
    return rad * cos(ang), rad * sin(ang)


def blur_linear(x, y, w, r, p):
    angle = p["angle"]
    two_pi = 2 * PI
    # REAL_CYCLIC in [0, 2π].
    if angle > two_pi:
        angle = fmod(angle, two_pi)
    elif angle < 0:
        angle = two_pi - fmod(two_pi - angle, two_pi)
    rad = p["length"] * r()
    return w * (x + rad * cos(angle)), w * (y + rad * sin(angle))


def blur_zoom(x, y, w, r, p):
    z = 1 + p["length"] * r()
    return w * ((x - p["x"]) * z + p["x"]), w * ((y + p["y"]) * z - p["y"])


def blur_circle(x, y, w, r, p):
    px = 2 * r() - 1
    py = 2 * r() - 1
    ax, ay = abs(px), abs(py)
    if ax >= ay:
        perimeter = ax + py if px >= ay else 5 * ax - py
        side = ax
    else:
        perimeter = 3 * ay - px if py >= ax else 7 * ay + px
        side = ay
    rad = w * side
    val = PI / 4 * perimeter / side - PI / 4
    return rad * cos(val), rad * sin(val)


def circleblur(x, y, w, r, p):
    rad = math.sqrt(r())
    t = r() * 2 * PI
    return w * cos(t) * rad, w * sin(t) * rad


def rblur(x, y, w, r, p):
    sx, sy = x - p["center_x"], y - p["center_y"]
    rad = sqrt(sx * sx + sy * sy) - p["offset"]
    rad = 0 if rad < 0 else rad
    rad *= 2 * p["strength"]
    ox = w * (x + (r() - 0.5) * rad)
    oy = w * (y + (r() - 0.5) * rad)
    return ox, oy


# ---- Fractorium's maps.

def mobius_f(x, y, w, r, p):
    ura = p["Re_A"] * x - p["Im_A"] * y + p["Re_B"]
    uim = p["Re_A"] * y + p["Im_A"] * x + p["Im_B"]
    vre = p["Re_C"] * x - p["Im_C"] * y + p["Re_D"]
    vim = p["Re_C"] * y + p["Im_C"] * x + p["Im_D"]
    den = zeps(vre * vre + vim * vim)
    return w * (ura * vre + uim * vim) / den, w * (uim * vre - ura * vim) / den


def hemisphere(x, y, w, r, p):
    t = w / sqrt(x * x + y * y + 1)
    return x * t, y * t


def unpolar(x, y, w, r, p):
    v = (w / PI) * 0.5
    rad = exp(y)
    return v * rad * sin(x), v * rad * cos(x)


def epispiral(x, y, w, r, p):
    theta = math.atan2(y, x)
    thick_w = p["thickness"] * w
    holes_w = p["holes"] * w
    t = (w if thick_w == 0 else thick_w * r()) / cos(p["n"] * theta) - holes_w
    if abs(t) != 0:
        return t * cos(theta), t * sin(theta)
    return 0.0, 0.0


def twoface(x, y, w, r, p):
    k = w
    if x > 0:
        k = k / (x * x + y * y)
    return k * x, k * y


def glynnia(x, y, w, r, p):
    v2 = w * (math.sqrt(2) / 2)
    rad = math.sqrt(x * x + y * y)
    if rad > 1:
        if r() > 0.5:
            d = sqrt(rad + x)
            return v2 * d, -(v2 / d * y)
        d = rad + x
        k = w / sqrt(rad * (y * y + d * d))
        return k * d, k * y
    if r() > 0.5:
        d = zeps(sqrt(rad + x))
        return -(v2 * d), -(v2 / d * y)
    d = rad + x
    k = w / zeps(sqrt(rad * (y * y + d * d)))
    return -(k * d), k * y


def wdisc(x, y, w, r, p):
    a = PI / (math.sqrt(x * x + y * y) + 1)
    rad = math.atan2(y, x) * (1 / PI)
    if rad > 0:
        a = PI - a
    return w * rad * cos(a), w * rad * sin(a)


def hypertile(x, y, w, r, p):
    pa = 2 * PI / zeps(p["p"])
    cs = cos(pa)
    r2 = (1 - cs) / (cs + cos(2 * PI / zeps(p["q"]))) + 1
    rad = 1 / sqrt(r2) if r2 > 0 else 1
    a = p["n"] * pa
    re, im = rad * cos(a), rad * sin(a)
    aa = x + re
    b = y - im
    c = re * x - im * y + 1
    d = re * y + im * x
    vr = w / (c * c + d * d)
    return vr * (aa * c + b * d), vr * (b * c - aa * d)


def tiling_r(pp, qq):
    pa = 2 * PI / zeps(pp)
    cs = cos(pa)
    r2 = 1 - (cs - 1) / (cs + cos(2 * PI / zeps(qq)))
    return (1 / sqrt(r2) if r2 > 0 else 1), pa


def rotation(k, pp):
    """k·2π/p: with p a whole number, the same rotation as (k mod p)·2π/p."""
    if 1 <= pp <= 2 ** 24 and pp == math.floor(pp):
        k = k % int(pp)
    return k


def hypertile1(x, y, w, r, p):
    rad, pa = tiling_r(p["p"], p["q"])
    t = rotation(r.crand(), p["p"]) * pa
    re, im = rad * cos(t), rad * sin(t)
    a = x + re
    b = y - im
    c = re * x - im * y + 1
    d = re * y + im * x
    vr = w / zeps(c * c + d * d)
    return vr * (a * c + b * d), vr * (b * c - a * d)


def hypertile2(x, y, w, r, p):
    rad, pa = tiling_r(p["p"], p["q"])
    a = x + rad
    b = y
    c = rad * x + 1
    d = rad * y
    xx = a * c + b * d
    yy = b * c - a * d
    vr = w / zeps(c * c + d * d)
    t = rotation(r.crand(), p["p"]) * pa
    return vr * (xx * cos(t) + yy * sin(t)), vr * (yy * cos(t) - xx * sin(t))


def btransform(x, y, w, r, p):
    power = as_nonzero(p["power"], 1, 2147483647)
    xp1 = x + 1
    yy = y * y
    tau = 0.5 * (log(xp1 * xp1 + yy) - log((x - 1) ** 2 + yy)) / power + p["move"]
    sigma = PI - math.atan2(y, xp1) - math.atan2(y, 1 - x) + p["rotate"]
    sigma = sigma / power + 2 * PI / power * math.floor(r() * power)
    tau = tau + p["split"] if x >= 0 else tau - p["split"]
    t = zeps(math.cosh(tau) - cos(sigma))
    return w * math.sinh(tau) / t, w * sin(sigma) / t


def ejulia(x, y, w, r, p):
    power = as_integer_nonzero(p["power"])
    r2 = x * x + y * y
    if power >= 0:
        xx = x
    else:
        r2 = 1 / zeps(r2)
        xx = x * r2

    def safe_sqrt(v):
        return 0.0 if v <= 0 else math.sqrt(v)

    xmax = (safe_sqrt(r2 + 1 + 2 * xx) + safe_sqrt(r2 + 1 - 2 * xx)) * 0.5
    xmax = max(xmax, 1.0)
    mu = math.acosh(xmax)
    nu = acos(clamp(xx / xmax, -1, 1))
    if y < 0:
        nu = -nu
    nu = nu / power + 2 * PI / power * math.floor(r() * power)
    mu = mu / power
    return w * math.cosh(mu) * cos(nu), w * math.sinh(mu) * sin(nu)


def pow_block(x, y, w, r, p):
    num, den, root = p["numerator"], p["denominator"], p["root"]
    power = num / zeps(den * p["correctn"] * (1 / p["correctd"]))
    r2 = pw(x * x + y * y, power * 0.5) * w
    ran = (math.atan2(y, x) / zeps(den) + (root * 2 * PI * math.floor(r() * den) / zeps(den))) * num
    return r2 * cos(ran), r2 * sin(ran)


def barycentroid(x, y, w, r, p):
    a, b, c, d = p["a"], p["b"], p["c"], p["d"]
    dot00 = a * a + b * b
    dot01 = a * c + b * d
    dot02 = a * x + b * y
    dot11 = c * c + d * d
    dot12 = c * x + d * y
    inv = 1 / zeps(dot00 * dot11 - dot01 * dot01)
    u = (dot11 * dot02 - dot01 * dot12) * inv
    v = (dot00 * dot12 - dot01 * dot02) * inv

    def sign(t):
        return -1.0 if t < 0 else (1.0 if t > 0 else 0.0)

    return w * sqrt(u * u + x * x) * sign(u), w * sqrt(v * v + y * y) * sign(v)


def smartshape(x, y, w, r, p):
    power = clamp(p["power"], 2)
    roundstr, roundwidth, distortion = p["roundstr"], p["roundwidth"], p["distortion"]
    comp = 0 if clamp(p["compensation"], 0, 1) <= 0 else 1
    alpha = 2 * PI / power
    alpha_coeff = tan(alpha * 0.5) * 2
    round_coeff = roundstr / sin(alpha * 0.5) / power * 2
    dang = (math.atan2(y, x) + PI) / alpha
    rad = math.sqrt(x * x + y * y)
    zang1 = math.floor(dang)
    xang1 = dang - zang1
    if xang1 > 0.5:
        xang2, zang, sgn = 1 - xang1, zang1 + 1, -1
    else:
        xang2, zang, sgn = xang1, zang1, 1
    if comp == 1 and distortion >= 1:
        xang = math.atan(xang2 * alpha_coeff) / alpha
    else:
        xang = xang2
    if distortion == 0:
        coeff_1 = 1
    else:
        coeff0 = 1 / cos(xang * alpha)
        if roundstr != 0:
            if roundwidth != 1:
                # Fractorium's exp(log(2 xang) roundwidth), as a power (1 at 0^0).
                wwidth = pw(xang * 2, roundwidth) * round_coeff
            else:
                wwidth = xang * 2 * round_coeff
            coeff_1 = abs((1 - wwidth) * coeff0 + wwidth)
        else:
            coeff_1 = coeff0
    coeff = exp(log(coeff_1) * distortion) if distortion != 1 else coeff_1
    ang = (zang + sgn * xang) * alpha - PI
    t = w * coeff * rad
    return cos(ang) * t, sin(ang) * t


def y_shape(x, y, w, r, p):
    hypergon, star, lituus, sup = p["hypergon"], p["star"], p["lituus"], p["super"]
    hn = as_integer(p["hypergon_n"], 3)
    sn = as_integer(p["star_n"], 3)
    slope = clamp(p["star_slope"], EPS, PI / 2)
    hd = math.sqrt(1 + p["hypergon_r"] ** 2)
    tss = tan(slope - 0.05) if abs(slope - PI / 2) < 1e-6 else tan(slope)
    a = math.atan2(y, x)
    total = 0.0
    if hypergon != 0:
        t1 = fmod(abs(a), 2 * PI / hn) - PI / hn
        t2 = tan(t1) ** 2 + 1
        if t2 >= hd * hd:
            total += hypergon
        else:
            total += hypergon * (hd - sqrt(hd * hd - t2)) / sqrt(t2)
    if star != 0:
        t1 = tan(abs(fmod(abs(a), 2 * PI / sn) - PI / sn))
        total += star * sqrt(tss ** 2 * (1 + t1 ** 2) / (t1 + tss) ** 2)
    if lituus != 0:
        total += lituus * pw(abs(a / PI + 1), -p["lituus_a"])
    if sup != 0:
        t4 = a * (p["super_m"] / 4)
        total += sup * pw(pw(abs(cos(t4)), p["super_n2"]) + pw(abs(sin(t4)), p["super_n3"]),
                          -1 / zeps(p["super_n1"]))
    rad = w * total ** 2 / math.sqrt(x * x + y * y)
    return rad * cos(a), rad * sin(a)


# ---- Fractorium's tilings, cells and crops.

def bwraps(x, y, w, r, p):
    cellsize, space, gain = p["cellsize"], p["space"], p["gain"]
    radius = 0.5 * (cellsize / (1 + space * space))
    g2 = gain * gain + 1e-6
    max_bubble = g2 * radius
    if max_bubble > 2:
        max_bubble = 1
    else:
        max_bubble *= 1 / (max_bubble * max_bubble / 4 + 1)
    r2 = zeps(radius * radius)
    rfactor = div(radius, max_bubble)
    if cellsize == 0:
        return w * x, w * y
    cx = (math.floor(x / cellsize) + 0.5) * cellsize
    cy = (math.floor(y / cellsize) + 0.5) * cellsize
    lx, ly = x - cx, y - cy
    if lx * lx + ly * ly > r2:
        return w * x, w * y
    lx *= g2
    ly *= g2
    k = rfactor / zeps((lx * lx + ly * ly) / 4 + 1)
    lx *= k
    ly *= k
    k = (lx * lx + ly * ly) / r2
    theta = p["inner_twist"] * (1 - k) + p["outer_twist"] * k
    s, c = sin(theta), cos(theta)
    return w * (cx + c * lx + s * ly), w * (cy - s * lx + c * ly)


def gnarly(x, y, w, r, p):
    cs, twist = p["cellsize"], p["twist"]
    r2 = zeps((0.5 * cs) ** 2)
    vx, vy = x, y
    if cs != 0:
        cx = (math.floor(vx / cs) + 0.5) * cs
        cy = (math.floor(vy / cs) + 0.5) * cs
        lx, ly = vx - cx, vy - cy
        if lx * lx + ly * ly <= r2:
            k = (lx * lx + ly * ly) / r2
            theta = twist * log(k)
            s, c = sin(theta), cos(theta)
            vx = cx + c * lx + s * ly
            vy = cy - s * lx + c * ly
    return w * vx, w * vy


SQRT3 = 1.7320508075688772935


def vratio(pp, q, u):
    dx, dy = pp[0] - q[0], pp[1] - q[1]
    if dx == 0 and dy == 0:
        return 1.0
    return 2 * ((u[0] - q[0]) * dx + (u[1] - q[1]) * dy) / zeps(dx * dx + dy * dy)


def voronoi(pts, u):
    return max([-1.7976931348623157e308] + [vratio(q, pts[0], u) for q in pts[1:]])


def hexes(x, y, w, r, p):
    s, power, scale = p["cellsize"], p["power"], p["scale"]
    rot = p["rotate"] * 2 * PI
    if s == 0:
        return 0.0, 0.0

    def centre(h, k):
        return ((1.5 * h - 1.5 * k) * s, (SQRT3 / 2 * h + SQRT3 / 2 * k) * s)

    xh = math.floor((x / 3 + SQRT3 / 3 * y) / s)
    yh = math.floor((-x / 3 + SQRT3 / 3 * y) / s)
    cands = [(xh + i, yh + j) for i in (0, 1) for j in (0, 1)]
    d2 = [(centre(*c)[0] - x) ** 2 + (centre(*c)[1] - y) ** 2 for c in cands]
    xh, yh = cands[d2.index(min(d2))]
    o = centre(xh, yh)
    # The hex and its six neighbours, in hex steps (0,1) (1,1) (1,0) (0,-1) (-1,-1) (-1,0).
    pts = [o] + [centre(xh + a, yh + b) for a, b in [(0, 1), (1, 1), (1, 0), (0, -1), (-1, -1), (-1, 0)]]
    l1 = voronoi(pts, (x, y))
    dx, dy = x - o[0], y - o[1]
    target = pw(abs(l1), power) * scale
    vx = dx * cos(rot) + dy * sin(rot)
    vy = -dx * sin(rot) + dy * cos(rot)
    l2 = voronoi(pts, (vx + o[0], vy + o[1]))
    ll = max(l1, l2)
    if ll < 0.5:
        k = target / l1
    elif ll > 0.8:
        k = target / l2
    else:
        k = ((target / l1) * (0.8 - ll) + (target / l2) * (ll - 0.5)) / 0.3
    return w * (vx * k + o[0]), w * (vy * k + o[1])


def wrap32(v):
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def discrete_noise(n):
    n = wrap32((n << 13) ^ n)
    v = wrap32(n * wrap32(n * n * 15731 + 789221) + 1376312589)
    return (v & 0x7FFFFFFF) * (1 / 2147483647)


def voron(x, y, w, r, p):
    k_, step = p["K"], as_nonzero(p["Step"])
    num = as_integer(p["Num"], 1, 25)
    xseed, yseed = as_integer(p["XSeed"]), as_integer(p["YSeed"])
    m = wrap32(math.floor(x / step))
    n = wrap32(math.floor(y / step))
    rmin, x0, y0 = 20.0, 0.0, 0.0
    for i in (-1, 0, 1):
        m1 = wrap32(m + i)
        for j in (-1, 0, 1):
            n1 = wrap32(n + j)
            cnt = 1 + math.floor(num * discrete_noise(c_int(wrap32(19 * m1 + 257 * n1) + xseed)))
            for l in range(cnt):
                px = (discrete_noise(c_int(l + wrap32(64 * m1) + wrap32(15 * n1) + xseed)) + m1) * step
                py = (discrete_noise(c_int(l + wrap32(21 * m1) + wrap32(33 * n1) + yseed)) + n1) * step
                d = math.sqrt((x - px) ** 2 + (y - py) ** 2)
                if d < rmin:
                    rmin, x0, y0 = d, px, py
    return w * (k_ * (x - x0) + x0), w * (k_ * (y - y0) + y0)


def shredlin(x, y, w, r, p):
    def strip(v, dist, width):
        dist = as_nonzero(dist)
        width = clamp(width, -1, 1)
        neg = 1 if v < 0 else 0
        q = v / dist
        whole = c_int(q)
        return w * dist * ((q - whole) * width + whole + (0.5 - neg) * (1 - width))

    return strip(x, p["xdistance"], p["xwidth"]), strip(y, p["ydistance"], p["ywidth"])


def tile_log(x, y, w, r, p):
    u = r()
    spread = p["spread"] if r.bit() else -p["spread"]
    t = log(u) * spread
    t = math.floor(t + 0.5) if t > 0 else math.ceil(t - 0.5)
    return w * (x + t), w * y


def tile_hlp(x, y, w, r, p):
    width = as_nonzero(p["width"])
    q = x / width
    pos = q > 0
    whole = c_int(q)
    frac = q - whole if pos else q + whole
    t = 0.0
    if cos(frac * PI) < -1 + r() * 2:
        t = -width * w if pos else width * w
    return w * x + t, w * y


def cropn(x, y, w, r, p):
    power, radius = p["power"], p["radius"]
    work = power if power > 0 else -power
    work = 2 if work < 2 else work
    alpha = 2 * PI / work
    xang = (math.atan2(y, x) + PI) / alpha
    xang = (xang - c_int(xang)) * alpha
    xang = cos(xang if xang < alpha / 2 else alpha - xang)
    xr = radius / xang if xang > 0 else 1
    rad = math.sqrt(x * x + y * y)
    u = r()  # drawn for every point in warpmc (Fractorium: only where used)
    if (rad > xr) == (power > 0):
        if p["zero"] == 1:
            return 0.0, 0.0
        rdc = xr + u * 0.5 * p["scatterdist"]
        return w * rdc * (x / zeps(rad)), w * rdc * (y / zeps(rad))
    return w * x, w * y


def bcircle(x, y, w, r, p):
    bw = abs(p["borderwidth"])
    xx, yy = x * p["scale"], y * p["scale"]
    u = r()  # drawn for every point in warpmc (Fractorium: only where used)
    if math.sqrt(xx * xx + yy * yy) <= 1:
        return w * xx, w * yy
    if bw == 0:
        return 0.0, 0.0
    ang = math.atan2(yy, xx)
    t = w * (0.2 * bw * u + 1)
    return t * cos(ang), t * sin(ang)


def circlecrop(x, y, w, r, p):
    """The result, and whether the point went to the origin (which, as an
    ordinary variation, also drops the sum of the variations before it)."""
    radius, cx, cy = p["radius"], p["x"], p["y"]
    ca = clamp(p["scatter_area"], -1, 1)
    zero = as_integer(p["zero"], 0, 1)
    xi, yi = x - cx, y - cy
    rad = math.sqrt(xi * xi + yi * yi)
    rdc = radius + r() * 0.5 * ca
    if rad > radius:
        if zero:
            return None
        ang = math.atan2(yi, xi)
        return w * rdc * cos(ang) + cx, w * rdc * sin(ang) + cy
    return w * xi + cx, w * yi + cy


def mirror_x(x, y, w, r, p):
    """Replaces the sum before it (marked by the caller)."""
    ax = abs(x)
    return (-ax if r.bit() else ax), y


def post_smartcrop(x, y, w, r, p):
    """Fractorium's post-only smartcrop (stateless settings: cropmode -1, 0
    or 1); p["trans"] is the xform's point before its variations."""
    power, radius = p["power"], p["radius"]
    roundstr, roundwidth, distortion = p["roundstr"], p["roundwidth"], p["distortion"]
    edge_p, scatter, offset = p["edge"], p["scatter"], p["offset"]
    cropmode = clamp(p["cropmode"], -1, 2)
    static = clamp(p["static"], -1, 3)
    tx, ty = p["trans"]
    mode = 1 if (power > 0) == (radius > 0) else 0
    work_radius = abs(radius)
    work_power = abs(zeps(power))
    radial = work_power < 2
    if radial:
        work_power *= PI
    else:
        alpha = 2 * PI / work_power
        round_coeff = roundstr / zeps(sin(alpha / 2)) / work_power * 2
        work_rotation = p["rotation"] * alpha
    xi, yi = (x, y) if static > 1 else (tx, ty)
    ang = math.atan2(yi, xi)
    rad = math.sqrt(xi * xi + yi * yi)
    direct = static > 1 or static == -1

    def out(rr, a):
        ox, oy = w * rr * cos(a), w * rr * sin(a)
        return (ox, oy) if direct else (x + ox, y + oy)

    # warpmc draws every uniform whether the point is cropped or not (in
    # Fractorium's order), where Fractorium draws only those it uses.
    if radial:
        edge = edge_p * (r() - 0.5)
        u_side, u_scatter = r(), r()
        xang = ang / (2 * PI) + 1 + edge
        xang = (xang - c_int(xang)) * (2 * PI)
        if int(xang > work_power) == mode:
            if c_int(u_side * 2):
                a = work_power + (u_scatter * scatter + offset + edge) * PI
            else:
                a = -(u_scatter * scatter + offset + edge) * PI
            return out(rad, a)
    else:
        if distortion == 0:
            coeff = 1
        else:
            xang = (ang + PI) / alpha
            xang = xang - c_int(xang)
            xang = xang if xang < 0.5 else 1 - xang
            coeff = 1 / cos(xang * alpha)
            if roundstr != 0:
                wwidth = (pw(xang * 2, roundwidth) if roundwidth != 1 else xang * 2) * round_coeff
                coeff = abs((1 - wwidth) * coeff + wwidth)
            if distortion != 1:
                coeff = exp(log(coeff) * distortion)
        xr = coeff * (work_radius + edge_p * (r() - 0.5) if edge_p != 0 else work_radius)
        u_scatter = r()
        if int(rad > xr) == mode:
            if cropmode:
                rdc = rad if cropmode == -1 else xr + coeff * (u_scatter * scatter + offset)
                return out(rdc, ang + work_rotation)
            return 0.0, 0.0
    kx, ky = (w * tx, w * ty) if static == 3 else (w * xi, w * yi)
    return (kx, ky) if static > 0 else (x + kx, y + ky)


# name: (function, parameter names without the prefix, whether a pre_/post_
# form adds its result to the point, whether as an ordinary variation it
# replaces the sum before it)
VARIATIONS = {
    "linear": (linear, [], False, False),
    "disc": (disc, [], False, False),
    "bubble": (bubble, [], False, False),
    "spherical": (spherical, [], False, False),
    "gaussian_blur": (gaussian_blur, [], True, False),
    "bipolar": (bipolar, ["shift"], False, False),
    "flatten": (flatten, [], False, False),
    "log": (log_var, ["base"], False, False),
    "linear3D": (linear, [], False, False),
    "crop": (crop, ["left", "top", "right", "bottom", "scatter_area", "zero"], False, False),
    "crackle": (crackle, ["cellsize", "power", "distort", "scale", "z"], False, False),
    "gaussian": (gaussian, [], False, False),
    "sineblur": (sineblur, ["power"], True, False),
    "blur_linear": (blur_linear, ["length", "angle"], False, False),
    "blur_zoom": (blur_zoom, ["length", "x", "y"], False, False),
    "blur_circle": (blur_circle, [], True, False),
    "circleblur": (circleblur, [], True, False),
    "rblur": (rblur, ["strength", "offset", "center_x", "center_y"], False, False),
    "Mobius": (mobius_f, ["Re_A", "Im_A", "Re_B", "Im_B", "Re_C", "Im_C", "Re_D", "Im_D"], False, False),
    "hemisphere": (hemisphere, [], False, False),
    "unpolar": (unpolar, [], False, False),
    "epispiral": (epispiral, ["n", "thickness", "holes"], False, False),
    "twoface": (twoface, [], False, False),
    "glynnia": (glynnia, [], False, False),
    "wdisc": (wdisc, [], False, False),
    "hypertile": (hypertile, ["p", "q", "n"], False, False),
    "hypertile1": (hypertile1, ["p", "q"], False, False),
    "hypertile2": (hypertile2, ["p", "q"], False, False),
    "bTransform": (btransform, ["rotate", "power", "move", "split"], False, False),
    "eJulia": (ejulia, ["power"], False, False),
    "pow_block": (pow_block, ["numerator", "denominator", "root", "correctn", "correctd"], False, False),
    "barycentroid": (barycentroid, ["a", "b", "c", "d"], False, False),
    "smartshape": (smartshape, ["power", "roundstr", "roundwidth", "distortion", "compensation"], False, False),
    "y": (y_shape, ["hypergon", "hypergon_n", "hypergon_r", "star", "star_n", "star_slope", "lituus",
                    "lituus_a", "super", "super_m", "super_n1", "super_n2", "super_n3"], False, False),
    "bwraps": (bwraps, ["cellsize", "space", "gain", "inner_twist", "outer_twist"], False, False),
    "gnarly": (gnarly, ["cellsize", "twist"], False, False),
    "hexes": (hexes, ["cellsize", "power", "rotate", "scale"], False, False),
    "Voron": (voron, ["K", "Step", "Num", "XSeed", "YSeed"], False, False),
    "shredlin": (shredlin, ["xdistance", "xwidth", "ydistance", "ywidth"], False, False),
    "tile_log": (tile_log, ["spread"], False, False),
    "tile_hlp": (tile_hlp, ["width"], False, False),
    "cropn": (cropn, ["power", "radius", "scatterdist", "zero"], False, False),
    "bcircle": (bcircle, ["scale", "borderwidth"], False, False),
    "circlecrop": (circlecrop, ["radius", "x", "y", "scatter_area", "zero"], False, True),
    "mirror_x": (mirror_x, [], False, True),
    "post_smartcrop": (post_smartcrop, ["power", "radius", "roundstr", "roundwidth", "distortion", "edge", "scatter",
                                        "offset", "rotation", "cropmode", "static"], False, False),
}

# Fractorium's defaults of the parameters the cases leave out.
DEFAULTS = {
    "bipolar": {"shift": 0},
    "log": {"base": math.e},
    "crop": {"left": -1, "top": -1, "right": 1, "bottom": 1, "scatter_area": 0, "zero": 0},
    "crackle": {"cellsize": 1, "power": 0.2, "distort": 0, "scale": 1, "z": 0},
    "sineblur": {"power": 1},
    "blur_linear": {"length": 0, "angle": 0},
    "blur_zoom": {"length": 0, "x": 0, "y": 0},
    "rblur": {"strength": 1, "offset": 1, "center_x": 0, "center_y": 0},
    "Mobius": {"Re_A": 1, "Im_A": 0, "Re_B": 0, "Im_B": 0, "Re_C": 0, "Im_C": 0, "Re_D": 1, "Im_D": 0},
    "epispiral": {"n": 6, "thickness": 0, "holes": 1},
    "hypertile": {"p": 3, "q": 7, "n": 0},
    "hypertile1": {"p": 3, "q": 7},
    "hypertile2": {"p": 3, "q": 7},
    "bTransform": {"rotate": 0, "power": 1, "move": 0, "split": 0},
    "eJulia": {"power": 2},
    "pow_block": {"numerator": 3, "denominator": 2, "root": 1, "correctn": 1, "correctd": 1},
    "barycentroid": {"a": 1, "b": 0, "c": 0, "d": 1},
    "smartshape": {"power": 4, "roundstr": 0, "roundwidth": 1, "distortion": 1, "compensation": 0},
    "y": {"hypergon": 0, "hypergon_n": 4, "hypergon_r": 1, "star": 0, "star_n": 5, "star_slope": 2,
          "lituus": 0, "lituus_a": 1, "super": 0, "super_m": 1, "super_n1": 1, "super_n2": 1, "super_n3": 1},
    "bwraps": {"cellsize": 1, "space": 0, "gain": 1, "inner_twist": 0, "outer_twist": 0},
    "gnarly": {"cellsize": 1, "twist": 1},
    "hexes": {"cellsize": 1, "power": 1, "rotate": 0.166, "scale": 1},
    "Voron": {"K": 0.99, "Step": 0.25, "Num": 1, "XSeed": 3, "YSeed": 7},
    "shredlin": {"xdistance": 1, "xwidth": 0.5, "ydistance": 1, "ywidth": 0.5},
    "tile_log": {"spread": 1},
    "tile_hlp": {"width": 1},
    "cropn": {"power": 5, "radius": 1, "scatterdist": 0, "zero": 0},
    "bcircle": {"scale": 1, "borderwidth": 0},
    "circlecrop": {"radius": 1, "x": 0, "y": 0, "scatter_area": 0, "zero": 1},
    "post_smartcrop": {"power": 4, "radius": 1, "roundstr": 0, "roundwidth": 1, "distortion": 1, "edge": 0,
                       "scatter": 0, "offset": 0, "rotation": 0, "cropmode": 1, "static": 1},
}


def split_form(name):
    """The stage and the variation of a name (a post-only variation is its
    own post_ form)."""
    if name == "post_smartcrop":
        return "post", name
    for stage in ("pre_", "post_"):
        if name.startswith(stage) and name[len(stage):] in VARIATIONS:
            return stage[:-1], name[len(stage):]
    return "regular", name


def evaluate(specs, x, y):
    """specs: (name, weight, {parameter as the file names it: value}); the
    ordinary variations in the order given, the pre_/post_ forms in the
    order given."""
    r = Draws()
    staged = {"pre": [], "regular": [], "post": []}
    for name, w, params in specs:
        stage, base = split_form(name)
        f, pnames, summed, replaces = VARIATIONS[base]
        prefix = name + "_"
        p = dict(DEFAULTS.get(base, {}))
        for k, v in params.items():
            assert k.startswith(prefix) and k[len(prefix):] in pnames, (name, k)
            p[k[len(prefix):]] = v
        staged[stage].append((f, w, p, summed, replaces))

    def form(f, w, p, summed, px, py):
        out = f(px, py, w, r, p)
        if out is None:
            out = (0.0, 0.0)
        return (px + out[0], py + out[1]) if summed else out

    for f, w, p, summed, _ in staged["pre"]:
        x, y = form(f, w, p, summed, x, y)
    if staged["regular"]:
        sx = sy = 0.0
        for f, w, p, _, replaces in staged["regular"]:
            out = f(x, y, w, r, p)
            if replaces and f is mirror_x:
                sx, sy = out
            elif out is None:
                sx = sy = 0.0
            else:
                sx, sy = sx + out[0], sy + out[1]
    else:
        sx, sy = x, y
    for f, w, p, summed, _ in staged["post"]:
        p["trans"] = (x, y)
        sx, sy = form(f, w, p, summed, sx, sy)
    return sx, sy


def v(name, w, **params):
    """A variation of a case; parameters by their names without the form's
    name (`radius` for `pre_circlecrop_radius`)."""
    return (name, w, {f"{name}_{k}": val for k, val in params.items()})


def crop6(name, w, vals):
    keys = ["left", "top", "right", "bottom", "scatter_area", "zero"]
    return v(name, w, **dict(zip(keys, vals)))


def crackle5(name, w, vals):
    keys = ["cellsize", "power", "distort", "scale", "z"]
    return v(name, w, **dict(zip(keys, vals)))


CASES = [
    ("crop inside", [crop6("crop", 0.75, [-1, -2, 1, 2, 0, 0])], (0.5, -1.5)),
    ("crop outside to the edge", [crop6("crop", 1.0, [1, 2, -1, -2, 0, 0])], (3.0, -5.0)),
    ("crop outside scattered", [crop6("crop", 2.0, [-1, -2, 1, 2, 0.5, 0])], (-3.0, 2.5)),
    ("crop outside to zero", [v("linear", 0.5), crop6("crop", 2.0, [-1, -2, 1, 2, 0.5, 1])], (-3.0, 0.5)),
    ("flatten adds nothing", [v("linear", 0.5), v("flatten", 3.0)], (0.3, -0.7)),
    ("linear3D", [v("linear3D", 1.25)], (0.3, -0.7)),
    ("pre_disc then linear", [v("pre_disc", 0.8), v("linear", 1.5)], (0.3, -0.7)),
    ("pre_gaussian_blur then bubble", [v("pre_gaussian_blur", 2.0), v("bubble", 1.0)], (0.3, -0.7)),
    ("pre_crop alone passes", [crop6("pre_crop", 1.0, [-2, -2, 2, 2, 0, 0])], (0.3, -2.7)),
    ("bipolar then post_crop", [v("bipolar", 6.0, shift=-0.137), crop6("post_crop", 1.0, [-1000, -1, 1000, 1, 0, 0])],
     (0.4, 0.1)),
    ("pre_crop, spherical, post_disc",
     [crop6("pre_crop", 1.0, [-0.5, -0.5, 0.5, 0.5, 1, 0]), v("spherical", 0.5), v("post_disc", 1.0)], (0.9, -0.2)),
    ("crackle on a regular grid", [crackle5("crackle", 1.0, [0.4, -0.4, 0.0, 0.6, 0.6])], (5.0, 5.0)),
    ("crackle distorted", [crackle5("crackle", 1.0, [0.4, -0.4, 0.2, 0.6, 0.6])], (5.0, 5.0)),
    ("crackle, other cells", [crackle5("crackle", 0.7, [0.15, 0.3, 0.9, 1.5, -2.0])], (5.0, 5.0)),
    ("crackle, a cell size below the least", [crackle5("crackle", 0.7, [-0.5, 0.3, 0.0, 1.5, 0.0])], (5.0, 5.0)),
    ("pre_crackle replaces the point", [crackle5("pre_crackle", 0.5, [1.0, 0.2, 0.5, 1.0, 0.0]), v("linear", 1.0)], (0.25, -0.5)),
    # flam3's log with Fractorium's base.
    ("log, base e", [v("log", 0.8)], (0.3, -0.7)),
    ("log, base 2.71828", [v("log", 0.8, base=2.71828)], (0.3, -0.7)),
    ("log, base 1.89828", [v("log", 0.8, base=1.89828)], (0.3, -0.7)),
    ("log, base 0 read as EPS", [v("log", 0.8, base=0)], (0.3, -0.7)),
    ("pre_log and post_log with bases", [v("pre_log", 1.0, base=1.98228), v("linear", 1.0), v("post_log", 0.5, base=3.1183)],
     (0.3, -0.7)),
    # Fractorium's blurs.
    ("gaussian keeps the point", [v("gaussian", 0.8)], (0.3, -0.7)),
    ("gaussian at the origin", [v("gaussian", -1.5)], (0.0, 0.0)),
    ("sineblur, power 1", [v("sineblur", 1.3)], (5.0, -2.0)),
    ("sineblur, power 0.4", [v("sineblur", 0.9, power=0.4)], (5.0, -2.0)),
    ("sineblur, negative power read as 0", [v("sineblur", 0.9, power=-3)], (5.0, -2.0)),
    ("pre_sineblur sums", [v("pre_sineblur", 0.5, power=2), v("linear", 1.0)], (0.25, -0.5)),
    ("blur_linear", [v("blur_linear", 1.1, length=0.7, angle=0.9)], (0.3, -0.7)),
    ("blur_linear, angle wrapped", [v("blur_linear", 1.1, length=0.7, angle=-8.5)], (0.3, -0.7)),
    ("blur_zoom", [v("blur_zoom", 0.9, length=0.4, x=0.2, y=-0.3)], (0.3, -0.7)),
    ("blur_circle", [v("blur_circle", 1.7)], (3.0, 3.0)),
    ("post_blur_circle sums", [v("linear", 1.0), v("post_blur_circle", 0.5)], (0.3, -0.7)),
    ("circleblur", [v("circleblur", -0.8)], (3.0, 3.0)),
    ("rblur inside the offset", [v("rblur", 1.2)], (0.3, -0.7)),
    ("rblur outside", [v("rblur", 1.2, strength=0.7, offset=0.2, center_x=-0.5, center_y=0.25)], (1.3, -0.7)),
    # Fractorium's maps.
    ("Mobius identity", [v("Mobius", 0.9)], (0.3, -0.7)),
    ("Mobius", [v("Mobius", 1.1, Re_A=0.5, Im_A=-0.3, Re_B=0.2, Im_B=0.7, Re_C=-0.4, Im_C=0.6, Re_D=1.2, Im_D=-0.1)],
     (0.3, -0.7)),
    ("Mobius, zero denominator", [v("Mobius", 1.0, Re_A=1, Re_C=0, Re_D=0, Im_D=0)], (0.3, -0.7)),
    ("post_Mobius", [v("linear", 1.0), v("post_Mobius", 0.7, Re_B=0.5, Re_C=1.0, Im_D=0.3)], (0.3, -0.7)),
    ("hemisphere", [v("hemisphere", 1.4)], (0.3, -0.7)),
    ("hemisphere at the origin", [v("hemisphere", 1.4)], (0.0, 0.0)),
    ("unpolar", [v("unpolar", 0.6)], (0.3, -0.7)),
    ("epispiral", [v("epispiral", 0.8)], (0.3, -0.7)),
    ("epispiral, thick", [v("epispiral", 0.8, n=3, thickness=0.5, holes=-0.2)], (0.3, -0.7)),
    ("epispiral, no radius", [v("epispiral", 0.5, n=0, holes=1)], (0.3, -0.7)),
    ("twoface, right", [v("twoface", 1.3)], (0.3, -0.7)),
    ("twoface, left", [v("twoface", 1.3)], (-0.3, -0.7)),
    ("twoface at the origin", [v("twoface", 1.3)], (0.0, 0.0)),
    ("glynnia outside", [v("glynnia", 1.1)], (1.3, -0.7)),
    # blur_linear (of length 0) draws the first uniform, so glynnia reads 0.625.
    ("glynnia outside, other branch", [v("blur_linear", 0.1), v("glynnia", 1.1)], (1.3, -0.7)),
    ("glynnia inside", [v("glynnia", 1.1)], (0.3, -0.2)),
    ("glynnia inside, other branch", [v("blur_linear", 0.1), v("glynnia", 1.1)], (0.3, -0.2)),
    ("glynnia at the origin", [v("glynnia", 1.1)], (0.0, 0.0)),
    ("wdisc", [v("wdisc", 0.9)], (0.3, 0.7)),
    ("wdisc below", [v("wdisc", 0.9)], (0.3, -0.7)),
    ("hypertile", [v("hypertile", 1.0)], (0.3, -0.7)),
    ("hypertile {4, 6} n = 2", [v("hypertile", 0.8, p=4, q=6, n=2)], (0.3, -0.7)),
    ("hypertile1", [v("hypertile1", 1.0)], (0.3, -0.7)),
    ("hypertile1 {5, 4}, twice", [v("hypertile1", 0.6, p=5, q=4), v("post_hypertile1", 0.5)], (0.3, -0.7)),
    ("hypertile1, p not whole", [v("hypertile1", 0.6, p=3.5, q=7)], (0.3, -0.7)),
    ("hypertile2", [v("hypertile2", 1.2, p=6, q=4)], (0.3, -0.7)),
    ("bTransform", [v("bTransform", 0.9, rotate=0.3, power=3, move=0.2, split=0.1)], (0.3, -0.7)),
    ("bTransform, left, power read as 1", [v("bTransform", 0.9, rotate=0.3, power=0, move=0.2, split=0.1)],
     (-0.3, -0.7)),
    ("eJulia", [v("eJulia", 1.0)], (0.3, -0.7)),
    ("eJulia, power -3", [v("eJulia", 0.7, power=-3)], (0.3, -0.7)),
    ("eJulia, power 0.2 read as 1", [v("eJulia", 0.7, power=0.2)], (1.3, 0.7)),
    ("pow_block", [v("pow_block", 1.0)], (0.3, -0.7)),
    ("pow_block with corrections", [v("pow_block", 0.8, numerator=2, denominator=5, root=2, correctn=1.5, correctd=0.5)],
     (0.3, -0.7)),
    ("barycentroid", [v("barycentroid", 1.2, a=0.8, b=0.3, c=-0.2, d=1.1)], (0.3, -0.7)),
    ("barycentroid, singular frame", [v("barycentroid", 1.2, a=1, b=1, c=1, d=1)], (0.3, -0.7)),
    ("smartshape", [v("smartshape", 1.0)], (0.3, -0.7)),
    ("smartshape rounded", [v("smartshape", 0.9, power=5, roundstr=0.4, roundwidth=1.7, distortion=0.8,
                              compensation=0)], (0.3, -0.7)),
    ("smartshape compensated", [v("smartshape", 0.9, power=3, roundstr=0.4, roundwidth=1, distortion=1.3,
                                  compensation=1)], (-0.6, 0.2)),
    ("y, every shape", [v("y", 0.7, hypergon=0.5, hypergon_n=5, hypergon_r=0.8, star=0.3, star_n=6, star_slope=1.2,
                           lituus=0.4, lituus_a=1.5, super=0.6, super_m=3, super_n1=2, super_n2=1.5, super_n3=0.7)],
     (0.3, -0.7)),
    ("y, hypergon's flat part, star at a right angle",
     [v("y", 1.0, hypergon=1.0, hypergon_n=3, hypergon_r=0.2, star=0.5, star_n=2.6, star_slope=2.0)], (0.3, 0.1)),
    # Fractorium's tilings, cells and crops.
    ("bwraps in a bubble", [v("bwraps", 1.0, cellsize=1, space=0.2, gain=1.5, inner_twist=0.7, outer_twist=-0.4)],
     (0.3, -0.7)),
    ("bwraps between bubbles", [v("bwraps", 1.0, cellsize=1, space=0.2, gain=1.5, inner_twist=0.7, outer_twist=-0.4)],
     (0.95, -0.05)),
    ("bwraps, no cells", [v("bwraps", 0.8, cellsize=0)], (0.3, -0.7)),
    ("gnarly", [v("gnarly", 1.1, cellsize=0.8, twist=0.6)], (0.3, -0.7)),
    ("gnarly at a cell's centre", [v("gnarly", 1.1, cellsize=1.0, twist=0.6)], (0.5, -0.5)),
    ("hexes", [v("hexes", 1.0)], (0.3, -0.7)),
    ("hexes, rotated and powered", [v("hexes", 0.9, cellsize=0.7, power=0.6, rotate=0.31, scale=1.3)], (1.7, 0.45)),
    ("hexes, no cells", [v("hexes", 0.9, cellsize=0)], (1.7, 0.45)),
    ("Voron", [v("Voron", 1.0)], (0.3, -0.7)),
    ("Voron, more points", [v("Voron", 0.9, K=0.5, Step=0.6, Num=7, XSeed=11, YSeed=-4)], (1.3, 2.7)),
    ("shredlin", [v("shredlin", 1.0)], (0.3, -0.7)),
    ("shredlin, strips", [v("shredlin", 0.8, xdistance=0.3, xwidth=0.2, ydistance=-0.7, ywidth=1.5)], (1.3, -2.9)),
    ("tile_log", [v("tile_log", 1.0, spread=3)], (0.3, -0.7)),
    ("tile_log, twice", [v("tile_log", 0.8, spread=2), v("post_tile_log", 1.0)], (0.3, -0.7)),
    ("tile_hlp", [v("tile_hlp", 1.0)], (0.3, -0.7)),
    ("tile_hlp, left, moved", [v("tile_hlp", 0.9, width=0.4), v("post_tile_hlp", 1.0, width=0.4)], (-1.1, -0.7)),
    ("cropn, outside", [v("cropn", 1.0)], (1.3, -0.7)),
    ("cropn, inside", [v("cropn", 1.0)], (0.3, -0.2)),
    ("cropn, inverted, scattered", [v("cropn", 0.9, power=-6, radius=0.8, scatterdist=0.5)], (0.3, -0.2)),
    ("cropn, to zero", [v("cropn", 0.9, power=3, radius=0.5, zero=1)], (1.3, -0.7)),
    ("bcircle inside", [v("bcircle", 1.0, scale=1.5)], (0.3, -0.2)),
    ("bcircle outside, border", [v("bcircle", 1.0, scale=1.5, borderwidth=-0.6)], (1.3, -0.7)),
    ("bcircle outside, no border", [v("bcircle", 1.0, scale=1.5)], (1.3, -0.7)),
    ("circlecrop inside", [v("circlecrop", 0.9, radius=1.5, x=0.2, y=-0.1)], (0.3, -0.7)),
    ("circlecrop outside, scattered", [v("circlecrop", 0.9, radius=0.5, x=0.2, y=-0.1, scatter_area=0.7, zero=0)],
     (1.3, -0.7)),
    ("circlecrop outside drops the sum before it", [v("linear", 0.5), v("circlecrop", 0.9, radius=0.5)], (1.3, -0.7)),
    ("pre_circlecrop to the origin, then linear", [v("pre_circlecrop", 0.9, radius=0.5), v("linear", 0.5)],
     (1.3, -0.7)),
    ("mirror_x replaces the sum before it", [v("linear", 0.5), v("mirror_x", 3.0)], (0.3, -0.7)),
    # Integer parameters are rounded, real ones clamped to their ranges.
    ("crop zero 0.4 rounds to 0", [v("crop", 0.9, left=-0.5, right=0.5, zero=0.4)], (1.3, -0.7)),
    ("crop zero 0.6 rounds to 1", [v("crop", 0.9, left=-0.5, right=0.5, zero=0.6)], (1.3, -0.7)),
    ("crop scatter_area clamped to 1", [v("crop", 0.9, left=-0.5, right=0.5, scatter_area=7.0)], (1.3, -0.7)),
    ("circlecrop zero 0.6 rounds to 1", [v("circlecrop", 0.9, radius=0.5, zero=0.6)], (1.3, -0.7)),
    ("circlecrop zero 0.4 rounds to 0", [v("circlecrop", 0.9, radius=0.5, zero=0.4)], (1.3, -0.7)),
    # Fractorium applies an xform's ordinary variations in the file's
    # order, so what follows circlecrop or mirror_x is kept.
    ("circlecrop outside keeps the variations after it", [v("circlecrop", 0.9, radius=0.5), v("linear", 0.5)],
     (1.3, -0.7)),
    ("mirror_x, then linear added", [v("mirror_x", 1.0), v("linear", 0.5), v("spherical", 0.25)], (0.3, -0.7)),
    ("pre_mirror_x twice", [v("pre_mirror_x", 0.05), v("pre_mirror_x", 0.05), v("linear", 1.0)], (0.3, -0.7)),
    ("post_smartcrop keeps a point inside the square",
     [v("linear", 0.5), v("post_smartcrop", 1.0)], (0.3, -0.7)),
    ("post_smartcrop crops the point before the variations",
     [v("linear", 0.5), v("post_smartcrop", 0.9, radius=0.6, scatter=0.3, offset=0.1, rotation=0.2)], (0.3, -0.7)),
    ("post_smartcrop static 2, rounded hexagon, distorted",
     [v("linear", 1.5), v("post_smartcrop", 1.0, power=6, radius=0.7, roundstr=0.3, roundwidth=1.6, distortion=0.7,
                           edge=0.2, scatter=0.4, static=2)], (0.3, -0.7)),
    ("post_smartcrop static 2, inside cropped to the origin",
     [v("linear", 1.0), v("post_smartcrop", 1.0, power=3, radius=-2.0, cropmode=0, static=2)], (0.3, -0.7)),
    ("post_smartcrop keeps the distance (cropmode -1), added to the point (static 0)",
     [v("linear", 1.0), v("post_smartcrop", 0.8, power=5, radius=0.4, cropmode=-1, static=0, rotation=0.5)],
     (0.3, -0.7)),
    ("post_smartcrop, a sector", [v("linear", 1.0), v("post_smartcrop", 1.0, power=1.2, radius=1, edge=0.1,
                                                     scatter=0.5, offset=0.05, static=2)], (-0.3, -0.7)),
    ("post_smartcrop, a sector, other side", [v("linear", 1.0), v("post_smartcrop", 1.0, power=0.5, radius=1,
                                                                 scatter=0.5, offset=0.05, static=2)], (-0.3, -0.7)),
    ("post_smartcrop kept, static 3", [v("linear", 2.0), v("post_smartcrop", 0.7, radius=3, static=3)], (0.3, -0.7)),
    ("post_smartcrop kept, static -1", [v("linear", 2.0), v("post_smartcrop", 0.7, radius=3, static=-1)],
     (0.3, -0.7)),
]


def fmt(x):
    return repr(float(x))


if __name__ == "__main__":
    print("# Generated by reference.py: the cases of tests/plugin_variations.rs and the values")
    print("# computed from Fractorium's formulas. Per case: its name, its variations (name,")
    print("# weight, parameters), the point and the expected result.")
    for name, specs, (x, y) in CASES:
        ox, oy = evaluate(specs, x, y)
        print(f"case {name}")
        for vname, w, params in specs:
            print(" ".join(["var", vname, fmt(w)] + [f"{k}={fmt(val)}" for k, val in params.items()]))
        print(f"point {fmt(x)} {fmt(y)}")
        print(f"expect {fmt(ox)} {fmt(oy)}")
