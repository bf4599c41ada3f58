#!/bin/sh
# test_export.sh: normscope lesson X --export FILE.md|FILE.cast.
#
# Handouts: every lesson of lessons/ exports, and each step's block, pasted into a fresh
# explorer (check_handout.lua), gives the step's state as `lesson --states X` prints the
# engine's snapshot (dump() compared: bit for bit); each exercise's answer block runs after
# it. The handout has the lesson's words, figures and claims.
#
# Recordings: check_cast.py (python3's json) reads the asciinema v2 file: its header at the
# stated size, times that never go back, and each step's first words on the screen in its
# time window. The first lesson of each of the five texts is recorded at 120x40 and one at
# 80x24 (NS_TEST_ALL_CASTS=1: every lesson; it takes minutes).
top=${top_srcdir:-.}
NS=${NORMSCOPE:-./normscope}
if [ ! -x "$NS" ]; then
  echo "1..0 # SKIP $NS not built"
  exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ns-export.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
export HOME="$tmp/home" XDG_STATE_HOME="$tmp/state"
mkdir -p "$HOME"
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check() {
  name=$1
  shift
  if "$@"; then ok "$name"; else not_ok "$name"; fi
}

# usage
"$NS" lesson 000-15.2 --export "$tmp/x.txt" 2>"$tmp/e.txt"
check "--export FILE.txt: usage error (2)" test $? -eq 2
check "  it says which endings" grep -q "ends in .md" "$tmp/e.txt"
"$NS" lesson --export "$tmp/x.md" 2>/dev/null
check "--export without a lesson: usage error (2)" test $? -eq 2
"$NS" lesson 000-15.2 --export "$tmp/x.md" --size 100x30 2>/dev/null
check "--size with a handout: usage error (2)" test $? -eq 2
"$NS" lesson 000-15.2 --export "$tmp/x.cast" --size 10x5 2>/dev/null
check "--size under 80x24: usage error (2)" test $? -eq 2
"$NS" lesson 000-15.2 --export "$tmp/no/such/dir/x.md" 2>"$tmp/e.txt"
check "an unwritable FILE: exit 1, said" sh -c 'test $1 -eq 1 && test -s "$2"' - $? "$tmp/e.txt"

# every lesson's handout
for f in "$top"/lessons/[0-9]*.lua; do
  b=$(basename "$f" .lua)
  "$NS" lesson "$b" --export "$tmp/$b.md" 2>"$tmp/$b.err"
  check "$b: the handout is written" sh -c 'test $1 -eq 0 && test -s "$2"' - $? "$tmp/$b.md"
  "$NS" lesson --states "$b" >"$tmp/$b.states" 2>/dev/null
  "$NS" run "$top/tests/class/check_handout.lua" "$tmp/$b.md" "$tmp/$b.states" >"$tmp/$b.check" 2>&1
  check "$b: each step's block gives the step's state, bit for bit" test $? -eq 0
  grep -v '^ok' "$tmp/$b.check" | sed 's/^/#   /'
done

# what a handout holds: the lesson's own words, figures, claims, exercises and answers
L=000-15.2-epsilon
H=$tmp/$L.md
check "the title is the lesson's" grep -qx "# Epsilon changes the map" "$H"
check "a heading per step" test "$(grep -c '^## Step [0-9]* of 6' "$H")" -eq 6
check "a step's text as the lesson has it" grep -qF "Real normalization layers divide by sqrt(m2 + eps)" "$H"
check "a figure as text, fenced" grep -qx '```text' "$H"
check "a claim with its value and verdict" grep -qE '^\| `c15-eps-radial` \| [0-9.e+-]+ \| .* \| verified \|$' "$H"
claimed=$("$NS" verify --tsv 2>/dev/null | awk -F'\t' '$1 == "c15-eps-radial" { print $3 }')
shown=$(grep -o '^| `c15-eps-radial` | [^ ]*' "$H" | awk '{ print $4 }')
check "  the value is verify's (to its 10 digits)" \
  awk -v a="$claimed" -v b="$shown" 'BEGIN { exit !(a != "" && (a - b) ^ 2 <= (1e-9 * a) ^ 2) }'
check "exercises, numbered" grep -q '^\*\*Exercise 2\.\*\*' "$H"
check "their answers at the end" sh -c 'tail -n 20 "$1" | grep -q "acc = \"fp32\""' - "$H"

