#!/bin/sh
# test_kill_exit.sh: the files the explorer writes on its way out, each killed with
# SIGKILL while it is being written, again and again:
#   autosave   last.lua (for --resume) of a 200000-element state (2 MB)
#   progress   lesson-progress of a lesson played (a 4 MB file: 8000 rows kept for
#              other lessons)
#   record     the lesson written by `normscope record` (2 MB: x set at the prompt)
# The real binary runs in tmux; SIGTERM makes it quit as q does (it then writes), and
# tests/cli/kill_on_write sends SIGKILL at a random moment after the write has begun
# (seen as a temporary file beside the file or as any change of the file itself, so an
# in-place writer would be caught as well): within 3 ms on odd kills, within 200 ms on
# even ones. After every kill the file must be byte for byte the one before or the one
# being written, and load with normscope's own reader. TAP, one line per kill.
set -u
if [ -z "${TMUX_BIN:-}" ] || [ ! -x "$TMUX_BIN" ]; then
  echo "1..0 # SKIP tmux not found"
  exit 0
fi
ns=${NORMSCOPE:-${top_builddir:-.}/normscope}
tools=${top_builddir:-.}/tests/cli
kills=${KILLS:-6}
T=$(mktemp -d "${TMPDIR:-/tmp}/nsxkill.XXXXXX") || exit 1
SOCK=nskill-$$
tm() { "$TMUX_BIN" -L "$SOCK" "$@"; }
cleanup() {
  tm kill-server >/dev/null 2>&1
  rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$SOCK"
  rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
export HOME="$T/home" XDG_STATE_HOME="$T/state" TERM=xterm-256color LANG=C.UTF-8
export NORMSCOPE_LESSONS="${top_srcdir:-..}/lessons"
unset LC_ALL NO_COLOR
mkdir -p "$HOME" "$XDG_STATE_HOME/normscope"
state=$XDG_STATE_HOME/normscope
t_start=$(date +%s)
# a session that keeps the tmux server up between the runs
tm -f /dev/null new-session -d -s keep "sleep 3600"

n=0
bad=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); bad=1; echo "not ok $n - $1"; }

# Two states of 200000 elements that differ in every element, written by save().
cat >"$T/mk.lua" <<'LUA'
local n, sign = tonumber(arg[2]), tonumber(arg[3])
local a = {}
for i = 1, n do a[i] = sign * (i + 0.25) end
ns.explorer{x = ns.tensor(a), eps = sign > 0 and 0.125 or 0.5}:save(arg[1])
LUA
"$ns" run "$T/mk.lua" "$T/A.lua" 200000 1 && "$ns" run "$T/mk.lua" "$T/B.lua" 200000 -1 || {
  echo "Bail out! cannot write the two states"
  exit 1
}
# load.lua FILE: the state file loads whole (as --resume and load() read it)
cat >"$T/load.lua" <<'LUA'
local e = ns.explorer()
local ok, err = pcall(e.load, e, arg[1])
if not ok then print("unloadable: " .. tostring(err)) os.exit(1) end
print(#e:get().x .. " elements")
LUA

# screen NAME ARGS...: normscope ARGS in a new tmux session NAME; waits until it has
# drawn its screen; its process id in $pid.
screen() {
  name=$1
  shift
  rm -f "$T/pid"
  tm new-session -d -s "$name" -x 120 -y 40 "echo \$\$ >'$T/pid'; exec '$ns' $*"
  w=0
  while [ $w -lt 300 ]; do
    if [ -s "$T/pid" ] && tm capture-pane -p -t "$name" 2>/dev/null | grep -q 'normscope'; then
      pid=$(cat "$T/pid")
      return 0
    fi
    sleep 0.05
    w=$((w + 1))
  done
  echo "# $name: the screen did not come up"
  tm capture-pane -p -t "$name" 2>/dev/null | sed 's/^/#   | /'
  pid=$(cat "$T/pid" 2>/dev/null)
  return 1
}
# alive: $pid runs (a zombie has ended: tmux may be slow to reap it)
alive() {
  st=$(ps -o stat= -p "$pid" 2>/dev/null)
  [ -n "$st" ] && [ "${st#Z}" = "$st" ]
}
# gone: waits (up to 30 s) until $pid has ended.
gone() {
  w=0
  while alive && [ $w -lt 600 ]; do
    sleep 0.05
    w=$((w + 1))
  done
}
# quit_killed FILE K: SIGTERM (the screen quits and writes), and SIGKILL at a random
# moment after the write of FILE has begun. Says what happened in $how.
quit_killed() {
  max=200000
  [ $(($2 % 2)) -eq 1 ] && max=3000
  "$tools/kill_on_write" "$pid" "$1" $max $(($2 * 7919)) 30000 >"$T/kow" 2>&1 &
  kpid=$!
  sleep 0.2 # kill_on_write has looked at the file before the write can begin
  kill -TERM "$pid"
  wait $kpid
  how=$(cat "$T/kow")
  gone
}
# quit: SIGTERM, and let it finish its writes.
quit() {
  kill -TERM "$pid"
  gone
}
# the_same FILE REF...: FILE is byte for byte one of the REFs; prints which.
the_same() {
  f=$1
  shift
  for r in "$@"; do
    if cmp -s "$f" "$r"; then
      echo "${r##*/}"
      return 0
    fi
  done
  echo "none of $* ($(wc -c <"$f" 2>/dev/null || echo no) bytes)"
  return 1
}

# ---- autosave: last.lua is the state the session quit with ----------------------------
screen a0 --state "$T/A.lua" && quit
if got=$(the_same "$state/last.lua" "$T/A.lua"); then
  ok "autosave: a session quit with state A leaves last.lua = A.lua"
  prev=A.lua
else
  not_ok "autosave: a finished autosave is not the state: $got"
fi
k=0
while [ $k -lt "$kills" ]; do
  k=$((k + 1))
  s=A
  [ $((k % 2)) -eq 1 ] && s=B
  screen "a$k" --state "$T/$s.lua" || { not_ok "autosave $k: the screen did not start"; continue; }
  quit_killed "$state/last.lua" $k
  # the file before this session, or the state this session quit with
  l=""
  if got=$(the_same "$state/last.lua" "$T/$prev" "$T/$s.lua") &&
    l=$("$ns" run "$T/load.lua" "$state/last.lua" 2>&1); then
    ok "autosave $k (state $s): $how; last.lua is $got, whole, and loads ($l)"
    prev=$got
  else
    not_ok "autosave $k (state $s): $how; last.lua: $got $l"
  fi
done
mode=$(stat -c %a "$state/last.lua")
want=$(printf '%o' $((0644 & ~0$(umask)))) # 0644 less the umask, as any new file
if [ "$mode" = "$want" ]; then
  ok "autosave: last.lua is an ordinary file (mode $mode)"
else
  not_ok "autosave: last.lua has mode $mode, not $want"
fi

echo "# autosave: $(($(date +%s) - t_start)) s"
# ---- lesson progress: the rows of other lessons survive --------------------------------
# (names of 480 characters: the reader looks each name up among the rows before it)
awk 'BEGIN { pad = "-another-lesson"; while (length(pad) < 474) pad = pad "-x"
  for (i = 1; i <= 8000; i++) printf "%05d%s\t%d\t9\t%d\n", i, pad, i % 9 + 1, i % 9 + 1 }' \
  >"$state/lesson-progress"
