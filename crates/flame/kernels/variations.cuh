// variations.cuh: flam3 3.1.1's variations as device functions.
//
// Included once per kernel source, after flame_common.cuh.
// The code generator (src/render/cuda/varcode.rs) emits, per xform, one
// function that computes the shared per-point values its variations need
// and calls the functions below in flam3's index order.
//
// Every variation has the same signature:
//   flame_var_NAME(const FlamePoint &p, const real *q, real &sx, real &sy, FlameRng &rng)
// q[0] is the weight, q[1..] the per-xform constants in the order of the
// fields of the CPU's prepared struct (src/variations/*.rs), computed on
// the host. The contribution, weight included, is added to (sx, sy).
//
// The arithmetic follows the CPU code (src/variations/) operation by
// operation, same association, so the double build agrees with it to a
// few ulps of the libm differences. The exceptions multiply by a
// reciprocal where the CPU divides, which moves the result by an ulp or
// two and never across a branch: julian, juliascope and wedge_julia by
// 1/power (a host constant), disc2 and polar2 by 1/π, elliptic by 2/π,
// edisc by 1/11.57034632. Random numbers are drawn in separate
// statements, in the CPU's order (C leaves the order of operands of one
// expression unspecified).

#define FR(v) ((real)(v))
#define FLAME_PI FR(3.141592653589793)
#define FLAME_2PI FR(6.283185307179586)
#define FLAME_1_PI FR(0.3183098861837907)
#define FLAME_PI_2 FR(1.5707963267948966)
#define FLAME_PI_4 FR(0.7853981633974483)
#define FLAME_2_PI FR(0.6366197723675814)

// The shared per-point values (the CPU's Point); fields a set does not
// need are left unset and never read.
struct FlamePoint {
    real x, y;    // the point after the pre-affine map (and pre_blur)
    real sumsq;   // x² + y²
    real sqrt;    // √(x² + y²)
    real atan;    // atan2(x, y)
    real sina;    // x / r
    real cosa;    // y / r
    real atanyx;  // atan2(y, x)
    real tx, ty;  // a post_ form's xform point before its variations (post_smartcrop)
};

// C's (int) conversion as x86-64 does it: truncation, INT_MIN for NaN and
// out of range (CUDA's cvt saturates instead).
__device__ __forceinline__ int flame_c_int(real v) {
    return (v > FR(-2147483649.0) && v < FR(2147483648.0)) ? (int)v : (int)0x80000000;
}

// flam3's pseudo-gaussian: four uniforms summed left to right, centred.
__device__ __forceinline__ real flame_gauss4(FlameRng &rng) {
    real g = rng.uniform();
    g = g + rng.uniform();
    g = g + rng.uniform();
    g = g + rng.uniform();
    return g - FR(2);
}

// 67: pre_blur moves the point itself before the shared values.
__device__ __forceinline__ void flame_pre_blur(real &x, real &y, real w, FlameRng &rng) {
    real g = w * flame_gauss4(rng);
    real a = rng.uniform() * FR(2) * FLAME_PI;
    real s, c;
    sincos(a, &s, &c);
    x = x + g * c;
    y = y + g * s;
}

#define FLAME_VAR(name)                                                                                   \
    __device__ __forceinline__ void flame_var_##name(const FlamePoint &p, const real *__restrict__ q, real &sx, \
                                                     real &sy, FlameRng &rng)

// 0
FLAME_VAR(linear) {
    real w = q[0];
    sx += w * p.x;
    sy += w * p.y;
}

// 1
FLAME_VAR(sinusoidal) {
    real w = q[0];
    sx += w * sin(p.x);
    sy += w * sin(p.y);
}

// 2
FLAME_VAR(spherical) {
    real k = q[0] / (p.sumsq + FLAME_EPS);
    sx += k * p.x;
    sy += k * p.y;
}

// 3
FLAME_VAR(swirl) {
    real w = q[0], s, c;
    sincos(p.sumsq, &s, &c);
    real nx = s * p.x - c * p.y;
    real ny = c * p.x + s * p.y;
    sx += w * nx;
    sy += w * ny;
}

// 4
FLAME_VAR(horseshoe) {
    real k = q[0] / (p.sqrt + FLAME_EPS);
    sx += (p.x - p.y) * (p.x + p.y) * k;
    sy += FR(2) * p.x * p.y * k;
}

// 5
FLAME_VAR(polar) {
    real w = q[0];
    real nx = p.atan * FLAME_1_PI;
    real ny = p.sqrt - FR(1);
    sx += w * nx;
    sy += w * ny;
}

// 6
FLAME_VAR(handkerchief) {
    real w = q[0], a = p.atan, r = p.sqrt;
    sx += w * r * sin(a + r);
    sy += w * r * cos(a - r);
}

// 7
FLAME_VAR(heart) {
    real a = p.sqrt * p.atan, s, c;
    sincos(a, &s, &c);
    real r = q[0] * p.sqrt;
    sx += r * s;
    sy += -r * c;
}

// 8
FLAME_VAR(disc) {
    real w = q[0], a = p.atan * FLAME_1_PI, s, c;
    sincos(FLAME_PI * p.sqrt, &s, &c);
    sx += w * s * a;
    sy += w * c * a;
}

// 9
FLAME_VAR(spiral) {
    real r = p.sqrt + FLAME_EPS;
    real k = q[0] / r, s, c;
    sincos(r, &s, &c);
    sx += k * (p.cosa + s);
    sy += k * (p.sina - c);
}

// 10
FLAME_VAR(hyperbolic) {
    real w = q[0], r = p.sqrt + FLAME_EPS;
    sx += w * p.sina / r;
    sy += w * p.cosa * r;
}

// 11
FLAME_VAR(diamond) {
    real w = q[0], s, c;
    sincos(p.sqrt, &s, &c);
    sx += w * p.sina * c;
    sy += w * p.cosa * s;
}

// 12
FLAME_VAR(ex) {
    real w = q[0], a = p.atan, r = p.sqrt;
    real n0 = sin(a + r);
    real n1 = cos(a - r);
    real m0 = n0 * n0 * n0 * r;
    real m1 = n1 * n1 * n1 * r;
    sx += w * (m0 + m1);
    sy += w * (m0 - m1);
}

// 13: one random bit picks the root.
FLAME_VAR(julia) {
    real a = FR(0.5) * p.atan;
    if (rng.bit()) a += FLAME_PI;
    real r = q[0] * sqrt(p.sqrt), s, c;
    sincos(a, &s, &c);
    sx += r * c;
    sy += r * s;
}

// 14
FLAME_VAR(bent) {
    real w = q[0];
    real nx = p.x < FR(0) ? p.x * FR(2) : p.x;
    real ny = p.y < FR(0) ? p.y / FR(2) : p.y;
    sx += w * nx;
    sy += w * ny;
}

// 15: q = w, b, e, fx, fy
FLAME_VAR(waves) {
    real w = q[0];
    real nx = p.x + q[1] * sin(p.y * q[3]);
    real ny = p.y + q[2] * sin(p.x * q[4]);
    sx += w * nx;
    sy += w * ny;
}

// 16
FLAME_VAR(fisheye) {
    real k = FR(2) * q[0] / (p.sqrt + FR(1));
    sx += k * p.y;
    sy += k * p.x;
}

// 17: q = w, c, f
FLAME_VAR(popcorn) {
    real w = q[0];
    real dx = tan(FR(3) * p.y);
    real dy = tan(FR(3) * p.x);
    real nx = p.x + q[1] * sin(dx);
    real ny = p.y + q[2] * sin(dy);
    sx += w * nx;
    sy += w * ny;
}

// 18
FLAME_VAR(exponential) {
    real k = q[0] * exp(p.x - FR(1)), s, c;
    sincos(FLAME_PI * p.y, &s, &c);
    sx += k * c;
    sy += k * s;
}

// 19
FLAME_VAR(power) {
    real r = q[0] * pow(p.sqrt, p.sina);
    sx += r * p.cosa;
    sy += r * p.sina;
}

// 20
FLAME_VAR(cosine) {
    real w = q[0], s, c;
    sincos(p.x * FLAME_PI, &s, &c);
    real nx = c * cosh(p.y);
    real ny = -s * sinh(p.y);
    sx += w * nx;
    sy += w * ny;
}

// 21: q = w, dx, 2dx, 1 - dx
FLAME_VAR(rings) {
    real r = p.sqrt;
    r = q[0] * (fmod(r + q[1], q[2]) - q[1] + r * q[3]);
    sx += r * p.cosa;
    sy += r * p.sina;
}

// 22: q = w, dx, dy, dx/2
FLAME_VAR(fan) {
    real a = p.atan;
    real r = q[0] * p.sqrt;
    a += fmod(a + q[2], q[1]) > q[3] ? -q[3] : q[3];
    real s, c;
    sincos(a, &s, &c);
    sx += r * c;
    sy += r * s;
}

// 23: q = w, low, high - low, waves
FLAME_VAR(blob) {
    real w = q[0];
    real r = p.sqrt * (q[1] + q[2] * (FR(0.5) + FR(0.5) * sin(q[3] * p.atan)));
    sx += w * p.sina * r;
    sy += w * p.cosa * r;
}

// 24: q = w, a, b, c, d
FLAME_VAR(pdj) {
    real w = q[0];
    real nx1 = cos(q[2] * p.x);
    real nx2 = sin(q[3] * p.x);
    real ny1 = sin(q[1] * p.y);
    real ny2 = cos(q[4] * p.y);
    sx += w * (ny1 - nx1);
    sy += w * (nx2 - ny2);
}

