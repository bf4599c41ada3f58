#!/bin/sh
# test_screen_lesson.sh: the lesson player on screen (normscope lesson X) at 80x24 and
# 120x40, stepping forward and back to bit-identical states, a try-it that reacts to the
# learner, --present at 80x24 and 100x30, --autoplay, the progress kept between sessions,
# and normscope record played back headless to the states the session saved, its large
# tensors beside it and read in the lesson's sandbox.
#
# References: the words expected on screen come from the lesson file itself; the states
# are compared with what the engine's snapshots dump (lesson --states) and with states the
# session saved at the prompt (:w FILE), never with numbers taken from the screen.
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

L=000-15.2-epsilon
SRC=${top_srcdir:-.}/lessons/$L.lua
# the first and last words of step 1's text, as the file has them (the pane reflows the
# lines in between to its width)
FIRST="Real normalization layers divide by sqrt(m2 + eps)"
LAST="scale is forgotten."
check "the lesson file has the words looked for" sh -c 'grep -qF "$1" "$3" && grep -qF "$2" "$3"' - "$FIRST" "$LAST" "$SRC"

# the engine's snapshot of step K (dump format), for comparison with :w files
"$NS" lesson --states "$L" >"$tmp/states.txt" 2>&1
check "lesson --states prints one state per step" test "$(grep -c '^-- step ' "$tmp/states.txt")" -eq 6
step_state() { awk -v k="$1" '/^-- step /{on = ($3 == k); next} on' "$tmp/states.txt"; }
# same_state FILE K: the state file saved at the prompt is step K's snapshot, byte for byte
same_state() { step_state "$2" | cmp -s - "$1"; }
# not_shown REGEX: the pane does not show it
not_shown() { ! capture | grep -qE -- "$1"; }
# save NAME: :w at the prompt
save() { lua ":w $tmp/$1.lua" && test -s "$tmp/$1.lua"; }

# Without a terminal the player says so and records no progress.
"$NS" lesson "$L" </dev/null >/dev/null 2>"$tmp/err.txt"
check "lesson X without a terminal: exit 1" test $? -eq 1
check "  it says a terminal is needed" grep -q "needs a terminal" "$tmp/err.txt"
check "  and no progress was written" test ! -e "$XDG_STATE_HOME/normscope/lesson-progress"

for size in "80 24" "120 40"; do
  set -- $size
  start "$1" "$2" lesson "$L"
  check "$1x$2: the lesson pane comes up at step 1 of 6" wait_for "step 1/6"
  check "$1x$2: with step 1's text, its first line" wait_for "$FIRST"
  check "$1x$2: and its last (nothing cut)" wait_for "$LAST"
  # step 1 is shown (✓), steps 2 and 5 have try-its not done yet (?), the others are not
  # reached yet (·): a step's claims do not mark it before it is shown
  check "$1x$2: a marker per step" wait_for "step 1/6 ✓ ? · · ? ·"
  check "$1x$2: the focused panel is there too" wait_for "4 Spectrum"
  check "$1x$2: the step's focus moved the screen's focus (spectrum)" wait_re "4 Spectrum[^│]*◀"
  keys N
  check "$1x$2: N goes to step 2" wait_for "step 2/6"
  check "$1x$2: step 2's try-it is shown" wait_for "Try it: Raise eps a few decades"
  check "$1x$2: with its hint, live" wait_for "? not yet:"
  keys P
  check "$1x$2: P goes back to step 1" wait_for "step 1/6"
  keys q
  check "$1x$2: q quits with status 0" wait_for "EXIT=0"
done

