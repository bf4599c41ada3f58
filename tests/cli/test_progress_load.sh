#!/bin/sh
# test_progress_load.sh: a lesson-progress file of 50,000 lines read with normscope's own
# reader (tests/cli/progress_dump, lesson_progress_load) against a reference written here
# in awk from the rules of lua/lesson_progress.h: a row is NAME<TAB>STEP<TAB>NSTEPS<TAB>SEEN
# with 1 <= STEP <= SEEN <= NSTEPS, other lines are dropped, and of rows naming the same
# lesson the first is kept, in file order. The file mixes 30,000 names (so most names come
# back several times, with other numbers), names of every length up to 80 bytes (spaces and
# UTF-8 too), and malformed lines. Only the content is checked: the speed of a load (once
# quadratic in the rows) is for `time`, never asserted. TAP.
set -u
dump=${top_builddir:-.}/tests/cli/progress_dump
T=$(mktemp -d "${TMPDIR:-/tmp}/nsprog.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
export XDG_STATE_HOME="$T/state" HOME="$T/home"
mkdir -p "$XDG_STATE_HOME/normscope" "$HOME"
file=$XDG_STATE_HOME/normscope/lesson-progress

# a fixed linear congruential sequence, so every run writes the same file
awk 'BEGIN {
  r = 12345
  # the Park-Miller generator: its products stay below 2^53, exact in doubles
  for (i = 0; i < 50000; i++) {
    r = (r * 16807) % 2147483647; k = r % 30000
    r = (r * 16807) % 2147483647; kind = int(r / 64) % 20
    r = (r * 16807) % 2147483647; nsteps = 1 + int(r / 64) % 9
    r = (r * 16807) % 2147483647; step = 1 + int(r / 64) % nsteps
    r = (r * 16807) % 2147483647; seen = step + int(r / 64) % (nsteps - step + 1)
    name = sprintf("%03d-les son-%d", k % 997, k)
    if (k % 7 == 0) name = name "-\317\203"                    # UTF-8 (sigma)
    if (k % 11 == 0) name = name substr("-long-long-long-long-long-long-long-long-long", 1, k % 45)
    if (kind == 0) print name "\t0\t" nsteps "\t" seen          # step 0
    else if (kind == 1) print name "\t" nsteps + 1 "\t" nsteps "\t" nsteps + 1   # step > nsteps
    else if (kind == 2 && step > 1) print name "\t" step "\t" nsteps "\t" step - 1   # seen < step
    else if (kind == 3) print name "\t" step "\t" nsteps "\t" nsteps + 1   # seen > nsteps
    else if (kind == 4) print name "\t" step "\t" nsteps              # three fields
    else if (kind == 5) print name "\tx\t" nsteps "\t" seen           # not a number
    else if (kind == 6) print "\t" step "\t" nsteps "\t" seen         # no name
    else print name "\t" step "\t" nsteps "\t" seen
  }
}' >"$file"

# the reference: valid rows only, first of each name
awk -F '\t' '
  NF == 4 && $1 != "" && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ && $4 ~ /^[0-9]+$/ &&
  $2 + 0 >= 1 && $2 + 0 <= $3 + 0 && $4 + 0 >= $2 + 0 && $4 + 0 <= $3 + 0 && !($1 in seen) {
    seen[$1] = 1; rows[++n] = $0
  }
  END { print "rows " n; for (i = 1; i <= n; i++) print rows[i] }' "$file" >"$T/want"

n=0
bad=0
check() {
  n=$((n + 1))
  if eval "$2"; then echo "ok $n - $1"; else echo "not ok $n - $1"; bad=1; fi
}
"$dump" >"$T/got" 2>"$T/err"
rc=$?
check "the file has 50000 lines" '[ "$(wc -l <"$file")" -eq 50000 ]'
check "the reader ran cleanly" '[ $rc -eq 0 ] && ! [ -s "$T/err" ]'
check "it kept $(head -n 1 "$T/want" | cut -d" " -f2) rows, as the reference" \
  '[ "$(head -n 1 "$T/got")" = "$(head -n 1 "$T/want")" ]'
check "every row, in file order, first of duplicates kept, malformed lines dropped" \
  'cmp -s "$T/got" "$T/want"'
[ $bad -eq 0 ] || diff "$T/want" "$T/got" | head -n 20 | sed 's/^/# /'
echo "1..$n"
exit $bad