# every kind of exercise (tests/class/exercises.lua): predictions, a number with hints, a
# state; the numbers are the engine's, checked here against the arithmetic
X=$top/tests/class/exercises.lua
"$NS" lesson "$X" --export "$tmp/ex.md" 2>"$tmp/ex.err"
check "the exercises' lesson exports" test $? -eq 0
"$NS" lesson --states "$X" >"$tmp/ex.states" 2>/dev/null
"$NS" run "$top/tests/class/check_handout.lua" "$tmp/ex.md" "$tmp/ex.states" >/dev/null 2>&1
check "  its blocks give its steps' states" test $? -eq 0
check "  a prediction with choices lists them" grep -qx "2. yes" "$tmp/ex.md"
check "  and its answer is the true choice" grep -qx "Choice 2: yes." "$tmp/ex.md"
m=$(awk 'BEGIN { printf "%.6g", ((-2 + 1) + (-1 + 1) + (1 + 1) + (2 + 1)) / 4 }')
check "  a predicted number: the mean of x + 1 ($m)" grep -q "^$m (within " "$tmp/ex.md"
v=$(awk 'BEGIN { n = split("1 2 4 7 11", c, " "); for (i = 1; i <= n; i++) s += c[i]; mu = s / n;
  for (i = 1; i <= n; i++) q += (c[i] - mu) ^ 2; printf "%.6g", q / n }')
check "  a number to compute: the column's variance ($v)" grep -q "^The number: $v " "$tmp/ex.md"
check "  its hints, in order" sh -c 'grep -A3 "^Hints" "$1" | grep -q "^2. then the mean of the squared gaps"' - "$tmp/ex.md"
check "  the answers come after every step" sh -c 'awk "/^## Answers/ { a = NR } /^## Step/ { s = NR } END { exit !(a > s) }" "$1"' - "$tmp/ex.md"
check "  no question's answer in the steps (Choice / The number only under Answers)" \
  sh -c 'sed "/^## Answers/q" "$1" | grep -qE "^(Choice|The number)" && exit 1 || exit 0' - "$tmp/ex.md"

# recordings
command -v python3 >/dev/null 2>&1 && PY=python3 || PY=
cast() { # cast LESSON W H: records it and checks the file
  "$NS" lesson "$1" --export "$tmp/$1.cast" --size "$2x$3" 2>"$tmp/$1.cerr"
  check "$1 ($2x$3): the recording is written" sh -c 'test $1 -eq 0 && test -s "$2"' - $? "$tmp/$1.cast"
  sed 's/^/#   /' "$tmp/$1.cerr"
  if [ -n "$PY" ]; then
    "$PY" "$top/tests/class/check_cast.py" "$tmp/$1.cast" "$tmp/$1.md" "$2" "$3" 4 >"$tmp/$1.ccheck" 2>&1
    check "$1 ($2x$3): header, times, each step's text on the screen" test $? -eq 0
    sed 's/^/#   /' "$tmp/$1.ccheck"
  fi
}
if [ "${NS_TEST_ALL_CASTS:-}" = 1 ]; then
  for f in "$top"/lessons/[0-9]*.lua; do cast "$(basename "$f" .lua)" 120 40; done
else
  for p in 000-15.0 001-s00 002-01 003-01 004-01; do
    f=$(ls "$top"/lessons/$p*.lua | head -n 1)
    cast "$(basename "$f" .lua)" 120 40
  done
  cast 000-15.2-epsilon 80 24
fi
if [ -n "$PY" ]; then
  # the checker itself: a recording with a step's output taken out fails it
  C=$tmp/000-15.2-epsilon.cast
  grep -v '^\[8\.000' "$C" >"$tmp/cut.cast"
  "$PY" "$top/tests/class/check_cast.py" "$tmp/cut.cast" "$H" 80 24 4 >/dev/null 2>&1
  check "check_cast.py fails a recording with step 3 cut out" test $? -eq 1
  head -n 1 "$C" | "$PY" -c 'import json, sys; h = json.loads(sys.stdin.read()); sys.exit(not (h["width"] == 80 and h["height"] == 24))'
  check "the 80x24 recording says 80x24" test $? -eq 0
  # the exercises answered on the recording: both predictions, the number, the state
  "$NS" lesson "$X" --export "$tmp/ex.cast" 2>/dev/null
  "$PY" - "$tmp/ex.cast" >"$tmp/ex.seen" <<'EOF'
import json, re, sys
esc = re.compile(r"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()*+][0-9A-Za-z]|.)")
text = " ".join(esc.sub(" ", json.loads(l)[2]) for l in open(sys.argv[1]).read().splitlines()[1:])
text = re.sub(" +", " ", text)
print(text.count("(right)"), int("13.2 is right" in text), int("eps 0.001" in text))
EOF
  seen() { awk -v c="$1" '{ exit !(c == 1 ? $1 >= 2 : $c == 1) }' "$tmp/ex.seen"; }
  check "the recording answers both predictions, right" seen 1
  check "  types the number a try asks for, right" seen 2
  check "  and shows try.show's state (eps 0.001)" seen 3
else
  echo "# python3 not found: the recordings were written, not parsed"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
