/* Test vectors for warpmc-flame's variations, computed by flam3 3.1.1 itself.
 *
 * Build against flam3's sources (not part of this repository; GPL), e.g.
 *
 *   git clone https://github.com/scottdraves/flam3 /tmp/flam3src
 *   gcc -O0 -I/tmp/flam3src -I/usr/include/libxml2 \
 *       crates/flame/tools/flam3_variation_vectors.c \
 *       /tmp/flam3src/variations.c /tmp/flam3src/interpolation.c -lm -o /tmp/vectors
 *   /tmp/vectors > crates/flame/tests/data/variations/flam3_vectors.txt
 *
 * flam3's random draws are replaced by a replayed list of uniforms (exact
 * multiples of 2^-53) and logged, so the Rust test can feed the same draws.
 * Output, one case per line:
 *   index weight nparams p1..pn a b c d e f x y ndraws (u|b value)... qx qy
 * (coefs a..f in XML order; q is apply_xform's output with an identity post).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "private.h"
#include "variations.h"

/* interpolation.c refers to these; the harness never calls them. */
void flam3_copy_params(flam3_xform *d, flam3_xform *s, int n) { (void)d; (void)s; (void)n; abort(); }
void flam3_copyx(flam3_genome *d, flam3_genome *s, int a, int b) { (void)d; (void)s; (void)a; (void)b; abort(); }
int flam3_get_palette(int n, flam3_palette c, double h) { (void)n; (void)c; (void)h; abort(); }
void rgb2hsv(double *a, double *b) { (void)a; (void)b; abort(); }
void hsv2rgb(double *a, double *b) { (void)a; (void)b; abort(); }

static double draws[64];
static char kinds[64];
static int ndraws;
static unsigned long long lcg = 88172645463325252ULL;

static unsigned long long next53(void) {
    lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
    return lcg >> 11;
}

double flam3_random_isaac_01(randctx *ct) {
    (void)ct;
    double u = (double)next53() * (1.0 / 9007199254740992.0);
    draws[ndraws] = u;
    kinds[ndraws] = 'u';
    ndraws++;
    return u;
}

double flam3_random_isaac_11(randctx *ct) {
    return 2.0 * flam3_random_isaac_01(ct) - 1.0;
}

int flam3_random_isaac_bit(randctx *ct) {
    (void)ct;
    int b = (int)(next53() & 1);
    draws[ndraws] = b;
    kinds[ndraws] = 'b';
    ndraws++;
    return b;
}

/* The parameter attributes of each variation, in warpmc's order (the Rust
 * table); set through flam3's own field names. */
static void set_param(flam3_xform *x, const char *name, double v);

struct param_list { const char *names[8]; int n; };
extern const struct param_list PARAMS[];

