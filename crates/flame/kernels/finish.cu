// Finishing stages of a flame on the GPU: log-density scaling (with or
// without flam3's density-estimation blur), then the spatial filter and the
// tone map. Each kernel does what the CPU backend's function of the same
// stage does (render/density.rs, render/tonemap.rs), cell for cell, in
// double precision; only the order of the additions into the accumulation
// buffer differs (atomics), as it does between runs of the chaos game.
//
// FLAME_BUCKET (float or double, from the Rust code that builds the
// source: render/cuda/finish.rs) is the histogram's and the accumulation
// buffer's element type; a cell is four of them (r, g, b, alpha), and the
// hit count, where it differs from alpha, lives in a buffer of its own.

#ifndef FLAME_BUCKET
#error "FLAME_BUCKET (float or double) must be defined: the histogram's element type"
#endif
typedef FLAME_BUCKET bucket;

// A histogram channel as flam3-render's default histogram holds it:
// unsigned 32-bit, so never above 2^32 - 1 (render/histogram.rs,
// FLAM3_CEILING: held where read, which for additions that are never
// negative is the same as held where added).
__device__ __forceinline__ double channel(bucket v) {
    return fmin((double)v, 4294967295.0);
}

// Hits of a cell: the count buffer when there is one, else alpha.
__device__ __forceinline__ double cell_hits(const bucket *hist, const bucket *count, int has_count, long cell) {
    return has_count ? channel(count[cell]) : channel(hist[4 * cell + 3]);
}

__device__ __forceinline__ void add_cell(bucket *acc, long cell, double r, double g, double b, double a) {
    atomicAdd(acc + 4 * cell + 0, (bucket)r);
    atomicAdd(acc + 4 * cell + 1, (bucket)g);
    atomicAdd(acc + 4 * cell + 2, (bucket)b);
    atomicAdd(acc + 4 * cell + 3, (bucket)a);
}

// Without density estimation: every cell scaled by k1·ln(1 + a·k2)/a into
// its own accumulation cell (no other thread touches it: plain adds).
extern "C" __global__ void flame_log_scale(const bucket *__restrict__ hist, bucket *__restrict__ acc, long cells,
                                           double k1, double k2) {
    long cell = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (cell >= cells) return;
    double a = channel(hist[4 * cell + 3]);
    if (a == 0.0) return;
    double ls = k1 * log(1.0 + a * k2) / a;
    for (int c = 0; c < 4; ++c) {
        acc[4 * cell + c] += (bucket)(channel(hist[4 * cell + c]) * ls);
    }
}

// flam3's density estimation: each cell of the histogram with hits is
// spread over a kernel chosen by the hits around it (DensityFilters on
// the CPU: `coefs` holds kernel_size coefficients per kernel, the eighth of
// a square kernel below its diagonal, row by row; `widths` each kernel's
// width). One thread per cell; the spreading is a scatter with atomics.
extern "C" __global__ void flame_density(const bucket *__restrict__ hist, const bucket *__restrict__ count,
                                         int has_count, bucket *__restrict__ acc, int width, int height,
                                         int supersample, const double *__restrict__ coefs,
                                         const double *__restrict__ widths, int kernel_size, int max_index,
                                         double max_filtered_counts, double curve, double k1, double k2) {
    const int first = supersample - 1;
    int i = first + blockIdx.x * blockDim.x + threadIdx.x;
    int j = first + blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= width - (supersample - 1) || j >= height - (supersample - 1)) return;
    long cell = (long)j * width + i;
    double c3 = channel(hist[4 * cell + 3]);
    if (cell_hits(hist, count, has_count, cell) == 0.0 || c3 == 0.0) return;

    // Hits in the neighbourhood, scaled for equal iterations per area.
    const int ss = supersample / 2;
    double f = 0.0;
    for (int jj = j - ss; jj <= j + ss; ++jj) {
        for (int ii = i - ss; ii <= i + ss; ++ii) {
            f += cell_hits(hist, count, has_count, (long)jj * width + ii) / 255.0;
        }
    }
    if (supersample % 2 == 0) {
        double s = (double)supersample / (supersample + 1.0);
        f *= s * s;
    }
    // DensityFilters::select.
    long k;
    if (f > max_filtered_counts) {
        k = max_index;
    } else if (f <= 100.0) {
        k = (long)ceil(f) - 1;
    } else {
        k = 100 + (long)floor(pow(f - 100.0, curve));
    }
    k = k < 0 ? 0 : (k > max_index ? max_index : k);

    const int reach = (int)ceil(widths[k]) - 1;
    const double *kc = coefs + k * (long)kernel_size;
    const double base = k1 * log(1.0 + c3 * k2) / c3;
    const double r = channel(hist[4 * cell + 0]), g = channel(hist[4 * cell + 1]), b = channel(hist[4 * cell + 2]);
    int idx = 0;
    for (int jj = 0; jj <= reach; ++jj) {
        for (int ii = 0; ii <= jj; ++ii) {
            double coef = kc[idx++];
            if (coef == 0.0) continue;
            double ls = coef * base;
            double cr = r * ls, cg = g * ls, cb = b * ls, ca = c3 * ls;
            // The kernel's symmetric images of (ii, jj): 1, 4 or 8 cells.
            int offs[8][2];
            int n;
            if (jj == 0) {
                offs[0][0] = 0; offs[0][1] = 0;
                n = 1;
            } else if (ii == 0) {
                offs[0][0] = jj; offs[0][1] = 0;
                offs[1][0] = -jj; offs[1][1] = 0;
                offs[2][0] = 0; offs[2][1] = jj;
                offs[3][0] = 0; offs[3][1] = -jj;
                n = 4;
            } else {
                offs[0][0] = ii; offs[0][1] = jj;
                offs[1][0] = -ii; offs[1][1] = jj;
                offs[2][0] = ii; offs[2][1] = -jj;
                offs[3][0] = -ii; offs[3][1] = -jj;
                n = 4;
                if (ii != jj) {
                    offs[4][0] = jj; offs[4][1] = ii;
                    offs[5][0] = -jj; offs[5][1] = ii;
                    offs[6][0] = jj; offs[6][1] = -ii;
                    offs[7][0] = -jj; offs[7][1] = -ii;
                    n = 8;
                }
            }
            for (int m = 0; m < n; ++m) {
                int x = i + offs[m][0], y = j + offs[m][1];
                if (x >= 0 && x < width && y >= 0 && y < height) {
                    add_cell(acc, (long)y * width + x, cr, cg, cb, ca);
                }
            }
        }
    }
}

