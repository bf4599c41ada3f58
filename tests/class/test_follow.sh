#!/bin/sh
# test_follow.sh: a teacher (normscope lesson X --broadcast SOCKET) and three followers
# (normscope follow SOCKET) in tmux at 120x40. After every step of a sequence (lesson steps,
# setting keys, a set{} at the prompt, the figure view, an experiment view) the followers'
# panels equal the teacher's, line for line; a follower detaches (Esc), explores, and
# rejoins (F) at the teacher's state; keys that would change a following screen are
# refused; a teacher killed with SIGKILL leaves the followers running, detached.
#
# The reference is the teacher's own screen, captured by tmux: the panels (every line but
# the header and the prompt/status lines under them) must be the same characters.
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

L=000-15.2-epsilon
# the lessons the teacher and the followers find: one of lessons/ and the exercises of
# tests/class (every kind: a prediction, hints, a number to type, a state)
mkdir -p "$tmp/lessons"
cp "${top_srcdir:-.}/lessons/$L.lua" "$tmp/lessons/"
cp "${top_srcdir:-.}/tests/class/exercises.lua" "$tmp/lessons/000-99-exercises.lua"
export NORMSCOPE_LESSONS="$tmp/lessons"
mkdir -p "$tmp/class"
chmod 700 "$tmp/class" # who may follow: the folder decides
S=$tmp/class/sock
W=120
H=40

# on SESSION: the commands below act on that tmux session
on() { SES=$1; }
# spawn NAME ARGS: normscope ARGS in a new W x H session NAME (its status echoed after)
spawn() {
  name=$1
  shift
  T -f /dev/null new-session -d -s "$name" -x "$W" -y "$H" "env PS1='$ ' sh" || return 1
  T set-option -t "$name" status off >/dev/null
  T send-keys -t "$name" "clear; '$NS' $*; echo EXIT=\$?" Enter
}
# the panels of a session: lines 2 .. H-8 (the header and the prompt, status lines cut).
# The lesson bar's step markers say which try-its this screen saw done (its own history,
# as a student who joined late has): they are masked.
panels() {
  T capture-pane -p -t "$1" | sed -n "2,$((H - 8))p" |
    sed -E '/ step [0-9]+\/[0-9]+ /s/(✓|✗|·|\?)/./g'
}
# same_as_teacher NAME: the follower's panels become the teacher's (polled, 5 s)
same_as_teacher() {
  i=0
  while [ $i -lt 100 ]; do
    panels teacher >"$tmp/t.txt"
    panels "$1" >"$tmp/f.txt"
    if cmp -s "$tmp/t.txt" "$tmp/f.txt" && [ -s "$tmp/t.txt" ]; then return 0; fi
    sleep 0.05
    i=$((i + 1))
  done
  diff "$tmp/t.txt" "$tmp/f.txt" | head -n 20 | sed 's/^/#   /'
  return 1
}
all_same() { same_as_teacher f1 && same_as_teacher f2 && same_as_teacher f3; }
# differs NAME: the follower's panels become other than the teacher's (polled, 5 s)
differs() {
  i=0
  while [ $i -lt 100 ]; do
    panels teacher >"$tmp/t.txt"
    panels "$1" >"$tmp/f.txt"
    cmp -s "$tmp/t.txt" "$tmp/f.txt" || return 0
    sleep 0.05
    i=$((i + 1))
  done
  return 1
}
pid_of() { SES=$1 ns_pid; }
no_refusal() { ! capture | grep -q "following the teacher: Esc"; }
no_pane() { ! capture | grep -qE " step [0-9]+/[0-9]+ "; }

# No teacher yet: follow says so and exits 1.
"$NS" follow "$S" >/dev/null 2>"$tmp/err.txt"
check "follow with nobody broadcasting: exit 1" test $? -eq 1
check "  it names the socket" grep -qF "$S" "$tmp/err.txt"
"$NS" follow >/dev/null 2>&1
check "follow without a socket: usage error (2)" test $? -eq 2

