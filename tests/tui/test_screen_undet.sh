#!/bin/sh
# test_screen_undet.sh: a shift probe whose tolerance covers every deviation y could show
# cannot fail, and says so (review N8: fp16 at 9998..10002 said "invariant" with a
# tolerance of 9.9e4 while y(x+10) spanned the whole output range).
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

start 120 40
started
lua 'set{x = {9998, 9999, 10001, 10002}, dtype = "fp16"}'
check "fp16 at 9998..: the shift probe is undetermined, not invariant" \
  wait_re "│x\+10  max\|y'-y\| [0-9.e+-]+ undet\. in fp16 *│"
check "  and the note says fp16 cannot resolve x, with the tolerance" \
  wait_re "│fp16 can't resolve x: tol 9\.9e\+04 *│"
# the default x in fp16: the probe can fail, so it has a verdict
lua 'set{x = {-2, -1, 1, 2}}'
check "the default x in fp16: the shift probe has a verdict" wait_re "│x\+10  max\|y'-y\| [0-9.e+-]+ (NOT )?invariant *│"
keys q
wait_for "EXIT=0"
done_testing
