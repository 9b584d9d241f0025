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

// 83
FLAME_VAR(log) {
    real w = q[0];
    sx += w * FR(0.5) * log(p.sumsq);
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

// 102: q = w, s (half the cell size), power, distort, scale, z
FLAME_VAR(crackle) {
    if (q[1] == FR(0)) return;
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
    real target = pow(l + FR(1e-100), q[2]) * q[4];
    real r = target / (l + FR(1e-100));
    sx += q[0] * ((ux - c0x) * r + c0x);
    sy += q[0] * ((uy - c0y) * r + c0y);
}
