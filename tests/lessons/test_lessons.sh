#!/bin/sh
# Every lesson of lessons/: `lesson --check` finds nothing, `lesson --headless` plays it
# with exit 0; `verify` runs them all (the rule for make check: --source 000, the texts
# whose lessons exist) and its --tsv lines have the format doc/ARCHITECTURE.md gives; and the
# failures these commands exist to catch (a failed claim, a try.show that does not pass,
# each lint problem, a registry id no lesson verifies) do make them fail.
NS=${NORMSCOPE:-./normscope}
top=${top_srcdir:-.}
dir=$top/tests/lessons
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ns-lessons.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# the lessons of the source tree and its registry, whatever the binary would pick
NORMSCOPE_LESSONS=$top/lessons NORMSCOPE_CLAIMS=$top/data/claims.tsv
export NORMSCOPE_LESSONS NORMSCOPE_CLAIMS
# texts whose lessons are all written, comma-separated (make check verifies these completely)
TEXTS=000,001,002,003,004

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
  n=$((n + 1)); echo "not ok $n - $1"
  shift
  for line in "$@"; do echo "#   $line"; done
}
# run NAME WANT_RC ARGS...: runs normscope; checks the exit status
run() {
  name=$1 want=$2; shift 2
  "$NS" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" = "$want" ]; then ok "$name"; else
    not_ok "$name" "rc=$rc (want $want)" "stdout: $(head -c 600 "$tmp/out")" \
      "stderr: $(head -c 600 "$tmp/err")"
  fi
}
# expect NAME TEXT FILE: FILE holds TEXT
expect() {
  if grep -q -F -- "$2" "$3"; then ok "$1"; else
    not_ok "$1" "missing: $2" "$(head -c 600 "$3")"; fi
}

count=0
for f in "$top"/lessons/[0-9][0-9][0-9]-*.lua; do
  b=$(basename "$f" .lua)
  count=$((count + 1))
  run "$b: lesson --check finds nothing" 0 lesson --check "$f"
  run "$b: lesson --headless plays it" 0 lesson --headless "$f"
  # each text line printed fits 80 columns (lines are wrapped; figures may be wider)
  if awk 'length($0) > 80 && !/[│┤├─┼]/ { bad = 1 } END { exit bad }' "$tmp/out"; then
    ok "$b: headless text fits 80 columns"
  else not_ok "$b: headless text fits 80 columns" "$(awk 'length($0) > 80' "$tmp/out" | head -3)"; fi
done
[ "$count" -gt 0 ] && ok "found $count lessons" || not_ok "found lessons in $top/lessons"

# the list shows every lesson in reading order
run "lesson lists the lessons" 0 lesson
lines=$(grep -c '^ *[0-9][0-9]*  [0-9][0-9][0-9]-' "$tmp/out")
[ "$lines" = "$count" ] && ok "the list has $count numbered entries" ||
  not_ok "the list has $count numbered entries" "got $lines" "$(head -c 600 "$tmp/out")"
run "a lesson by number" 0 lesson --headless 2
second=$(ls "$top"/lessons/[0-9][0-9][0-9]-*.lua | sed -n 2p)
expect "number 2 is the second file in name order" \
  "$(sed -n 's/^  title = "\(.*\)",$/\1/p' "$second")" "$tmp/out"
run "a lesson by a name prefix" 0 lesson --headless 000-15.1
run "an unknown lesson name is a usage error" 2 lesson --headless no-such-lesson
run "an ambiguous prefix is a usage error" 2 lesson --headless 000

# verify on the texts that have lessons
run "verify --source $TEXTS passes" 0 verify --source $TEXTS
run "verify --tsv --source $TEXTS passes" 0 verify --tsv --source $TEXTS
cp "$tmp/out" "$tmp/tsv"
if awk -F '\t' 'NF != 3 || $2 != "verified" || $3 !~ /^-?[0-9.]+(e[-+][0-9]+)?$|^-?(inf|nan)$/ { bad = 1 }
                END { exit bad || NR == 0 }' "$tmp/tsv"; then ok "tsv: ID<TAB>verified<TAB>VALUE on every line"
else not_ok "tsv: ID<TAB>verified<TAB>VALUE on every line" "$(head -5 "$tmp/tsv")"; fi
# every id of those texts in the registry, exactly once
awk -F '\t' -v texts="$TEXTS" 'BEGIN { n = split(texts, want, ",") }
  !/^#/ && NF == 6 { for (i = 1; i <= n; i++) if (index($2, want[i]) == 1) { print $1; break } }' \
  "$NORMSCOPE_CLAIMS" | sort >"$tmp/want"
