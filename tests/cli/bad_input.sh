#!/bin/sh
# bad_input.sh: runs every case of bad_input.tsv (see its header) and checks the exit
# status, that stderr holds the fragment, begins with "normscope: " and shows no crash or
# sanitizer report, and (set, state) that the refusal left the explorer's state as it was.
# One TAP line per case.
set -u
here=$(cd "$(dirname "$0")" && pwd)
table="$here/bad_input.tsv"
ns=${NORMSCOPE:-${top_builddir:-.}/normscope}
T=$(mktemp -d "${TMPDIR:-/tmp}/nsbad.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
# a home of its own: the user's saved state and history are neither read nor touched
HOME="$T/home"
XDG_STATE_HOME="$HOME/.local/state"
XDG_CONFIG_HOME="$HOME/.config"
export HOME XDG_STATE_HOME XDG_CONFIG_HOME
mkdir -p "$HOME"

# files the cli cases name
printf '\033Lua\124\000' >bin.lua
printf 'x = = 1\n' >syn.lua
printf 'error("boom")\n' >boom.lua
printf 'error({})\n' >tbl.lua
printf 'local s = string.rep("x", 1 << 62)\n' >big.lua
printf 'os.exit(7)\n' >ex7.lua
printf 'ns.save(arg[1], ns.tensor({1, 2}))\n' >mknpy.lua
"$ns" run mknpy.lua "$T/good.npy" || echo "# could not write $T/good.npy"
# the limits' cases: 121-element files, and lessons that run out of budget
printf 'local x = ns.rng(1):normal(0, 1, {11, 11})\nns.save("big121.npy", x)\nns.save("big121.csv", x)\n' >mkbig.lua
"$ns" run mkbig.lua || echo "# could not write big121.npy, big121.csv"
printf 'lesson{title = "loop", source = "999", section = "t",\n  steps = {{text = "a", claims = function(s) while true do end end}}}\n' >loop.lua
printf 'lesson{title = "mem", source = "999", section = "t",\n  steps = {{text = "a", claims = function(s) local t = {} for i = 1, 1e8 do t[i] = {i} end end}}}\n' >mem.lua
printf 'lesson{title = "slow", source = "999", section = "t",\n  steps = {{text = "a", claims = function(s) local u = ("xxxxxxxx"):rep(1 << 20) while true do local v = u:upper() end end}}}\n' >slow.lua
# 2000 passes of utf8.len over 1 MiB: few instructions, a budget's worth of bytes
printf 'lesson{title = "utf8", source = "999", section = "t",\n  steps = {{text = "a", claims = function(s) local u = ("x"):rep(1 << 20) for i = 1, 2000 do local n = utf8.len(u) end end}}}\n' >utf8loop.lua

# files that are not files (issue 23): FIFOs under every name a file is read by (opening one
# would wait for a writer forever), and a history folder whose history is one
for f in fifo.lua fifo.npy fifo.csv fifo.safetensors; do mkfifo "$f" || echo "# could not make $f"; done
mkdir -p fh/normscope && mkfifo fh/normscope/history || echo "# could not make fh/normscope/history"

# helpers of the lua kind
cat >prelude.lua <<'LUA'
T = os.getenv("BAD_TMP")
function write(name, s)
  local p = T .. "/" .. name
  local f = assert(io.open(p, "wb"))
  f:write(s)
  f:close()
  return p
end
function npy(header, ndata, opts)
  opts = opts or {}
  local version = opts.version or "\1\0"
  local v1 = version:byte(1) == 1
  local pre = 6 + #version + (v1 and 2 or 4)
  local h = header .. string.rep(" ", (64 - (pre + #header + 1) % 64) % 64) .. "\n"
  local len = string.pack(v1 and "<I2" or "<I4", opts.hlen or #h)
  return write("x.npy", "\x93NUMPY" .. version .. len .. h .. string.rep("\0", ndata or 0))
end
-- a refusal that must leave the explorer as it was; re-raises the message
function refused(e, ok, msg, before)
  if ok then error("accepted, but should have been refused", 0) end
  if e:dump() ~= before then error("refused, but the state changed: " .. tostring(msg), 0) end
  error(msg, 0)
end
LUA

n=0
bad=0
while IFS='	' read -r id kind want frag input; do
  case "$id" in '#'* | '') continue ;; esac
  [ "$frag" = - ] && frag=""
  n=$((n + 1))
  # a kind may end in +VAR=VALUE: that case runs with VAR set in its environment
  envs=""
  case "$kind" in *+*) envs=$(printf '%s' "${kind#*+}" | sed "s|@T|$T|g"); kind=${kind%%+*} ;; esac
  input=$(printf '%s' "$input" | sed "s|@T|$T|g")
  frag=$(printf '%s' "$frag" | sed "s|@T|$T|g")
  : >case.lua
  case "$kind" in
  lua) { cat prelude.lua; printf '%s\n' "$input"; } >case.lua ;;
  csv) { cat prelude.lua; printf 'ns.load(write("x.csv", "%s"))\n' "$input"; } >case.lua ;;
  set)
    { cat prelude.lua; printf 'local e = ns.explorer{kind = "rms"}\nlocal before = e:dump()\n'
      printf 'local ok, m = pcall(e.set, e, %s)\nrefused(e, ok, m, before)\n' "$input"; } >case.lua ;;
  state)
    case "$input" in
    @missing) path='"/nonexistent/state.lua"' ;;
    @fifo) path='T .. "/fifo.lua"' ;;
    @folder) path='T' ;;
    *) path="write(\"state.lua\", \"$(printf '%s' "$input" | sed "s|@npy|$T/good.npy|g")\")" ;;
    esac
    { cat prelude.lua; printf 'local e = ns.explorer{kind = "rms"}\nlocal before = e:dump()\n'
      printf 'local p = %s\nlocal ok, m = pcall(e.load, e, p)\nrefused(e, ok, m, before)\n' "$path"; } >case.lua ;;
  cli) ;;
  *) echo "not ok $n - $id: unknown kind '$kind'"; bad=1; continue ;;
  esac
  if [ "$kind" = cli ]; then
    # shellcheck disable=SC2086
    BAD_TMP="$T" timeout 60 env $envs "$ns" $input </dev/null >out.txt 2>err.txt
  else
    # shellcheck disable=SC2086
    BAD_TMP="$T" timeout 60 env $envs "$ns" run case.lua </dev/null >out.txt 2>err.txt
  fi
  got=$?
  why=""
  [ "$got" -eq "$want" ] || why="exit $got, expected $want"
  if [ -z "$why" ] && [ -n "$frag" ] && ! grep -qF -- "$frag" err.txt; then
    why="stderr lacks the expected message"
  fi
  if [ -z "$why" ] && [ "$want" -ne 0 ] && [ -n "$frag" ] && ! head -n 1 err.txt | grep -q '^normscope: '; then
    why="stderr does not begin with 'normscope: '"
  fi
  if [ -z "$why" ] && grep -qE 'Segmentation|core dumped|Sanitizer|runtime error|Aborted' err.txt; then
    why="a crash or sanitizer report"
  fi
  if [ -z "$why" ]; then
    echo "ok $n - $id: $frag"
  else
    echo "not ok $n - $id: $why"
    echo "#   expected: $frag"
    sed 's/^/#   stderr: /' err.txt | head -n 5
    bad=1
  fi
done <"$table"
echo "1..$n"
exit $bad
