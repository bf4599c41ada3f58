#!/bin/sh
# test_screen_footer.sh: the statistics lines show every field they name, whole (explorer
# review B8: the Input panel's footer dropped max and rms when the panel was narrow, and the
# Output's stat line dropped the mean for an 8-element vector, in train and in eval mode).
# Each value must be one of %.6g .. %.3g of the number computed here by awk, followed by a
# space or the frame: never cut mid-value, never left out, and no "(N more)" marker.
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

"$NS" run - <<LUA
ns.save("$tmp/v8.npy", ns.tensor({0.1, 0.9, -0.2, 0.4, 0.33, 0.27, 0.05, 0.6}))
local m = {}
for i = 1, 20 do m[i] = (i * 37 % 11) / 3 - 1.5 end
ns.save("$tmp/m54.npy", ns.tensor(m, {5, 4}))
local t = {}
for i = 1, 3 * 40 * 9 * 2 do t[i] = ((i * 7919) % 2000) / 1000 - 1 end
ns.save("$tmp/x4.npy", ns.tensor(t, {3, 40, 9, 2}))
LUA

# the Input panel's inside (it is the left column's top box at every size)
input_text() {
  capture | sed -n '/1 Input/,/^╰/p' | sed -n 's/^│\([^│]*\)│.*/\1/p'
}
# shows LABEL VALUE: the panel's text (from $1's function) has "LABEL v", v one of the
# roundings of VALUE (an awk expression), then a space or its end
shows() {
  src=$1 label=$2 value=$3
  alts=$(for p in 6 5 4 3; do f "%.${p}g|" "$value"; done)
  alts=$(echo "${alts%|}" | sed 's/\./\\./g')
  "$src" | grep -qE "(^| )$label ($alts)( |$)"
}
# input_has / input_lacks ERE: the Input panel's text matches (does not match) ERE
input_has() { input_text | grep -qE -- "$1"; }
input_lacks() { ! input_has "$1"; }
# every field of the footer whole: mean std rms and the range, and no marker
footer_whole() { # NAME MEAN STD RMS MIN MAX
  check "$1: mean whole" shows input_text mean "$2"
  check "$1: std whole" shows input_text std "$3"
  check "$1: rms whole" shows input_text rms "$4"
  check "$1: min whole" shows input_text min "$5"
  check "$1: max whole" shows input_text max "$6"
  check "$1: no field left out" input_lacks "more)"
}

# v8: x = 0.1 0.9 -0.2 0.4 0.33 0.27 0.05 0.6
V8_MEAN="2.45 / 8"
V8_STD="sqrt(1.5643 / 8 - (2.45 / 8) ^ 2)"
V8_RMS="sqrt(1.5643 / 8)"
for size in "80 24" "120 40"; do
  set -- $size
  start "$1" "$2" "$tmp/v8.npy"
  started
  wait_for "mean"
  footer_whole "$1x$2 v8" "$V8_MEAN" "$V8_STD" "$V8_RMS" "-0.2" "0.9"
  if [ "$1" = 120 ]; then
    # the Output's stat line: the mean of the (only) statistic, then var and s
    check "$1x$2 v8: the stat line keeps the mean" \
      wait_re "(stat )?1/1: +mean +0\.3062?5? +var +0\.10[0-9]* +s +0\.3[0-9]*"
    keys m
    wait_for "eval mode"
    check "$1x$2 v8 eval mode: the stat line keeps the mean" \
      wait_re "(stat )?1/1: +mean +[0-9.]+ +var +[0-9.]+ +s +[0-9.]+ *│"
  fi
  keys q
  wait_for "EXIT=0"
done

# m54 (a 5x4 matrix; at 80x24 a window onto its rows) and x4 (a window onto 1080 rows)
M54="s = 0; q = 0; mn = 9; mx = -9; for (i = 1; i <= 20; i++) { v = (i * 37 % 11) / 3 - 1.5; \
s += v; q += v * v; if (v < mn) mn = v; if (v > mx) mx = v }"
X4="s = 0; q = 0; mn = 9; mx = -9; for (i = 1; i <= 2160; i++) { v = ((i * 7919) % 2000) / 1000 - 1; \
s += v; q += v * v; if (v < mn) mn = v; if (v > mx) mx = v }"
stats() { # AWK-LOOP N: mean std rms min max, at 17 digits
  awk "BEGIN { $1; n = $2; printf \"%.17g %.17g %.17g %.17g %.17g\", s / n, \
    sqrt(q / n - (s / n) ^ 2), sqrt(q / n), mn, mx }"
}
for size in "80 24" "120 40"; do
  set -- $size
  W=$1 H=$2
  start "$W" "$H" "$tmp/m54.npy"
  started
  wait_for "mean"
  set -- $(stats "$M54" 20)
  footer_whole "${W}x$H m54" "$@"
  [ "$W" = 80 ] && check "${W}x$H m54: the rows it lists are said" input_has "rows 1-[0-9]/5"
  # the fp32 setting: the storage dtype is said with it, and every field is still whole
  keys t
  wait_for "fp32"
  footer_whole "${W}x$H m54 shown as fp32" "$@"
  check "${W}x$H m54: the footer says x is fp64 shown as fp32" input_has "fp64(, shown)? as fp32"
  keys q
  wait_for "EXIT=0"

  start "$W" "$H" "$tmp/x4.npy"
  started
  wait_for "mean"
  set -- $(stats "$X4" 2160)
  footer_whole "${W}x$H x4" "$@"
  check "${W}x$H x4: the rows it lists are said" input_has "rows 1-[0-9]+/1080"
  keys q
  wait_for "EXIT=0"
done
done_testing
