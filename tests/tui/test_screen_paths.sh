#!/bin/sh
# test_screen_paths.sh: state files name what is missing (review N3) and saved states
# load from any folder (review N4). `:e` and `--state` with a file that does not exist say
# so and change nothing; a state saved after opening a file by a relative path names it by
# its absolute path, so --resume works from another folder; a --resume that cannot be
# applied offers the default screen.
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"
NS=$(cd "$(dirname "$NS")" && pwd)/$(basename "$NS") # the tests below change folder

# start_in DIR W H [ARGS]: start, with the shell (and so normscope) in folder DIR
start_in() {
  dir=$1
  shift
  old=$SES
  session=$((session + 1))
  SES=s$session
  T -f /dev/null new-session -d -s "$SES" -c "$dir" -x "$1" -y "$2" "env PS1='$ ' sh" || return 1
  T set-option -t "$SES" status off >/dev/null
  [ -n "$old" ] && T kill-session -t "$old" >/dev/null 2>&1
  shift 2
  T send-keys -t "$SES" "clear; '$NS' $*; echo EXIT=\$?" Enter
}

# --state with a missing file: an error naming it, exit 1 (as --resume does)
out=$("$NS" --state "$tmp/nope.lua" 2>&1 </dev/null)
st=$?
check "--state missing.lua: exit 1" test "$st" -eq 1
check "  naming the file and why" sh -c 'case "$1" in *"--state $2: No such file or directory"*) exit 0;; *) exit 1;; esac' - "$out" "$tmp/nope.lua"

start 120 40
started
lua 'set{eps = 0.25}'
wait_for "eps           0.25"
keys :
wait_re "^> ?$"
lit ":e $tmp/nope.lua"
keys Enter
check ":e missing.lua names the file, says nothing changed" \
  wait_for "nope.lua: No such file or directory (nothing changed)"
check "  and never says it was loaded" gone "state loaded from"
lit "load(\"$tmp/nope.lua\")"
keys Enter
check "load(missing.lua) is the state load's error, not Lua's load of the name" \
  wait_for "load: $tmp/nope.lua: No such file or directory"
check "  (no Lua syntax error about the name)" gone "unexpected symbol"
keys Escape
check "  the state is unchanged" wait_for "eps           0.25"
keys q
wait_for "EXIT=0"

# a 4097-element x (above the inline limit, so saved as a file reference) opened from a
# folder by a relative path
mkdir -p "$tmp/work" "$tmp/elsewhere"
"$NS" run - <<LUA
local t = {}
for i = 1, 4097 do t[i] = (i % 7) - 3 end
ns.save("$tmp/work/big.npy", ns.tensor(t))
LUA
start_in "$tmp/work" 120 40 big.npy
started
check "the file opened by a relative path" wait_for "x (4097) from big"
keys q
wait_for "EXIT=0"
last="$XDG_STATE_HOME/normscope/last.lua"
check "last.lua names the file by its absolute path" grep -qF "file = \"$tmp/work/big.npy\"" "$last"
start_in "$tmp/elsewhere" 120 40 --resume
check "--resume from another folder loads it" wait_for "x (4097) from big" 10
keys q
check "  and quits cleanly" wait_for "EXIT=0"

# a cell edit of a file of 2^20+1 elements: no file holds x now, so the exit writes its
# values beside last.lua as last.x.HEX12.npy and last.lua names that (it wrote every value
# as text: 15 s and 362 MB for a 64 MB file)
"$NS" run - <<LUA
ns.save("$tmp/work/huge.npy", ns.rng(7):normal(0, 1, {(1 << 20) + 1}))
LUA
start_in "$tmp/work" 120 40 huge.npy
started
check "the 2^20+1-element file opened" wait_for "x (1048577) from h"
keys 5 Enter
check "  a cell edit forgets the file" wait_for "x (1048577) ◀"
keys q
check "  and quits cleanly" wait_for "EXIT=0" 20
npy=$(sed -n 's/^  x = {file = "\([^"]*\)".*/\1/p' "$last")
check "the edited x went to last.x.HEX12.npy: $npy" \
  sh -c 'case "$1" in "$2"/normscope/last.x.????????????.npy) test -s "$1";; *) exit 1;; esac' \
  - "$npy" "$XDG_STATE_HOME"
check "  and last.lua names it instead of holding the values" \
  sh -c '[ $(wc -c <"$1") -lt 4096 ] && grep -q "sha256 = " "$1"' - "$last"
start_in "$tmp/elsewhere" 120 40 --resume
started
lua 'set{eps = get().x:flat()[1]}'
check "--resume brings the edited value back (x[1] = 5)" wait_for "eps           5" 20
keys q
check "  and quits cleanly" wait_for "EXIT=0" 20

# --resume whose saved state names a file that is gone: it says what is missing and offers
# the default screen, setting the state aside (it offered nothing, review N4)
gone_state() {
  printf -- '-- normscope explorer state\nset{\n  x = {file = "%s"},\n  kind = "rms",\n}\n' \
    "$tmp/work/gone.npy" >"$last"
  rm -f "$last.failed"
}
gone_state
out=$("$NS" --resume 2>&1 </dev/null)
st=$?
check "--resume, file gone, no terminal: exit 1" test "$st" -eq 1
check "  naming the missing file" \
  sh -c 'case "$1" in *"$2: No such file or directory"*) exit 0;; *) exit 1;; esac' - "$out" "$tmp/work/gone.npy"
check "  and how to start without it" \
  sh -c 'case "$1" in *"start without --resume"*) exit 0;; *) exit 1;; esac' - "$out"
check "  the saved state left as it was" grep -qF "$tmp/work/gone.npy" "$last"
start_in "$tmp/elsewhere" 120 40 --resume
check "at a terminal: the offer" wait_for "start from the default screen instead, keeping the saved state as"
# the pane's text with its line breaks taken out (the offer wraps at the pane's width)
joined_has() { capture | tr -d '\n' | grep -qF -- "$1"; }
check "  naming where the state goes" joined_has "$XDG_STATE_HOME/normscope/last.lua.failed? [y/N]"
keys n Enter
check "  n: nothing starts (exit 1)" wait_for "EXIT=1"
check "  and the state is where it was" grep -qF "$tmp/work/gone.npy" "$last"
start_in "$tmp/elsewhere" 120 40 --resume
wait_re "\[y/N\]"
keys y Enter
check "  y: the explorer opens on the default screen" wait_for "1 Input x (4)"
check "  the failed state is kept as last.lua.failed" grep -qF "$tmp/work/gone.npy" "$last.failed"
keys q
check "  and quits cleanly" wait_for "EXIT=0" 20

done_testing
