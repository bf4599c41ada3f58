#!/bin/sh
# test_hostile.sh: a follower (normscope follow SOCKET) against a hostile teacher, a copy of
# the socket protocol in Python (tests/class/hostile_teacher.py). Every frame that is not
# plain data (a loop, os/io/load/require, a memory bomb, a binary chunk, a syntax error, an
# unknown field or a bad value, a state that errs after its first set{}, a bad header, a
# verdict for the lesson pane carrying escape sequences) is
# refused with one line and the follower keeps its state, and still follows the next good
# frame; a framing error (a length over the cap, bad magic, another version, an unknown
# kind, reserved bytes) detaches the follower, which keeps running and its state.
#
# The state is read on the screen (the settings panel's eps) and, at the end, saved at the
# prompt and compared with the state the last good frame gave.
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"
PY=${PYTHON:-python3}
if ! command -v "$PY" >/dev/null 2>&1; then
  echo "1..0 # SKIP python3 not found (the hostile teacher is a Python script)"
  exit 0
fi
HT=${top_srcdir:-.}/tests/class/hostile_teacher.py
S=$tmp/sock

mkfifo "$tmp/ctl"
"$PY" "$HT" "$S" <"$tmp/ctl" >"$tmp/ht.out" 2>"$tmp/ht.err" &
htpid=$!
exec 3>"$tmp/ctl"
sends=0
# send CMD: the fake teacher sends that frame (and says so)
send() {
  sends=$((sends + 1))
  echo "$1" >&3
  i=0
  while [ $i -lt 100 ]; do
    [ "$(grep -c '^done' "$tmp/ht.out")" -ge "$sends" ] && return 0
    sleep 0.05
    i=$((i + 1))
  done
  return 1
}
i=0
while [ $i -lt 100 ] && ! grep -q listening "$tmp/ht.out"; do sleep 0.05; i=$((i + 1)); done

# the follower connects; the fake teacher's first frame is good (eps 0.5)
start 120 40 follow "$S"
send accept
send "good 0.5"
check "the follower comes up on the fake teacher's first frame" wait_for "FOLLOWING"
# eps_is V: the settings panel shows eps V
eps_is() { wait_re "eps +$1( |$)" 2; }
check "  with its state (eps 0.5)" eps_is 0.5

# data frames: refused one by one, the state stays, the follower follows on
for bad in loop os io load require mem grow binary syntax field value file partial nul \
  focus lesson step unknown twice nohead note; do
  send "$bad"
  check "$bad: refused with one line" wait_for "refused a message from the teacher" 30
  case $bad in # the line says why
  loop) check "  loop: the instruction budget" wait_for "runs too long" ;;
  grow) check "  grow: the memory cap" wait_for "MB of memory" ;;
  binary) check "  binary: text only" wait_for "binary chunk" ;;
  os | io) check "  $bad: not in reach" wait_for "nil value (global '$bad')" ;;
  esac
  check "  $bad: the state stays (eps 0.5)" eps_is 0.5
  check "  $bad: still following" wait_for "FOLLOWING"
  keys C-l # a redraw clears the message line: the next refusal is a new line
  gone "refused a message from the teacher"
done
send "good 0.25"
check "after them all, a good frame still applies (eps 0.25)" eps_is 0.25
send "split 0.375"
check "a frame sent a byte at a time applies (eps 0.375)" eps_is 0.375

# framing errors: detached, running, the state kept
for bad in huge magic version kind reserved; do
  send "$bad"
  check "$bad: refused" wait_for "refused a message from the teacher" 10
  case $bad in
  huge) check "  huge: the size cap" wait_for "over the 16777216-byte cap" ;;
  magic) check "  magic: not a frame" wait_for "bad magic" ;;
  version) check "  version: said" wait_for "protocol version 9" ;;
  esac
  check "  $bad: detached" wait_for "DETACHED"
  check "  $bad: the state stays (eps 0.375)" eps_is 0.375
  send close
  keys F
  send accept
  send "good 0.375"
  check "  $bad: F follows again" wait_for "following the teacher again"
  keys C-l
  gone "refused a message from the teacher"
done

# a bye: detached, running
send bye
check "a bye: the teacher ended the broadcast" wait_for "the teacher ended the broadcast"
check "  detached" wait_for "DETACHED"
send close
echo quit >&3
wait "$htpid"
check "the fake teacher ran its script" test "$(grep -c '^done' "$tmp/ht.out")" -eq "$sends"
check "  and saw no error" test ! -s "$tmp/ht.err"
sed 's/^/# teacher: /' "$tmp/ht.err"
check "no hostile frame reached the file system" test ! -e /tmp/normscope-hostile

# the state the follower kept is the last good frame's, bit for bit
lua ":w $tmp/kept.lua"
"$NS" run - >"$tmp/want.lua" <<'EOF'
local e = ns.explorer()
e:set{eps = 0.375}
io.write(e:dump())
EOF
check "the kept state is the last good frame's (dump compared)" cmp -s "$tmp/want.lua" "$tmp/kept.lua"
keys q
check "the follower quits with 0" wait_for "EXIT=0"
done_testing
