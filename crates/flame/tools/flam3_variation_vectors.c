/*
 * Reference vectors for warpmc-flame's variations, computed by flam3 3.1.1.
 *
 * This program is build tooling only: it is compiled against flam3's own
 * sources (GPL, not part of this repository) and writes
 * crates/flame/tests/data/variations/flam3_vectors.txt, which
 * crates/flame/tests/variations.rs compares the Rust code against.
 *
 * Regenerate (needs gcc and libxml2's headers; flam3-3.1.1 unpacked in
 * $FLAM3, e.g. from https://github.com/scottdraves/flam3/releases):
 *
 *   FLAM3=/tmp/flam3src crates/flame/tools/flam3_variation_vectors.sh
 *
 * Everything about a case goes through flam3's public paths:
 *  - the xform is written as XML and read by flam3_parse_xml2, so parameter
 *    attributes are flam3's parser's names and unset ones take flam3's
 *    defaults (initialize_xforms);
 *  - which parameters a variation has, and their defaults, are learnt from
 *    flam3_print_xform (flam3's genome writer), not from a list kept here
 *    (except separation's, which that writer forgets: see learn());
 *  - the point goes through prepare_precalc_flags, xform_precalc and
 *    apply_xform, i.e. flam3's pre-affine map, pre_blur, the shared
 *    precalculations, every variation in flam3's order, and its bad-value
 *    test (the post map is the identity).
 *
 * flam3's three random functions are replaced here (flam3.c's own copies
 * are renamed away when it is compiled): uniforms and bits are made from a
 * stream of 32-bit words exactly as warpmc_rng's RandomSource makes
 * next_f64 (two words, the first the low half, top 53 bits times 2^-53) and
 * a bit (one word, its low bit). The words each case consumed are logged,
 * so the Rust test can replay them and must consume exactly as many, in
 * the same order. Some cases fix every uniform to a given value instead
 * (0, 1/4, 1/2, 3/4, 1 - 2^-10: the ends and boarders' threshold).
 * flam3_random_isaac_11 is only called by apply_xform's bad-value
 * fallback; such a case is marked "bad" instead.
 *
 * Numbers given to flam3 are short decimal strings, parsed by strtod here
 * and by Rust's f64::from_str in the test, so both get the same doubles.
 * Results are printed with 17 significant digits.
 *
 * Output, whitespace separated, one record per line:
 *   N <index> <name>                          flam3_variation_names
 *   P <index> <n> (<attr> <default>)*         parameters as flam3_print_xform
 *                                             writes them (%g precision)
 *   V <nvar> (<index> <weight> <np> (<attr> <value>)*)*
 *     <a b c d e f> <x> <y> <nwords> <word>* ok|bad <qx> <qy>
 *                                             one call of apply_xform: the
 *                                             xform's variations with their
 *                                             parameters, its coefs in XML
 *                                             order, the point, the words
 *                                             drawn, and flam3's result
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "private.h"
#include "variations.h"

/* ---- the replacement random source ---------------------------------- */

static unsigned long long word_state = 0x243F6A8885A308D3ULL;
static unsigned int words[4096];
static int nwords;
static int fell_back;