int main(void) {
    static const double points[][2] = {{0.3, -0.7}, {-1.3, 0.45}, {0.05, 0.11}, {2.2, 1.7}};
    static const double coefs[][6] = {{1, 0, 0, 1, 0, 0}, {0.8, -0.3, 0.4, 0.9, 0.25, -0.15}};
    for (int v = 0; v < flam3_nvariations; v++) {
        for (int c = 0; c < 2; c++) {
            for (int pi = 0; pi < 4; pi++) {
                flam3_genome cp;
                memset(&cp, 0, sizeof(cp));
                cp.num_xforms = 1;
                cp.final_xform_index = -1;
                cp.xform = calloc(1, sizeof(flam3_xform));
                initialize_xforms(&cp, 0);
                flam3_xform *x = &cp.xform[0];
                x->density = 1.0;
                x->var[0] = 0.0;
                double w = 0.75 + 0.1 * c;
                x->var[v] = w;
                /* Non-default parameters derived from the case number. */
                double pv[8];
                for (int k = 0; k < PARAMS[v].n; k++) {
                    pv[k] = 0.35 + 0.6 * k + 0.45 * c + 0.2 * (pi & 1);
                    set_param(x, PARAMS[v].names[k], pv[k]);
                }
                x->c[0][0] = coefs[c][0]; x->c[0][1] = coefs[c][1];
                x->c[1][0] = coefs[c][2]; x->c[1][1] = coefs[c][3];
                x->c[2][0] = coefs[c][4]; x->c[2][1] = coefs[c][5];
                prepare_precalc_flags(&cp);
                xform_precalc(&cp, 0);
                double p[4] = {points[pi][0], points[pi][1], 0.5, 1.0}, q[4];
                ndraws = 0;
                int bad = apply_xform(&cp, 0, p, q, NULL);
                if (bad) continue; /* flam3 replaced the point: not a test of the formula */
                printf("%d %.17g %d", v, w, PARAMS[v].n);
                for (int k = 0; k < PARAMS[v].n; k++) printf(" %.17g", pv[k]);
                for (int k = 0; k < 6; k++) printf(" %.17g", coefs[c][k]);
                printf(" %.17g %.17g %d", p[0], p[1], ndraws);
                for (int k = 0; k < ndraws; k++) printf(" %c %.17g", kinds[k], draws[k]);
                printf(" %.17g %.17g\n", q[0], q[1]);
                free(cp.xform);
            }
        }
    }
    return 0;
}
const struct param_list PARAMS[] = {
    {{0}, 0}, /* linear */
    {{0}, 0}, /* sinusoidal */
    {{0}, 0}, /* spherical */
    {{0}, 0}, /* swirl */
    {{0}, 0}, /* horseshoe */
    {{0}, 0}, /* polar */
    {{0}, 0}, /* handkerchief */
    {{0}, 0}, /* heart */
    {{0}, 0}, /* disc */
    {{0}, 0}, /* spiral */
    {{0}, 0}, /* hyperbolic */
    {{0}, 0}, /* diamond */
    {{0}, 0}, /* ex */
    {{0}, 0}, /* julia */
    {{0}, 0}, /* bent */
    {{0}, 0}, /* waves */
    {{0}, 0}, /* fisheye */
    {{0}, 0}, /* popcorn */
    {{0}, 0}, /* exponential */
    {{0}, 0}, /* power */
    {{0}, 0}, /* cosine */
    {{0}, 0}, /* rings */
    {{0}, 0}, /* fan */
    {{"blob_low", "blob_high", "blob_waves"}, 3}, /* blob */
    {{"pdj_a", "pdj_b", "pdj_c", "pdj_d"}, 4}, /* pdj */
    {{"fan2_x", "fan2_y"}, 2}, /* fan2 */
    {{"rings2_val"}, 1}, /* rings2 */
    {{0}, 0}, /* eyefish */
    {{0}, 0}, /* bubble */
    {{0}, 0}, /* cylinder */
    {{"perspective_angle", "perspective_dist"}, 2}, /* perspective */
    {{0}, 0}, /* noise */
    {{"julian_power", "julian_dist"}, 2}, /* julian */
    {{"juliascope_power", "juliascope_dist"}, 2}, /* juliascope */
    {{0}, 0}, /* blur */
    {{0}, 0}, /* gaussian_blur */
    {{"radial_blur_angle"}, 1}, /* radial_blur */
    {{"pie_slices", "pie_rotation", "pie_thickness"}, 3}, /* pie */
    {{"ngon_sides", "ngon_power", "ngon_circle", "ngon_corners"}, 4}, /* ngon */
    {{"curl_c1", "curl_c2"}, 2}, /* curl */
    {{"rectangles_x", "rectangles_y"}, 2}, /* rectangles */
    {{0}, 0}, /* arch */
    {{0}, 0}, /* tangent */
    {{0}, 0}, /* square */
    {{0}, 0}, /* rays */
    {{0}, 0}, /* blade */
    {{0}, 0}, /* secant2 */
    {{0}, 0}, /* twintrian */
    {{0}, 0}, /* cross */
    {{"disc2_rot", "disc2_twist"}, 2}, /* disc2 */
    {{"super_shape_rnd", "super_shape_m", "super_shape_n1", "super_shape_n2", "super_shape_n3", "super_shape_holes"}, 6}, /* super_shape */
    {{"flower_petals", "flower_holes"}, 2}, /* flower */
    {{"conic_eccentricity", "conic_holes"}, 2}, /* conic */
    {{"parabola_height", "parabola_width"}, 2}, /* parabola */
    {{"bent2_x", "bent2_y"}, 2}, /* bent2 */
    {{"bipolar_shift"}, 1}, /* bipolar */
    {{0}, 0}, /* boarders */
    {{0}, 0}, /* butterfly */
    {{"cell_size"}, 1}, /* cell */
    {{"cpow_r", "cpow_i", "cpow_power"}, 3}, /* cpow */
    {{"curve_xamp", "curve_yamp", "curve_xlength", "curve_ylength"}, 4}, /* curve */
    {{0}, 0}, /* edisc */
    {{0}, 0}, /* elliptic */
    {{"escher_beta"}, 1}, /* escher */
    {{0}, 0}, /* foci */
    {{"lazysusan_spin", "lazysusan_space", "lazysusan_twist", "lazysusan_x", "lazysusan_y"}, 5}, /* lazysusan */
    {{0}, 0}, /* loonie */
    {{0}, 0}, /* pre_blur */
    {{"modulus_x", "modulus_y"}, 2}, /* modulus */
    {{"oscope_separation", "oscope_frequency", "oscope_amplitude", "oscope_damping"}, 4}, /* oscilloscope */
    {{0}, 0}, /* polar2 */
    {{"popcorn2_x", "popcorn2_y", "popcorn2_c"}, 3}, /* popcorn2 */
    {{0}, 0}, /* scry */
    {{"separation_x", "separation_xinside", "separation_y", "separation_yinside"}, 4}, /* separation */
    {{"split_xsize", "split_ysize"}, 2}, /* split */
    {{"splits_x", "splits_y"}, 2}, /* splits */
    {{"stripes_space", "stripes_warp"}, 2}, /* stripes */
    {{"wedge_angle", "wedge_hole", "wedge_count", "wedge_swirl"}, 4}, /* wedge */
    {{"wedge_julia_angle", "wedge_julia_count", "wedge_julia_power", "wedge_julia_dist"}, 4}, /* wedge_julia */
    {{"wedge_sph_angle", "wedge_sph_count", "wedge_sph_hole", "wedge_sph_swirl"}, 4}, /* wedge_sph */
    {{"whorl_inside", "whorl_outside"}, 2}, /* whorl */
    {{"waves2_scalex", "waves2_scaley", "waves2_freqx", "waves2_freqy"}, 4}, /* waves2 */
    {{0}, 0}, /* exp */
    {{0}, 0}, /* log */
    {{0}, 0}, /* sin */
    {{0}, 0}, /* cos */
    {{0}, 0}, /* tan */
    {{0}, 0}, /* sec */
    {{0}, 0}, /* csc */
    {{0}, 0}, /* cot */
    {{0}, 0}, /* sinh */
    {{0}, 0}, /* cosh */
    {{0}, 0}, /* tanh */
    {{0}, 0}, /* sech */
    {{0}, 0}, /* csch */
    {{0}, 0}, /* coth */
    {{"auger_freq", "auger_weight", "auger_sym", "auger_scale"}, 4}, /* auger */
    {{"flux_spread"}, 1}, /* flux */
    {{"mobius_re_a", "mobius_re_b", "mobius_re_c", "mobius_re_d", "mobius_im_a", "mobius_im_b", "mobius_im_c", "mobius_im_d"}, 8}, /* mobius */
};
static void set_param(flam3_xform *x, const char *name, double v) {
    if (!strcmp(name, "blob_low")) { x->blob_low = v; return; }
    if (!strcmp(name, "blob_high")) { x->blob_high = v; return; }
    if (!strcmp(name, "blob_waves")) { x->blob_waves = v; return; }
    if (!strcmp(name, "pdj_a")) { x->pdj_a = v; return; }
    if (!strcmp(name, "pdj_b")) { x->pdj_b = v; return; }
    if (!strcmp(name, "pdj_c")) { x->pdj_c = v; return; }
    if (!strcmp(name, "pdj_d")) { x->pdj_d = v; return; }
    if (!strcmp(name, "fan2_x")) { x->fan2_x = v; return; }
    if (!strcmp(name, "fan2_y")) { x->fan2_y = v; return; }
    if (!strcmp(name, "rings2_val")) { x->rings2_val = v; return; }
    if (!strcmp(name, "perspective_angle")) { x->perspective_angle = v; return; }
    if (!strcmp(name, "perspective_dist")) { x->perspective_dist = v; return; }
    if (!strcmp(name, "julian_power")) { x->julian_power = v; return; }
    if (!strcmp(name, "julian_dist")) { x->julian_dist = v; return; }
    if (!strcmp(name, "juliascope_power")) { x->juliascope_power = v; return; }
    if (!strcmp(name, "juliascope_dist")) { x->juliascope_dist = v; return; }
    if (!strcmp(name, "radial_blur_angle")) { x->radial_blur_angle = v; return; }
    if (!strcmp(name, "pie_slices")) { x->pie_slices = v; return; }
    if (!strcmp(name, "pie_rotation")) { x->pie_rotation = v; return; }
    if (!strcmp(name, "pie_thickness")) { x->pie_thickness = v; return; }
    if (!strcmp(name, "ngon_sides")) { x->ngon_sides = v; return; }
    if (!strcmp(name, "ngon_power")) { x->ngon_power = v; return; }
    if (!strcmp(name, "ngon_circle")) { x->ngon_circle = v; return; }
    if (!strcmp(name, "ngon_corners")) { x->ngon_corners = v; return; }
    if (!strcmp(name, "curl_c1")) { x->curl_c1 = v; return; }
    if (!strcmp(name, "curl_c2")) { x->curl_c2 = v; return; }
    if (!strcmp(name, "rectangles_x")) { x->rectangles_x = v; return; }
    if (!strcmp(name, "rectangles_y")) { x->rectangles_y = v; return; }
    if (!strcmp(name, "disc2_rot")) { x->disc2_rot = v; return; }
    if (!strcmp(name, "disc2_twist")) { x->disc2_twist = v; return; }
    if (!strcmp(name, "super_shape_rnd")) { x->super_shape_rnd = v; return; }
    if (!strcmp(name, "super_shape_m")) { x->super_shape_m = v; return; }
    if (!strcmp(name, "super_shape_n1")) { x->super_shape_n1 = v; return; }
    if (!strcmp(name, "super_shape_n2")) { x->super_shape_n2 = v; return; }
    if (!strcmp(name, "super_shape_n3")) { x->super_shape_n3 = v; return; }
    if (!strcmp(name, "super_shape_holes")) { x->super_shape_holes = v; return; }
    if (!strcmp(name, "flower_petals")) { x->flower_petals = v; return; }
    if (!strcmp(name, "flower_holes")) { x->flower_holes = v; return; }
    if (!strcmp(name, "conic_eccentricity")) { x->conic_eccentricity = v; return; }
    if (!strcmp(name, "conic_holes")) { x->conic_holes = v; return; }
    if (!strcmp(name, "parabola_height")) { x->parabola_height = v; return; }
    if (!strcmp(name, "parabola_width")) { x->parabola_width = v; return; }
    if (!strcmp(name, "bent2_x")) { x->bent2_x = v; return; }
    if (!strcmp(name, "bent2_y")) { x->bent2_y = v; return; }
    if (!strcmp(name, "bipolar_shift")) { x->bipolar_shift = v; return; }
    if (!strcmp(name, "cell_size")) { x->cell_size = v; return; }
    if (!strcmp(name, "cpow_r")) { x->cpow_r = v; return; }
    if (!strcmp(name, "cpow_i")) { x->cpow_i = v; return; }
    if (!strcmp(name, "cpow_power")) { x->cpow_power = v; return; }
    if (!strcmp(name, "curve_xamp")) { x->curve_xamp = v; return; }
    if (!strcmp(name, "curve_yamp")) { x->curve_yamp = v; return; }
    if (!strcmp(name, "curve_xlength")) { x->curve_xlength = v; return; }
    if (!strcmp(name, "curve_ylength")) { x->curve_ylength = v; return; }
    if (!strcmp(name, "escher_beta")) { x->escher_beta = v; return; }
    if (!strcmp(name, "lazysusan_spin")) { x->lazysusan_spin = v; return; }
    if (!strcmp(name, "lazysusan_space")) { x->lazysusan_space = v; return; }
    if (!strcmp(name, "lazysusan_twist")) { x->lazysusan_twist = v; return; }
    if (!strcmp(name, "lazysusan_x")) { x->lazysusan_x = v; return; }
    if (!strcmp(name, "lazysusan_y")) { x->lazysusan_y = v; return; }
    if (!strcmp(name, "modulus_x")) { x->modulus_x = v; return; }
    if (!strcmp(name, "modulus_y")) { x->modulus_y = v; return; }
    if (!strcmp(name, "oscope_separation")) { x->oscope_separation = v; return; }
    if (!strcmp(name, "oscope_frequency")) { x->oscope_frequency = v; return; }
    if (!strcmp(name, "oscope_amplitude")) { x->oscope_amplitude = v; return; }
    if (!strcmp(name, "oscope_damping")) { x->oscope_damping = v; return; }
    if (!strcmp(name, "popcorn2_x")) { x->popcorn2_x = v; return; }
    if (!strcmp(name, "popcorn2_y")) { x->popcorn2_y = v; return; }
    if (!strcmp(name, "popcorn2_c")) { x->popcorn2_c = v; return; }
    if (!strcmp(name, "separation_x")) { x->separation_x = v; return; }
    if (!strcmp(name, "separation_xinside")) { x->separation_xinside = v; return; }
    if (!strcmp(name, "separation_y")) { x->separation_y = v; return; }
    if (!strcmp(name, "separation_yinside")) { x->separation_yinside = v; return; }
    if (!strcmp(name, "split_xsize")) { x->split_xsize = v; return; }
    if (!strcmp(name, "split_ysize")) { x->split_ysize = v; return; }
    if (!strcmp(name, "splits_x")) { x->splits_x = v; return; }
    if (!strcmp(name, "splits_y")) { x->splits_y = v; return; }
    if (!strcmp(name, "stripes_space")) { x->stripes_space = v; return; }
    if (!strcmp(name, "stripes_warp")) { x->stripes_warp = v; return; }
    if (!strcmp(name, "wedge_angle")) { x->wedge_angle = v; return; }
    if (!strcmp(name, "wedge_hole")) { x->wedge_hole = v; return; }
    if (!strcmp(name, "wedge_count")) { x->wedge_count = v; return; }
    if (!strcmp(name, "wedge_swirl")) { x->wedge_swirl = v; return; }
    if (!strcmp(name, "wedge_julia_angle")) { x->wedge_julia_angle = v; return; }
    if (!strcmp(name, "wedge_julia_count")) { x->wedge_julia_count = v; return; }
    if (!strcmp(name, "wedge_julia_power")) { x->wedge_julia_power = v; return; }
    if (!strcmp(name, "wedge_julia_dist")) { x->wedge_julia_dist = v; return; }
    if (!strcmp(name, "wedge_sph_angle")) { x->wedge_sph_angle = v; return; }
    if (!strcmp(name, "wedge_sph_count")) { x->wedge_sph_count = v; return; }
    if (!strcmp(name, "wedge_sph_hole")) { x->wedge_sph_hole = v; return; }
    if (!strcmp(name, "wedge_sph_swirl")) { x->wedge_sph_swirl = v; return; }
    if (!strcmp(name, "whorl_inside")) { x->whorl_inside = v; return; }
    if (!strcmp(name, "whorl_outside")) { x->whorl_outside = v; return; }
    if (!strcmp(name, "waves2_scalex")) { x->waves2_scalex = v; return; }
    if (!strcmp(name, "waves2_scaley")) { x->waves2_scaley = v; return; }
    if (!strcmp(name, "waves2_freqx")) { x->waves2_freqx = v; return; }
    if (!strcmp(name, "waves2_freqy")) { x->waves2_freqy = v; return; }
    if (!strcmp(name, "auger_freq")) { x->auger_freq = v; return; }
    if (!strcmp(name, "auger_weight")) { x->auger_weight = v; return; }
    if (!strcmp(name, "auger_sym")) { x->auger_sym = v; return; }
    if (!strcmp(name, "auger_scale")) { x->auger_scale = v; return; }
    if (!strcmp(name, "flux_spread")) { x->flux_spread = v; return; }
    if (!strcmp(name, "mobius_re_a")) { x->mobius_re_a = v; return; }
    if (!strcmp(name, "mobius_re_b")) { x->mobius_re_b = v; return; }
    if (!strcmp(name, "mobius_re_c")) { x->mobius_re_c = v; return; }
    if (!strcmp(name, "mobius_re_d")) { x->mobius_re_d = v; return; }
    if (!strcmp(name, "mobius_im_a")) { x->mobius_im_a = v; return; }
    if (!strcmp(name, "mobius_im_b")) { x->mobius_im_b = v; return; }
    if (!strcmp(name, "mobius_im_c")) { x->mobius_im_c = v; return; }
    if (!strcmp(name, "mobius_im_d")) { x->mobius_im_d = v; return; }
    fprintf(stderr, "unknown parameter %s\n", name); exit(1);
}
