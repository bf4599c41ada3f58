/* estimators.h: constants of the sampling distribution of normal estimators.
 *
 * Pure functions of numbers; nothing allocated. Typical call:
 *   double c;
 *   if (ns_c4(8, &c, err)) return -1;   // E[std_ddof1] = c4(8) sigma = 0.965 sigma
 */
#ifndef NS_ESTIMATORS_H
#define NS_ESTIMATORS_H

/* log |Gamma(x)| (the C library's lgamma): +inf at 0 and the negative integers. */
double ns_lgamma(double x);
/* The bias constant of the sample standard deviation of n normal values,
 *   c4(n) = sqrt(2/(n-1)) Gamma(n/2) / Gamma((n-1)/2),   E[std_ddof1] = c4(n) sigma,
 * for a real n > 1 (c4(2) = sqrt(2/pi), c4 -> 1 - 1/(4n) as n grows). For n <= 300 it is
 * the ratio of tgamma values; above, the log of the ratio with z = (n-1)/2 is
 * lgamma(z + 1/2) - lgamma(z) by Stirling's series with the large terms cancelled by
 * hand: log c4 = z log1p(1/(2z)) - 1/2 + sum_k B_2k/(2k(2k-1)) ((z+1/2)^(1-2k) - z^(1-2k)),
 * so the result keeps full precision however large n is (plain lgamma differences lose
 * about log10(n log n) digits). 0, or -1 with err when n is not a number > 1. */
int ns_c4(double n, double *out, char *err);

#endif
