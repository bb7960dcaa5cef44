/* Small statistics for the experiments' tables: the mean of a sample with
 * its 95 % confidence interval from Student's t distribution, and the
 * Wilson score interval of a proportion. Pure functions, no allocation. */
#ifndef SHOAL_CLI_STATS_H
#define SHOAL_CLI_STATS_H

/* The two-sided 95 % quantile of Student's t with df degrees of freedom
 * (t such that P(|T| <= t) = 0.95): exact to 3 decimals from a table for
 * df 1..30, a Cornish-Fisher expansion above (within 1e-4 of the true
 * value); NAN for df < 1. */
double stats_t975(int df);

/* A sample's mean and 95 % confidence interval for its mean:
 * mean +- t975(n - 1) s / sqrt(n), s the sample standard deviation
 * (n - 1 in the denominator). With n < 2, lo and hi are NAN (no interval);
 * with n == 0 the mean is NAN too. */
typedef struct stats_mean_t {
    double mean, sd, lo, hi;
    int n;
} stats_mean_t;
stats_mean_t stats_mean_ci(const double* x, int n);

/* The Wilson score interval at 95 % (z = 1.959964) for k successes in n
 * trials: p = k / n and [lo, hi], which stays inside [0, 1] and is not
 * empty at k = 0 or k = n. With n == 0 all three are NAN. For a pooled
 * proportion of trials whose own probabilities differ, the binomial
 * variance it assumes is at least the true one: the interval is then
 * conservative. */
typedef struct stats_prop_t {
    double p, lo, hi;
    int k, n;
} stats_prop_t;
stats_prop_t stats_wilson(int k, int n);

#endif