// 25: q = w, dx, dy, dx/2
FLAME_VAR(fan2) {
    real a = p.atan;
    real r = q[0] * p.sqrt;
    real dx = q[1], dy = q[2];
    real t = a + dy - dx * (real)flame_c_int((a + dy) / dx);
    if (t > q[3]) {
        a -= q[3];
    } else {
        a += q[3];
    }
    real s, c;
    sincos(a, &s, &c);
    sx += r * s;
    sy += r * c;
}

// 26: q = w, dx, 2dx, -2dx, 1 - dx
FLAME_VAR(rings2) {
    real w = q[0], r = p.sqrt;
    r += q[3] * (real)flame_c_int((r + q[1]) / q[2]) + r * q[4];
    sx += w * p.sina * r;
    sy += w * p.cosa * r;
}

// 27
FLAME_VAR(eyefish) {
    real k = (q[0] * FR(2)) / (p.sqrt + FR(1));
    sx += k * p.x;
    sy += k * p.y;
}

// 28
FLAME_VAR(bubble) {
    real k = q[0] / (FR(0.25) * p.sumsq + FR(1));
    sx += k * p.x;
    sy += k * p.y;
}

// 29
FLAME_VAR(cylinder) {
    real w = q[0];
    sx += w * sin(p.x);
    sy += w * p.y;
}

// 30: q = w, dist, vsin, dist·vcos
FLAME_VAR(perspective) {
    real w = q[0];
    real t = FR(1) / (q[1] - p.y * q[2]);
    sx += w * q[1] * p.x * t;
    sy += w * q[3] * p.y * t;
}

// 31: angle first, then the factor.
FLAME_VAR(noise) {
    real a = rng.uniform() * FR(2) * FLAME_PI, s, c;
    sincos(a, &s, &c);
    real r = q[0] * rng.uniform();
    sx += p.x * r * c;
    sy += p.y * r * s;
}

// 32: q = w, power, |power|, dist/power/2, 1/power
FLAME_VAR(julian) {
    int branch = flame_c_int(q[2] * rng.uniform());
    real a = (p.atanyx + FR(2) * FLAME_PI * (real)branch) * q[4];
    real r = q[0] * pow(p.sumsq, q[3]), s, c;
    sincos(a, &s, &c);
    sx += r * c;
    sy += r * s;
}

// 33: q = w, power, |power|, dist/power/2, 1/power
FLAME_VAR(juliascope) {
    int branch = flame_c_int(q[2] * rng.uniform());
    real turn = FR(2) * FLAME_PI * (real)branch;
    real a = (branch & 1) == 0 ? (turn + p.atanyx) * q[4] : (turn - p.atanyx) * q[4];
    real s, c;
    sincos(a, &s, &c);
    real r = q[0] * pow(p.sumsq, q[3]);
    sx += r * c;
    sy += r * s;
}

// 34
FLAME_VAR(blur) {
    real a = rng.uniform() * FR(2) * FLAME_PI, s, c;
    sincos(a, &s, &c);
    real r = q[0] * rng.uniform();
    sx += r * c;
    sy += r * s;
}

// 35
FLAME_VAR(gaussian_blur) {
    real a = rng.uniform() * FR(2) * FLAME_PI, s, c;
    sincos(a, &s, &c);
    real r = q[0] * flame_gauss4(rng);
    sx += r * c;
    sy += r * s;
}

// 36: q = w, spin, zoom
FLAME_VAR(radial_blur) {
    real g = q[0] * flame_gauss4(rng);
    real ra = p.sqrt;
    real a = p.atanyx + q[1] * g, s, c;
    sincos(a, &s, &c);
    real rz = q[2] * g - FR(1);
    sx += ra * c + rz * p.x;
    sy += ra * s + rz * p.y;
}

// 37: q = w, slices, rotation, thickness; slice, angle, radius drawn in order.
FLAME_VAR(pie) {
    int slice = flame_c_int(rng.uniform() * q[1] + FR(0.5));
    real u = rng.uniform();
    real a = q[2] + FR(2) * FLAME_PI * ((real)slice + u * q[3]) / q[1];
    real r = q[0] * rng.uniform(), s, c;
    sincos(a, &s, &c);
    sx += r * c;
    sy += r * s;
}

// 38: q = w, power/2, circle, corners, b = 2π/sides, b/2
FLAME_VAR(ngon) {
    real w = q[0];
    real r_factor = pow(p.sumsq, q[1]);
    real theta = p.atanyx;
    real b = q[4];
    real phi = theta - b * floor(theta / b);
    if (phi > q[5]) phi -= b;
    real amp = q[3] * (FR(1) / (cos(phi) + FLAME_EPS) - FR(1)) + q[2];
    amp /= r_factor + FLAME_EPS;
    sx += w * p.x * amp;
    sy += w * p.y * amp;
}

// 39: q = w, c1, c2, 2c2
FLAME_VAR(curl) {
    real x = p.x, y = p.y;
    real re = FR(1) + q[1] * x + q[2] * (x * x - y * y);
    real im = q[1] * y + q[3] * x * y;
    real r = q[0] / (re * re + im * im);
    sx += (x * re + y * im) * r;
    sy += (y * re - x * im) * r;
}

__device__ __forceinline__ real flame_rect_fold(real v, real size, real w) {
    return size == FR(0) ? w * v : w * ((FR(2) * floor(v / size) + FR(1)) * size - v);
}

// 40: q = w, x, y
FLAME_VAR(rectangles) {
    real w = q[0];
    sx += flame_rect_fold(p.x, q[1], w);
    sy += flame_rect_fold(p.y, q[2], w);
}

// 41
FLAME_VAR(arch) {
    real w = q[0];
    real a = rng.uniform() * w * FLAME_PI, s, c;
    sincos(a, &s, &c);
    sx += w * s;
    sy += w * (s * s) / c;
}

// 42
FLAME_VAR(tangent) {
    real w = q[0];
    sx += w * sin(p.x) / cos(p.y);
    sy += w * tan(p.y);
}

// 43: x first.
FLAME_VAR(square) {
    real w = q[0];
    real x = w * (rng.uniform() - FR(0.5));
    real y = w * (rng.uniform() - FR(0.5));
    sx += x;
    sy += y;
}

// 44
FLAME_VAR(rays) {
    real w = q[0];
    real a = w * rng.uniform() * FLAME_PI;
    real r = w / (p.sumsq + FLAME_EPS);
    real t = w * tan(a) * r;
    sx += t * cos(p.x);
    sy += t * sin(p.y);
}

// 45
FLAME_VAR(blade) {
    real w = q[0];
    real r = rng.uniform() * w * p.sqrt, s, c;
    sincos(r, &s, &c);
    sx += w * p.x * (c + s);
    sy += w * p.x * (c - s);
}

// 46
FLAME_VAR(secant2) {
    real w = q[0];
    real cr = cos(w * p.sqrt);
    real icr = FR(1) / cr;
    real y = cr < FR(0) ? w * (icr + FR(1)) : w * (icr - FR(1));
    sx += w * p.x;
    sy += y;
}

// 47
FLAME_VAR(twintrian) {
    real w = q[0];
    real r = rng.uniform() * w * p.sqrt, s, c;
    sincos(r, &s, &c);
    real diff = log10(s * s) + c;
    if (flame_bad_value(diff)) diff = FR(-30);
    sx += w * p.x * diff;
    sy += w * p.x * (diff - s * FLAME_PI);
}

// 48
FLAME_VAR(cross) {
    real s = p.x * p.x - p.y * p.y;
    real r = q[0] * sqrt(FR(1) / (s * s + FLAME_EPS));
    sx += p.x * r;
    sy += p.y * r;
}

// 49: q = w, rot·π, sinadd, cosadd
FLAME_VAR(disc2) {
    real t = q[1] * (p.x + p.y), s, c;
    sincos(t, &s, &c);
    real r = q[0] * p.atan * FLAME_1_PI;
    sx += (s + q[3]) * r;
    sy += (c + q[2]) * r;
}

// 50: q = w, rnd, 1 - rnd, n2, n3, holes, m/4, -1/n1
FLAME_VAR(super_shape) {
    real w = q[0];
    real theta = q[6] * p.atanyx + FLAME_PI_4, st, ct;
    sincos(theta, &st, &ct);
    real t1 = pow(fabs(ct), q[3]);
    real t2 = pow(fabs(st), q[4]);
    real u = rng.uniform();
    real r = w * ((q[1] * u + q[2] * p.sqrt) - q[5]) * pow(t1 + t2, q[7]) / p.sqrt;
    sx += r * p.x;
    sy += r * p.y;
}

// 51: q = w, petals, holes
FLAME_VAR(flower) {
    real r = q[0] * (rng.uniform() - q[2]) * cos(q[1] * p.atanyx) / p.sqrt;
    sx += r * p.x;
    sy += r * p.y;
}

// 52: q = w, eccentricity, holes
FLAME_VAR(conic) {
    real ct = p.x / p.sqrt;
    real e = q[1];
    real r = q[0] * (rng.uniform() - q[2]) * e / (FR(1) + e * ct) / p.sqrt;
    sx += r * p.x;
    sy += r * p.y;
}

// 53: q = w, height·w, width·w; x's uniform first.
FLAME_VAR(parabola) {
    real s, c;
    sincos(p.sqrt, &s, &c);
    real x = q[1] * s * s * rng.uniform();
    real y = q[2] * c * rng.uniform();
    sx += x;
    sy += y;
}

// 54: q = w, x, y
FLAME_VAR(bent2) {
    real w = q[0];
    real nx = p.x < FR(0) ? p.x * q[1] : p.x;
    real ny = p.y < FR(0) ? p.y * q[2] : p.y;
    sx += w * nx;
    sy += w * ny;
}

