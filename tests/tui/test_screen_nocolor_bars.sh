#!/bin/sh
# test_screen_nocolor_bars.sh: under NO_COLOR a value and its negative get bars of the
# same length in the Output panel (review N13: -0.176 and -0.353 got no bar while +0.176
# got one, and -0.588 a half cell where +0.588 got five eighths).
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

START_ENV="NO_COLOR=1"
start 120 40
started
lua 'set{x = {-3, -1, 1, 3, -0.3, 0.3, -0.6, 0.6, -2, 2}}'
wait_for "x (10)"
# the bar cells of element k in the Output panel (the second panel of the line): the text
# after its three numbers, up to the panel's right border; its length in block characters
# on each side of the axis
bar() {
  capture | grep -E "││ +$1 +-?[0-9]" | head -1 |
    sed -E "s/^[^│]*│[^│]*││ +$1 +-?[0-9.]+ +-?[0-9.]+ +-?[0-9.]+ ([^│]*│[^│]*)│.*/\\1/"
}
cells() { printf '%s' "$1" | tr -d ' ' | wc -m; }
for pair in "2 3" "5 6" "1 4"; do
  set -- $pair
  neg=$(bar "$1")
  pos=$(bar "$2")
  nl=$(cells "${neg%%│*}")
  pl=$(cells "${pos#*│}")
  check "NO_COLOR: elements $1 and $2 (x = -v, v): bars of one length ($nl and $pl cells: '$neg' '$pos')" \
    test "$nl" -eq "$pl"
done
nb=$(cells "$(bar 7 | sed 's/│.*//')")
check "NO_COLOR: -0.353 gets a bar ($nb cells)" test "$nb" -gt 0
keys q
wait_for "EXIT=0"
done_testing