// ---- tone mapping (render/tonemap.rs, palette.rs) ----

#define PREFILTER_WHITE 255.0

// Tone-map constants, in this order.
struct ToneParams {
    double inv_gamma, vibrancy, gamma_threshold, highlight_power;
    double background[3];
    double transparent;
};

__device__ double calc_alpha(double density, double gamma, double linrange) {
    if (density > 0.0) {
        if (density < linrange) {
            double frac = density / linrange;
            return (1.0 - frac) * density * (pow(linrange, gamma) / linrange) + frac * pow(density, gamma);
        }
        return pow(density, gamma);
    }
    return 0.0;
}

__device__ void rgb_to_hsv(const double *rgb, double *hsv) {
    double r = rgb[0], g = rgb[1], b = rgb[2];
    double mx = r >= g ? (r >= b ? r : b) : (g >= b ? g : b);
    double mn = r <= g ? (r <= b ? r : b) : (g <= b ? g : b);
    double del = mx - mn;
    double s = mx != 0.0 ? del / mx : 0.0;
    double h = 0.0;
    if (s != 0.0) {
        double rc = (mx - r) / del, gc = (mx - g) / del, bc = (mx - b) / del;
        if (r == mx) {
            h = bc - gc;
        } else if (g == mx) {
            h = 2.0 + rc - bc;
        } else if (b == mx) {
            h = 4.0 + gc - rc;
        }
        if (h < 0.0) h += 6.0;
    }
    hsv[0] = h;
    hsv[1] = s;
    hsv[2] = mx;
}

__device__ void hsv_to_rgb(const double *hsv, double *rgb) {
    double h = hsv[0], s = hsv[1], v = hsv[2];
    if (isinf(h)) {
        h = 0.0;
    } else if (fabs(h) > 1e9) {
        h = h - 6.0 * floor(h / 6.0);
    }
    while (h >= 6.0) h -= 6.0;
    while (h < 0.0) h += 6.0;
    double j = floor(h);
    double f = h - j;
    double p = v * (1.0 - s), q = v * (1.0 - s * f), t = v * (1.0 - s * (1.0 - f));
    int ji = isnan(j) ? 0 : (int)j;
    switch (ji) {
        case 1: rgb[0] = q; rgb[1] = v; rgb[2] = p; break;
        case 2: rgb[0] = p; rgb[1] = v; rgb[2] = t; break;
        case 3: rgb[0] = p; rgb[1] = q; rgb[2] = v; break;
        case 4: rgb[0] = t; rgb[1] = p; rgb[2] = v; break;
        case 5: rgb[0] = v; rgb[1] = p; rgb[2] = q; break;
        default: rgb[0] = v; rgb[1] = t; rgb[2] = p; break;
    }
}