# Forward then back: each state is the engine's snapshot, bit for bit.
start 120 40 lesson "$L"
wait_for "step 1/6"
check "step 1: saved at the prompt" save a1
check "  it is step 1's snapshot" same_state "$tmp/a1.lua" 1
keys N N
wait_for "step 3/6"
check "step 3: saved" save a3
check "  it is step 3's snapshot" same_state "$tmp/a3.lua" 3
keys N N N
check "N up to the last step" wait_for "step 6/6"
check "step 6: saved" save a6
check "  it is step 6's snapshot" same_state "$tmp/a6.lua" 6
keys P P P
check "P back to step 3" wait_for "step 3/6"
check "step 3 again: saved" save b3
check "  bit-identical to the way forward" cmp -s "$tmp/a3.lua" "$tmp/b3.lua"
keys P P
wait_for "step 1/6"
check "step 1 again: saved" save b1
check "  bit-identical to the start" cmp -s "$tmp/a1.lua" "$tmp/b1.lua"
# R puts the step's state back after a change; u undoes that
keys N N E E
wait_for "step 3/6"
check "a change at step 3: saved" save c3
check "  it differs from the step's state" sh -c '! cmp -s "$1" "$2"' - "$tmp/c3.lua" "$tmp/a3.lua"
keys R
check "R says so" wait_for "step 3's state again"
check "  after R: saved" save r3
check "  it is step 3's snapshot again" same_state "$tmp/r3.lua" 3
keys u
wait_for "undone"
check "u after R: saved" save u3
check "  u undid R (the changed state is back)" cmp -s "$tmp/c3.lua" "$tmp/u3.lua"
# # jumps
keys '#'
check "# asks for a step" wait_for "go to step"
lit 5
keys Enter
check "# 5 Enter goes to step 5" wait_for "step 5/6"
check "  step 5's focus is the precision panel" wait_re "7 Precision[^│]*◀"
keys '#'
lit 9
keys Enter
check "# 9: no such step, said clearly" wait_for "no step 9: the lesson has steps 1 to 6"
keys q
wait_for "EXIT=0"

# A try-it reacting to what the learner does: step 2 asks to raise eps a few decades.
start 80 24 lesson "$L"
wait_for "step 1/6"
keys N
wait_for "? not yet:"
keys E E E
check "raising eps (E E E): the try-it says done" wait_for "done: that is it"
check "  and step 2's marker turns to ✓" wait_for "step 2/6 ✓ ✓ · · ? ·"
keys E e e e
check "back below: not done again" wait_for "? not yet:"
keys '#'
lit 5
keys Enter
wait_for "step 5/6"
check "step 5 not done yet" wait_for "? not yet:"
keys H
check "H applies the try's answer: done" wait_for "done: that is it"
check "  (it sets acc fp32: the precision panel says so)" wait_for "fp16, acc fp32"
keys q
wait_for "EXIT=0"

# --present: the lesson text and the focused panel alone, at 80x24 and 100x30
for size in "80 24" "100 30"; do
  set -- $size
  start "$1" "$2" lesson --present "$L"
  check "--present $1x$2: step 1 of 6" wait_for "step 1/6"
  check "--present $1x$2: the text's first line" wait_for "$FIRST"
  check "--present $1x$2: its last line (nothing cut)" wait_for "$LAST"
  check "--present $1x$2: the step's panel, full width" wait_re "╭─ 4 Spectrum.*─{30}"
  check "--present $1x$2: no other panel" not_shown "1 Input|3 Output"
  check "--present $1x$2: no prompt line" not_shown "opens the Lua prompt"
  keys :
  check "--present $1x$2: ':' says there is no prompt" wait_for "--present has no prompt"
  keys N N
  check "--present $1x$2: N steps, the panel follows the focus (output)" wait_re "╭─ 3 Output"
  keys '#'
  lit 5
  keys Enter
  check "--present $1x$2: # 5 shows the try and its hint" wait_for "? not yet:"
  keys q
  check "--present $1x$2: q quits" wait_for "EXIT=0"
done

