#!/bin/sh
# test_screen_nolapack.sh: the explorer without LAPACKE (NS_LAPACK_SONAME names a file that
# does not exist; the library is opened at first use, src/core/blasdl.c). It starts, shows
# the closed-form spectrum, says in the spectrum panel that the LAPACK column failed, keeps
# taking keys (eps changes: e divides it by 10) and quits with status 0.
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

START_ENV="NS_LAPACK_SONAME=libns-no-such-lapacke.so.3"
start 120 40
started
check "without LAPACKE: the explorer starts with the spectrum panel" wait_for "4 Spectrum of J"
check "  the LAPACK column says it failed" wait_for "LAPACK spectrum failed"
check "  the closed-form rank is still there" wait_for "rank 3 of 4 (closed form)"
keys e
check "  keys still work: e takes eps to 1e-06" wait_re "│e E = eps +1e-06"
keys q
check "q quits with status 0" wait_for "EXIT=0"
done_testing