__device__ void calc_newrgb(const double *c, double ls, double highpow, double *out) {
    if (ls == 0.0 || (c[0] == 0.0 && c[1] == 0.0 && c[2] == 0.0)) {
        out[0] = out[1] = out[2] = 0.0;
        return;
    }
    double maxa = -1.0, maxc = 0.0;
    for (int k = 0; k < 3; ++k) {
        double a = ls * (c[k] / PREFILTER_WHITE);
        if (a > maxa) {
            maxa = a;
            maxc = c[k] / PREFILTER_WHITE;
        }
    }
    double newls = 255.0 / maxc;
    if (maxa > 255.0 && highpow >= 0.0) {
        double lsratio = pow(newls / ls, highpow);
        double full[3], hsv[3], rgb[3];
        for (int k = 0; k < 3; ++k) full[k] = newls * (c[k] / PREFILTER_WHITE) / 255.0;
        rgb_to_hsv(full, hsv);
        hsv[1] *= lsratio;
        hsv_to_rgb(hsv, rgb);
        for (int k = 0; k < 3; ++k) out[k] = rgb[k] * 255.0;
    } else {
        double adj = fmin(-highpow, 1.0);
        if (maxa <= 255.0) adj = 1.0;
        // tonemap.rs, calc_newrgb: ls alone where adj = 1.
        double s = adj == 1.0 ? ls : (1.0 - adj) * newls + adj * ls;
        for (int k = 0; k < 3; ++k) out[k] = s * (c[k] / PREFILTER_WHITE);
    }
}

// ToneMap::map: filtered (or, clipping early, cell) values t to display
// values, rgb in [0, 255] and alpha in [0, 1], into out[0..4].
__device__ void tone_map(const double *t, const ToneParams &tone, double *out) {
    double tmp = t[3] / PREFILTER_WHITE;
    double alpha = 0.0, ls = 0.0;
    if (t[3] > 0.0) {
        alpha = calc_alpha(tmp, tone.inv_gamma, tone.gamma_threshold);
        ls = tone.vibrancy * 256.0 * alpha / tmp;
    }
    alpha = fmin(fmax(alpha, 0.0), 1.0);
    double newrgb[3];
    calc_newrgb(t, ls, tone.highlight_power, newrgb);
    for (int k = 0; k < 3; ++k) {
        double a = newrgb[k] + (1.0 - tone.vibrancy) * 256.0 * pow(t[k] / PREFILTER_WHITE, tone.inv_gamma);
        if (tone.transparent == 0.0) {
            a += (1.0 - alpha) * tone.background[k];
        } else if (alpha > 0.0) {
            a /= alpha;
        } else {
            a = 0.0;
        }
        out[k] = isnan(a) ? 255.0 : fmin(fmax(a, 0.0), 255.0);  // NaN: ToneMap::map
    }
    out[3] = alpha;
}

// The early clip (tonemap.rs, clip_early): every accumulation cell, its
// values multiplied by `scale`, replaced by its display values.
extern "C" __global__ void flame_early_clip(bucket *__restrict__ acc, long cells, const ToneParams *__restrict__ tone_in,
                                            double scale) {
    long c = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cells) return;
    const ToneParams tone = *tone_in;
    bucket *cell = acc + 4 * c;
    double t[4], out[4];
    for (int k = 0; k < 4; ++k) t[k] = (double)cell[k] * scale;
    tone_map(t, tone, out);
    for (int k = 0; k < 4; ++k) cell[k] = (bucket)out[k];
}

// Spatial filter (fw × fw coefficients, row-major) and tone map: pixel
// (i, j) of the output reads the window whose corner is accumulation cell
// (offset + i·ss, first_row + offset + j·ss). Output: RGBA floats, rgb in
// [0, 255] and alpha in [0, 1]. early: the cells hold display values
// already (flame_early_clip), which are only clamped (tonemap.rs,
// clamp_filtered).
extern "C" __global__ void flame_filter_map(const bucket *__restrict__ acc, int acc_width, long first_row,
                                            const double *__restrict__ filter, int fw, int offset, int supersample,
                                            const ToneParams *__restrict__ tone_in, int early, int width, int height,
                                            float *__restrict__ out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= width || j >= height) return;
    const ToneParams tone = *tone_in;
    long x = offset + (long)i * supersample;
    long y = first_row + offset + (long)j * supersample;
    double t[4] = {0.0, 0.0, 0.0, 0.0};
    for (int jj = 0; jj < fw; ++jj) {
        const bucket *row = acc + 4 * ((y + jj) * acc_width + x);
        const double *krow = filter + jj * fw;
        for (int ii = 0; ii < fw; ++ii) {
            double k = krow[ii];
            t[0] += k * (double)row[4 * ii + 0];
            t[1] += k * (double)row[4 * ii + 1];
            t[2] += k * (double)row[4 * ii + 2];
            t[3] += k * (double)row[4 * ii + 3];
        }
    }
    double px[4];
    if (early) {
        for (int k = 0; k < 3; ++k) px[k] = isnan(t[k]) ? 255.0 : fmin(fmax(t[k], 0.0), 255.0);
        px[3] = isnan(t[3]) ? 1.0 : fmin(fmax(t[3], 0.0), 1.0);
    } else {
        tone_map(t, tone, px);
    }
    float *o = out + 4 * ((long)j * width + i);
    for (int k = 0; k < 4; ++k) o[k] = (float)px[k];
}