// 55: q = w, -shift·π/2, w/4·2/π, w·2/π
FLAME_VAR(bipolar) {
    real x2y2 = p.sumsq;
    real t = x2y2 + FR(1);
    real x2 = FR(2) * p.x;
    real y = FR(0.5) * atan2(FR(2) * p.y, x2y2 - FR(1)) + q[1];
    if (y > FLAME_PI_2) {
        y = -FLAME_PI_2 + fmod(y + FLAME_PI_2, FLAME_PI);
    } else if (y < -FLAME_PI_2) {
        y = FLAME_PI_2 - fmod(FLAME_PI_2 - y, FLAME_PI);
    }
    sx += q[2] * log((t + x2) / (t - x2));
    sy += q[3] * y;
}

// 56: cells centred on integers (ties to even); one uniform.
FLAME_VAR(boarders) {
    real w = q[0];
    real rx = rint(p.x);
    real ry = rint(p.y);
    real ox = p.x - rx;
    real oy = p.y - ry;
    real nx, ny;
    if (rng.uniform() >= FR(0.75)) {
        nx = ox * FR(0.5) + rx;
        ny = oy * FR(0.5) + ry;
    } else if (fabs(ox) >= fabs(oy)) {
        if (ox >= FR(0)) {
            nx = ox * FR(0.5) + rx + FR(0.25);
            ny = oy * FR(0.5) + ry + FR(0.25) * oy / ox;
        } else {
            nx = ox * FR(0.5) + rx - FR(0.25);
            ny = oy * FR(0.5) + ry - FR(0.25) * oy / ox;
        }
    } else if (oy >= FR(0)) {
        nx = ox * FR(0.5) + rx + ox / oy * FR(0.25);
        ny = oy * FR(0.5) + ry + FR(0.25);
    } else {
        nx = ox * FR(0.5) + rx - ox / oy * FR(0.25);
        ny = oy * FR(0.5) + ry - FR(0.25);
    }
    sx += w * nx;
    sy += w * ny;
}

// 57
FLAME_VAR(butterfly) {
    real wx = q[0] * FR(1.3029400317411197);
    real y2 = p.y * FR(2);
    real r = wx * sqrt(fabs(p.y * p.x) / (FLAME_EPS + p.x * p.x + y2 * y2));
    sx += r * p.x;
    sy += r * y2;
}

// Cell's interleave of negative and positive cell numbers, with the
// wrap-around of two's complement.
__device__ __forceinline__ int flame_cell_interleave(int v) {
    unsigned u = (unsigned)v * 2u;
    return v >= 0 ? (int)u : (int)(0u - (u + 1u));
}

// 58: q = w, size, 1/size
FLAME_VAR(cell) {
    real w = q[0], size = q[1];
    int x = flame_c_int(floor(p.x * q[2]));
    int y = flame_c_int(floor(p.y * q[2]));
    real dx = p.x - (real)x * size;
    real dy = p.y - (real)y * size;
    x = flame_cell_interleave(x);
    y = flame_cell_interleave(y);
    sx += w * (dx + (real)x * size);
    sy += -(w * (dy + (real)y * size));
}

// 59: q = w, power, 2π/power, r/power, i/power
FLAME_VAR(cpow) {
    real a = p.atanyx;
    real lnr = FR(0.5) * log(p.sumsq);
    real u = rng.uniform();
    real ang = q[3] * a + q[4] * lnr + q[2] * floor(q[1] * u);
    real m = q[0] * exp(q[3] * lnr - q[4] * a), s, c;
    sincos(ang, &s, &c);
    sx += m * c;
    sy += m * s;
}

// 60: q = w, xamp, yamp, xlength², ylength²
FLAME_VAR(curve) {
    real w = q[0];
    sx += w * (p.x + q[1] * exp(-p.y * p.y / q[3]));
    sy += w * (p.y + q[2] * exp(-p.x * p.x / q[4]));
}

// 61
FLAME_VAR(edisc) {
    real tmp = p.sumsq + FR(1);
    real tmp2 = FR(2) * p.x;
    real r1 = sqrt(tmp + tmp2);
    real r2 = sqrt(tmp - tmp2);
    real xmax = (r1 + r2) * FR(0.5);
    // xmax >= 1 and |x| <= xmax exactly; in float, rounding near y = 0
    // can cross those bounds where the CPU's double does not, turning a
    // usable point into NaN (a restart the CPU does not make): clamped in
    // the float build only, so the double build stays the CPU's formula.
    real xm1 = xmax - FR(1), xr = p.x / xmax;
    if (sizeof(real) == 4) {
        xm1 = fmax(xm1, FR(0));
        xr = fmin(fmax(xr, FR(-1)), FR(1));
    }
    real a1 = log(xmax + sqrt(xm1));
    real a2 = -acos(xr);
    real w = q[0] * FR(1.0 / 11.57034632);
    real snv, csv;
    sincos(a1, &snv, &csv);
    real snhu = sinh(a2);
    real cshu = cosh(a2);
    if (p.y > FR(0)) snv = -snv;
    sx += w * cshu * csv;
    sy += w * snhu * snv;
}

// 62
FLAME_VAR(elliptic) {
    real tmp = p.sumsq + FR(1);
    real x2 = FR(2) * p.x;
    real xmax = FR(0.5) * (sqrt(tmp + x2) + sqrt(tmp - x2));
    real a = p.x / xmax;
    real b = FR(1) - a * a;
    real ssx = xmax - FR(1);
    real w = q[0] * FLAME_2_PI;
    b = b < FR(0) ? FR(0) : sqrt(b);
    ssx = ssx < FR(0) ? FR(0) : sqrt(ssx);
    real l = w * log(xmax + ssx);
    sx += w * atan2(a, b);
    sy += p.y > FR(0) ? l : -l;
}

// 63: q = w, vc, vd
FLAME_VAR(escher) {
    real a = p.atanyx;
    real lnr = FR(0.5) * log(p.sumsq);
    real m = q[0] * exp(q[1] * lnr - q[2] * a);
    real n = q[1] * a + q[2] * lnr, s, c;
    sincos(n, &s, &c);
    sx += m * c;
    sy += m * s;
}

// 64
FLAME_VAR(foci) {
    real expx = exp(p.x) * FR(0.5);
    real expnx = FR(0.25) / expx, s, c;
    sincos(p.y, &s, &c);
    real t = q[0] / (expx + expnx - c);
    sx += t * (expx - expnx);
    sy += t * s;
}

// 65: q = w, spin, space, twist, x, y
FLAME_VAR(lazysusan) {
    real w = q[0];
    real x = p.x - q[4];
    real y = p.y + q[5];
    real r = sqrt(x * x + y * y);
    if (r < w) {
        real a = atan2(y, x) + q[1] + q[3] * (w - r), s, c;
        sincos(a, &s, &c);
        real rr = w * r;
        sx += rr * c + q[4];
        sy += rr * s - q[5];
    } else {
        real rr = w * (FR(1) + q[2] / r);
        sx += rr * x + q[4];
        sy += rr * y - q[5];
    }
}

// 66
FLAME_VAR(loonie) {
    real w = q[0], w2 = w * w;
    if (p.sumsq < w2) {
        real r = w * sqrt(w2 / p.sumsq - FR(1));
        sx += r * p.x;
        sy += r * p.y;
    } else {
        sx += w * p.x;
        sy += w * p.y;
    }
}

__device__ __forceinline__ real flame_modulus_wrap(real v, real m, real w) {
    if (v > m) return w * (-m + fmod(v + m, FR(2) * m));
    if (v < -m) return w * (m - fmod(m - v, FR(2) * m));
    return w * v;
}

// 68: q = w, x, y
FLAME_VAR(modulus) {
    real w = q[0];
    sx += flame_modulus_wrap(p.x, q[1], w);
    sy += flame_modulus_wrap(p.y, q[2], w);
}

// 69: q = w, separation, 2π·frequency, amplitude, damping
FLAME_VAR(oscilloscope) {
    real w = q[0];
    real t = q[4] == FR(0) ? q[3] * cos(q[2] * p.x) + q[1]
                           : q[3] * exp(-fabs(p.x) * q[4]) * cos(q[2] * p.x) + q[1];
    sx += w * p.x;
    sy += fabs(p.y) <= t ? -(w * p.y) : w * p.y;
}

// 70
FLAME_VAR(polar2) {
    real p2v = q[0] * FLAME_1_PI;
    sx += p2v * p.atan;
    sy += p2v / FR(2) * log(p.sumsq);
}

// 71: q = w, x, y, c
FLAME_VAR(popcorn2) {
    real w = q[0];
    sx += w * (p.x + q[1] * sin(tan(p.y * q[3])));
    sy += w * (p.y + q[2] * sin(tan(p.x * q[3])));
}

// 72
FLAME_VAR(scry) {
    real r = FR(1) / (p.sqrt * (p.sumsq + FR(1) / (q[0] + FLAME_EPS)));
    sx += p.x * r;
    sy += p.y * r;
}

__device__ __forceinline__ real flame_separation_part(real v, real s2, real inside, real w) {
    return v > FR(0) ? w * (sqrt(v * v + s2) - v * inside) : -(w * (sqrt(v * v + s2) + v * inside));
}

// 73: q = w, x², xinside, y², yinside
FLAME_VAR(separation) {
    real w = q[0];
    sx += flame_separation_part(p.x, q[1], q[2], w);
    sy += flame_separation_part(p.y, q[3], q[4], w);
}

// 74: q = w, xsize, ysize
FLAME_VAR(split) {
    real w = q[0];
    real y = cos(p.x * q[1] * FLAME_PI) >= FR(0) ? w * p.y : -(w * p.y);
    real x = cos(p.y * q[2] * FLAME_PI) >= FR(0) ? w * p.x : -(w * p.x);
    sx += x;
    sy += y;
}

