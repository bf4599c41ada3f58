#!/bin/sh
# test_screen_state.sh: the explorer's state outlives the session: it is autosaved on
# exit (atomically, to $XDG_STATE_HOME/normscope/last.lua), `--resume` and `--state FILE`
# start from a saved state, save()/load() work from the prompt, and the view fields
# (focus) reach the screen through set{}. The expected eps is typed here, not read back.
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

# --resume before any session: a clear message, exit 1
out=$("$NS" --resume 2>&1 </dev/null)
st=$?
check "--resume with nothing saved: exit 1" test "$st" -eq 1
check "  and says so" sh -c 'case "$1" in *"no saved state yet"*) exit 0;; *) exit 1;; esac' - "$out"

start 120 40
started
lua 'set{eps=0.125, kind="rms", focus="spectrum"}'
check "set{} with a view field applies" wait_for "0.125"
check "  focus moved to the spectrum" wait_re "4 Spectrum[^│]*◀"
lua 'save("'"$tmp"'/mine.lua")'
keys q
check "q quits" wait_for "EXIT=0"
last="$XDG_STATE_HOME/normscope/last.lua"
check "the state was saved on exit" test -s "$last"
check "  as a set{} chunk with eps 0.125" grep -q "eps = 0.125," "$last"
check "  and the kind" grep -q 'kind = "rms",' "$last"
check "  without view fields" sh -c '! grep -q "focus" "$1"' - "$last"
check "save(FILE) from the prompt wrote the file" grep -q "eps = 0.125," "$tmp/mine.lua"

start 120 40 --resume
started
check "--resume: rms and eps 0.125 are back" wait_for "eps           0.125"
check "  the output panel follows the kind" wait_for "Output y = RMSNorm(x)"
keys q
wait_for "EXIT=0"

# --state FILE: a hand-written state; a bad one exits 1 naming it
printf 'set{x = {1, 2, 3, 5}, eps = 0.5}\n' >"$tmp/three.lua"
start 120 40 --state "$tmp/three.lua"
started
check "--state FILE: x from the file" wait_re "│ +1 +1 +2 +3 +5"
check "  and its eps" wait_for "eps           0.5"
lua 'load("'"$tmp"'/mine.lua")'
check "load(FILE) from the prompt: eps 0.125" wait_for "eps           0.125"
keys u
check "  one undo step takes it back" wait_for "eps           0.5"
keys q
wait_for "EXIT=0"
printf 'set{eps = -1}\n' >"$tmp/bad.lua"
out=$("$NS" --state "$tmp/bad.lua" 2>&1 </dev/null)
st=$?
printf 'os.execute("touch %s/pwned")\n' "$tmp" >"$tmp/evil.lua"
out2=$("$NS" --state "$tmp/evil.lua" 2>&1 </dev/null)
st2=$?
check "--state with a bad value: exit 1" test "$st" -eq 1
check "  naming the field" sh -c 'case "$1" in *"eps: must be finite and >= 0"*) exit 0;; *) exit 1;; esac' - "$out"
check "a state file cannot run programs" test ! -e "$tmp/pwned"
check "  it fails with a message instead: exit 1" test "$st2" -eq 1
check "  naming the file" sh -c 'case "$1" in *evil.lua*) exit 0;; *) exit 1;; esac' - "$out2"

# :e of a hostile state file (issue 23): a backtracking pattern ends at the file's budget;
# a loop of string calls runs (seconds of its budget: a call on a short string charges
# little) until Ctrl-C, which ends it at once, since every string call looks at Ctrl-C as
# the count hook does. (The same loop on a large string runs out of budget: bad_input.tsv,
# state-upper-loop.) Either way the screen takes keys again and the state is as it was.
printf 'local x = ("a"):rep(40):find(("a*"):rep(40) .. "b")\nset{eps = 0.75}\n' >"$tmp/bomb.lua"
printf 'local s = ("x"):rep(64)\nwhile true do local u = s:upper() end\n' >"$tmp/slow.lua"
start 120 40
started
lua 'set{eps = 0.375}'
wait_for "eps           0.375"
keys :
wait_re "^> ?$"
lit ":e $tmp/bomb.lua"
keys Enter
check ":e of a pattern bomb ends with the budget's message" wait_for "runs too long for a state file" 5
keys Escape
check "  the screen takes keys again, the state as it was" wait_for "eps           0.375" 5
keys :
wait_re "^> ?$"
lit ":e $tmp/slow.lua"
pid=$(ns_pid)
cpu() { set -- $(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null); echo "${12:-0}"; }
before=$(cpu)
keys Enter
i=0 # until the file has run for 0.3 s of CPU (a loaded machine may take a while to start it)
while [ $i -lt 200 ] && [ $(( $(cpu) - before )) -lt 30 ]; do sleep 0.05; i=$((i + 1)); done
# a Ctrl-C that came before the file started (a slow sanitizer build) is pressed again
tries=0
while :; do
  keys C-c
  tries=$((tries + 1))
  if wait_for "interrupted (Ctrl-C); the state is as it was" 3 || [ $tries -ge 3 ]; then break; fi
done
check "Ctrl-C ends a slow state file at once ($tries presses)" \
  wait_for "interrupted (Ctrl-C); the state is as it was" 1
# leave the prompt; an Esc that readline takes as the start of a Meta key (a slow build,
# Esc and the next key close together) is pressed again, never followed at once by q
i=0
while :; do
  keys Escape
  sleep 0.3
  capture | tail -n 1 | grep -q "Esc leaves" || break
  i=$((i + 1))
  [ $i -lt 3 ] || break
done
check "  and leaves the explorer running with its state" wait_for "eps           0.375" 5
keys q
check "  q still quits" wait_for "EXIT=0"

# a lesson's escape sequences on the screen (issue 23): shown in caret notation, obeyed by
# nothing (the pane's title stays; nothing was cleared)
printf 'lesson{title = "T \033]0;PWNEDTITLE\007", source = "000", section = "s",\n  steps = {{text = "hi \033]2;PWNED2\007 \033[2J there"}}}\n' >"$tmp/esc.lua"
start 120 40 lesson "$tmp/esc.lua"
check "a lesson's escapes show as ^[ on the screen" wait_for 'hi ^[]2;PWNED2^G ^[[2J there' 10
title=$(T display-message -p -t "$SES" '#{pane_title}')
check "  the pane's title is not the lesson's ($title)" sh -c 'case "$1" in *PWNED*) exit 1;; esac' - "$title"
keys q
wait_for "EXIT="

# the help lists every field of the state with its line from the field table
start 120 40
started
keys '?'
wait_for "keys and meanings"
docs=$("$NS" run - <<'LUA'
for _, f in ipairs(ns.fields()) do print(f.name .. "\t" .. f.doc) end
LUA
)
seen="$tmp/help-seen"
: >"$seen"
i=0
while [ $i -lt 30 ]; do
  capture >>"$seen"
  keys PageDown
  sleep 0.1
  i=$((i + 1))
done
missing=$(printf '%s\n' "$docs" | while IFS="$(printf '\t')" read -r name doc; do
  grep -qF -- "$name" "$seen" && grep -qF -- "$(printf '%s' "$doc" | cut -c1-40)" "$seen" || echo "$name"
done)
check "help lists every field with its doc line (missing: ${missing:-none})" test -z "$missing"
keys Escape q

done_testing