# --autoplay: the steps come by themselves and wait at a try-it until it passes; Space
# pauses and resumes.
start 120 40 lesson --autoplay 0.5 "$L"
check "--autoplay: starts at step 1, playing" wait_for "step 1/6 (playing)"
check "--autoplay: step 2 comes by itself" wait_for "step 2/6" 5
check "--autoplay: it waits at step 2's try-it" wait_for "step 2/6 (waits: try it)" 5
sleep 1.2
check "  and stays there" wait_for "step 2/6 (waits: try it)" 1
keys E E E
check "  the try-it done, it plays on" wait_for "step 3/6 (playing)" 5
keys Space
check "Space pauses" wait_for "(paused)"
k=$(capture | sed -n 's/.*step \([0-9]\)\/6.*/\1/p' | head -n 1)
sleep 1.5
check "  and no step comes while paused (still step $k)" wait_for "step $k/6 (paused)" 1
keys Space
check "Space plays on" wait_for "step $((k + 1))/6 (playing)" 5
keys q
wait_for "EXIT=0"
# --show-answers: each try-it's answer is played, and it goes on to the end
start 120 40 lesson --autoplay 0.3 --show-answers "$L"
check "--show-answers: step 2's answer is played" wait_for "the answer of step 2" 10
check "--show-answers: the last step" wait_for "step 6/6" 15
check "--show-answers: stops at the end and says so" wait_for "the end of the lesson" 5
check "  every try-it passed on the way (the markers)" wait_for "step 6/6 (paused) ✓ ✓ ✓ ✓ ✓ ✓" 5
keys q
wait_for "EXIT=0"

# Progress: the last lesson and step are remembered; the list shows them without waiting.
prog="$XDG_STATE_HOME/normscope/lesson-progress"
rm -f "$prog" # the sessions above went through every step
start 120 40 lesson "$L"
wait_for "step 1/6"
keys N N
wait_for "step 3/6"
keys q
wait_for "EXIT=0"
check "the progress file was written" grep -q "^$L	3	6	" "$prog"
# the list runs with stdin not a terminal: it must end by itself
timeout 60 "$NS" lesson </dev/null >"$tmp/list.txt" 2>&1
check "lesson (the list) does not wait for input" test $? -eq 0
check "  the lesson is marked started, at step 3" grep -qF "$L (6 steps)  · started, at step 3" "$tmp/list.txt"
check "  and it offers to continue" grep -qF "continue with: normscope lesson --continue" "$tmp/list.txt"
start 80 24 lesson --continue
check "lesson --continue: the same lesson at step 3" wait_for "step 3/6"
check "  with step 3's text" wait_for "How much does that matter?"
keys N N
wait_for "step 5/6"
keys H
wait_for "done: that is it"
keys N
wait_for "step 6/6"
keys q
wait_for "EXIT=0"
timeout 60 "$NS" lesson </dev/null >"$tmp/list.txt" 2>&1
check "every step seen, one try-it not passed: not done" \
  grep -qF "$L (6 steps)  · read, 1 try-it to pass" "$tmp/list.txt"
start 80 24 lesson "$L"
wait_for "step 1/6"
keys n
wait_for "step 2/6"
keys E E E
wait_for "done: that is it"
keys q
wait_for "EXIT=0"
timeout 60 "$NS" lesson </dev/null >"$tmp/list.txt" 2>&1
check "every try-it passed (in two sessions): the list says done" \
  grep -qF "$L (6 steps)  ✓ done" "$tmp/list.txt"

# A damaged progress file is ignored, never trusted.
printf 'garbage\n%s\t9\t6\t9\nx\t-1\t2\t0\n' "$L" >"$prog"
timeout 60 "$NS" lesson </dev/null >"$tmp/list.txt" 2>&1
check "a damaged progress file: the list still works" test $? -eq 0
check "  and claims no progress" sh -c '! grep -qE "started|done|Last played" "$1"' - "$tmp/list.txt"
out=$("$NS" lesson --continue 2>&1 </dev/null)
check "  lesson --continue says nothing was played yet" sh -c 'case "$1" in *"no lesson played yet"*) exit 0;; *) exit 1;; esac' - "$out"