// 75: q = w, x, y
FLAME_VAR(splits) {
    real w = q[0];
    sx += p.x >= FR(0) ? w * (p.x + q[1]) : w * (p.x - q[1]);
    sy += p.y >= FR(0) ? w * (p.y + q[2]) : w * (p.y - q[2]);
}

// 76: q = w, 1 - space, warp
FLAME_VAR(stripes) {
    real w = q[0];
    real rnd = floor(p.x + FR(0.5));
    real off = p.x - rnd;
    sx += w * (off * q[1] + rnd);
    sy += w * (p.y + off * off * q[2]);
}

// The wedge sector floor((count·a + π) / 2π), in the CPU's association.
__device__ __forceinline__ real flame_sector(real count, real a) {
    return floor((count * a + FLAME_PI) * FLAME_1_PI * FR(0.5));
}

// 77: q = w, angle, hole, count, swirl, comp
FLAME_VAR(wedge) {
    real r = p.sqrt;
    real a = p.atanyx + q[4] * r;
    real c = flame_sector(q[3], a);
    a = a * q[5] + c * q[1];
    real s, co;
    sincos(a, &s, &co);
    r = q[0] * (r + q[2]);
    sx += r * co;
    sy += r * s;
}

// 78: q = w, angle, count, power, comp, |power|, dist/power/2, 1/power
FLAME_VAR(wedge_julia) {
    real r = q[0] * pow(p.sumsq, q[6]);
    int branch = flame_c_int(q[5] * rng.uniform());
    real a = (p.atanyx + FR(2) * FLAME_PI * (real)branch) * q[7];
    real c = flame_sector(q[2], a);
    a = a * q[4] + c * q[1];
    real s, co;
    sincos(a, &s, &co);
    sx += r * co;
    sy += r * s;
}

// 79: q = w, angle, count, hole, swirl, comp
FLAME_VAR(wedge_sph) {
    real r = FR(1) / (p.sqrt + FLAME_EPS);
    real a = p.atanyx + q[4] * r;
    real c = flame_sector(q[2], a);
    a = a * q[5] + c * q[1];
    real s, co;
    sincos(a, &s, &co);
    r = q[0] * (r + q[3]);
    sx += r * co;
    sy += r * s;
}

// 80: q = w, inside, outside
FLAME_VAR(whorl) {
    real w = q[0], r = p.sqrt;
    real a = r < w ? p.atanyx + q[1] / (w - r) : p.atanyx + q[2] / (w - r);
    real s, c;
    sincos(a, &s, &c);
    sx += w * r * c;
    sy += w * r * s;
}

// 81: q = w, scalex, scaley, freqx, freqy
FLAME_VAR(waves2) {
    real w = q[0];
    sx += w * (p.x + q[1] * sin(p.y * q[3]));
    sy += w * (p.y + q[2] * sin(p.x * q[4]));
}

// 82
FLAME_VAR(exp) {
    real w = q[0], e = exp(p.x), s, c;
    sincos(p.y, &s, &c);
    sx += w * e * c;
    sy += w * e * s;
}

// 83: q = w, 1/ln(log_base) (exactly 1 for flam3's base e)
FLAME_VAR(log) {
    real w = q[0];
    sx += w * FR(0.5) * log(p.sumsq) * q[1];
    sy += w * p.atanyx;
}

// 84
FLAME_VAR(sin) {
    real w = q[0], s, c;
    sincos(p.x, &s, &c);
    real sh = sinh(p.y), ch = cosh(p.y);
    sx += w * s * ch;
    sy += w * c * sh;
}

// 85
FLAME_VAR(cos) {
    real w = q[0], s, c;
    sincos(p.x, &s, &c);
    real sh = sinh(p.y), ch = cosh(p.y);
    sx += w * c * ch;
    sy += -(w * s * sh);
}

// 86
FLAME_VAR(tan) {
    real w = q[0], s, c;
    sincos(FR(2) * p.x, &s, &c);
    real sh = sinh(FR(2) * p.y), ch = cosh(FR(2) * p.y);
    real den = FR(1) / (c + ch);
    sx += w * den * s;
    sy += w * den * sh;
}

// 87
FLAME_VAR(sec) {
    real w = q[0], s, c;
    sincos(p.x, &s, &c);
    real sh = sinh(p.y), ch = cosh(p.y);
    real den = FR(2) / (cos(FR(2) * p.x) + cosh(FR(2) * p.y));
    sx += w * den * c * ch;
    sy += w * den * s * sh;
}

// 88
FLAME_VAR(csc) {
    real w = q[0], s, c;
    sincos(p.x, &s, &c);
    real sh = sinh(p.y), ch = cosh(p.y);
    real den = FR(2) / (cosh(FR(2) * p.y) - cos(FR(2) * p.x));
    sx += w * den * s * ch;
    sy += -(w * den * c * sh);
}

// 89
FLAME_VAR(cot) {
    real w = q[0], s, c;
    sincos(FR(2) * p.x, &s, &c);
    real sh = sinh(FR(2) * p.y), ch = cosh(FR(2) * p.y);
    real den = FR(1) / (ch - c);
    sx += w * den * s;
    sy += -(w * den * sh);
}

// 90
FLAME_VAR(sinh) {
    real w = q[0], s, c;
    sincos(p.y, &s, &c);
    real sh = sinh(p.x), ch = cosh(p.x);
    sx += w * sh * c;
    sy += w * ch * s;
}

// 91
FLAME_VAR(cosh) {
    real w = q[0], s, c;
    sincos(p.y, &s, &c);
    real sh = sinh(p.x), ch = cosh(p.x);
    sx += w * ch * c;
    sy += w * sh * s;
}

// 92
FLAME_VAR(tanh) {
    real w = q[0], s, c;
    sincos(FR(2) * p.y, &s, &c);
    real sh = sinh(FR(2) * p.x), ch = cosh(FR(2) * p.x);
    real den = FR(1) / (c + ch);
    sx += w * den * sh;
    sy += w * den * s;
}

// 93
FLAME_VAR(sech) {
    real w = q[0], s, c;
    sincos(p.y, &s, &c);
    real sh = sinh(p.x), ch = cosh(p.x);
    real den = FR(2) / (cos(FR(2) * p.y) + cosh(FR(2) * p.x));
    sx += w * den * c * ch;
    sy += -(w * den * s * sh);
}

// 94
FLAME_VAR(csch) {
    real w = q[0], s, c;
    sincos(p.y, &s, &c);
    real sh = sinh(p.x), ch = cosh(p.x);
    real den = FR(2) / (cosh(FR(2) * p.x) - cos(FR(2) * p.y));
    sx += w * den * sh * c;
    sy += -(w * den * ch * s);
}

// 95
FLAME_VAR(coth) {
    real w = q[0], s, c;
    sincos(FR(2) * p.y, &s, &c);
    real sh = sinh(FR(2) * p.x), ch = cosh(FR(2) * p.x);
    real den = FR(1) / (ch - c);
    sx += w * den * sh;
    sy += w * den * s;
}

// 96: q = w, freq, weight, sym, scale
FLAME_VAR(auger) {
    real w = q[0];
    real s = sin(q[1] * p.x);
    real t = sin(q[1] * p.y);
    real dy = p.y + q[2] * (q[4] * s / FR(2) + fabs(p.y) * s);
    real dx = p.x + q[2] * (q[4] * t / FR(2) + fabs(p.x) * t);
    sx += w * (p.x + q[3] * (dx - p.x));
    sy += w * dy;
}

// 97: q = w, w·(2 + spread)
FLAME_VAR(flux) {
    real w = q[0];
    real xpw = p.x + w;
    real xmw = p.x - w;
    real yy = p.y * p.y;
    real avgr = q[1] * sqrt(sqrt(yy + xpw * xpw) / sqrt(yy + xmw * xmw));
    real avga = (atan2(p.y, xmw) - atan2(p.y, xpw)) * FR(0.5), s, c;
    sincos(avga, &s, &c);
    sx += avgr * c;
    sy += avgr * s;
}

// 98: q = w, re_a, re_b, re_c, re_d, im_a, im_b, im_c, im_d
FLAME_VAR(mobius) {
    real x = p.x, y = p.y;
    real re_u = q[1] * x - q[5] * y + q[2];
    real im_u = q[1] * y + q[5] * x + q[6];
    real re_v = q[3] * x - q[7] * y + q[4];
    real im_v = q[3] * y + q[7] * x + q[8];
    real rad_v = q[0] / (re_v * re_v + im_v * im_v);
    sx += rad_v * (re_u * re_v + im_u * im_v);
    sy += rad_v * (im_u * re_v - re_u * im_v);
}

// ---- Plugin variations beyond flam3's (Fractorium's names) -------------

// 99: flatten zeroes z, so it adds nothing in the plane.
FLAME_VAR(flatten) {}

// 100: q = w, x0, y0, x1, y1, band depths w and h, zero (0 or 1)
FLAME_VAR(crop) {
    real x = p.x, y = p.y;
    bool outside = x < q[1] || x > q[3] || y < q[2] || y > q[4];
    if (outside && q[7] != FR(0)) return;
    if (x < q[1]) {
        x = q[1] + rng.uniform() * q[5];
    } else if (x > q[3]) {
        x = q[3] - rng.uniform() * q[5];
    }
    if (y < q[2]) {
        y = q[2] + rng.uniform() * q[6];
    } else if (y > q[4]) {
        y = q[4] - rng.uniform() * q[6];
    }
    sx += q[0] * x;
    sy += q[0] * y;
}

// 101: linear3D, linear in the plane.
FLAME_VAR(linear3D) {
    real w = q[0];
    sx += w * p.x;
    sy += w * p.y;
}