static unsigned long long splitmix(unsigned long long *s) {
    unsigned long long z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static unsigned int next_word(void) {
    unsigned int w = (unsigned int)(splitmix(&word_state) >> 32);
    if (nwords < (int)(sizeof words / sizeof words[0]))
        words[nwords] = w;
    nwords++;
    return w;
}

/* When not negative, every uniform is this value (a multiple of 2^-53);
 * the words logged are the ones that give it. */
static double forced_u = -1.0;

double flam3_random_isaac_01(randctx *ct) {
    (void)ct;
    if (forced_u >= 0.0) {
        unsigned long long x = (unsigned long long)(forced_u * 9007199254740992.0) << 11;
        words[nwords++] = (unsigned int)x;
        words[nwords++] = (unsigned int)(x >> 32);
        return forced_u;
    }
    unsigned long long lo = next_word();
    unsigned long long hi = next_word();
    return (double)((lo | (hi << 32)) >> 11) * (1.0 / 9007199254740992.0);
}

int flam3_random_isaac_bit(randctx *ct) {
    (void)ct;
    return (int)(next_word() & 1u);
}

double flam3_random_isaac_11(randctx *ct) {
    (void)ct;
    fell_back = 1;
    return 0.0;
}

/* ---- the case generator (independent of the word stream) ------------ */

static unsigned long long case_state = 0x13198A2E03707344ULL;

static double uniform(double lo, double hi) {
    return lo + (hi - lo) * (double)(splitmix(&case_state) >> 11) * (1.0 / 9007199254740992.0);
}

static int below(int n) { return (int)(splitmix(&case_state) % (unsigned long long)n); }

/* A decimal string with `digits` decimals. */
static void decimal(char *out, double v, int digits) {
    sprintf(out, "%.*f", digits, v);
    if (atof(out) == 0.0)
        strcpy(out, "0");
}

/* ---- flam3's own view of the variations ----------------------------- */

#define MAXP 16
struct var_info {
    int np;
    char names[MAXP][64];
    char defaults[MAXP][32];
};
static struct var_info info[flam3_nvariations];

/* The genomes parsed here are small and few; they are not freed. */
static const char *flame_open = "<flame size=\"10 10\" center=\"0 0\" scale=\"1\">";

static flam3_genome *parse(const char *xml) {
    int n = 0;
    char *copy = strdup(xml);
    flam3_genome *g = flam3_parse_xml2(copy, "vectors", flam3_defaults_on, &n);
    free(copy);
    if (g == NULL || n != 1 || g->num_xforms != 1) {
        fprintf(stderr, "flam3 did not parse: %s\n", xml);
        exit(1);
    }
    return g;
}

static int is_variation_name(const char *s) {
    for (int j = 0; j < flam3_nvariations; j++)
        if (!strcmp(s, flam3_variation_names[j]))
            return 1;
    return 0;
}

/* Runs flam3_print_xform on an xform with only variation v and collects
 * the attributes it writes that are neither xform attributes nor
 * variation weights: v's parameters, with flam3's defaults. */
static void learn(int v) {
    char xml[512];
    snprintf(xml, sizeof xml, "%s<xform weight=\"1\" color=\"0\" %s=\"1\"/></flame>", flame_open,
             flam3_variation_names[v]);
    flam3_genome *g = parse(xml);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    double chaos_row[1] = {1.0};
    flam3_print_xform(m, &g->xform[0], 0, 1, chaos_row, 0);
    fclose(m);
    static const char *xform_attrs[] = {"weight", "color", "color_speed", "symmetry", "animate",
                                        "opacity", "coefs", "post", "chaos", "var_color", NULL};
    info[v].np = 0;
    char *p = buf;
    for (;;) {
        char *eq = strstr(p, "=\"");
        if (eq == NULL)
            break;
        char *start = eq;
        while (start > p && start[-1] != ' ' && start[-1] != '<')
            start--;
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(eq - start), start);
        char *vend = strchr(eq + 2, '"');
        char value[32];
        snprintf(value, sizeof value, "%.*s", (int)(vend - (eq + 2)), eq + 2);
        p = vend + 1;
        int skip = is_variation_name(name);
        for (int k = 0; xform_attrs[k]; k++)
            if (!strcmp(name, xform_attrs[k]))
                skip = 1;
        if (!skip) {
            struct var_info *vi = &info[v];
            strcpy(vi->names[vi->np], name);
            strcpy(vi->defaults[vi->np], value);
            vi->np++;
        }
    }
    free(buf);

    /* flam3's writer never sets its flag for separation, so it drops that
     * variation's parameters; they are listed here instead, and checked
     * against the fields flam3's parser fills (defaults and a set value). */
    if (v == VAR_SEPARATION && info[v].np == 0) {
        static const char *names[] = {"separation_x", "separation_xinside", "separation_y",
                                      "separation_yinside"};
        flam3_xform *x = &g->xform[0];
        double defaults[] = {x->separation_x, x->separation_xinside, x->separation_y,
                             x->separation_yinside};
        for (int k = 0; k < 4; k++) {
            strcpy(info[v].names[k], names[k]);
            snprintf(info[v].defaults[k], sizeof info[v].defaults[k], "%g", defaults[k]);
            snprintf(xml, sizeof xml, "%s<xform weight=\"1\" color=\"0\" separation=\"1\" %s=\"0.625\"/></flame>",
                     flame_open, names[k]);
            flam3_xform *y = &parse(xml)->xform[0];
            double set[] = {y->separation_x, y->separation_xinside, y->separation_y, y->separation_yinside};
            if (set[k] != 0.625) {
                fprintf(stderr, "flam3 does not read %s\n", names[k]);
                exit(1);
            }
        }
        info[v].np = 4;
    }
}

/* ---- one case ------------------------------------------------------- */

struct var_case {
    int index;
    char weight[32];
    int np;
    int pidx[MAXP];
    char values[MAXP][32];
};

