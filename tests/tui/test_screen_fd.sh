#!/bin/sh
# test_screen_fd.sh: the Spectrum's finite-difference column is of the map on screen, in
# its dtype, accumulation and variance algorithm (review N5: it was computed in fp64 and
# labelled "the fp32 raw map"), and where that map cannot resolve a number the cell says
# "undet." instead of showing one.
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

start 120 40
started
# fp32 raw moments at 9998..10002: E[x^2] - E[x]^2 cancels to 0 at x +- h, so the fp32
# map is not finite there (the raw variance is negative: NaN; the review saw "inf" named for
# it); the fp64 map's quotient would be the exact 0.631194
lua 'set{x = {9998, 9999, 10001, 10002}, dtype = "fp32", algo = "raw", eps = 1e-2}'
check "fp32 raw: the FD line names the map" wait_for "FD: fp32 raw map, step"
check "  its bulk eigenvalue is undetermined, not the exact map's value" \
  wait_re "│bulk +2 +0\.631194 +0\.631194 +undet\. *│"
check "  and the panel says why" wait_for "FD undetermined in fp32: not finite"
# fp64 storage, fp16 accumulation: the radial eigenvalue (2.5e-6) is far below what an
# fp16 difference quotient resolves; the bulk one (0.63) is resolved
lua 'reset()'
lua 'set{acc = "fp16"}'
check "fp16 accumulation: the FD line names the map" wait_for "FD: fp64/fp16 twopass map, step 0.17"
check "  the radial eigenvalue is undetermined in it" wait_re "│radial +1 +2\.530e-06 +2\.530e-06 +undet\. *│"
check "  the bulk one is shown" wait_re "│bulk +2 +0\.632454 +0\.632454 +0\.63[0-9]+ *│"
# the Precision panel's sums run in index order, and its title says so (review N14: numpy's
# float32 var sums pairwise and keeps about 7 digits where these keep 4)
check "the Precision title names the summation order" wait_re "7 Precision: fp64, acc fp16, sequential"
keys q
wait_for "EXIT=0"
done_testing
