#!/bin/sh
# test_screen_hints.sh: the keys a view's hints name do what the hint says (review N6: the
# D view said "R or Esc closes" where R is the lesson key, the V view "h H eval_loc" where
# the keys are ( and )). Each hint is read off the screen, its key pressed, and the effect
# checked; the hints come from the key table (tui_key_name, tui_field_keys).
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

start 120 40
started
# the status line: whole items of the key table and, as they do not all fit, "KEY more"
# naming the help key, which lists them (review (c): at 120 it stopped at "g grp" mid-list)
status_line() { capture | grep -E '^u undo ' | tail -1; }
check "120x40: the status line ends in a whole item and \"? more\"" \
  wait_re '^u undo .*[a-z@]  \? more$'
mk=$(status_line | sed -n 's/.*  \(.\) more$/\1/p')
lit "$mk"
check "  its key ($mk) opens the list of every key" wait_for "Help  (lines 1-"
keys Escape
check "  and Esc closes it" wait_for "? help  q quit"
# the closing key of each experiment view, as its title names it
for view in D B V L; do
  keys "$view"
  wait_re "\\(. or Esc closes" 10 || true
  key=$(capture | sed -n 's/.*(\(.\) or Esc closes.*/\1/p' | head -1)
  check "$view view: its title names a closing key ($key)" test -n "$key"
  keys "$key"
  check "  pressing $key closes it" wait_for "? help  q quit"
done

# the V view's hint names the keys of eval_loc and eval_scale
keys V
wait_for "eval_loc -/+1"
hint=$(capture | grep -o '[^│]* eval_loc -/+1 *[^ ]* [^ ]* eval_scale' | head -1)
up=$(printf '%s\n' "$hint" | awk '{print $2}')
sup=$(printf '%s\n' "$hint" | awk '{print $6}')
check "V view: the hint names two eval_loc keys ($hint)" test -n "$up"
before=$(capture | sed -n 's/.*evaluation: [0-9]* draws of N(\([^,]*\),.*/\1/p' | head -1)
lit "$up"
want=$(f %g "$before + 1")
check "  its second eval_loc key ($up) raises the evaluation mean by 1 ($before -> $want)" \
  wait_re "evaluation: [0-9]+ draws of N\\($want,"
lit "$sup"
check "  its second eval_scale key ($sup) doubles the evaluation std" \
  wait_re "evaluation: [0-9]+ draws of N\\($want, 4\\)"
keys Escape
wait_for "? help  q quit"

# the D view: the placement key its title names cycles the placement
keys D
wait_for "none pre post"
pk=$(capture | sed -n 's/.*Esc closes; \(.\): none pre post.*/\1/p' | head -1)
lit "$pk"
check "D view: its placement key ($pk) goes to pre" wait_for "placement pre"
keys Escape
wait_for "? help  q quit"

# the figure view: the key its title names closes it
keys f
wait_for "Figure: 1 Input"
fk=$(capture | sed -n 's/.*(live; \(.\) or Esc closes.*/\1/p' | head -1)
lit "$fk"
check "figure view: its key ($fk) closes it" wait_for "? help  q quit"

# the train/eval panel's hint keys: the mode key goes to eval mode
mk=$(capture | sed -n 's/.*│\(.\) eval mode .*/\1/p' | head -1)
lit "$mk"
check "Train/eval: its mode key ($mk) goes to eval mode" wait_for "eval mode: panels 3-4 use running stats"
keys q
wait_for "EXIT=0"
done_testing