spawn teacher lesson "$L" --broadcast "$S"
on teacher
check "the teacher's lesson comes up" wait_for "step 1/6"
check "  the socket is there" test -S "$S"
check "  rw for the teacher and its group only (660)" test "$(stat -c %a "$S")" = 660
"$NS" lesson "$L" --broadcast "$S" </dev/null >/dev/null 2>"$tmp/err2.txt"
check "a second teacher on the same socket is refused" grep -q "broadcasts there already" "$tmp/err2.txt"
: >"$tmp/notsock"
"$NS" --broadcast "$tmp/notsock" </dev/null >/dev/null 2>"$tmp/err3.txt"
check "a file that is not a socket is never replaced" grep -q "not a socket" "$tmp/err3.txt"
check "  (and is still there)" test -f "$tmp/notsock"

for f in f1 f2 f3; do spawn "$f" follow "$S"; done
for f in f1 f2 f3; do
  on "$f"
  check "$f: FOLLOWING, at the teacher's step" wait_re "FOLLOWING.*step 1/6"
done
on teacher
check "the teacher's header counts three followers" wait_for "3 following"
check "step 1: the followers' panels equal the teacher's" all_same

# a sequence of steps: lesson steps, keys, the prompt, the figure view, an experiment view
on teacher
keys N
wait_for "step 2/6"
check "step 2: equal" all_same
keys k e e
check "keys k e e: equal" all_same
lua 'set{x = {3, 1, 4, 1, 5}, eps = 0.25}'
check "set{x=..., eps=...} at the teacher's prompt: equal" all_same
keys Tab Tab Down Down
check "focus and the selected line: equal" all_same
keys f
check "the figure view: equal" all_same
keys Escape
keys D
check "an experiment view (D): equal" all_same
keys D N N
on teacher
wait_for "step 4/6"
check "step 4: equal" all_same
on f2
check "  the followers' header has the teacher's step" wait_re "FOLLOWING.*step 4/6"

# keys that would change a following screen are refused; the state stays the teacher's
on f3
keys k
check "a follower's k while following: refused, with what to do" wait_for "Esc detaches"
check "  the panels are still the teacher's" same_as_teacher f3

# detach, explore, rejoin
on f1
keys Escape
check "Esc: DETACHED" wait_for "DETACHED"
keys k k
check "  the student changes the kind: the panels differ" differs f1
on teacher
keys N
wait_for "step 5/6"
check "  the teacher goes on: f2 and f3 follow" same_as_teacher f2
check "  (f3 too)" same_as_teacher f3
check "  f1, detached, does not" differs f1
on f1
check "  (its lesson pane stays at step 4)" wait_re "^ +step 4/6 "
on f1
check "  f1's header still shows the teacher's step" wait_re "DETACHED.*step 5/6"
keys F
check "F: FOLLOWING again" wait_for "FOLLOWING"
check "  at the teacher's state" same_as_teacher f1
on teacher
keys P
check "and f1 follows the next change" all_same

# a follower that never reads (a Python client on the socket) never holds the teacher up:
# with frames of 100 KB its socket is full after a few, and the teacher goes on, the
# others following
if command -v python3 >/dev/null 2>&1; then
  python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
time.sleep(60)' "$S" &
  stuck=$!
  on teacher
  check "a follower that never reads joins" wait_for "4 following"
  lua 'set{x = ns.rng(7):normal(0, 1, {4000})}'
  i=0
  while [ $i -lt 12 ]; do # one change at a time (keys typed together fold into one)
    keys e
    sleep 0.05
    keys E
    sleep 0.05
    i=$((i + 1))
  done
  keys k
  check "  the teacher goes on: its last key (k) is on its screen" wait_for "RMSNorm(x)"
  check "  and on a follower's" same_as_teacher f2
  check "  the others follow every change" all_same
  check "  the stuck one is still connected (the teacher waits for nobody)" wait_for "4 following"
  kill "$stuck"
  wait "$stuck" 2>/dev/null
  check "  and goes when it closes" wait_for "3 following"
  lua 'set{x = {-2, -1, 1, 2}}'
  all_same
fi

# a teacher killed with SIGKILL: the followers stay, detached, and still work
tp=$(pid_of teacher)
check "the teacher's pid" test -n "$tp"
kill -9 "$tp"
for f in f1 f2 f3; do
  on "$f"
  check "$f: the teacher killed: DETACHED, not crashed" wait_for "DETACHED"