# --ascii: the markers fall back to ASCII (. nothing to check, ? try-it, + verified)
start 80 24 lesson --ascii "$L"
check "--ascii: ASCII markers" wait_for "step 1/6 + ? . . ? ."
check "--ascii: nothing but ASCII on screen" ascii_only
keys q
wait_for "EXIT=0"

# Without a lesson the lesson keys say what they are for.
start 80 24
started
keys N
check "N without a lesson: says it is a lesson key" wait_for "'N' is a lesson key"
keys q
wait_for "EXIT=0"

# Recording: a scripted session with two marks and a last change; each state saved at
# the prompt, then the recorded file played back headless, step by step.
start 80 24 record "$tmp/rec.lua"
started
check "record: the pane says where it records" wait_for "recording to $tmp/rec.lua"
keys e e
keys M
check "M marks step 1" wait_for "step 1 marked"
save r1
keys k
lit 3.5
keys Enter
wait_for "3.5"
keys M
check "M marks step 2" wait_for "step 2 marked"
save r2
keys M
check "M with nothing changed: says so" wait_for "nothing changed since the last mark"
keys t w
sleep 0.3
save r3
keys q
check "record: q writes the file" wait_for "3 steps written to $tmp/rec.lua"
check "record: exit 0" wait_for "EXIT=0"
lint() { "$NS" lesson --check "$1" >/dev/null; }
check "the recording is a lesson that lints" lint "$tmp/rec.lua"
"$NS" lesson --states "$tmp/rec.lua" >"$tmp/states.txt" 2>&1
check "  it has the three steps" test "$(grep -c '^-- step ' "$tmp/states.txt")" -eq 3
for k in 1 2 3; do
  check "  played back, step $k is the state the session saved, bit for bit" same_state "$tmp/r$k.lua" "$k"
done
check "  the steps have placeholder text" grep -q "Step 2: say here what to look at" "$tmp/rec.lua"
# played headless, its header names no text and no section it does not have (the review's
# third replay saw "from , section ; 2 steps")
"$NS" lesson --headless "$tmp/rec.lua" >"$tmp/played.txt" 2>&1
check "  played headless, its header counts its steps" grep -qx "3 steps" "$tmp/played.txt"
check "  and has no empty source or section" sh -c '! grep -q "from , section" "$1"' sh "$tmp/played.txt"
# step 1's set{} lines (indented six blanks) up to its end: eps alone
n1=$(awk '/Step 1:/ { f = 1 } f && /^      [a-zA-Z_]+ = / { n++ } f && /}},/ { exit } END { print n + 0 }' "$tmp/rec.lua")
check "  a step sets only what changed (step 1: eps alone, $n1 field)" test "$n1" -eq 1

# Recording a large x, a file's and one no file holds: each goes beside the lesson as a .npy
# named by its sha256, which the lesson's sandbox reads (x named by its absolute path
# could not be read there, and 16M values written out made a 350 MB lesson)
"$NS" run - <<LUA
ns.save("$tmp/big.npy", ns.rng(5):normal(1, 2, {50, 100}))
LUA
mkdir -p "$tmp/recd"
start 80 24 record "$tmp/recd/big.lua"
started
lua "set{x = {file = \"$tmp/big.npy\"}}"
keys M
check "record, a file's x of 5000 values: M marks it" wait_for "step 1 marked"
save b1
lua 'set{x = ns.rng(9):normal(0, 1, {3, 2000}), kind = "rms"}'
keys M
check "  then a computed one of 6000" wait_for "step 2 marked"
save b2
keys q
check "  q writes the lesson" wait_for "2 steps written to $tmp/recd/big.lua"
check "  a small file: the values are not in it" test "$(wc -c <"$tmp/recd/big.lua")" -lt 2000
nspill=$(ls "$tmp/recd" | grep -c '^big\.x\.[0-9a-f]\{12\}\.npy$')
check "  each x beside it as big.x.HEX12.npy ($nspill of 2)" test "$nspill" -eq 2
check "  named without a folder, with its digest" \
  grep -q 'x = {file = "big\.x\.[0-9a-f]*\.npy", sha256 = "[0-9a-f]\{64\}"}' "$tmp/recd/big.lua"