/* Returns the number of words drawn. */
static int run_case(const struct var_case *vars, int nvar, char coefs[6][32], const char *x,
                    const char *y) {
    char xml[8192];
    int at = snprintf(xml, sizeof xml, "%s<xform weight=\"1\" color=\"0\" coefs=\"%s %s %s %s %s %s\"",
                      flame_open, coefs[0], coefs[1], coefs[2], coefs[3], coefs[4], coefs[5]);
    for (int i = 0; i < nvar; i++) {
        const struct var_case *c = &vars[i];
        at += snprintf(xml + at, sizeof xml - at, " %s=\"%s\"", flam3_variation_names[c->index], c->weight);
        for (int k = 0; k < c->np; k++)
            at += snprintf(xml + at, sizeof xml - at, " %s=\"%s\"", info[c->index].names[c->pidx[k]],
                           c->values[k]);
    }
    snprintf(xml + at, sizeof xml - at, "/></flame>");
    flam3_genome *g = parse(xml);
    if (prepare_precalc_flags(g)) {
        fprintf(stderr, "prepare_precalc_flags failed: %s\n", xml);
        exit(1);
    }
    xform_precalc(g, 0);
    double p[4] = {atof(x), atof(y), 0.5, 1.0}, q[4];
    nwords = 0;
    fell_back = 0;
    int bad = apply_xform(g, 0, p, q, NULL);
    if (bad != fell_back || nwords > (int)(sizeof words / sizeof words[0])) {
        fprintf(stderr, "unexpected draws in %s\n", xml);
        exit(1);
    }

    printf("V %d", nvar);
    for (int i = 0; i < nvar; i++) {
        const struct var_case *c = &vars[i];
        printf(" %d %s %d", c->index, c->weight, c->np);
        for (int k = 0; k < c->np; k++)
            printf(" %s %s", info[c->index].names[c->pidx[k]], c->values[k]);
    }
    for (int k = 0; k < 6; k++)
        printf(" %s", coefs[k]);
    printf(" %s %s %d", x, y, nwords);
    for (int k = 0; k < nwords; k++)
        printf(" %u", words[k]);
    if (bad)
        printf(" bad 0 0\n");
    else
        printf(" ok %.17g %.17g\n", q[0], q[1]);
    return nwords;
}

/* Parameter values: style 0 keeps flam3's defaults (no attribute), 1 is
 * uniform in [-1.5, 1.5], 2 uniform in [0.1, 3], 3 a nonzero integer in
 * [-5, 5] (powers, counts, slices), 4 an integer in [2, 7], 5 zero (the
 * degenerate cases: empty rectangles, zero moduli ...), 6 and 7 uniform
 * in [6.5, 10] and [-10, -6.5] (disc2's twist beyond +-2 pi, large
 * counts), 8 the first half of the parameters in [0.5, 1.5] and the rest
 * zero (curve's amplitudes with zero widths ...). flam3's parser
 * clamps super_shape_rnd to [0, 1] (the genome reader's job, not the
 * variation's), so it is drawn there. */
static void make_params(struct var_case *c, int style) {
    c->np = 0;
    if (style == 0)
        return;
    for (int k = 0; k < info[c->index].np; k++) {
        double v;
        switch (style) {
        case 1: v = uniform(-1.5, 1.5); break;
        case 2: v = uniform(0.1, 3.0); break;
        case 3: v = (below(2) ? 1 : -1) * (1 + below(5)); break;
        case 4: v = 2 + below(6); break;
        case 5: v = 0.0; break;
        case 6: v = uniform(6.5, 10.0); break;
        case 7: v = uniform(-10.0, -6.5); break;
        default: v = 2 * k < info[c->index].np ? uniform(0.5, 1.5) : 0.0; break;
        }
        if (!strcmp(info[c->index].names[k], "super_shape_rnd"))
            v = uniform(0.0, 1.0);
        c->pidx[c->np] = k;
        decimal(c->values[c->np], v, 3);
        c->np++;
    }
}

static void make_weight(struct var_case *c) {
    double w = uniform(0.2, 1.6);
    if (below(4) == 0)
        w = -w;
    decimal(c->weight, w, 3);
}

static void random_coefs(char coefs[6][32]) {
    if (below(4) == 0) {
        strcpy(coefs[0], "1"); strcpy(coefs[1], "0"); strcpy(coefs[2], "0");
        strcpy(coefs[3], "1"); strcpy(coefs[4], "0"); strcpy(coefs[5], "0");
        return;
    }
    for (int k = 0; k < 4; k++)
        decimal(coefs[k], uniform(-1.2, 1.2), 4);
    for (int k = 4; k < 6; k++)
        decimal(coefs[k], uniform(-0.8, 0.8), 4);
}

