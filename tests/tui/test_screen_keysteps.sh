#!/bin/sh
# test_screen_keysteps.sh: small keyboard consistencies (review N12). On the Settings
# panel Right steps a row up and Left back, on one-key rows too (Left went forward on the
# dtype row) and on eps (Right made eps smaller); in the figure view digits do not start
# an edit of a cell the view hides; Tab in the figure view never lands on Settings, whose
# figure is the Output's (so Tab seemed to do nothing once).
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

start 120 40
started
keys M-2
wait_re "2 Settings[^│]*◀"
# down to the dtype row: the rows are listed in the panel, k first
first=$(capture | grep -n "│k K   kind" | head -1 | cut -d: -f1)
dt=$(capture | grep -n "│t     dtype" | head -1 | cut -d: -f1)
row=$first
while [ "$row" -lt "$dt" ]; do keys Down; row=$((row + 1)); sleep 0.05; done
sleep 0.3
keys Right
check "dtype row: Right steps fp64 -> fp32" wait_re "│t +dtype +fp32"
keys Left
check "  Left steps back to fp64 (it went on to fp16)" wait_re "│t +dtype +fp64"
# up to the eps row
ep=$(capture | grep -n "│e E = eps" | head -1 | cut -d: -f1)
sleep 0.3
while [ "$row" -gt "$ep" ]; do keys Up; row=$((row - 1)); sleep 0.05; done
sleep 0.3
keys Right
check "eps row: Right makes eps larger (1e-05 -> 0.0001)" wait_re "│e E = eps +0\.0001 *│"
keys Left
check "  Left smaller again" wait_re "│e E = eps +1e-05 *│"
# the figure view: a digit does not start a hidden edit
keys M-1 f
wait_for "Figure: 1 Input"
keys 5
check "figure view: a digit says the view hides the cells" wait_for "the figure view hides the cells"
check "  and starts no edit" gone "typing a number"
keys Tab
check "Tab from the Input figure goes to the Output's (not Settings, titled the same)" \
  wait_for "Figure: 3 Output"
keys Escape
keys q
wait_for "EXIT=0"
done_testing