check "  and no source naming the recorder's file" sh -c '! grep -q "^      source = " "$1"' - "$tmp/recd/big.lua"
# played from another folder, each step's x and kind are the session's
"$NS" lesson --states "$tmp/recd/big.lua" >"$tmp/states.txt" 2>&1
# same_x FILE K: step K's x and kind are those of the state file saved at the prompt
same_x() {
  step_state "$2" >"$tmp/step$2.lua"
  (cd / && "$NS" run - "$1" "$tmp/step$2.lua") <<'LUA'
local a, b = ns.explorer(), ns.explorer()
a:load(arg[1]); b:load(arg[2])
local x, y = a:get().x, b:get().x
assert(a:get().kind == b:get().kind, "kind")
assert(#x:flat() == #y:flat(), "size")
for i, v in ipairs(x:flat()) do assert(v == y:flat()[i], "x[" .. i .. "]") end
LUA
}
for k in 1 2; do
  check "  played back, step $k's x and kind are the session's" same_x "$tmp/b$k.lua" "$k"
done
"$NS" lesson --check "$tmp/recd/big.lua" >/dev/null 2>"$tmp/err.txt"
check "  the recording lints, its data read in the sandbox" test $? -eq 0
# the sandbox reads nothing else: a folder in the name, no digest, a changed file
f1=$(sed -n 's/.*x = {file = "\(big\.x\.[0-9a-f]*\.npy\)".*/\1/p' "$tmp/recd/big.lua" | head -1)
for bad in "../recd/$f1" "$tmp/recd/$f1"; do
  sed "s|\"$f1\"|\"$bad\"|" "$tmp/recd/big.lua" >"$tmp/recd/bad.lua"
  "$NS" lesson --headless "$tmp/recd/bad.lua" >/dev/null 2>"$tmp/err.txt"
  check "a lesson naming $bad: refused" grep -q "but for its own data: .npy files beside it" "$tmp/err.txt"
done
sed 's|, sha256 = "[0-9a-f]*"||' "$tmp/recd/big.lua" >"$tmp/recd/bad.lua"
"$NS" lesson --headless "$tmp/recd/bad.lua" >/dev/null 2>"$tmp/err.txt"
check "a lesson naming its data without a digest: refused" grep -q "with their sha256" "$tmp/err.txt"
ln -s "$tmp/big.npy" "$tmp/recd/link.npy"
sed "s|\"$f1\"|\"link.npy\"|" "$tmp/recd/big.lua" >"$tmp/recd/bad.lua"
"$NS" lesson --headless "$tmp/recd/bad.lua" >/dev/null 2>"$tmp/err.txt"
check "a lesson naming a link beside it: refused" grep -q "but for its own data" "$tmp/err.txt"
cp "$tmp/recd/big.lua" "$tmp/recd/changed.lua"
"$NS" run - <<LUA
ns.save("$tmp/recd/$f1", ns.rng(6):normal(1, 2, {50, 100}))
LUA
"$NS" lesson --headless "$tmp/recd/changed.lua" >/dev/null 2>"$tmp/err.txt"
check "a lesson whose data file was changed: says so" grep -q "has changed since the state was saved" "$tmp/err.txt"

# record --every-change: each change is a step, with no M
start 80 24 record --every-change "$tmp/each.lua"
started
keys e
wait_for "1 step marked"
save e1
keys k
check "--every-change: a key's change is a step" wait_for "2 steps marked"
save e2
lua 'set{shift=3}'
check "--every-change: a set{} at the prompt is a step" wait_for "3 steps marked"
save e3
keys q
check "--every-change: q writes the three steps" wait_for "3 steps written to $tmp/each.lua"
"$NS" lesson --states "$tmp/each.lua" >"$tmp/states.txt" 2>&1
for k in 1 2 3; do
  check "  played back, step $k is the state the session saved" same_state "$tmp/e$k.lua" "$k"
done

done_testing