done
on f2
keys k
sleep 0.3
check "f2 still explores (k is not refused)" no_refusal
keys F
check "F with no teacher says so" wait_for "nobody broadcasts there"
check "  the stale socket is still there (a teacher replaces it)" test -S "$S"
T kill-session -t teacher
spawn teacher lesson "$L" --broadcast "$S"
on teacher
check "a new teacher takes the stale socket" wait_for "0 following"
on f2
keys F
check "F follows the new teacher" wait_re "FOLLOWING.*step [1-6]/6"
check "  at its state" same_as_teacher f2
on teacher
keys q
check "the teacher quits with 0" wait_for "EXIT=0"
check "  and removes its socket" sh -c '! test -e "$1"' - "$S"
on f2
check "f2 hears the teacher end" wait_for "the teacher ended the broadcast"
for f in f1 f2 f3; do
  on "$f"
  keys q
  check "$f quits with 0" wait_for "EXIT=0"
done

# the lesson pane beyond its step: a prediction asked and answered, hints revealed, a number
# typed, the step's answer shown; the follower's pane says what the teacher's does
T kill-session -t teacher
spawn teacher lesson 000-99-exercises --broadcast "$S"
on teacher
check "exercises: the teacher's lesson" wait_for "0 following"
T kill-session -t f1
spawn f1 follow "$S"
on f1
check "  a follower" wait_re "FOLLOWING.*step 1/5"
on teacher
keys n
check "  a prediction asked: equal" same_as_teacher f1
on f1
check "  (the follower shows the question)" wait_for "Will y change?"
on teacher
lit "=2"
keys Enter
check "  answered (= 2): equal" same_as_teacher f1
on f1
check "  (the follower shows the truth)" wait_for "(right)"
on teacher
keys n
check "  the next prediction: equal" same_as_teacher f1
keys n
check "  skipped (n): equal" same_as_teacher f1
on f1
check "  (the follower shows the truth, not predicted)" wait_for "Not predicted"
on teacher
keys n H
check "  a hint revealed: equal" same_as_teacher f1
on f1
check "  (the follower shows it)" wait_for "the mean of the column first"
on teacher
lit "=13.2"
keys Enter
check "  a number typed: equal" same_as_teacher f1
on f1
check "  (the follower shows the verdict)" wait_for "13.2 is right"
on teacher
keys n H H
check "  the step's answer shown (H after the hint): equal" same_as_teacher f1

# the plain explorer broadcast too (normscope --broadcast SOCKET), no lesson pane, on a file
# whose x is too large to go inline: a frame names the file and its sha256 (made once per x
# by the teacher; the follower reads the file once, not at every change)
"$NS" run - "$tmp/big.npy" <<'EOF'
ns.save(arg[1], ns.rng(3):normal(0, 1, {8, 1024}):astype("fp32"))
EOF
on teacher
keys q # the last teacher leaves first (and takes its socket with it)
wait_for "EXIT=" 10
T kill-session -t teacher
spawn teacher --broadcast "$S" "$tmp/big.npy"
on teacher
check "normscope --broadcast: the explorer comes up" wait_for "0 following"
T kill-session -t f1
spawn f1 follow "$S"
on f1
check "  a follower follows it" wait_for "FOLLOWING"
check "  with no lesson pane" no_pane
on teacher
keys k z z Tab
check "  keys k z z Tab: equal panels" same_as_teacher f1
keys e e Tab
check "  and more: equal" same_as_teacher f1
lua ":w $tmp/teacher.lua"
on f1
keys Escape
lua ":w $tmp/follower.lua"
check "  the follower's state is the teacher's (dump compared)" cmp -s "$tmp/teacher.lua" "$tmp/follower.lua"
check "  (x named by its file)" grep -q "x = {file = " "$tmp/follower.lua"
keys F
on teacher
on teacher
keys q
wait_for "EXIT=0"
on f1
check "  the follower hears the end" wait_for "the teacher ended the broadcast"
keys q
check "  and quits with 0" wait_for "EXIT=0"

done_testing
