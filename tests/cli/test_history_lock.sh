#!/bin/sh
# test_history_lock.sh: three `normscope repl` sessions each given 100 entries at once,
# so their writes of the history file overlap all the time. Each entry is read back and
# written under the lock on <history>.lock, so afterwards the file (read as normscope
# reads it, tests/cli/history_dump) holds all 300 entries, each session's in the order it
# typed them. Without the lock two sessions can read the file before either renames its
# new one, and the later rename drops the other's entry. Then the bounded wait: with the
# lock held by another process (tests/cli/hold_lock) an entry is still written, after
# one warning, and the REPL goes on. Nothing here times anything: it waits for results
# (generously, for ASan on a loaded machine) and checks what is in the file. TAP.
set -u
ns=${NORMSCOPE:-${top_builddir:-.}/normscope}
tools=${top_builddir:-.}/tests/cli
T=$(mktemp -d "${TMPDIR:-/tmp}/nshlock.XXXXXX") || exit 1
pids=""
cleanup() {
  for p in $pids; do kill "$p" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT
export XDG_STATE_HOME="$T/state" HOME="$T/home"
mkdir -p "$HOME"
hist=$XDG_STATE_HOME/normscope/history
per=100

n=0
bad=0
check() {
  n=$((n + 1))
  if eval "$2"; then echo "ok $n - $1"; else echo "not ok $n - $1"; bad=1; fi
}
# waitfor SECONDS COMMAND: polls COMMAND every 0.1 s until it succeeds or time is up
waitfor() {
  w=0
  while ! eval "$2" && [ $w -lt $(($1 * 10)) ]; do
    sleep 0.1
    w=$((w + 1))
  done
  eval "$2"
}

# 1. three sessions writing at once
for s in a b c; do
  mkfifo "$T/$s" || exit 1
  "$ns" repl <"$T/$s" >/dev/null 2>"$T/$s.err" &
  pids="$pids $!"
  i=1
  while [ $i -le $per ]; do
    echo "$s$i = $i"
    i=$((i + 1))
  done >"$T/$s.lines"
done
exec 3>"$T/a" 4>"$T/b" 5>"$T/c"
sleep 0.5 # all three have read the (missing) file
# each session's 100 lines in one write each (they fit a pipe's buffer), then end of input
cat "$T/a.lines" >&3 &
cat "$T/b.lines" >&4 &
cat "$T/c.lines" >&5 &
wait $! 2>/dev/null
exec 3>&- 4>&- 5>&-
# the sessions end at end of input; one stuck for 120 s is killed (and fails the checks).
# The guard sleeps in short steps and away from the TAP pipe: killed, it leaves no
# 120-second sleep behind to hold the pipe open (the harness waited for it) or to kill
# reused process ids later.
(
  i=0
  while [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
  for p in $pids; do kill "$p" 2>/dev/null; done
) >/dev/null 2>&1 &
guard=$!
for p in $pids; do wait "$p"; done
kill "$guard" 2>/dev/null
pids=""

"$tools/history_dump" >"$T/dump" 2>&1
cat "$T/a.lines" "$T/b.lines" "$T/c.lines" | sort >"$T/want"
tail -n +2 "$T/dump" | sort >"$T/got"
check "the file holds $((3 * per)) entries" '[ "$(head -n 1 "$T/dump")" = "entries $((3 * per))" ]'
check "... every entry of the three sessions, none twice" 'cmp -s "$T/want" "$T/got"'
for s in a b c; do
  check "... session $s's in the order typed" \
    '[ "$(grep "^$s[0-9]" "$T/dump")" = "$(cat "$T/$s.lines")" ]'
done
check "no session warned" '! [ -s "$T/a.err" ] && ! [ -s "$T/b.err" ] && ! [ -s "$T/c.err" ]'
check "the lock file is private (mode 600)" '[ "$(stat -c %a "$hist.lock")" = 600 ]'
if [ $bad -ne 0 ]; then
  comm -3 "$T/want" "$T/got" | head -n 20 | sed 's/^/# missing or extra: /'
  cat "$T/a.err" "$T/b.err" "$T/c.err" | head -n 5 | sed 's/^/# /'
fi

# 2. the lock held by another process: the wait ends, the entry is written, one warning
mkfifo "$T/hold" "$T/d" || exit 1
"$tools/hold_lock" "$hist.lock" <"$T/hold" >"$T/hold.out" 2>&1 &
holder=$!
pids="$pids $holder"
exec 6>"$T/hold"
waitfor 60 '[ -s "$T/hold.out" ]'
check "another process holds the lock" '[ "$(cat "$T/hold.out")" = locked ]'
"$ns" repl <"$T/d" >/dev/null 2>"$T/d.err" 6>&- &
pids="$pids $!"
exec 7>"$T/d"
echo 'h1 = 1' >&7
check "an entry typed while the lock is held is written after the bounded wait" \
  'waitfor 90 "grep -qx \"h1 = 1\" \"\$hist\""'
check "... with a warning that names the lock file" \
  'grep -q "history: cannot lock .*history.lock: still held by another process" "$T/d.err"'
echo 'h2 = 2' >&7
check "the next entry is written too" 'waitfor 90 "grep -qx \"h2 = 2\" \"\$hist\""'
exec 6>&-
wait "$holder"
echo 'h3 = 3' >&7
check "once the lock is free again, so is the one after" \
  'waitfor 90 "grep -qx \"h3 = 3\" \"\$hist\""'
exec 7>&-
wait
pids=""
check "the warning was given once" '[ "$(wc -l <"$T/d.err")" -eq 1 ]'
"$tools/history_dump" >"$T/dump2" 2>&1
check "the history holds the earlier entries and h1, h2, h3" \
  '[ "$(head -n 1 "$T/dump2")" = "entries $((3 * per + 3))" ] &&
   [ "$(tail -n 3 "$T/dump2" | tr "\n" " ")" = "h1 = 1 h2 = 2 h3 = 3 " ]'
[ $bad -eq 0 ] || sed 's/^/# /' "$T/d.err"
echo "1..$n"
exit $bad
