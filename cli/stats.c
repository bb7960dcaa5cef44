/* Statistics for the experiments' tables: see stats.h. */
#include "cli/stats.h"

#include <math.h>

/* t(0.975, df) for df = 1..30 (the standard table, 3 decimals). */
static const double t975_table[30] = {
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
    2.120,  2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
};

double stats_t975(int df)
{
    if (df < 1) return NAN;
    if (df <= 30) return t975_table[df - 1];
    /* Cornish-Fisher expansion of t in powers of 1/df around the normal
     * quantile z (Abramowitz and Stegun 26.7.5). */
    const double z = 1.959963984540054;
    double z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z, z9 = z7 * z * z;
    double n = (double)df;
    double g1 = (z3 + z) / 4.0;
    double g2 = (5.0 * z5 + 16.0 * z3 + 3.0 * z) / 96.0;
    double g3 = (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / 384.0;
    double g4 = (79.0 * z9 + 776.0 * z7 + 1482.0 * z5 - 1920.0 * z3 - 945.0 * z) / 92160.0;
    return z + g1 / n + g2 / (n * n) + g3 / (n * n * n) + g4 / (n * n * n * n);
}

stats_mean_t stats_mean_ci(const double* x, int n)
{
    stats_mean_t r = {.mean = NAN, .sd = NAN, .lo = NAN, .hi = NAN, .n = n < 0 ? 0 : n};
    if (n < 1) return r;
    double sum = 0.0;
    for (int i = 0; i < n; ++i) sum += x[i];
    r.mean = sum / n;
    if (n < 2) return r;
    double ss = 0.0;
    for (int i = 0; i < n; ++i) ss += (x[i] - r.mean) * (x[i] - r.mean);
    r.sd = sqrt(ss / (n - 1));
    double half = stats_t975(n - 1) * r.sd / sqrt((double)n);
    r.lo = r.mean - half;
    r.hi = r.mean + half;
    return r;
}

stats_prop_t stats_wilson(int k, int n)
{
    stats_prop_t r = {.p = NAN, .lo = NAN, .hi = NAN, .k = k, .n = n};
    if (n < 1 || k < 0 || k > n) return r;
    const double z = 1.959963984540054;
    double p = (double)k / n, z2 = z * z, nn = (double)n;
    double centre = (p + z2 / (2.0 * nn)) / (1.0 + z2 / nn);
    double half = z / (1.0 + z2 / nn) * sqrt(p * (1.0 - p) / nn + z2 / (4.0 * nn * nn));
    r.p = p;
    r.lo = fmax(0.0, centre - half);
    r.hi = fmin(1.0, centre + half);
    if (k == 0) r.lo = 0.0;
    if (k == n) r.hi = 1.0;
    return r;
}