cut -f 1 "$tmp/tsv" | sort >"$tmp/got"
if cmp -s "$tmp/want" "$tmp/got"; then ok "tsv: each registry id of text $TEXTS once ($(wc -l <"$tmp/want"))"
else not_ok "tsv: each registry id of text $TEXTS once" "$(diff "$tmp/want" "$tmp/got" | head -5)"; fi
# VALUE is printed with %.17g: it reads back as the same double (compare with awk's %.17g)
if awk -F '\t' '{ v = $3 + 0; if (sprintf("%.17g", v) != $3) bad = 1 } END { exit bad }' "$tmp/tsv"
then ok "tsv: VALUE is %.17g"; else not_ok "tsv: VALUE is %.17g" "$(head -3 "$tmp/tsv")"; fi
# the values agree with the registry within each row's tolerance (awk, not normscope)
if awk -F '\t' 'NR == FNR { if (!/^#/ && NF == 6) { e[$1] = $4; t[$1] = $5 } next }
                { d = $3 - e[$1]; if (d < 0) d = -d; if (!($1 in e) || d > t[$1]) { print; bad = 1 } }
                END { exit bad }' "$NORMSCOPE_CLAIMS" "$tmp/tsv" >"$tmp/bad"
then ok "tsv: every VALUE within its tolerance"; else not_ok "tsv: every VALUE within its tolerance" "$(head -3 "$tmp/bad")"; fi
# every text has its lessons: plain verify covers the whole registry
run "verify (all lessons, no --source) succeeds" 0 verify --tsv
n_reg=$(grep -v '^#' "$NORMSCOPE_CLAIMS" | grep -c .)
n_ver=$(grep -c "	verified	" "$tmp/out")
if [ "$n_reg" -gt 0 ] && [ "$n_reg" = "$n_ver" ]; then ok "every registry id is verified ($n_ver of $n_reg)"
else not_ok "every registry id is verified" "$n_ver of $n_reg"; fi
# a registry id that no lesson verifies fails verify, and is named
{ cat "$NORMSCOPE_CLAIMS"; printf 'zz-unclaimed\t000_b251982bd6a65d6e.txt x\tnothing computes it\t1\t0\texact\n'; } >"$tmp/claims+.tsv"
saved_claims=$NORMSCOPE_CLAIMS
NORMSCOPE_CLAIMS="$tmp/claims+.tsv"
run "an id no lesson verifies: verify exits 1" 1 verify --tsv
NORMSCOPE_CLAIMS=$saved_claims
expect "and names it" "no lesson verifies zz-unclaimed" "$tmp/err"

# the failures are caught
run "a failing claim: headless exits 1" 1 lesson --headless "$dir/fail-claim.lua"
expect "and prints FAILED" "claim c15-rank-rms = 4  FAILED" "$tmp/out"
run "a try.show that does not pass: headless exits 1" 1 lesson --headless "$dir/fail-show.lua"
expect "and says so" "step 1: try.show does not pass try.check: eps is 0" "$tmp/err"
mkdir "$tmp/one" && cp "$dir/fail-claim.lua" "$tmp/one/000-fail.lua"
NORMSCOPE_LESSONS=$tmp/one run "verify: a failing claim exits 1" 1 verify --tsv --source 000
expect "and its line says failed" "$(printf 'c15-rank-rms\tfailed\t4')" "$tmp/out"
cp "$top/lessons/000-15.1-two-maps.lua" "$tmp/one/001-copy.lua"
cp "$top/lessons/000-15.1-two-maps.lua" "$tmp/one/002-copy.lua"
rm "$tmp/one/000-fail.lua"
NORMSCOPE_LESSONS=$tmp/one run "verify: a claim verified twice exits 1" 1 verify --source 000
expect "and names it" "c15-rank-rms is claimed twice" "$tmp/err"

run "lesson --check: a faulty lesson exits 1" 1 lesson --check "$dir/lint-bad.lua"
for p in "step 1: set: unknown state field 'epss'" "step 1: set: unknown state field 'kindd'" \
  "step 2: no text" "step 3: text line 1 is 85 columns (at most 80)" \
  "step 4: claim: unknown id 'no-such-claim'" "step 5: try.check already passes" \
  "step 6: try.show does not pass try.check (eps is small)" \
  "step 7: set: eps: must be finite and >= 0, got -1" "step 8: focus: unknown panel 'nowhere'" \
  "step 10: claim c15-rank-rms is already verified by step 9"; do
  expect "lint: $p" "$p" "$tmp/out"
done
# the field list is the explorer's: a step that sets every field get() returns passes
cat >"$tmp/all.lua" <<'LUA'
-- every field of the explorer state, as get() returns it
local all = get()
lesson{title = "all fields", source = "000", section = "test",
  steps = {{text = "every field", set = all}}}
LUA
run "lesson --check accepts every field the explorer has" 0 lesson --check "$tmp/all.lua"
echo "1..$n"
