#!/bin/sh
# test_screen_file.sh: `normscope FILE.csv|FILE.npy` opens the explorer on the file's
# tensor; a large one shows a window and says why the Jacobian probes are skipped; a
# file that cannot be loaded exits 1 with `normscope: FILE: why` before the screen starts.
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

# Load errors: checked without a terminal (the screen must not start).
printf '1,2\n3\n' >"$tmp/ragged.csv"
out=$("$NS" "$tmp/ragged.csv" 2>&1 </dev/null)
st=$?
check "ragged CSV: exit status 1" test "$st" -eq 1
check "ragged CSV: message names the file" sh -c 'case "$1" in "normscope: $2: "*) exit 0;; *) exit 1;; esac' - "$out" "$tmp/ragged.csv"
printf 'not a numpy file at all' >"$tmp/bad.npy"
out=$("$NS" "$tmp/bad.npy" 2>&1 </dev/null)
st=$?
check "bad .npy: exit status 1" test "$st" -eq 1
check "bad .npy: message names the file" sh -c 'case "$1" in "normscope: $2: "*) exit 0;; *) exit 1;; esac' - "$out" "$tmp/bad.npy"
out=$("$NS" "$tmp/missing.csv" 2>&1 </dev/null)
st=$?
check "missing file: exit status 1" test "$st" -eq 1
check "missing file: one clear line" sh -c 'case "$1" in "normscope: $2: "*) exit 0;; *) exit 1;; esac' - "$out" "$tmp/missing.csv"

# Without a terminal the explorer refuses at once (no busy loop, no garbage).
out=$("$NS" 2>&1 </dev/null)
st=$?
check "no terminal: exit status 1" test "$st" -eq 1
check "no terminal: says a terminal is needed" sh -c 'case "$1" in "normscope: the explorer needs a terminal"*) exit 0;; *) exit 1;; esac' - "$out"

# A small CSV matrix: layer norm across each row. Row 1 = (1, 2, 3): mean 2, var 2/3.
printf 'a,b,c\n1,2,3\n4,5,7\n' >"$tmp/data.csv"
Y11=$(f "%.6g" "-1 / sqrt(2/3 + 1e-5)")
M2=$(f "%.6g" "16/3")
start 80 24 "$tmp/data.csv"
check "csv: the screen names the file and its shape" wait_for "x (2, 3) from data.csv"
check "csv: y[1,1] = $Y11" wait_for "$Y11"
check "csv: the matrix is in the input panel" wait_re "│ +2 +4 +5 +7"
keys I
# an edited x is no longer the file's: the title drops the name (it follows state.source)
check "I inserts a row after the cursor" wait_for "1 Input x (3, 3) ◀"
check "the new row is zeros" wait_re "│ +2 +0 +0 +0"
keys X
check "X removes it" wait_for "1 Input x (2, 3) ◀"
keys i
check "i inserts a column" wait_for "1 Input x (2, 4) ◀"
keys u u u
check "u u u undoes the three edits: the file's x again" wait_for "x (2, 3) from data.csv"
keys Tab Tab Tab Tab
check "csv: the matrix is the batch too" wait_for "5 Batch 2x3"
keys q
check "csv: q quits" wait_for "EXIT=0"
check "csv: terminal sane" sane_tty

