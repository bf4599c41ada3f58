#!/bin/sh
# The lesson texts, README.md and doc/ are in our own words: no run of 9 words is shared
# with the five source texts. The texts are not part of the project (nor of its tarball):
# they are looked for next to it, in ../shared/seeds ($NORMSCOPE_SEEDS overrides), and
# without them the test is skipped. A word is a run of letters, with one inner apostrophe
# allowed; TeX macros (\frac) are dropped; numbers and formulas are not words. The
# shared checker ../shared/tools/originality.py counts the same runs; this script needs
# only awk, and prints every run with its file and line.
#   lessons/test_originality.sh [FILE...]     (default: lessons/*.lua README.md doc/*)
top=${top_srcdir:-.}
seeds=${NORMSCOPE_SEEDS:-$top/../shared/seeds}
if ! ls "$seeds"/*.txt >/dev/null 2>&1; then
  echo "1..0 # SKIP no source texts in $seeds"
  exit 0
fi
if [ $# -eq 0 ]; then
  set -- "$top"/lessons/*.lua "$top"/README.md
  for f in "$top"/doc/*; do [ -f "$f" ] && set -- "$@" "$f"; done
fi
${AWK:-awk} -v N=9 '
  # words(line): appends the words of a line to w[], their line numbers to ln[]
  function words(s, line) {
    gsub(/\\[a-zA-Z]+/, " ", s)
    s = tolower(s)
    while (match(s, /[a-z]+('\''[a-z]+)?/)) {
      nw++; w[nw] = substr(s, RSTART, RLENGTH); ln[nw] = line
      s = substr(s, RSTART + RLENGTH)
    }
  }
  function gram(i,   k, g) { g = w[i]; for (k = 1; k < N; k++) g = g " " w[i + k]; return g }
  function flush(   i, last, runs, g, fail) {
    if (file == "") return
    last = -10; runs = 0
    for (i = 1; i + N - 1 <= nw; i++) {
      g = gram(i)
      if (!seeding && (g in seed)) {
        if (i > last + 1) { runs++; printf "# %s:%d: %s\n", file, ln[i], g }
        last = i
      } else if (seeding) seed[g] = 1
    }
    if (!seeding) {
      nfiles++; total += runs
      t++
      if (runs) printf "not ok %d - %s: %d shared 9-word runs\n", t, file, runs
      else printf "ok %d - %s\n", t, file
    }
    nw = 0
  }
  FNR == 1 { flush(); file = FILENAME; seeding = (++fi <= K) }
  { words($0, FNR) }
  END { flush(); printf "1..%d\n# originality: %d shared 9-word runs in %d files\n", t, total, nfiles }
' K="$(ls "$seeds"/*.txt | wc -l)" "$seeds"/*.txt "$@"
