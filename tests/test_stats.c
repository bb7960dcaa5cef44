/* The experiments' statistics (cli/stats.c): Student's t quantile, the
 * t interval of a mean and the Wilson interval of a proportion, against
 * values computed independently (R: qt(0.975, df); t.test; prop.test
 * without continuity correction, i.e. binom::binom.wilson). */
#include <criterion/criterion.h>
#include <math.h>

#include "cli/stats.h"

Test(stats, t_quantile)
{
    cr_expect(isnan(stats_t975(0)));
    cr_expect_float_eq(stats_t975(1), 12.706, 1e-9);
    cr_expect_float_eq(stats_t975(4), 2.776, 1e-9);
    cr_expect_float_eq(stats_t975(19), 2.093, 1e-9);
    cr_expect_float_eq(stats_t975(30), 2.042, 1e-9);
    /* above the table: the expansion, against qt(0.975, df) */
    cr_expect_float_eq(stats_t975(31), 2.039513, 2e-4);
    cr_expect_float_eq(stats_t975(40), 2.021075, 2e-4);
    cr_expect_float_eq(stats_t975(60), 2.000298, 1e-4);
    cr_expect_float_eq(stats_t975(120), 1.979930, 1e-4);
    cr_expect_float_eq(stats_t975(100000), 1.959987, 1e-4);
    /* the table joins the expansion smoothly: decreasing throughout */
    for (int df = 1; df < 200; ++df) cr_expect_gt(stats_t975(df), stats_t975(df + 1), "df %d", df);
}

Test(stats, mean_interval_of_a_known_sample)
{
    /* mean 5, sd sqrt(32/7) = 2.13809, t(7) 2.365: 5 +- 1.78781 */
    const double x[8] = {2, 4, 4, 4, 5, 5, 7, 9};
    stats_mean_t m = stats_mean_ci(x, 8);
    cr_expect_eq(m.n, 8);
    cr_expect_float_eq(m.mean, 5.0, 1e-12);
    cr_expect_float_eq(m.sd, sqrt(32.0 / 7.0), 1e-12);
    cr_expect_float_eq(m.lo, 5.0 - 2.365 * sqrt(32.0 / 7.0) / sqrt(8.0), 1e-12);
    cr_expect_float_eq(m.hi, 5.0 + 2.365 * sqrt(32.0 / 7.0) / sqrt(8.0), 1e-12);
    cr_expect_float_eq(m.lo, 3.21219, 1e-4);
    /* a constant sample: a zero-width interval */
    const double c[3] = {53, 53, 53};
    m = stats_mean_ci(c, 3);
    cr_expect_float_eq(m.lo, 53.0, 1e-12);
    cr_expect_float_eq(m.hi, 53.0, 1e-12);
    /* one value: a mean, no interval; none: nothing */
    m = stats_mean_ci(x, 1);
    cr_expect_float_eq(m.mean, 2.0, 1e-12);
    cr_expect(isnan(m.lo) && isnan(m.hi) && isnan(m.sd));
    m = stats_mean_ci(x, 0);
    cr_expect(isnan(m.mean));
}

Test(stats, wilson_interval)
{
    stats_prop_t p = stats_wilson(5, 10);
    cr_expect_float_eq(p.p, 0.5, 1e-12);
    cr_expect_float_eq(p.lo, 0.2365931, 1e-6);
    cr_expect_float_eq(p.hi, 0.7634069, 1e-6);
    p = stats_wilson(0, 10); /* not empty at k = 0 */
    cr_expect_float_eq(p.lo, 0.0, 1e-12);
    cr_expect_float_eq(p.hi, 0.2775328, 1e-6);
    p = stats_wilson(10, 10);
    cr_expect_float_eq(p.lo, 0.7224672, 1e-6);
    cr_expect_float_eq(p.hi, 1.0, 1e-12);
    p = stats_wilson(33, 60); /* the paper's baseline: 33 stuck trials of 60 */
    cr_expect_float_eq(p.lo, 0.42492, 1e-4);
    cr_expect_float_eq(p.hi, 0.66906, 1e-4);
    p = stats_wilson(1, 0);
    cr_expect(isnan(p.p) && isnan(p.lo) && isnan(p.hi));
    p = stats_wilson(11, 10);
    cr_expect(isnan(p.p));
}
