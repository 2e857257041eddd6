#!/usr/bin/env python3
# Reproduces the coefficients of vm::erf (runtime/ops/vmath.h: erf_small_f, erfc_mid_f), printed
# as the float literals there. Minimax fits by Loeb's linearised least squares for rationals,
# with Lawson's reweighting towards the equioscillating error, on Chebyshev nodes, against
# mpmath references. The printed "log2 error" is before the coefficients are rounded to float;
# bench/vmath_exhaustive then measures the float function over every input.
#
# Usage (Debian's python3 has numpy and mpmath): /usr/bin/python3 bench/fit_erf.py
import mpmath as mp
import numpy as np

mp.mp.dps = 30


def fit(fn, weight, a, b, shift, m, n, nodes=3000, iterations=400):
    """N(v)/D(v) ~ fn(x), v = x - shift, D(0) = 1, minimising max |N/D - fn| / weight(x)."""
    xs = np.cos(np.linspace(np.pi, 0, nodes)) * (b - a) / 2 + (a + b) / 2
    v = xs - shift
    f = np.array([float(fn(mp.mpf(x))) for x in xs])
    w_err = np.array([weight(x) for x in xs])
    lawson, d_prev, best = np.ones(nodes) / nodes, np.ones(nodes), None
    for _ in range(iterations):
        w = np.sqrt(lawson) / (w_err * np.abs(d_prev))
        A = np.hstack([v[:, None] ** np.arange(m + 1),
                       -f[:, None] * v[:, None] ** np.arange(1, n + 1)])
        c, *_ = np.linalg.lstsq(A * w[:, None], f * w, rcond=None)
        num, den = c[:m + 1], np.concatenate([[1.0], c[m + 1:]])
        d_prev = np.polyval(den[::-1], v)
        err = (np.polyval(num[::-1], v) / d_prev - f) / w_err
        if best is None or np.max(np.abs(err)) < best[0]:
            best = (np.max(np.abs(err)), num, den)
        lawson = lawson * np.abs(err)
        lawson /= lawson.sum()
    return best


def floats(cs):
    return ", ".join("%.9ef" % np.float32(c) for c in cs)


c0 = float(np.float32(2 / np.sqrt(np.pi)))  # 0x1.20dd76p+0


def small(s):  # W(s) = erf(x)/x - c0, s = x^2
    x = mp.sqrt(s)
    return (mp.erf(x) / x if x > 0 else 2 / mp.sqrt(mp.pi)) - mp.mpf(c0)


def erf_over_x(s):  # the error of W is relative to erf(x)/x, i.e. to erf
    x = mp.sqrt(mp.mpf(s))
    return float(mp.erf(x) / x) if x > 0 else 1.128


e, w, _ = fit(small, erf_over_x, 1e-14, 0.875**2, 0, 5, 0, iterations=80)
print(f"erf_small_f W, s in [0, 0.875^2], log2 relative error {np.log2(e):.2f}:\n  {floats(w)}")
# erfc on [0.875, 4]: absolute error, weighted by 1 - 2.5 erfc(x) (tighter near 0.875, where
# erfc's own rounding errors reach 1 - erfc least scaled down).
e, num, den = fit(lambda x: mp.erfc(x), lambda x: 1.0 - 2.5 * float(mp.erfc(x)), 0.875, 4.0,
                  0.875, 6, 6)
print(f"erfc_mid_f N/D, v = a - 0.875, a in [0.875, 4], log2 weighted error {np.log2(e):.2f}:")
print(f"  N: {floats(num)}\n  D: {floats(den)}")