screen p1 lesson 1 && quit
screen p2 lesson 2 && quit
"$tools/progress_dump" >"$T/progress.ref"
rows=$(head -n 1 "$T/progress.ref")
if [ "$rows" = "rows 8002" ]; then
  ok "progress: after lessons 1 and 2 the file holds their rows and the 8000 others"
else
  not_ok "progress: after lessons 1 and 2 the file holds $rows, not 8002"
fi
tail -n +2 "$T/progress.ref" | sort >"$T/progress.sorted"
cp "$state/lesson-progress" "$T/progress.2" # lesson 2 the last one played
k=0
while [ $k -lt "$kills" ]; do
  k=$((k + 1))
  l=$((k % 2 + 1))
  screen "p$((k + 2))" lesson $l || { not_ok "progress $k: the screen did not start"; continue; }
  quit_killed "$state/lesson-progress" $k
  "$tools/progress_dump" >"$T/progress.now"
  if [ "$(head -n 1 "$T/progress.now")" = "rows 8002" ] &&
    tail -n +2 "$T/progress.now" | sort | cmp -s - "$T/progress.sorted"; then
    ok "progress $k (lesson $l): $how; all 8002 rows read back"
  else
    not_ok "progress $k (lesson $l): $how; read back: $(head -n 1 "$T/progress.now")"
  fi
done

echo "# progress: $(($(date +%s) - t_start)) s"
# ---- a recorded lesson ----------------------------------------------------------------
# record STATE K: records a session in which the prompt loads STATE, then quits (K: killed
# while writing, else it finishes).
record() {
  screen "r$2$1" record "$T/rec.lua" || return 1
  tm send-keys -t "r$2$1" ':'
  sleep 0.3
  tm send-keys -t "r$2$1" -l "load(\"$T/$1.lua\")"
  tm send-keys -t "r$2$1" Enter
  w=0
  until tm capture-pane -p -t "r$2$1" | grep -q '^│true' || [ $w -gt 300 ]; do
    sleep 0.05
    w=$((w + 1))
  done
  if [ "$2" = 0 ]; then quit; else quit_killed "$T/rec.lua" "$2"; fi
}
# played FILE: the lesson loads and plays headless (the real lesson loader)
played() {
  "$ns" lesson --states "$1" >"$T/states" 2>&1 && grep -c '^set' "$T/states" | grep -q '^1$'
}
record A 0 && cp "$T/rec.lua" "$T/recA.lua"
record B 0 && cp "$T/rec.lua" "$T/recB.lua"
if played "$T/recA.lua" && played "$T/recB.lua" && ! cmp -s "$T/recA.lua" "$T/recB.lua"; then
  ok "record: a finished recording of state A (and B) loads as a lesson of one step"
  prev=recB.lua
else
  not_ok "record: a finished recording does not load: $(head -n 3 "$T/states")"
fi
k=0
while [ $k -lt "$kills" ]; do
  k=$((k + 1))
  s=A
  [ $((k % 2)) -eq 1 ] && s=B
  record $s $k || { not_ok "record $k: the screen did not start"; continue; }
  if got=$(the_same "$T/rec.lua" "$T/$prev" "$T/rec$s.lua") && played "$T/rec.lua"; then
    ok "record $k (state $s): $how; the lesson file is $got, whole, and plays"
    prev=$got
  else
    not_ok "record $k (state $s): $how; the lesson file: $got"
  fi
done

echo "# record: $(($(date +%s) - t_start)) s"
left=$(find "$T" -name '*.tmp??????' | wc -l)
echo "# $left temporary files left by the killed writers (each a kill before its rename)"
echo "1..$n"
exit $bad
