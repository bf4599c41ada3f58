#!/bin/sh
# test_history_sessions.sh: two `normscope repl` sessions open at the same time, their
# entries typed in turn (a1, b1, a2, b2). Every entry rewrites the history file whole;
# a session that finds the file replaced by the other reads it back before adding its
# own, so all four entries are kept, in the order typed, and the file read back as
# normscope reads it (tests/cli/history_dump) holds them. TAP.
set -u
ns=${NORMSCOPE:-${top_builddir:-.}/normscope}
dump=${top_builddir:-.}/tests/cli/history_dump
T=$(mktemp -d "${TMPDIR:-/tmp}/nshsess.XXXXXX") || exit 1
pids=""
cleanup() {
  for p in $pids; do kill "$p" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT
export XDG_STATE_HOME="$T/state" HOME="$T/home"
mkdir -p "$HOME"
hist=$XDG_STATE_HOME/normscope/history
mkfifo "$T/a" "$T/b" || exit 1
"$ns" repl <"$T/a" >/dev/null 2>"$T/a.err" &
pids="$pids $!"
"$ns" repl <"$T/b" >/dev/null 2>"$T/b.err" &
pids="$pids $!"
exec 3>"$T/a" 4>"$T/b"
# both sessions have read the (missing) file before anyone types
sleep 0.5

# say FD LINE: types LINE into a session and waits until the file holds it (up to 60 s: a
# session under ASan on a loaded machine is slow, and typing on before the write lands
# would leave the order of the two sessions' entries to chance; test_history_lock.sh
# is the test of writes at the same moment)
say() {
  echo "$2" >&"$1"
  w=0
  while ! grep -qx -- "$2" "$hist" 2>/dev/null && [ $w -lt 1200 ]; do
    sleep 0.05
    w=$((w + 1))
  done
}
say 3 'a1 = 1'
say 4 'b1 = 2'
say 3 'a2 = 3'
say 4 'b2 = 4'
exec 3>&- 4>&-
wait

n=0
bad=0
check() {
  n=$((n + 1))
  if eval "$2"; then echo "ok $n - $1"; else echo "not ok $n - $1"; bad=1; fi
}
"$dump" >"$T/dump" 2>&1
check "the file holds all four entries of the two sessions, in the order typed" \
  '[ "$(tr "\n" " " <"$T/dump")" = "entries 4 a1 = 1 b1 = 2 a2 = 3 b2 = 4 " ]'
check "neither session warned" '! [ -s "$T/a.err" ] && ! [ -s "$T/b.err" ]'
check "the history file is private (mode 600)" '[ "$(stat -c %a "$hist")" = 600 ]'
[ $bad -eq 0 ] || sed 's/^/# /' "$T/dump" "$T/a.err" "$T/b.err"
echo "1..$n"
exit $bad
