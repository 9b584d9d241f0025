#!/usr/bin/env python3
"""Spectral test of MWC multipliers (lag 1, base 2^32).

An MWC generator with multiplier a is, on its states z = c*2^32 + x, the
multiplicative generator z -> a*z mod m with m = a*2^32 - 1. This prints the
normalised figure of merit S_t = nu_t / (sqrt(gamma_t) * m^(1/t)) for
t = 2..6, where nu_t is the length of the shortest non-zero vector of the
dual lattice {h : h_1 + h_2 a + ... + h_t a^(t-1) = 0 mod m}, found by LLL
reduction (exact rational arithmetic; for t <= 6 the reduced basis holds the
shortest vector in practice). S_t = 1 is the best possible lattice.

    python3 crates/rng/tools/mwc_spectral.py [a ...]

With no arguments: the first and last multipliers of the shipped table, and
multipliers at several distances d = 2^32 - a.
"""
import math
import os
import random
import struct
import sys
from fractions import Fraction

GAMMA = {2: (4 / 3) ** 0.5, 3: 2 ** (1 / 3), 4: 2 ** 0.5, 5: 8 ** (1 / 5), 6: (64 / 3) ** (1 / 6)}


def lll(basis, delta=Fraction(3, 4)):
    b = [list(v) for v in basis]
    n = len(b)

    def dot(u, v):
        return sum(x * y for x, y in zip(u, v))

    def gram_schmidt():
        star, mu = [], [[Fraction(0)] * n for _ in range(n)]
        for i in range(n):
            v = [Fraction(x) for x in b[i]]
            for j in range(i):
                mu[i][j] = Fraction(dot(b[i], star[j])) / dot(star[j], star[j])
                v = [x - mu[i][j] * y for x, y in zip(v, star[j])]
            star.append(v)
        return star, mu

    star, mu = gram_schmidt()
    k = 1
    while k < n:
        for j in range(k - 1, -1, -1):
            q = round(mu[k][j])
            if q:
                b[k] = [x - q * y for x, y in zip(b[k], b[j])]
                star, mu = gram_schmidt()
        if dot(star[k], star[k]) >= (delta - mu[k][k - 1] ** 2) * dot(star[k - 1], star[k - 1]):
            k += 1
        else:
            b[k], b[k - 1] = b[k - 1], b[k]
            star, mu = gram_schmidt()
            k = max(k - 1, 1)
    return b


def merit(a, t):
    m = a * 2**32 - 1
    basis = [[m] + [0] * (t - 1)]
    for i in range(1, t):
        row = [(-pow(a, i, m)) % m] + [0] * (t - 1)
        row[i] = 1
        basis.append(row)
    nu = min(math.sqrt(sum(x * x for x in v)) for v in lll(basis))
    return nu / (math.sqrt(GAMMA[t]) * m ** (1 / t))


def main():
    if len(sys.argv) > 1:
        candidates = [int(a, 0) for a in sys.argv[1:]]
    else:
        here = os.path.dirname(os.path.abspath(__file__))
        data = open(os.path.join(here, "..", "data", "mwc-multipliers.u32le"), "rb").read()
        table = struct.unpack("<%dI" % (len(data) // 4), data)
        candidates = [4294967118, table[0], table[len(table) // 2], table[-1]]
        rng = random.Random(1)
        for e in (12, 16, 20, 24, 28):
            candidates.append(2**32 - (2**e + rng.randrange(2**e)))
    print("%12s %12s  %s" % ("a", "d=2^32-a", "  ".join("S_%d  " % t for t in range(2, 7))))
    for a in candidates:
        print("%12d %12d  %s" % (a, 2**32 - a, "  ".join("%.4f" % merit(a, t) for t in range(2, 7))))


if __name__ == "__main__":
    main()
