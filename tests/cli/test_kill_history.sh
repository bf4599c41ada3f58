#!/bin/sh
# test_kill_history.sh: `normscope repl` fed one multi-line chunk after another rewrites
# its history file (about 4 MB: 1000 entries of 4 KB) on every entry; it is killed with
# SIGKILL at random moments. After every kill the file is read back as normscope reads it
# (tests/cli/history_dump) and must hold 1000 whole entries, numbered one after another:
# the previous file or the next one, never a torn mix. The next run goes on from there
# (so each run also reads the file the killed one left). TAP: one line per kill.
set -u
ns=${NORMSCOPE:-${top_builddir:-.}/normscope}
dump=${top_builddir:-.}/tests/cli/history_dump
kills=${KILLS:-10}
T=$(mktemp -d "${TMPDIR:-/tmp}/nshkill.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
export XDG_STATE_HOME="$T/state" HOME="$T/home"
mkdir -p "$XDG_STATE_HOME/normscope" "$HOME"
hist=$XDG_STATE_HOME/normscope/history

# Entry k is the chunk "do h = k", "-- " and 4000 times letter k mod 26, "end".
# chunks FIRST LAST: the chunks as typed, one line each.
chunks() {
  awk -v a="$1" -v b="$2" 'BEGIN {
    for (k = a; k <= b; k++) {
      c = substr("abcdefghijklmnopqrstuvwxyz", (k % 26 + 26) % 26 + 1, 1)
      if (!(c in pad)) { s = ""; for (i = 0; i < 4000; i++) s = s c; pad[c] = s }
      printf "do h = %d\n-- %s\nend\n", k, pad[c]
      fflush()
    }
  }'
}
# The first file, in readline's format (a "#<seconds>" line before each entry), with
# entries -999 .. 0: written here, not by normscope.
chunks -999 0 | awk 'NR % 3 == 1 { print "#1700000000" } { print }' >"$hist"

# check: 0 when the file holds 1000 whole consecutive entries; prints the last number
# (or why not).
check() {
  "$dump" >"$T/dump" 2>"$T/dump.err" || {
    echo "history_dump failed: $(cat "$T/dump.err")"
    return 1
  }
  awk 'NR == 1 { if ($0 != "entries 1000") { print "the file holds " $0 " (not 1000)"; bad = 1; exit 1 } next }
    {
      if (!match($0, /^do h = -?[0-9]+\\n-- /)) { print "entry " NR - 1 " is not whole: " substr($0, 1, 40); bad = 1; exit 1 }
      k = substr($0, 8, index($0, "\\n") - 8) + 0
      c = substr("abcdefghijklmnopqrstuvwxyz", (k % 26 + 26) % 26 + 1, 1)
      body = substr($0, RLENGTH + 1)
      if (length(body) != 4000 + 5 || substr(body, 4001) != "\\nend" || body !~ ("^" c "+\\\\nend$")) {
        print "entry " k " is torn (" length(body) " characters after its first line)"; bad = 1; exit 1
      }
      if (NR > 2 && k != last + 1) { print "entry " k " follows entry " last; bad = 1; exit 1 }
      last = k
    }
    END { if (!bad) print last }' "$T/dump"
}

bad=0
i=0
next_k=1
while [ $i -lt "$kills" ]; do
  i=$((i + 1))
  chunks "$next_k" $((next_k + 100000)) | "$ns" repl >/dev/null 2>"$T/err" &
  pid=$!
  # wait until this run has written the file once (its first entry is in it), then a
  # random while more: 0 .. 0.8 s
  w=0
  while ! grep -q "^do h = $next_k\$" "$hist" 2>/dev/null && [ $w -lt 400 ]; do
    sleep 0.05
    w=$((w + 1))
  done
  sleep "$(awk -v s="$i" 'BEGIN { srand(s * 104729); printf "%.3f", rand() * 0.8 }')"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  if got=$(check); then
    echo "ok $i - killed while writing the history: 1000 whole entries, the last $got"
    next_k=$((got + 1))
  else
    echo "not ok $i - killed while writing the history: $got"
    sed 's/^/# repl: /' "$T/err" | head -n 5
    bad=1
    break
  fi
done
mode=$(stat -c %a "$hist")
if [ "$mode" = 600 ]; then
  echo "ok $((i + 1)) - the history file stays private (mode $mode)"
else
  echo "not ok $((i + 1)) - the history file has mode $mode, not 600"
  bad=1
fi
left=$(find "$XDG_STATE_HOME" -name 'history.tmp*' | wc -l)
echo "# $left temporary files left by the killed writers (each a kill before its rename)"
echo "1..$((i + 1))"
exit $bad