# A hand-made .npy (version 1, '<f8', shape (4,)) holding (1, 2, 4, 8).
hdr="{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }"
pad=$((128 - 10 - ${#hdr} - 1))  # header padded so data starts at byte 128
{
  printf '\223NUMPY\001\000'
  printf "\\$(printf '%03o' $(( (${#hdr} + pad + 1) % 256 )))\\000"
  printf '%s' "$hdr"
  printf "%${pad}s\n" ""
  printf '\000\000\000\000\000\000\360\077'   # 1
  printf '\000\000\000\000\000\000\000\100'   # 2
  printf '\000\000\000\000\000\000\020\100'   # 4
  printf '\000\000\000\000\000\000\040\100'   # 8
} >"$tmp/x.npy"
Y1=$(f "%.6g" "-2.75 / sqrt(7.1875 + 1e-5)")
start 80 24 "$tmp/x.npy"
check "npy: the screen names the file" wait_for "x (4) from x.npy"
check "npy: y_1 = $Y1" wait_for "$Y1"
check "npy: input mean 3.75" wait_for "mean 3.75"
keys q
check "npy: q quits" wait_for "EXIT=0"

# The fp32 cancellation example of the chapters: x = (9998, 9999, 10001, 10002) stored as
# fp32 ('<f4'). Opened, x is computed in fp32; raw moments E[x^2] - E[x]^2 lose every
# digit (0), two-pass gets the population variance 10/4 = 2.5.
hdr="{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }"
pad=$((128 - 10 - ${#hdr} - 1))
{
  printf '\223NUMPY\001\000'
  printf "\\$(printf '%03o' $(( (${#hdr} + pad + 1) % 256 )))\\000"
  printf '%s' "$hdr"
  printf "%${pad}s\n" ""
  printf '\000\070\034\106\000\074\034\106\000\104\034\106\000\110\034\106'
} >"$tmp/c.npy"
start 120 40 "$tmp/c.npy"
check "fp32 npy: computed in the file's dtype" wait_for "7 Precision: fp32"
check "fp32 npy: raw moments cancel to 0" wait_re "raw +0 +1 "
check "fp32 npy: two-pass keeps 2.5" wait_re "twopass +2.50* +0 "
# eps moves y(2x) by 1.9e-06, 16 fp32 ulps of y: within what fp32 rounding is allowed
check "fp32 npy: the scale probe is invariant to fp32 rounding" \
  wait_re "2x +max\|y'-y\| 1\.9e-06 invariant"
keys q
check "fp32 npy: q quits" wait_for "EXIT=0"

# Above 65536 elements the probes and the precision panel use a leading slice, say so,
# and a keypress stays quick: 1000 x 70 -> the first 936 rows (65520 values).
awk 'BEGIN { for (i = 0; i < 1000; i++) { s = ""; for (j = 0; j < 70; j++) s = s (j ? "," : "") (i * 70 + j) % 11; print s } }' >"$tmp/huge.csv"
start 120 40 "$tmp/huge.csv"
check "70000 values: the probes say they use a slice" wait_for "probes: first 65520/70000 values"
check "70000 values: the precision panel says so too" wait_for "(its first 65536 of 70000 values)"
check "70000 values: the reference on a line of its own" wait_for "var of all of x, fp64 ref: 9.99"
# batch norm reduces the rows: the probes take whole columns (65 of them), not rows whose
# statistics would each be cut to a few values
lua 'set{kind="batch"}'
check "70000 values, batch: the probes take whole statistics" wait_for "probes: x[:,:65], 65000/70000 values"
keys q
check "70000 values: q quits" wait_for "EXIT=0"

# A large tensor (300 x 20): a window onto the data, statistics of all of it, and the
# spectrum in closed form, with the reason the full J was not formed.
awk 'BEGIN { for (i = 0; i < 300; i++) { s = ""; for (j = 0; j < 20; j++) s = s (j ? "," : "") (i * 20 + j) % 7; print s } }' >"$tmp/big.csv"
start 80 24 "$tmp/big.csv"
check "large csv: shape shown" wait_for "x (300, 20) from big.csv"
check "large csv: statistics over all 6000 elements" wait_for "n 6000"
check "large csv: the spectrum says the full J was not formed" wait_for "J not formed (n 6000)"
check "large csv: a window onto the rows" wait_for "rows 1-3/300"
keys NPage Down Down Down Down Down Down Down Down
check "large csv: the window follows the cursor" wait_re "│ +9 "
keys q
check "large csv: q quits" wait_for "EXIT=0"

# A CSV header of names is skipped, and the screen says so (it vanished without a word);
# its bytes are the file's: an escape in it shows as ^[
printf 'alpha,b\033]0;PWN\007,c\n1,2,3\n4,5,6\n' >"$tmp/named.csv"
start 120 40 "$tmp/named.csv"
check "csv header: the message line says it was skipped" \
  wait_for "named.csv: its line 1, alpha,b^[]0;PWN^G,c, is a header of names: skipped"
check "  and x is the rows of numbers" wait_for "x (2, 3) from name"
keys q
wait_for "EXIT=0"
# the same file opened at the prompt by set{} says it too, after the field (wide, so the
# temporary path fits one line)
start 200 40
started
keys :
wait_re "^> ?$"
lit "set{x = {file = \"$tmp/named.csv\"}}"
keys Enter
check "set{x = {file = CSV}} at the prompt: the same note, after the field" \
  wait_for "x: $tmp/named.csv: its line 1, alpha,b^[]0;PWN^G,c, is a header of names: skipped"
keys Escape
wait_for "? help"
keys q
wait_for "EXIT=0"

done_testing