// crackle's noise (src/variations/plugin.rs): Gustavson's 3-D simplex
// noise, each lattice point's gradient (one of the 12 cube-edge midpoints)
// chosen by Wellons's lowbias32 hash instead of a permutation table, with
// the continuous kernel (0.5 - d²)⁴ scaled by 76.
__device__ const signed char flame_grad12[36] = {1,  1,  0, -1, 1, 0, 1,  -1, 0, -1, -1, 0, 1, 0,  1,  -1, 0,  1,
                                                 1,  0,  -1, -1, 0, -1, 0, 1,  1, 0,  -1, 1, 0, 1, -1, 0,  -1, -1};

__device__ __forceinline__ int flame_lattice_hash(long long i, long long j, long long k) {
    unsigned h = (unsigned)i * 0x8da6b343u ^ (unsigned)j * 0xd8163841u ^ (unsigned)k * 0xcb1ab31fu;
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h ^= h >> 16;
    return (int)(h % 12u);
}

__device__ __forceinline__ real flame_simplex3(real vx, real vy, real vz) {
    const real F3 = FR(1.0 / 3.0), G3 = FR(1.0 / 6.0);
    real skew = (vx + vy + vz) * F3;
    // The conversions saturate (NaN to 0), as Rust's `as` does.
    long long i = (long long)floor(vx + skew);
    long long j = (long long)floor(vy + skew);
    long long k = (long long)floor(vz + skew);
    real t = (real)(i + j + k) * G3;
    real c0x = vx - ((real)i - t), c0y = vy - ((real)j - t), c0z = vz - ((real)k - t);
    int o1x, o1y, o1z, o2x, o2y, o2z;
    if (c0x >= c0y) {
        if (c0y >= c0z) {
            o1x = 1; o1y = 0; o1z = 0; o2x = 1; o2y = 1; o2z = 0;
        } else if (c0x >= c0z) {
            o1x = 1; o1y = 0; o1z = 0; o2x = 1; o2y = 0; o2z = 1;
        } else {
            o1x = 0; o1y = 0; o1z = 1; o2x = 1; o2y = 0; o2z = 1;
        }
    } else if (c0y < c0z) {
        o1x = 0; o1y = 0; o1z = 1; o2x = 0; o2y = 1; o2z = 1;
    } else if (c0x < c0z) {
        o1x = 0; o1y = 1; o1z = 0; o2x = 0; o2y = 1; o2z = 1;
    } else {
        o1x = 0; o1y = 1; o1z = 0; o2x = 1; o2y = 1; o2z = 0;
    }
    real n = FR(0);
    for (int corner = 0; corner < 4; ++corner) {
        int ox = corner == 0 ? 0 : corner == 1 ? o1x : corner == 2 ? o2x : 1;
        int oy = corner == 0 ? 0 : corner == 1 ? o1y : corner == 2 ? o2y : 1;
        int oz = corner == 0 ? 0 : corner == 1 ? o1z : corner == 2 ? o2z : 1;
        real g = (real)corner * G3;
        real cx = c0x - (real)ox + g, cy = c0y - (real)oy + g, cz = c0z - (real)oz + g;
        real tt = FR(0.5) - cx * cx - cy * cy - cz * cz;
        if (tt > FR(0)) {
            const signed char *gr = flame_grad12 + 3 * flame_lattice_hash(i + ox, j + oy, k + oz);
            tt *= tt;
            n += tt * tt * ((real)gr[0] * cx + (real)gr[1] * cy + (real)gr[2] * cz);
        }
    }
    return FR(76) * n;
}

// The jittered centre of crackle's cell (x, y); q = w, s, power, distort, scale, z.
__device__ __forceinline__ void flame_crackle_centre(int x, int y, const real *q, real &cx, real &cy) {
    real xf = (real)x, yf = (real)y, zf = q[5];
    real nx = flame_simplex3(xf * FR(2.5), yf * FR(2.5), zf * FR(2.5));
    real ny = flame_simplex3(yf * FR(2.5) + FR(30.2), xf * FR(2.5) - FR(12.1), zf * FR(2.5) + FR(19.8));
    cx = (xf + q[3] * nx) * q[1];
    cy = (yf + q[3] * ny) * q[1];
}

// Fractorium's EPS (the double machine epsilon) and Zeps: EPS for an exact 0.
#define FLAME_F_EPS FR(2.220446049250313e-16)
__device__ __forceinline__ real flame_zeps(real v) { return v == FR(0) ? FLAME_F_EPS : v; }

// 102: q = w, s (half the cell size, at least Fractorium's 0.0001 / 2),
// power, distort, scale, z
FLAME_VAR(crackle) {
    real u1 = rng.uniform();
    real u2 = rng.uniform();
    real u3 = rng.uniform();
    real blur = (u1 + u2) / FR(2) + (u3 - FR(0.5)) / FR(4);
    real theta = FR(2) * FLAME_PI * rng.uniform();
    real st, ct;
    sincos(theta, &st, &ct);
    real ux = blur * st, uy = blur * ct;
    int cx = flame_c_int(floor(ux / q[1]));
    int cy = flame_c_int(floor(uy / q[1]));
    int nearest = 0;
    real best = FR(0);
    for (int n = 0; n < 9; ++n) {
        real px, py;
        flame_crackle_centre((int)((unsigned)cx + (unsigned)(n / 3 - 1)), (int)((unsigned)cy + (unsigned)(n % 3 - 1)), q,
                             px, py);
        real d2 = (px - ux) * (px - ux) + (py - uy) * (py - uy);
        if (n == 0 || d2 < best) {
            best = d2;
            nearest = n;
        }
    }
    cx = (int)((unsigned)cx + (unsigned)(nearest / 3 - 1));
    cy = (int)((unsigned)cy + (unsigned)(nearest % 3 - 1));
    real c0x, c0y;
    flame_crackle_centre(cx, cy, q, c0x, c0y);
    real l = FR(0);
    bool first = true;
    for (int n = 0; n < 9; ++n) {
        if (n == 4) continue;
        real px, py;
        flame_crackle_centre((int)((unsigned)cx + (unsigned)(n / 3 - 1)), (int)((unsigned)cy + (unsigned)(n % 3 - 1)), q,
                             px, py);
        real dx = px - c0x, dy = py - c0y;
        real ratio = (dx == FR(0) && dy == FR(0)) ? FR(1) : FR(2) * ((ux - c0x) * dx + (uy - c0y) * dy) / (dx * dx + dy * dy);
        l = first ? ratio : fmax(l, ratio);
        first = false;
    }
    // Fractorium's |Zeps(l)|^power / Zeps(l): finite for a ratio that
    // rounding has made negative (float's, on tiny cells).
    l = flame_zeps(l);
    real r = pow(fabs(l), q[2]) * q[4] / l;
    sx += q[0] * ((ux - c0x) * r + c0x);
    sy += q[0] * ((uy - c0y) * r + c0y);
}

// ---- Fractorium's variations (src/variations/plugin_blur.rs,
// plugin_map.rs, plugin_tile.rs; parameters already under Fractorium's
// rules, computed on the host) ---------------------------------------------

// cos(a) where a zero of the cosine is a singular direction (a point on
// the y axis with cropn's, smartshape's or post_smartcrop's 2-gon,
// epispiral's n = 1 …): at an odd multiple of π/2 double's cosine is about
// 1e-16, float's about 4e-8 (float's π/2 is off by that much), so the CPU
// finds a point beyond 1e10 (a bad value) and float a moderate one. Below
// float's resolution the double's cosine of π/2 is taken instead.
__device__ __forceinline__ real flame_cos_to_right_angle(real a) {
    real c = cos(a);
    if (sizeof(real) == 4 && fabs(c) < FR(1e-7)) c = FR(6.123233995736766e-17);
    return c;
}

// The largest finite `real` (C++'s numeric_limits, which NVRTC lacks).
template <class T>
struct FlameLimits;
template <>
struct FlameLimits<float> {
    __device__ static __forceinline__ float max() { return 3.40282347e38f; }
};
template <>
struct FlameLimits<double> {
    __device__ static __forceinline__ double max() { return 1.7976931348623157e308; }
};

// gaussian: angle first, then flam3's four-uniform radius; the point kept.
FLAME_VAR(gaussian) {
    real angle = rng.uniform() * FR(2) * FLAME_PI;
    real r = q[0] * flame_gauss4(rng);
    real s, c;
    sincos(angle, &s, &c);
    sx += r * c + p.x;
    sy += r * s + p.y;
}

// sineblur: q = w, power
FLAME_VAR(sineblur) {
    real s, c;
    sincos(rng.uniform() * FR(2) * FLAME_PI, &s, &c);
    real u = rng.uniform();
    real r = q[1] == FR(1) ? q[0] * (acos(u * FR(2) - FR(1)) / FLAME_PI)
                           : q[0] * (acos(exp(log(u) * q[1]) * FR(2) - FR(1)) / FLAME_PI);
    sx += r * c;
    sy += r * s;
}

// blur_linear: q = w, length, sin(angle), cos(angle)
FLAME_VAR(blur_linear) {
    real r = q[1] * rng.uniform();
    sx += q[0] * (p.x + r * q[3]);
    sy += q[0] * (p.y + r * q[2]);
}

// blur_zoom: q = w, length, x, y
FLAME_VAR(blur_zoom) {
    real z = FR(1) + q[1] * rng.uniform();
    sx += q[0] * ((p.x - q[2]) * z + q[2]);
    sy += q[0] * ((p.y + q[3]) * z - q[3]);
}

