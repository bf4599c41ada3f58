#!/bin/sh
# test_plot_lesson.sh: plot(panel) in lessons played headless. The fixture plot-figure.lua
# shows the spectrum as a step's figure and prints the batch figure from a step's claims;
# both must be the very lines a headless explorer at the step's state returns (normscope
# run, ns.explorer():plot), and lesson --check must accept the lesson. The epsilon lesson
# of lessons/ shows its spectrum figure the same way.
NS=${NORMSCOPE:-./normscope}
top=${top_srcdir:-.}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ns-plotlesson.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
  n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"
  shift
  for f in "$@"; do sed 's/^/#   /' "$f" | head -40; done
}
# same NAME A B: files A and B hold the same lines, trailing spaces and blank lines aside
norm() { sed 's/ *$//' "$1" | awk 'NF { for (; blank > 0; blank--) print ""; print; next }
  { blank++ }'; }
same() {
  norm "$2" >"$tmp/a"
  norm "$3" >"$tmp/b"
  if [ -s "$tmp/a" ] && cmp -s "$tmp/a" "$tmp/b"; then ok "$1"; else
    diff "$tmp/a" "$tmp/b" >"$tmp/d"; not_ok "$1" "$tmp/d"; fi
}

fix=$top/tests/lessons/plot-figure.lua
if "$NS" lesson --headless "$fix" >"$tmp/out" 2>"$tmp/err"; then ok "lesson --headless plays plot-figure.lua"
else not_ok "lesson --headless plays plot-figure.lua" "$tmp/err"; fi
if "$NS" lesson --check "$fix" >"$tmp/chk" 2>&1; then ok "lesson --check accepts plot() in a figure"
else not_ok "lesson --check accepts plot() in a figure" "$tmp/chk"; fi

# step 1's figure: the lines between its [sets: ...] line and the next step
awk '/^-- step 1\//{on = 1; next} on && /^  \[sets/{grab = 1; next} /^-- step 2\//{exit}
  grab' "$tmp/out" >"$tmp/fig1"
# step 2's printed figure: after its [sets: ...] line, to the end
awk '/^-- step 2\//{on = 1; next} on && /^  \[sets/{grab = 1; next} grab' "$tmp/out" >"$tmp/fig2"
printf '%s\n' 'local e = ns.explorer{eps = 1e-3}' \
  'print(e:plot("spectrum", {width = 78, height = 22}))' >"$tmp/ref1.lua"
printf '%s\n' 'local e = ns.explorer{eps = 1e-5}' \
  'print(e:plot("batch", {width = 78, height = 8, ascii = true}))' >"$tmp/ref2.lua"
"$NS" run "$tmp/ref1.lua" >"$tmp/ref1" 2>&1
"$NS" run "$tmp/ref2.lua" >"$tmp/ref2" 2>&1
same "a step's figure = plot(\"spectrum\") is the headless explorer's figure" "$tmp/fig1" "$tmp/ref1"
same "print(plot(\"batch\")) in claims prints the headless explorer's figure" "$tmp/fig2" "$tmp/ref2"
if grep -qF "eps = 0.001 (now)" "$tmp/fig1"; then ok "the figure is drawn at the step's state"
else not_ok "the figure is drawn at the step's state" "$tmp/fig1"; fi

eps=$top/lessons/000-15.2-epsilon.lua
if [ -f "$eps" ]; then
  NORMSCOPE_CLAIMS=$top/data/claims.tsv "$NS" lesson --headless "$eps" >"$tmp/eps" 2>"$tmp/err"
  if grep -qF "eigenvalues of J against eps" "$tmp/eps" &&
    grep -qF "eps = 1e-05 (now)" "$tmp/eps"; then
    ok "the epsilon lesson shows the spectrum figure headless"
  else not_ok "the epsilon lesson shows the spectrum figure headless" "$tmp/eps" "$tmp/err"; fi
fi
echo "1..$n"
[ "$failed" -eq 0 ]