int main(void) {
    for (int v = 0; v < flam3_nvariations; v++)
        printf("N %d %s\n", v, flam3_variation_names[v]);
    for (int v = 0; v < flam3_nvariations; v++) {
        learn(v);
        printf("P %d %d", v, info[v].np);
        for (int k = 0; k < info[v].np; k++)
            printf(" %s %s", info[v].names[k], info[v].defaults[k]);
        printf("\n");
    }

    /* Each variation alone: flam3's defaults and six styles of
     * parameters, three random points each (random affine maps); eight
     * points for those without parameters. */
    for (int v = 0; v < flam3_nvariations; v++) {
        int styles = info[v].np ? 9 : 1;
        int draws = 0;
        int points = info[v].np ? 3 : 6;
        for (int s = 0; s < styles; s++) {
            for (int pt = 0; pt < points; pt++) {
                struct var_case c = {.index = v};
                make_weight(&c);
                make_params(&c, s);
                char coefs[6][32], x[32], y[32];
                random_coefs(coefs);
                decimal(x, uniform(-1.6, 1.6), 4);
                decimal(y, uniform(-1.6, 1.6), 4);
                draws += run_case(&c, 1, coefs, x, y);
            }
        }
        /* The guards and ties: the origin, the axes, tiny points (with
         * given and with zero parameters), the diagonals; identity map. */
        static const struct { const char *x, *y; int style; const char *weight; } edge[] = {
            {"0", "0", 0, NULL},          {"0", "0.7", 0, NULL},         {"0", "0.7", 2, NULL},
            {"-0.6", "0", 0, NULL},       {"-0.6", "0", 2, NULL},        {"1.3", "0", 2, NULL},
            {"0", "-1.3", 2, NULL},       {"1e-12", "-2e-12", 2, NULL},  {"1e-12", "-2e-12", 8, NULL},
            {"0.25", "0.25", 2, NULL},    {"-0.75", "0.75", 1, NULL},    {"0", "-2", 0, NULL},
            /* |p| equal to the weight (loonie, whorl, lazysusan) */
            {"0.75", "0", 0, "0.75"},     {"0.75", "0", 2, "0.75"}};
        for (unsigned e = 0; e < sizeof edge / sizeof edge[0]; e++) {
            struct var_case c = {.index = v};
            make_weight(&c);
            if (edge[e].weight)
                strcpy(c.weight, edge[e].weight);
            make_params(&c, edge[e].style);
            char coefs[6][32] = {"1", "0", "0", "1", "0", "0"};
            run_case(&c, 1, coefs, edge[e].x, edge[e].y);
        }
        /* Random variations with given uniforms: the ends of [0, 1) and
         * the thresholds (boarders' 0.75), also on the diagonals. */
        if (draws > 0) {
            static const struct { double u; const char *x, *y; } forced[] = {
                {0.0, NULL, NULL}, {0.25, "0.25", "0.25"}, {0.5, "-0.75", "0.75"},
                {0.75, NULL, NULL}, {0.75, "0.25", "-0.25"}, {0.9990234375, NULL, NULL}};
            for (unsigned f = 0; f < sizeof forced / sizeof forced[0]; f++) {
                struct var_case c = {.index = v};
                make_weight(&c);
                make_params(&c, 2);
                char coefs[6][32] = {"1", "0", "0", "1", "0", "0"}, x[32], y[32];
                if (forced[f].x) {
                    strcpy(x, forced[f].x);
                    strcpy(y, forced[f].y);
                } else {
                    decimal(x, uniform(-1.6, 1.6), 4);
                    decimal(y, uniform(-1.6, 1.6), 4);
                }
                forced_u = forced[f].u;
                run_case(&c, 1, coefs, x, y);
                forced_u = -1.0;
            }
        }
    }

    /* Several variations in one xform (flam3 sums them in index order,
     * after pre_blur has moved the point), sometimes with pre_blur. */
    for (int n = 0; n < 250; n++) {
        struct var_case cs[6];
        int nvar = 2 + below(4);
        int used[flam3_nvariations] = {0};
        for (int i = 0; i < nvar; i++) {
            int v;
            do
                v = (i == 0 && below(3) == 0) ? VAR_PRE_BLUR : below(flam3_nvariations);
            while (used[v]);
            used[v] = 1;
            cs[i] = (struct var_case){.index = v};
            make_weight(&cs[i]);
            make_params(&cs[i], below(3));
        }
        char coefs[6][32], x[32], y[32];
        random_coefs(coefs);
        decimal(x, uniform(-1.6, 1.6), 4);
        decimal(y, uniform(-1.6, 1.6), 4);
        run_case(cs, nvar, coefs, x, y);
    }
    return 0;
}