// blur_circle: x's uniform first.
FLAME_VAR(blur_circle) {
    real x = FR(2) * rng.uniform() - FR(1);
    real y = FR(2) * rng.uniform() - FR(1);
    real ax = fabs(x), ay = fabs(y), perimeter, side;
    if (ax >= ay) {
        perimeter = x >= ay ? ax + y : FR(5) * ax - y;
        side = ax;
    } else {
        perimeter = y >= ax ? FR(3) * ay - x : FR(7) * ay + x;
        side = ay;
    }
    real r = q[0] * side, s, c;
    sincos(FLAME_PI_4 * perimeter / side - FLAME_PI_4, &s, &c);
    sx += r * c;
    sy += r * s;
}

// circleblur: the radius's uniform first.
FLAME_VAR(circleblur) {
    real rad = sqrt(rng.uniform());
    real s, c;
    sincos(rng.uniform() * FR(2) * FLAME_PI, &s, &c);
    sx += q[0] * c * rad;
    sy += q[0] * s * rad;
}

// rblur: q = w, 2·strength, offset, center_x, center_y
FLAME_VAR(rblur) {
    real dx = p.x - q[3], dy = p.y - q[4];
    real r = sqrt(dx * dx + dy * dy) - q[2];
    r = r < FR(0) ? FR(0) : r;
    r *= q[1];
    real x = q[0] * (p.x + (rng.uniform() - FR(0.5)) * r);
    real y = q[0] * (p.y + (rng.uniform() - FR(0.5)) * r);
    sx += x;
    sy += y;
}

// Mobius (Fractorium's): q = w, Re A, Im A, Re B, Im B, Re C, Im C, Re D, Im D
FLAME_VAR(Mobius) {
    real x = p.x, y = p.y;
    real u_re = q[1] * x - q[2] * y + q[3];
    real u_im = q[1] * y + q[2] * x + q[4];
    real v_re = q[5] * x - q[6] * y + q[7];
    real v_im = q[5] * y + q[6] * x + q[8];
    real den = flame_zeps(v_re * v_re + v_im * v_im);
    sx += q[0] * (u_re * v_re + u_im * v_im) / den;
    sy += q[0] * (u_im * v_re - u_re * v_im) / den;
}

FLAME_VAR(hemisphere) {
    real t = q[0] / sqrt(p.sumsq + FR(1));
    sx += p.x * t;
    sy += p.y * t;
}

FLAME_VAR(unpolar) {
    real v = (q[0] / FLAME_PI) * FR(0.5);
    real r = exp(p.y), s, c;
    sincos(p.x, &s, &c);
    sx += v * r * s;
    sy += v * r * c;
}

// epispiral: q = w, n, thickness·w, holes·w; a uniform only with a thickness.
FLAME_VAR(epispiral) {
    real theta = p.atanyx;
    real scale = q[2] == FR(0) ? q[0] : q[2] * rng.uniform();
    real t = scale / flame_cos_to_right_angle(q[1] * theta) - q[3];
    if (fabs(t) != FR(0)) {
        real s, c;
        sincos(theta, &s, &c);
        sx += t * c;
        sy += t * s;
    }
}

FLAME_VAR(twoface) {
    real r = p.x > FR(0) ? q[0] / p.sumsq : q[0];
    sx += r * p.x;
    sy += r * p.y;
}

// glynnia (flam3-compatible branch): one uniform.
FLAME_VAR(glynnia) {
    real w = q[0], v2 = w * FR(0.7071067811865476), r = p.sqrt;
    bool first = rng.uniform() > FR(0.5);
    real ox, oy;
    if (r > FR(1)) {
        if (first) {
            real d = sqrt(r + p.x);
            ox = v2 * d;
            oy = -(v2 / d * p.y);
        } else {
            real d = r + p.x;
            real k = w / sqrt(r * (p.y * p.y + d * d));
            ox = k * d;
            oy = k * p.y;
        }
    } else if (first) {
        real d = flame_zeps(sqrt(r + p.x));
        ox = -(v2 * d);
        oy = -(v2 / d * p.y);
    } else {
        real d = r + p.x;
        real k = w / flame_zeps(sqrt(r * (p.y * p.y + d * d)));
        ox = -(k * d);
        oy = k * p.y;
    }
    sx += ox;
    sy += oy;
}

FLAME_VAR(wdisc) {
    real a = FLAME_PI / (p.sqrt + FR(1));
    real r = p.atanyx * FLAME_1_PI;
    if (r > FR(0)) a = FLAME_PI - a;
    real s, c;
    sincos(a, &s, &c);
    sx += q[0] * r * c;
    sy += q[0] * r * s;
}

// Fractorium's Crand: an integer in [0, 32767) from one word, reduced
// modulo period when that is nonzero (plugin_map.rs: the angle stays below
// 2π, which float needs).
__device__ __forceinline__ real flame_crand(FlameRng &rng, real period) {
    unsigned k = (unsigned)(((unsigned long long)rng.next_u32() * 32767ull) >> 32);
    return (real)(period > FR(0) ? k % (unsigned)period : k);
}

// hypertile: q = w, re, im
FLAME_VAR(hypertile) {
    real re = q[1], im = q[2];
    real a = p.x + re;
    real b = p.y - im;
    real c = re * p.x - im * p.y + FR(1);
    real d = re * p.y + im * p.x;
    real vr = q[0] / (c * c + d * d);
    sx += vr * (a * c + b * d);
    sy += vr * (b * c - a * d);
}

// hypertile1: q = w, 2π/p, r, period; one word.
FLAME_VAR(hypertile1) {
    real s, co;
    sincos(flame_crand(rng, q[3]) * q[1], &s, &co);
    real re = q[2] * co, im = q[2] * s;
    real a = p.x + re;
    real b = p.y - im;
    real c = re * p.x - im * p.y + FR(1);
    real d = re * p.y + im * p.x;
    real vr = q[0] / flame_zeps(c * c + d * d);
    sx += vr * (a * c + b * d);
    sy += vr * (b * c - a * d);
}

// hypertile2: q = w, 2π/p, r, period; one word.
FLAME_VAR(hypertile2) {
    real a = p.x + q[2];
    real b = p.y;
    real c = q[2] * p.x + FR(1);
    real d = q[2] * p.y;
    real x = a * c + b * d;
    real y = b * c - a * d;
    real vr = q[0] / flame_zeps(c * c + d * d);
    real s, co;
    sincos(flame_crand(rng, q[3]) * q[1], &s, &co);
    sx += vr * (x * co + y * s);
    sy += vr * (y * co - x * s);
}

// bTransform: q = w, rotate, power, move, split; one uniform.
FLAME_VAR(bTransform) {
    real x = p.x, y = p.y, power = q[2];
    real xp1 = x + FR(1);
    real y2 = y * y;
    real tau = FR(0.5) * (log(xp1 * xp1 + y2) - log((x - FR(1)) * (x - FR(1)) + y2)) / power + q[3];
    real sigma = FLAME_PI - atan2(y, xp1) - atan2(y, FR(1) - x) + q[1];
    sigma = sigma / power + FR(2) * FLAME_PI / power * floor(rng.uniform() * power);
    if (x >= FR(0)) {
        tau += q[4];
    } else {
        tau -= q[4];
    }
    real t = flame_zeps(cosh(tau) - cos(sigma));
    sx += q[0] * sinh(tau) / t;
    sy += q[0] * sin(sigma) / t;
}

__device__ __forceinline__ real flame_safe_sqrt(real v) { return v <= FR(0) ? FR(0) : sqrt(v); }

// eJulia: q = w, power, sign; one uniform.
FLAME_VAR(eJulia) {
    real r2 = p.sumsq, x;
    if (q[2] == FR(1)) {
        x = p.x;
    } else {
        r2 = FR(1) / flame_zeps(r2);
        x = p.x * r2;
    }
    real tmp = r2 + FR(1);
    real tmp2 = FR(2) * x;
    real xmax = (flame_safe_sqrt(tmp + tmp2) + flame_safe_sqrt(tmp - tmp2)) * FR(0.5);
    if (xmax < FR(1)) xmax = FR(1);
    real mu = acosh(xmax);
    real xr = x / xmax;
    // Fractorium's clamp (NaN kept).
    xr = FR(1) < xr ? FR(1) : xr;
    xr = xr < FR(-1) ? FR(-1) : xr;
    real nu = acos(xr);
    if (p.y < FR(0)) nu *= FR(-1);
    nu = nu / q[1] + FR(2) * FLAME_PI / q[1] * floor(rng.uniform() * q[1]);
    mu = mu / q[1];
    sx += q[0] * cosh(mu) * cos(nu);
    sy += q[0] * sinh(mu) * sin(nu);
}

// pow_block: q = w, numerator, denominator, root, power; one uniform.
FLAME_VAR(pow_block) {
    real r2 = pow(p.sumsq, q[4] * FR(0.5)) * q[0];
    real den = flame_zeps(q[2]);
    real branch = floor(rng.uniform() * q[2]);
    real ran = (p.atanyx / den + (q[3] * FR(2) * FLAME_PI * branch / den)) * q[1];
    real s, c;
    sincos(ran, &s, &c);
    sx += r2 * c;
    sy += r2 * s;
}

__device__ __forceinline__ real flame_sign(real v) { return v < FR(0) ? FR(-1) : v > FR(0) ? FR(1) : FR(0); }

// barycentroid: q = w, a, b, c, d
FLAME_VAR(barycentroid) {
    real a = q[1], b = q[2], c = q[3], d = q[4];
    real dot00 = a * a + b * b;
    real dot01 = a * c + b * d;
    real dot02 = a * p.x + b * p.y;
    real dot11 = c * c + d * d;
    real dot12 = c * p.x + d * p.y;
    real inv = FR(1) / flame_zeps(dot00 * dot11 - dot01 * dot01);
    real u = (dot11 * dot02 - dot01 * dot12) * inv;
    real v = (dot00 * dot12 - dot01 * dot02) * inv;
    real um = sqrt(u * u + p.x * p.x) * flame_sign(u);
    real vm = sqrt(v * v + p.y * p.y) * flame_sign(v);
    sx += q[0] * um;
    sy += q[0] * vm;
}

