#!/bin/sh
# Hostile lessons (tests/lessons/hostile-*.lua): each must end with exit status 1 and one
# message "normscope: FILE:LINE: <what went wrong>", never a crash, a hang or a traceback
# alone. The expected line numbers and messages are written here from the fixtures.
NS=${NORMSCOPE:-./normscope}
dir=${top_srcdir:-.}/tests/lessons
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ns-hostile.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# a small budget and cap keep the endless loops and bombs short (the default budget is
# tested once below)
NS_LESSON_STEPS=5000000 NS_LESSON_MEM=32M
export NS_LESSON_STEPS NS_LESSON_MEM

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
  n=$((n + 1)); echo "not ok $n - $1"
  shift
  for line in "$@"; do echo "#   $line"; done
}

# hostile NAME LINE TEXT: lesson --headless FILE exits 1 with "normscope: FILE:LINE: ...TEXT"
hostile() {
  f=$dir/hostile-$1.lua
  timeout 60 "$NS" lesson --headless "$f" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  want="normscope: $f:$2: "
  if [ "$rc" = 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && head -n 1 "$tmp/err" | grep -q -F -- "$want" &&
    grep -q -F -- "$3" "$tmp/err"; then
    ok "$1: contained at line $2 ($3)"
  else
    not_ok "$1: contained at line $2 ($3)" "rc=$rc" "stderr: $(head -c 400 "$tmp/err")"
  fi
}

hostile loop 3 "instruction budget exceeded"
hostile loop-pcall 3 "instruction budget exceeded"
hostile step-loop 4 "instruction budget exceeded"
hostile memory 4 "memory limit exceeded"
hostile concat 3 "memory limit exceeded"
hostile rep 2 "over the lesson's memory limit"
hostile rep-method 3 "over the lesson's memory limit"
hostile os 2 "global 'os'"
hostile io 2 "global 'io'"
hostile require 2 "global 'require'"
hostile bytecode 2 "attempt to load a binary chunk"
hostile bytecode-mode 2 "text chunks only"
hostile dump 2 "field 'dump'"
hostile ns-save 2 "field 'save'"
hostile collectgarbage 2 "collectgarbage: lessons may use"
hostile syntax 3 "expected near"
hostile runtime 6 "attempt to index a nil value"
hostile error-table 2 "error object is a table value"
hostile claim-unknown 3 "claim: unknown id 'no-such-claim'"
hostile tensors 3 "memory limit exceeded: tensors hold"
hostile gc 3 "lessons cannot set __gc"
hostile pattern 3 "instruction budget exceeded"
hostile explorer-save 3 "cannot read or write files"
hostile explorer-load 3 "cannot read or write files"
hostile set-file 2 "cannot read or write files"
hostile audit-file 2 "cannot read or write files"
# C work the count hook never sees: the matcher, the table functions and ns.* charge the
# budget too, and the clock ends what is cheap in instructions but not in time
hostile pattern-long 3 "instruction budget exceeded"
hostile pattern-plain 3 "instruction budget exceeded"
hostile gsub-pattern 3 "instruction budget exceeded"
hostile table-move 3 "instruction budget exceeded"
hostile table-len 3 "instruction budget exceeded"
hostile rep-empty 5 "over the lesson's memory limit"
hostile c-loop 3 "instruction budget exceeded"
hostile jacobian-loop 3 "instruction budget exceeded"
hostile explorer-gc 3 "attempt to index a boolean value"
hostile check-loop 3 "instruction budget exceeded"
hostile gc-loop 4 "instruction budget exceeded"
# Lua refuses a huge format width before printf sees it, so nothing pads to gigabytes
hostile format-width 2 "invalid conversion specification: '%99999999999d'"
# memory: every tensor a call makes counts against the cap, wherever it ends up (a budget
# large enough that the cap ends these)
NS_LESSON_STEPS=1000000000
hostile mem-explorer 4 "memory limit exceeded: tensors hold"
hostile mem-explorers 4 "memory limit exceeded: tensors hold"
hostile mem-steps 4 "memory limit exceeded: tensors hold"
hostile mem-results 4 "memory limit exceeded: "
# and what is not a tensor: undo steps' element lists, a figure's scratch
hostile mem-history 5 "memory limit exceeded: tensors hold"
hostile mem-figure 5 "memory limit exceeded: computing the panels of 1048576 elements needs 128 MiB"
# and a computation's scratch, charged as its bound before it runs
hostile mem-compute 5 "memory limit exceeded: computing the panels of 1048576 elements needs 128 MiB, where tensors hold 8 MiB and Lua"
NS_LESSON_STEPS=5000000
# (upper charges its bytes, 2^19 units a call: a budget too large to end it first)
NS_LESSON_TIME=2 NS_LESSON_STEPS=1000000000000
export NS_LESSON_TIME
hostile time 4 "time limit exceeded (2.0 s per call; NS_LESSON_TIME raises it)"
unset NS_LESSON_TIME
NS_LESSON_STEPS=5000000

# many large temporaries are not a bomb: the collector gives their memory back in time
# (their 26 million elements of work need more than the small budget above)
if NS_LESSON_STEPS=100000000 timeout 60 "$NS" lesson --headless "$dir/hostile-tensor-garbage.lua" >"$tmp/out" 2>"$tmp/err"; then
  ok "400 temporary 512 KiB tensors under a 32 MiB cap"
else not_ok "400 temporary 512 KiB tensors under a 32 MiB cap" "stderr: $(head -c 300 "$tmp/err")"; fi
# ordinary patterns still work in a lesson
printf 'local s = ("a b  c"):gsub("%%s+", " ")\nassert(s == "a b c")\nassert(("k=v"):match("(%%w+)=(%%w+)") == "k")\nlesson{title = "t", source = "000", section = "s", steps = {{text = "ok"}}}\n' >"$tmp/pat.lua"
if "$NS" lesson --headless "$tmp/pat.lua" >/dev/null 2>"$tmp/err"; then ok "simple patterns still work"
else not_ok "simple patterns still work" "stderr: $(head -c 300 "$tmp/err")"; fi
# an argument error inside the sandbox still names the function and the lesson's line
printf 'local t = ns.tensor{1, 2}\nlocal u = t:reshape("no")\n' >"$tmp/arg.lua"
"$NS" lesson --headless "$tmp/arg.lua" >/dev/null 2>"$tmp/err"
if grep -q -F "arg.lua:2: bad argument #1 to 'reshape'" "$tmp/err"; then ok "argument errors keep their names"
else not_ok "argument errors keep their names" "stderr: $(head -c 300 "$tmp/err")"; fi

# each of those ends soon after its limit: within 5 s of the deadline (a generous bound for
# a loaded machine), the budget's ones in a few seconds
t0=$(date +%s)
NS_LESSON_TIME=2 NS_LESSON_STEPS=1000000000000 timeout 60 "$NS" lesson --headless "$dir/hostile-time.lua" >/dev/null 2>&1
t1=$(date +%s)
if [ $((t1 - t0)) -le 7 ]; then ok "a 2 s deadline ends the call within 5 s of it ($((t1 - t0)) s)"
else not_ok "a 2 s deadline ends the call within 5 s of it" "took $((t1 - t0)) s"; fi

# Ctrl-C ends a running lesson at once, with a message (the shell ignores SIGINT in a
# background job: give it back its default first)
printf 'lesson{title = "t", source = "000", section = "s", steps = {{text = "x"}}}\nwhile true do end\n' >"$tmp/spin.lua"
NS_LESSON_STEPS=1000000000000 NS_LESSON_TIME=120 env --default-signal=INT "$NS" lesson --headless "$tmp/spin.lua" >/dev/null 2>"$tmp/err" &
pid=$!
sleep 1
kill -INT "$pid" 2>/dev/null
t0=$(date +%s)
wait "$pid"
rc=$?
t1=$(date +%s)
if [ "$rc" = 1 ] && grep -q "spin.lua:2: interrupted (Ctrl-C)" "$tmp/err" && [ $((t1 - t0)) -le 3 ]; then
  ok "Ctrl-C interrupts a running lesson"
else not_ok "Ctrl-C interrupts a running lesson" "rc=$rc after $((t1 - t0)) s" "stderr: $(head -c 300 "$tmp/err")"; fi

# peak FILE RC WHAT: lesson --headless FILE exits RC with a peak RSS under 64 MB
peak() {
  if [ ! -x /usr/bin/time ]; then
    echo "ok $((n = n + 1)) - # SKIP no /usr/bin/time for the peak memory"
    return
  fi
  /usr/bin/time -f "%M" -o "$tmp/rss" "$NS" lesson --headless "$dir/$1" >/dev/null 2>"$tmp/err"
  rc=$?
  kb=$(tail -n 1 "$tmp/rss")
  if [ "$rc" = "$2" ] && [ "$kb" -lt 65536 ]; then ok "$3 (peak $kb KB)"
  else not_ok "$3" "rc=$rc peak ${kb} KB" "stderr: $(head -c 300 "$tmp/err")"; fi
}
# 200 steps over one 8 MB x: the snapshots share it, so the lesson loads under a 32 MiB cap
# in well under 64 MB (a copy per step would be 1.6 GB)
peak mem-shared-steps.lua 0 "200 step snapshots share one 8 MB x"
# the panels' computation of a 2^20-element x is refused before it runs: the lesson stays
# well under 64 MB (97 MB when it runs, as it did when only its tensors were charged)
peak hostile-mem-compute.lua 1 "a refused computation stays under the cap"

# what a lesson holds when it ends goes with its Lua state, after its memory account: rc 0
# here, and no leak under the sanitizer build
if timeout 60 "$NS" lesson --headless "$dir/mem-teardown.lua" >/dev/null 2>"$tmp/err" && [ ! -s "$tmp/err" ]; then
  ok "a lesson's tensors, explorer and results are freed at its end"
else not_ok "a lesson's tensors, explorer and results are freed at its end" "stderr: $(head -c 600 "$tmp/err")"; fi

# output: a print flood stops at 1 MiB a call, with a note (and the budget ends the loop)
NS_LESSON_STEPS=50000000 timeout 60 "$NS" lesson --headless "$dir/hostile-print-flood.lua" >"$tmp/out" 2>"$tmp/err"
bytes=$(wc -c <"$tmp/out")
if [ "$bytes" -le 1049000 ] && grep -q "output cut here: a lesson prints at most 1024 KiB per call" "$tmp/out" &&
  grep -q "instruction budget exceeded" "$tmp/err"; then
  ok "a print flood is cut at 1 MiB with a note ($bytes bytes)"
else not_ok "a print flood is cut at 1 MiB with a note" "$bytes bytes" "stderr: $(head -c 300 "$tmp/err")"; fi

# nothing was written by the ns.save attempt
if [ ! -e /tmp/normscope-hostile.npy ]; then ok "ns.save wrote nothing"; else not_ok "ns.save wrote nothing"; fi

# the limits come from the environment: a tiny memory cap stops even a small lesson
NS_LESSON_MEM=1M timeout 60 "$NS" lesson --headless "$dir/hostile-rep-method.lua" >/dev/null 2>"$tmp/err"
if grep -q "(1 MiB; NS_LESSON_MEM" "$tmp/err"; then ok "NS_LESSON_MEM=1M is the cap"; else
  not_ok "NS_LESSON_MEM=1M is the cap" "stderr: $(head -c 300 "$tmp/err")"; fi
unset NS_LESSON_STEPS
timeout 120 "$NS" lesson --headless "$dir/hostile-loop.lua" >/dev/null 2>"$tmp/err"
if grep -q "(50000000 VM instructions" "$tmp/err"; then ok "the default budget ends a loop too"; else
  not_ok "the default budget ends a loop too" "stderr: $(head -c 300 "$tmp/err")"; fi

echo "1..$n"
