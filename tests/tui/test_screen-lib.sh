# test_screen-lib.sh: shared set-up of the screen tests (sourced, not run).
# Drives the real binary in a private tmux server; every check polls the captured pane
# with a timeout instead of sleeping a fixed time. Prints TAP through ok/not_ok.

if [ -z "${TMUX_BIN:-}" ]; then
  echo "1..0 # SKIP tmux not found"
  exit 0
fi
NS=${NORMSCOPE:-./normscope}
if [ ! -x "$NS" ]; then
  echo "1..0 # SKIP $NS not built"
  exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ns-screen.XXXXXX")
SOCK=ns-screen-$$
T() { "$TMUX_BIN" -L "$SOCK" "$@"; }
cleanup() {
  T kill-server >/dev/null 2>&1
  rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$SOCK"
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# A clean, reproducible environment: private history, UTF-8, 256 colours.
export HOME="$tmp/home" XDG_STATE_HOME="$tmp/state" TERM=xterm-256color LANG=C.UTF-8
unset LC_ALL NO_COLOR
mkdir -p "$HOME"

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
  n=$((n + 1))
  failed=$((failed + 1))
  echo "not ok $n - $1"
  capture | sed 's/^/#   | /'
}
check() { # check NAME CMD...: ok when CMD succeeds
  name=$1
  shift
  if "$@"; then ok "$name"; else not_ok "$name"; fi
}
done_testing() {
  echo "1..$n"
  [ "$failed" -eq 0 ]
}
# f FORMAT EXPR: awk's printf of an expression (awk uses C's printf, as the screen does);
# the expected numbers are computed with it from the formulas, not taken from the program
f() { awk "BEGIN { printf \"$1\", $2 }"; }

# start W H [ARGS]: a shell in a new W x H window; normscope runs in it (so the terminal
# state after it exits can be inspected), then prints its exit status. $START_ENV
# (e.g. "NO_COLOR=1") is added to the shell's environment. The previous session is
# closed only after the new one exists, so the tmux server never exits in between.
session=0
SES=
start() {
  w=$1
  h=$2
  shift 2
  old=$SES
  session=$((session + 1))
  SES=s$session
  T -f /dev/null new-session -d -s "$SES" -x "$w" -y "$h" \
    "env ${START_ENV:-} PS1='$ ' sh" || return 1
  T set-option -t "$SES" status off >/dev/null
  [ -n "$old" ] && T kill-session -t "$old" >/dev/null 2>&1
  T send-keys -t "$SES" "clear; '$NS' $*; echo EXIT=\$?" Enter
}
capture() { T capture-pane -p -t "$SES" 2>/dev/null; }
keys() { T send-keys -t "$SES" "$@"; }
# lit TEXT: types TEXT literally (no key-name lookup)
lit() { T send-keys -t "$SES" -l "$1"; }

# poll GREP_MODE PATTERN [SECONDS]: the pane matches PATTERN (grep -F or -E), polled
# every 50 ms for up to SECONDS (default 5).
poll() {
  i=0
  lim=$(( ${3:-5} * 20 ))
  while [ $i -lt $lim ]; do
    if capture | grep -q"$1" -- "$2"; then return 0; fi
    sleep 0.05
    i=$((i + 1))
  done
  return 1
}
# lua CHUNK: types CHUNK at the explorer's ':' prompt, runs it and leaves the prompt
lua() {
  keys :
  wait_re "^> ?$" || return 1
  lit "$1"
  keys Enter
  sleep 0.2
  keys Escape
  wait_for "? help  q quit"
}
# wait_for TEXT [SECONDS]: the pane shows TEXT (fixed string).
wait_for() { poll F "$@"; }
# wait_re REGEX [SECONDS]
wait_re() { poll E "$@"; }
# gone TEXT: the pane no longer shows TEXT
gone() {
  i=0
  while [ $i -lt 100 ]; do
    if ! capture | grep -qF -- "$1"; then return 0; fi
    sleep 0.05
    i=$((i + 1))
  done
  return 1
}
# no_re REGEX: the pane, captured once now, has no line matching REGEX (grep -E). A pane
# that cannot be read fails. Call it after a wait_* that shows the screen is drawn. (A
# shell function such as capture cannot be run by a child `sh -c`: that check passed
# whatever the pane showed.)
no_re() {
  scr=$(capture) && [ -n "$scr" ] || return 1
  ! printf '%s\n' "$scr" | grep -qE -- "$1"
}
# the pid of normscope inside the pane's shell
ns_pid() {
  sh_pid=$(T display-message -p -t "$SES" '#{pane_pid}')
  # the pane shell's child, read from /proc (no procps on a minimal system)
  for st in /proc/[0-9]*/stat; do
    set -- $(sed 's/^.*) //' "$st" 2>/dev/null)
    [ "${2:-}" = "$sh_pid" ] && { echo "${st#/proc/}" | cut -d/ -f1; return; }
  done
}
# only printable ASCII in the pane
ascii_only() { ! capture | LC_ALL=C grep -q '[^ -~]'; }
# no SGR colour codes in the pane
no_colour() {
  ! T capture-pane -e -p -t "$SES" | grep -qE '\[(3[0-7]|38;5;[0-9]+|4[0-7]|48;5;[0-9]+)m'
}
# the program asked the terminal for no mouse reports
no_mouse() {
  ! T display-message -p -t "$SES" '#{mouse_any_flag}#{mouse_button_flag}#{mouse_standard_flag}' |
    grep -q 1
}
has_colour() { ! no_colour; }
has_mouse() { ! no_mouse; }
# the screen has come up (the header and the first panel)
started() { wait_for "1 Input" 10; }
# terminal settings after the program exited: echo and icanon back on
sane_tty() {
  wait_for "EXIT=" 10 || return 1
  keys "clear; stty -a | tr ';' '\n' | tr ' ' '\n' | grep -xE 'echo|icanon|-echo|-icanon' | sort | tr '\n' ' '; echo" Enter
  wait_re "^echo icanon *$" 5
}