// smartshape: q = w, roundstr, roundwidth, distortion, alpha, alpha_coeff,
// round_coeff, comp
FLAME_VAR(smartshape) {
    real alpha = q[4];
    real dang = (p.atanyx + FLAME_PI) / alpha;
    real rad = p.sqrt;
    real zang1 = floor(dang);
    real xang1 = dang - zang1;
    real xang2, zang, sign;
    if (xang1 > FR(0.5)) {
        xang2 = FR(1) - xang1;
        zang = zang1 + FR(1);
        sign = FR(-1);
    } else {
        xang2 = xang1;
        zang = zang1;
        sign = FR(1);
    }
    real xang = (q[7] == FR(1) && q[3] >= FR(1)) ? atan(xang2 * q[5]) / alpha : xang2;
    real coeff_1;
    if (q[3] == FR(0)) {
        coeff_1 = FR(1);
    } else {
        real coeff0 = FR(1) / flame_cos_to_right_angle(xang * alpha);
        if (q[1] != FR(0)) {
            real wwidth = q[2] != FR(1) ? pow(xang * FR(2), q[2]) * q[6] : xang * FR(2) * q[6];
            coeff_1 = fabs((FR(1) - wwidth) * coeff0 + wwidth);
        } else {
            coeff_1 = coeff0;
        }
    }
    real coeff = q[3] != FR(1) ? exp(log(coeff_1) * q[3]) : coeff_1;
    real ang = (zang + sign * xang) * alpha - FLAME_PI;
    real t = q[0] * coeff * rad, s, c;
    sincos(ang, &s, &c);
    sx += c * t;
    sy += s * t;
}

// y: q = w, hypergon, hypergon_n, star, star_n, lituus, super, super_n2,
// super_n3, hypergon_d, -lituus_a, tan(star_slope), super_m/4, -1/super_n1
FLAME_VAR(y) {
    real a = p.atanyx, total = FR(0);
    if (q[1] != FR(0)) {
        real t1 = fmod(fabs(a), FR(2) * FLAME_PI / q[2]) - FLAME_PI / q[2];
        real tn = tan(t1);
        real t2 = tn * tn + FR(1);
        real hd2 = q[9] * q[9];
        if (t2 >= hd2) {
            total += q[1];
        } else {
            total += q[1] * (q[9] - sqrt(hd2 - t2)) / sqrt(t2);
        }
    }
    if (q[3] != FR(0)) {
        real t1 = tan(fabs(fmod(fabs(a), FR(2) * FLAME_PI / q[4]) - FLAME_PI / q[4]));
        real ts = q[11];
        real num = ts * ts * (FR(1) + t1 * t1);
        real den = (t1 + ts) * (t1 + ts);
        total += q[3] * sqrt(num / den);
    }
    if (q[5] != FR(0)) total += q[5] * pow(fabs(a / FLAME_PI + FR(1)), q[10]);
    if (q[6] != FR(0)) {
        real s, c;
        sincos(a * q[12], &s, &c);
        total += q[6] * pow(pow(fabs(c), q[7]) + pow(fabs(s), q[8]), q[13]);
    }
    real r = q[0] * (total * total) / p.sqrt, s, c;
    sincos(a, &s, &c);
    sx += r * c;
    sy += r * s;
}

// bwraps: q = w, cellsize, inner_twist, outer_twist, g2, r2, rfactor
FLAME_VAR(bwraps) {
    real w = q[0], cs = q[1];
    if (cs == FR(0)) {
        sx += w * p.x;
        sy += w * p.y;
        return;
    }
    real cx = (floor(p.x / cs) + FR(0.5)) * cs;
    real cy = (floor(p.y / cs) + FR(0.5)) * cs;
    real lx = p.x - cx, ly = p.y - cy;
    if (lx * lx + ly * ly > q[5]) {
        sx += w * p.x;
        sy += w * p.y;
        return;
    }
    lx *= q[4];
    ly *= q[4];
    real r = q[6] / flame_zeps((lx * lx + ly * ly) / FR(4) + FR(1));
    lx *= r;
    ly *= r;
    r = (lx * lx + ly * ly) / q[5];
    real theta = q[2] * (FR(1) - r) + q[3] * r, s, c;
    sincos(theta, &s, &c);
    sx += w * (cx + c * lx + s * ly);
    sy += w * (cy - s * lx + c * ly);
}

// gnarly: q = w, cellsize, twist, r2
FLAME_VAR(gnarly) {
    real vx = p.x, vy = p.y, cs = q[1];
    if (cs != FR(0)) {
        real cx = (floor(vx / cs) + FR(0.5)) * cs;
        real cy = (floor(vy / cs) + FR(0.5)) * cs;
        real lx = vx - cx, ly = vy - cy;
        if (lx * lx + ly * ly <= q[3]) {
            real r = (lx * lx + ly * ly) / q[3], s, c;
            sincos(q[2] * log(r), &s, &c);
            vx = cx + c * lx + s * ly;
            vy = cy - s * lx + c * ly;
        }
    }
    sx += q[0] * vx;
    sy += q[0] * vy;
}

// hexes' lattice maps (plugin_tile.rs).
#define FLAME_HEX_XH_XO FR(1.0 / 3.0)
#define FLAME_HEX_XH_YO FR(1.7320508075688772 / 3.0)
#define FLAME_HEX_YH_XO FR(-1.0 / 3.0)
#define FLAME_HEX_YH_YO FR(1.7320508075688772 / 3.0)
#define FLAME_HEX_XO_XH FR(1.5)
#define FLAME_HEX_XO_YH FR(-1.5)
#define FLAME_HEX_YO_XH FR(1.7320508075688772 / 2.0)
#define FLAME_HEX_YO_YH FR(1.7320508075688772 / 2.0)

// The Voronoi distance ratio of (ux, uy) in the cell of point 0 of the n
// points (px, py).
__device__ __forceinline__ real flame_voronoi(const real *px, const real *py, int n, real ux, real uy) {
    real m = -FlameLimits<real>::max();
    for (int i = 1; i < n; ++i) {
        real dx = px[i] - px[0], dy = py[i] - py[0];
        real ratio = (dx == FR(0) && dy == FR(0))
                         ? FR(1)
                         : FR(2) * ((ux - px[0]) * dx + (uy - py[0]) * dy) / flame_zeps(dx * dx + dy * dy);
        if (ratio > m) m = ratio;
    }
    return m;
}

// hexes: q = w, cellsize, power, scale, sin(rotation), cos(rotation)
FLAME_VAR(hexes) {
    real s = q[1];
    if (s == FR(0)) return;
    real ux = p.x, uy = p.y;
    real xch = floor((FLAME_HEX_XH_XO * ux + FLAME_HEX_XH_YO * uy) / s);
    real ych = floor((FLAME_HEX_YH_XO * ux + FLAME_HEX_YH_YO * uy) / s);
    // The nearest of the four hexes around, the first on ties.
    real best = FlameLimits<real>::max(), bi = FR(0), bj = FR(0);
    for (int k = 0; k < 4; ++k) {
        real di = (real)(k >> 1), dj = (real)(k & 1);
        real cx = (FLAME_HEX_XO_XH * (xch + di) + FLAME_HEX_XO_YH * (ych + dj)) * s;
        real cy = (FLAME_HEX_YO_XH * (xch + di) + FLAME_HEX_YO_YH * (ych + dj)) * s;
        real d2 = (cx - ux) * (cx - ux) + (cy - uy) * (cy - uy);
        if (d2 < best) {
            best = d2;
            bi = di;
            bj = dj;
        }
    }
    xch += bi;
    ych += bj;
    real ox = (FLAME_HEX_XO_XH * xch + FLAME_HEX_XO_YH * ych) * s;
    real oy = (FLAME_HEX_YO_XH * xch + FLAME_HEX_YO_YH * ych) * s;
    real px[7], py[7];
    px[0] = ox;
    py[0] = oy;
    px[1] = ox + FLAME_HEX_XO_YH * s;
    py[1] = oy + FLAME_HEX_YO_YH * s;
    px[2] = ox + (FLAME_HEX_XO_XH + FLAME_HEX_XO_YH) * s;
    py[2] = oy + (FLAME_HEX_YO_XH + FLAME_HEX_YO_YH) * s;
    px[3] = ox + FLAME_HEX_XO_XH * s;
    py[3] = oy + FLAME_HEX_YO_XH * s;
    px[4] = ox - FLAME_HEX_XO_YH * s;
    py[4] = oy - FLAME_HEX_YO_YH * s;
    px[5] = ox - (FLAME_HEX_XO_XH + FLAME_HEX_XO_YH) * s;
    py[5] = oy - (FLAME_HEX_YO_XH + FLAME_HEX_YO_YH) * s;
    px[6] = ox - FLAME_HEX_XO_XH * s;
    py[6] = oy - FLAME_HEX_YO_XH * s;
    real l1 = flame_voronoi(px, py, 7, ux, uy);
    real dx = ux - ox, dy = uy - oy;
    real target = pow(fabs(l1), q[2]) * q[3];
    real vx = dx * q[5] + dy * q[4];
    real vy = -dx * q[4] + dy * q[5];
    real l2 = flame_voronoi(px, py, 7, vx + ox, vy + oy);
    real l = l1 < l2 ? l2 : l1;
    real r;
    if (l < FR(0.5)) {
        r = target / l1;
    } else if (l > FR(0.8)) {
        r = target / l2;
    } else {
        r = ((target / l1) * (FR(0.8) - l) + (target / l2) * (l - FR(0.5))) / FR(0.3);
    }
    sx += q[0] * (vx * r + ox);
    sy += q[0] * (vy * r + oy);
}

