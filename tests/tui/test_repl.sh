#!/bin/sh
# `normscope repl` in a real terminal (tmux): values, completion, multi-line input,
# errors, Ctrl-C, history across two runs, Ctrl-D. Prints TAP.
NS=${NORMSCOPE:-./normscope}
if [ -z "${TMUX_BIN:-}" ] || [ ! -x "$TMUX_BIN" ]; then
  echo "1..0 # SKIP tmux not found"
  exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ns-repl.XXXXXX") || exit 1
sock=ns-test-$$
tm() { "$TMUX_BIN" -L "$sock" "$@"; }
cleanup() {
  tm kill-server >/dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
mkdir -p "$tmp/home"

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
  n=$((n + 1)); echo "not ok $n - $1"
  tm capture-pane -p -J -S -100 -t "$ns" 2>/dev/null | sed 's/^/#   | /'
}

# start NAME: a fresh REPL in a new detached 100x30 session NAME (which the helpers
# below then use); its exit status is shown in the pane after it ends. Earlier sessions
# stay: killing the last one would stop the server while the next one starts.
start() {
  ns=$1
  tm -f /dev/null new-session -d -s "$ns" -x 100 -y 30 \
    "env HOME='$tmp/home' XDG_STATE_HOME='$tmp/state' TERM=screen '$NS' repl; echo \"EXIT=\$?\"; sleep 60"
}
screen() { tm capture-pane -p -J -S -200 -t "$ns" 2>/dev/null; }
# wait_line REGEX [SECONDS]: polls the pane until a line matches (extended regex).
wait_line() {
  limit=$(( ${2:-10} * 10 ))
  i=0
  while [ $i -lt $limit ]; do
    if screen | grep -Eq -- "$1"; then return 0; fi
    sleep 0.1
    i=$((i + 1))
  done
  return 1
}
count_lines() { screen | grep -Ec -- "$1"; }
# type_line TEXT: types TEXT literally and presses Enter.
type_line() {
  tm send-keys -t "$ns" -l -- "$1"
  tm send-keys -t "$ns" Enter
}
# type_tab TEXT: types TEXT literally and presses Tab.
type_tab() {
  tm send-keys -t "$ns" -l -- "$1"
  tm send-keys -t "$ns" Tab
}
expect() { # expect NAME REGEX
  if wait_line "$2"; then ok "$1"; else not_ok "$1"; fi
}

start first
expect "the prompt appears" '^> $'

type_line '6 * 7'
expect "an expression prints its value without '='" '^42$'

type_line 'return "a", 2, nil'
# (the pane shows tabs as spaces; tests/cli/test_cli.sh checks the tabs themselves)
expect "several values are printed on one line" '^a +2 +nil$'

type_tab 'ns.nor'
expect "ns.nor<Tab> completes to ns.normalize" '^> ns\.normalize$'
type_line ' ~= nil'
expect "the completed name is the function" '^true$'

type_tab 'string.up'
expect "string.up<Tab> completes a field of a library" '^> string\.upper$'
type_line '("q")'
expect "  and it runs" '^Q$'

type_line 't = ns.zeros({3})'
type_tab 't:sha'
expect "t:sha<Tab> completes a tensor method through its metatable" '^> t:shape$'
type_line '()[1]'
expect "  and it runs" '^3$'

type_line 'function sq(v)'
expect "an unfinished chunk asks for more with '>> '" '^>> $'
type_line '  return v * v'
type_line 'end'
type_line 'sq(12)'
expect "the multi-line function was defined" '^144$'

type_line 'error("bad thing")'
expect "an error is printed as lua.c prints it" '^stdin:1: bad thing$'
type_line '100 + 23'
expect "the REPL goes on after an error" '^123$'

tm send-keys -t "$ns" -l 'print("SHOULD" .. "NOT_RUN")'
# wait until readline has the line, and after Ctrl-C for the fresh prompt: a busy machine
# must not turn this into a race between the signal and the next line's keys
wait_line 'print\("SHOULD" \.\. "NOT_RUN"\)$'
tm send-keys -t "$ns" C-c
wait_line '^> ?$'
type_line 'print("after" .. "_cancel")'
if wait_line '^after_cancel$' && [ "$(count_lines '^SHOULDNOT_RUN$')" = 0 ]; then
  ok "Ctrl-C drops the line without running it"
else
  not_ok "Ctrl-C drops the line without running it"
fi

type_line 'for i = 1, 3 do'
wait_line '^>> $' >/dev/null
tm send-keys -t "$ns" C-c
type_line 'print("fresh" .. "_chunk")'
expect "Ctrl-C drops an unfinished multi-line chunk" '^fresh_chunk$'

type_line 'while true do end'
sleep 0.3
tm send-keys -t "$ns" C-c
expect "Ctrl-C stops a running loop" 'interrupted!'
type_line '7 * 6 + 1'
expect "  and the REPL goes on" '^43$'

type_line 'history_marker = 424242'
tm send-keys -t "$ns" C-d
expect "Ctrl-D on an empty line exits with status 0" '^EXIT=0$'

hist=$tmp/state/normscope/history
if [ -f "$hist" ] && grep -q 'history_marker = 424242' "$hist"; then
  ok "the history file is under \$XDG_STATE_HOME/normscope"
else
  not_ok "the history file is under \$XDG_STATE_HOME/normscope"
fi

start second
wait_line '^> $' >/dev/null
tm send-keys -t "$ns" Up
expect "Up recalls the last line of the previous run" '^> history_marker = 424242$'
tm send-keys -t "$ns" C-u
type_line 'sq'
expect "  (a new state: the old definitions are gone)" '^nil$'
# The multi-line definition is one history entry: found by a reverse search and
# accepted, it defines sq again.
tm send-keys -t "$ns" C-r
tm send-keys -t "$ns" -l 'function sq'
wait_line 'function sq' >/dev/null
tm send-keys -t "$ns" Enter
type_line 'sq(9)'
expect "a multi-line chunk is recalled as one entry" '^81$'
tm send-keys -t "$ns" C-d
expect "the second run exits with status 0" '^EXIT=0$'

echo "1..$n"
exit 0
