#!/bin/sh
# bench_class.sh NORMSCOPE [FOLLOWERS] [SECONDS]: what followers cost a teacher, measured
# (make bench runs it; nothing is asserted). A teacher (normscope --broadcast) in tmux gets a
# key that changes its state ten times a second, first with no follower, then with
# FOLLOWERS (default 30) real `normscope follow` screens; the teacher's CPU time (utime +
# stime from /proc/PID/stat) over the wall time is printed for both, and for the teacher
# idle with its followers; then the time from a key to the teacher to a follower's screen.
NS=${1:-./normscope}
NF=${2:-30}
SECS=${3:-10}
TMUX_BIN=${TMUX_BIN:-$(command -v tmux)}
if [ -z "$TMUX_BIN" ]; then
  echo "bench_class: tmux not found: skipped"
  exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ns-bench-class.XXXXXX")
SOCK=ns-bench-class-$$
T() { "$TMUX_BIN" -L "$SOCK" "$@"; }
trap 'T kill-server >/dev/null 2>&1; sleep 0.5; rm -rf "$tmp"' EXIT INT TERM
export HOME="$tmp" XDG_STATE_HOME="$tmp/state" TERM=xterm-256color LANG=C.UTF-8
S=$tmp/sock
tick=$(getconf CLK_TCK)

spawn() { # NAME W H ARGS
  n=$1 w=$2 h=$3
  shift 3
  T -f /dev/null new-session -d -s "$n" -x "$w" -y "$h" "exec '$NS' $*"
}
pid_of() { T display-message -p -t "$1" '#{pane_pid}'; }
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
now() { date +%s.%N; }
# drive PID SECONDS KEYS: keys at 10 a second; prints the teacher's CPU share in percent
measure() {
  p=$1 s=$2 drive=$3
  c0=$(cpu "$p")
  t0=$(now)
  i=0
  while [ $i -lt $((s * 10)) ]; do
    if [ "$drive" = keys ]; then
      if [ $((i % 2)) -eq 0 ]; then T send-keys -t t e; else T send-keys -t t E; fi
    fi
    sleep 0.1
    i=$((i + 1))
  done
  c1=$(cpu "$p")
  t1=$(now)
  awk -v c="$((c1 - c0))" -v k="$tick" -v a="$t0" -v b="$t1" \
    'BEGIN { printf "%.2f", 100 * c / k / (b - a) }'
}

spawn t 120 40 --broadcast "$S"
sleep 1
tp=$(pid_of t)
base=$(measure "$tp" "$SECS" keys)
f=1
while [ $f -le "$NF" ]; do
  spawn "f$f" 80 24 follow "$S"
  f=$((f + 1))
done
sleep 3
n=$(T capture-pane -p -t t | head -n 1 | grep -o '[0-9]* following')
with=$(measure "$tp" "$SECS" keys)
idle=$(measure "$tp" "$SECS" idle)
# latency: a key to the teacher, then follower f1's screen polled until it changes (tmux's
# own capture time is included: an upper bound)
lat=""
k=0
while [ $k -lt 10 ]; do
  before=$(T capture-pane -p -t f1 | sed -n '2,16p')
  if [ $((k % 2)) -eq 0 ]; then key=e; else key=E; fi
  t0=$(date +%s%N)
  T send-keys -t t "$key"
  polls=0
  while [ "$(T capture-pane -p -t f1 | sed -n '2,16p')" = "$before" ] && [ $polls -lt 2000 ]; do
    polls=$((polls + 1))
  done
  t1=$(date +%s%N)
  lat="$lat $(((t1 - t0) / 1000000))"
  sleep 0.2
  k=$((k + 1))
done
echo "bench_class: teacher CPU, 10 state changes a second for ${SECS} s:"
echo "  no follower              ${base}%"
echo "  ${NF} followers (${n:-?})   ${with}%  (the broadcast's share: $(awk -v a="$with" -v b="$base" 'BEGIN { printf "%.2f", a - b }') points)"
echo "  ${NF} followers, idle         ${idle}%"
echo "bench_class: a change on a follower's screen (of ${NF}), key to screen, ms:$lat"
echo "$lat" | tr ' ' '\n' | sort -n | awk 'NF { v[++n] = $1 } END { if (n) printf "  median %d ms, max %d ms\n", v[int((n + 1) / 2)], v[n] }'
