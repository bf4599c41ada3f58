#!/bin/sh
# test_umask.sh: every file normscope writes (atomically: a temporary file renamed over the
# name) gets 0644 less the umask, as any new file would (issue 23): a private user's umask
# 077 keeps a saved state, ns.save's output and a recorded lesson to themselves; the
# history is 0600 whatever the umask.
set -u
ns=${NORMSCOPE:-${top_builddir:-.}/normscope}
case "$ns" in /*) ;; *) ns=$PWD/$ns ;; esac
T=$(mktemp -d "${TMPDIR:-/tmp}/nsumask.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
HOME="$T/home" XDG_STATE_HOME="$T/state"
export HOME XDG_STATE_HOME
mkdir -p "$HOME"
n=0
bad=0
mode() { stat -c %a "$1" 2>/dev/null; }
is() { # is NAME FILE MODE
  n=$((n + 1))
  if [ "$(mode "$2")" = "$3" ]; then echo "ok $n - $1: $3"; else
    echo "not ok $n - $1: mode $(mode "$2"), expected $3"
    bad=1
  fi
}
cat >w.lua <<'LUA'
local d = arg[1]
ns.save(d .. "/t.npy", ns.tensor({1, 2}))
ns.save(d .. "/t.csv", ns.tensor({1, 2}))
ns.save(d .. "/t.safetensors", ns.tensor({1, 2}))
local e = ns.explorer{eps = 0.5}
e:save(d .. "/state.lua")
LUA
for m in 077 022 027; do
  mkdir "u$m"
  (umask "$m" && "$ns" run w.lua "$T/u$m") || echo "# run failed under umask $m"
  want=$(printf '%o' $((0644 & ~0$m)))
  for f in t.npy t.csv t.safetensors state.lua; do is "umask $m: $f" "u$m/$f" "$want"; done
done
# the history: private, whatever the umask
(umask 000 && printf '1 + 1\n' | "$ns" repl >/dev/null 2>&1)
is "umask 000: the history stays private" "$XDG_STATE_HOME/normscope/history" 600
echo "1..$n"
exit $bad
