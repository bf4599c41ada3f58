#!/bin/sh
# test_screen_plotfn.sh: plot(panel) returns the figure view's cells. At 80x24 and 120x40
# the inside of the figure view of every panel (f) is compared line by line with what a
# headless explorer in the same state returns (normscope run: ns.explorer():plot(panel,
# {width = COLS - 2, height = LINES - 2})), also for a loaded (2, 6, 2, 2) file with the
# cursor on another channel; then plot() at the prompt opens the figure view on its panel
# (: shows the prompt over the panels, Esc returns to the figure), get() reports it, and
# bad arguments reach the scrollback naming the argument.
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

# headless W H PANEL [STATE [OPTS]]: the figure a headless explorer returns, into $tmp/want;
# with COLOR=1 drawn for a screen with colours (color = true: a heatmap then explains its
# colours), the ANSI escapes taken out again
ESC=$(printf '\033')
headless() {
  c=
  [ "${COLOR:-0}" = 1 ] && c=", color = true"
  printf 'local e = ns.explorer(%s)\nio.write(e:plot("%s", {width = %d, height = %d%s%s}), "\\n")\n' \
    "${4:-}" "$3" $(($1 - 2)) $(($2 - 2)) "${5:-}" "$c" >"$tmp/want.lua"
  "$NS" run "$tmp/want.lua" 2>&1 | sed "s/$ESC\[[0-9;]*m//g; s/ *\$//" >"$tmp/want"
}
# inside H: the figure view's inside (rows 2 .. H-1 without the frame, the empty rows at
# the bottom left out as plot() leaves them out), into $tmp/got
inside() {
  capture | sed -n "2,$(($1 - 1))p" | sed 's/^│//; s/ *│$//; s/ *$//' |
    awk 'NF { for (; blank > 0; blank--) print ""; print; next } { blank++ }' >"$tmp/got"
}
# same_figure H: polls until the view's inside equals $tmp/want (the view redraws live)
same_figure() {
  i=0
  while [ $i -lt 60 ]; do
    inside "$1"
    cmp -s "$tmp/got" "$tmp/want" && [ -s "$tmp/want" ] && return 0
    sleep 0.05
    i=$((i + 1))
  done
  diff "$tmp/want" "$tmp/got" | head -20 | sed 's/^/# /'
  return 1
}

cat >"$tmp/make.lua" <<'LUA'
ns.save(arg[1] .. "/x6.npy", ns.rng(7):normal(1, 2, {2, 6, 2, 2}))
LUA
"$NS" run "$tmp/make.lua" "$tmp" >/dev/null 2>&1

# 80x24 without colours (NO_COLOR), 120x40 with 256
for size in "80 24 0" "120 40 1"; do
  set -- $size
  W=$1 H=$2 COLOR=$3
  if [ "$COLOR" = 1 ]; then START_ENV=; else START_ENV=NO_COLOR=1; fi
  start "$W" "$H"
  started
  k=1
  for p in input settings output spectrum batch train precision; do
    keys "M-$k"
    k=$((k + 1))
    keys f
    [ "$p" = settings ] && title="3 Output" || title=""
    check "${W}x$H: the figure view of $p is open" wait_for "Figure: ${title:-}"
    headless "$W" "$H" "$p"
    check "${W}x$H: plot(\"$p\") returns the figure view's $((H - 2)) lines" same_figure "$H"
    keys f
    check "${W}x$H: f closes the $p figure" gone "Figure: "
  done
  keys q
  check "${W}x$H: q quits" wait_for "EXIT=0"

  # a loaded file, with the cursor on example 1, channel 5 (grid row 9)
  start "$W" "$H" "$tmp/x6.npy"
  started
  keys Down Down Down Down Down Down Down Down f
  check "${W}x$H file: the cursor's channel in the figure view" wait_for "c5 (cursor)"
  headless "$W" "$H" input "{x = {file = \"$tmp/x6.npy\"}}" ", cursor = {9, 1}"
  check "${W}x$H file: plot(\"input\", {cursor = {9, 1}}) returns the same lines" same_figure "$H"
  keys q
  check "${W}x$H file: q quits" wait_for "EXIT=0"
done

# plot() at the prompt: the figure view opens on its panel behind the prompt, which keeps
# the keys (review N2: what was typed next ran as explorer keys); the text goes to the
# scrollback
START_ENV= COLOR=1
start 120 40
started
keys :
wait_re "^> ?$"
lit 'plot("batch")'
keys Enter
check "plot(\"batch\") at the prompt says the figure is open behind the prompt" \
  wait_for "the figure view is open behind the prompt: Esc shows it"
check "  and the prompt stays open" wait_re "^> ?$"
lit 'print(6 * 7)'
keys Enter
check "  the next line is Lua: print(6 * 7) prints 42" wait_re "│42 +│"
check "  not explorer keys (no cell edit started)" gone "not a number"
lit 'print(get().eps)'
keys Enter
check "  and the state is unchanged (eps 1e-05)" wait_re "│1e-05 +│"
keys Escape
check "Esc leaves the prompt: the batch figure" wait_for "Figure: 5 Batch"
headless 120 40 batch
check "the view shows what plot() returned" same_figure 40
keys :
check ": over the figure view shows the prompt and the panels" wait_re "^> ?$"
keys PageUp
check "with plot()'s text in the scrollback" wait_for "BN down the columns (T 1, C 2)"
keys PageDown
lit 'print("figure " .. tostring(get().figure) .. " " .. get().focus)'
keys Enter
check "get() reports the open figure view and its panel" wait_for "figure true batch"
keys Escape
check "Esc leaves the prompt: back to the figure view" wait_for "Figure: 5 Batch"
keys Escape
check "Esc closes the figure view" wait_for "? help  q quit"
keys :
wait_re "^> ?$"
lit 'plot("spectrum", {width = 60, height = 12})'
keys Enter
keys Escape
check "plot with options opens the spectrum figure (full size on the screen)" \
  wait_for "Figure: 4 Spectrum"
keys :
wait_re "^> ?$"
lit 'set{figure = false}'
keys Enter
keys Escape
check "set{figure = false} closes it" wait_for "? help  q quit"
keys :
wait_re "^> ?$"
lit 'plot("nope")'
keys Enter
check "an unknown panel is an error naming the argument and the choices" \
  wait_for "bad argument #1 to 'plot' (panel must be one of input, settings, output"
lit 'plot("input", {width = 3})'
keys Enter
check "a bad option is an error naming it" wait_for "opts.width must be an integer from 20"
lit 'set{figure = 1}'
keys Enter
check "set{figure = 1} is refused" wait_for "figure: expected true"
check "and no figure opened" gone "Figure: "
keys Escape
keys q
check "q quits" wait_for "EXIT=0"

done_testing