// Voron's hash of an integer into [0, 1], in 32-bit arithmetic that wraps.
__device__ __forceinline__ real flame_discrete_noise(int x) {
    unsigned n = ((unsigned)x << 13) ^ (unsigned)x;
    unsigned v = n * (n * n * 15731u + 789221u) + 1376312589u;
    return (real)(int)(v & 0x7fffffffu) * FR(1.0 / 2147483647.0);
}

// Voron: q = w, K, step, num, xseed, yseed
FLAME_VAR(Voron) {
    // Saturating conversions, then the low 32 bits, as the CPU's code.
    int m = (int)(long long)floor(p.x / q[2]);
    int n = (int)(long long)floor(p.y / q[2]);
    real r_min = FR(20), x0 = FR(0), y0 = FR(0);
    for (int i = -1; i < 2; ++i) {
        int m1 = (int)((unsigned)m + (unsigned)i);
        for (int j = -1; j < 2; ++j) {
            int n1 = (int)((unsigned)n + (unsigned)j);
            real h = (real)(int)((unsigned)m1 * 19u + (unsigned)n1 * 257u) + q[4];
            long long k = 1 + (long long)floor(q[3] * flame_discrete_noise(flame_c_int(h)));
            for (long long l = 0; l < k; ++l) {
                real hx = (real)(l + (long long)(int)((unsigned)m1 * 64u) + (long long)(int)((unsigned)n1 * 15u)) + q[4];
                real hy = (real)(l + (long long)(int)((unsigned)m1 * 21u) + (long long)(int)((unsigned)n1 * 33u)) + q[5];
                real x = (flame_discrete_noise(flame_c_int(hx)) + (real)m1) * q[2];
                real y = (flame_discrete_noise(flame_c_int(hy)) + (real)n1) * q[2];
                real ox = p.x - x, oy = p.y - y;
                real r = sqrt(ox * ox + oy * oy);
                if (r < r_min) {
                    r_min = r;
                    x0 = x;
                    y0 = y;
                }
            }
        }
    }
    sx += q[0] * (q[1] * (p.x - x0) + x0);
    sy += q[0] * (q[1] * (p.y - y0) + y0);
}

__device__ __forceinline__ real flame_shred(real v, real distance, real width, real w) {
    real neg = v < FR(0) ? FR(1) : FR(0);
    real r = v / distance;
    real whole = (real)flame_c_int(r);
    return w * distance * ((r - whole) * width + whole + (FR(0.5) - neg) * (FR(1) - width));
}

// shredlin: q = w, xdistance, xwidth, ydistance, ywidth
FLAME_VAR(shredlin) {
    sx += flame_shred(p.x, q[1], q[2], q[0]);
    sy += flame_shred(p.y, q[3], q[4], q[0]);
}

// tile_log: q = w, spread; a uniform, then a bit.
FLAME_VAR(tile_log) {
    real u = rng.uniform();
    real spread = rng.bit() ? q[1] : -q[1];
    real r = log(u) * spread;
    real t = r > FR(0) ? floor(r + FR(0.5)) : ceil(r - FR(0.5));
    sx += q[0] * (p.x + t);
    sy += q[0] * p.y;
}

// tile_hlp: q = w, width, width·w; one uniform.
FLAME_VAR(tile_hlp) {
    real x = p.x / q[1];
    bool pos = x > FR(0);
    real whole = (real)flame_c_int(x);
    real frac = pos ? x - whole : x + whole;
    real t = cos(frac * FLAME_PI) < FR(-1) + rng.uniform() * FR(2) ? (pos ? -q[2] : q[2]) : FR(0);
    sx += q[0] * p.x + t;
    sy += q[0] * p.y;
}

// cropn: q = w, outside (0/1), radius, scatter, zero, alpha, alpha/2; one
// uniform, always.
FLAME_VAR(cropn) {
    real alpha = q[5];
    real xang = (p.atanyx + FLAME_PI) / alpha;
    xang = (xang - (real)flame_c_int(xang)) * alpha;
    xang = flame_cos_to_right_angle(xang < q[6] ? xang : alpha - xang);
    real xr = xang > FR(0) ? q[2] / xang : FR(1);
    real u = rng.uniform();
    if ((p.sqrt > xr) == (q[1] == FR(1))) {
        if (q[4] == FR(1)) return;
        real rdc = xr + u * FR(0.5) * q[3];
        real r = flame_zeps(p.sqrt);
        sx += q[0] * rdc * (p.x / r);
        sy += q[0] * rdc * (p.y / r);
    } else {
        sx += q[0] * p.x;
        sy += q[0] * p.y;
    }
}

// bcircle: q = w, scale, |borderwidth|, |borderwidth|/5; one uniform, always.
FLAME_VAR(bcircle) {
    real x = p.x * q[1], y = p.y * q[1];
    real r = sqrt(x * x + y * y);
    real u = rng.uniform();
    if (r <= FR(1)) {
        sx += q[0] * x;
        sy += q[0] * y;
    } else if (q[2] != FR(0)) {
        real t = q[0] * (q[3] * u + FR(1)), s, c;
        sincos(atan2(y, x), &s, &c);
        sx += t * c;
        sy += t * s;
    }
}

// circlecrop: q = w, radius, x, y, scatter (clamped), zero (0/1); one
// uniform, always. A point sent to the origin also drops what the ordinary
// variations before it added (sx, sy are the running sum there; a form's
// own, zero, otherwise).
FLAME_VAR(circlecrop) {
    real xi = p.x - q[2], yi = p.y - q[3];
    real rad = sqrt(xi * xi + yi * yi);
    real rdc = q[1] + rng.uniform() * FR(0.5) * q[4];
    if (rad > q[1]) {
        if (q[5] != FR(0)) {
            sx = FR(0);
            sy = FR(0);
        } else {
            real s, c;
            sincos(atan2(yi, xi), &s, &c);
            sx += q[0] * rdc * c + q[2];
            sy += q[0] * rdc * s + q[3];
        }
    } else {
        sx += q[0] * xi + q[2];
        sy += q[0] * yi + q[3];
    }
}

// mirror_x: one bit; replaces the running sum (weight ignored).
FLAME_VAR(mirror_x) {
    real x = fabs(p.x);
    sx = rng.bit() ? -x : x;
    sy = p.y;
}

// post_smartcrop (uniforms drawn whether used or not, as the CPU's): q = w, roundstr, roundwidth, distortion, edge, scatter,
// offset, cropmode, static, mode (0/1), radial (0/1), work_radius,
// work_power, alpha, round_coeff, work_rotation
FLAME_VAR(post_smartcrop) {
    real w = q[0], st = q[8];
    bool replaces = st > FR(1) || st == FR(-1);
    real xi = st > FR(1) ? p.x : p.tx, yi = st > FR(1) ? p.y : p.ty;
    real ang = atan2(yi, xi);
    real rad = sqrt(xi * xi + yi * yi);
    bool cropped = false;
    real r_out = FR(0), a_out = FR(0);
    if (q[10] == FR(1)) {
        real edge = q[4] * (rng.uniform() - FR(0.5));
        real u_side = rng.uniform();
        real u_scatter = rng.uniform();
        real xang = ang / (FR(2) * FLAME_PI) + FR(1) + edge;
        xang = (xang - (real)flame_c_int(xang)) * (FR(2) * FLAME_PI);
        if ((xang > q[12] ? FR(1) : FR(0)) == q[9]) {
            real spread = u_scatter * q[5] + q[6] + edge;
            a_out = u_side * FR(2) >= FR(1) ? q[12] + spread * FLAME_PI : -spread * FLAME_PI;
            r_out = rad;
            cropped = true;
        }
    } else {
        real coeff = FR(1);
        if (q[3] != FR(0)) {
            real xang = (ang + FLAME_PI) / q[13];
            xang -= (real)flame_c_int(xang);
            xang = xang < FR(0.5) ? xang : FR(1) - xang;
            coeff = FR(1) / flame_cos_to_right_angle(xang * q[13]);
            if (q[1] != FR(0)) {
                real width = q[2] != FR(1) ? pow(xang * FR(2), q[2]) : xang * FR(2);
                real wwidth = width * q[14];
                coeff = fabs((FR(1) - wwidth) * coeff + wwidth);
            }
            if (q[3] != FR(1)) coeff = exp(log(coeff) * q[3]);
        }
        real reach = q[4] != FR(0) ? q[11] + q[4] * (rng.uniform() - FR(0.5)) : q[11];
        real u_scatter = rng.uniform();
        real xr = coeff * reach;
        if ((rad > xr ? FR(1) : FR(0)) == q[9]) {
            if (q[7] == FR(0)) return;  // the origin
            r_out = q[7] == FR(-1) ? rad : xr + coeff * (u_scatter * q[5] + q[6]);
            a_out = ang + q[15];
            cropped = true;
        }
    }
    real ox, oy;
    if (cropped) {
        real s, c;
        sincos(a_out, &s, &c);
        ox = w * r_out * c;
        oy = w * r_out * s;
        if (!replaces) {
            ox = p.x + ox;
            oy = p.y + oy;
        }
    } else {
        real kx = st == FR(3) ? w * p.tx : w * xi, ky = st == FR(3) ? w * p.ty : w * yi;
        ox = st > FR(0) ? kx : p.x + kx;
        oy = st > FR(0) ? ky : p.y + ky;
    }
    // A post-only form: its own sum, which the form replaces the point with.
    sx += ox;
    sy += oy;
}
