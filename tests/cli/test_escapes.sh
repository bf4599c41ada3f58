#!/bin/sh
# test_escapes.sh: escape sequences from input never reach the terminal raw (issue 23). The
# same hostile text (an OSC 52 clipboard write, a title, a clear screen, a C1 CSI, a bidi
# override) goes in through a lesson (title, text, print, a figure, an error), a state file,
# a tensor's name in a .safetensors file, a CSV token and the REPL; every byte the program
# writes, on stdout and on stderr, is searched for ESC, BEL, the C1 CSI and the override.
set -u
ns=${NORMSCOPE:-${top_builddir:-.}/normscope}
case "$ns" in /*) ;; *) ns=$PWD/$ns ;; esac
T=$(mktemp -d "${TMPDIR:-/tmp}/nsesc.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
HOME="$T/home" XDG_STATE_HOME="$T/home/.local/state"
export HOME XDG_STATE_HOME
mkdir -p "$HOME"

n=0
bad=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); bad=1; echo "not ok $n - $1"; shift; for l in "$@"; do echo "#   $l"; done; }

# the files, made by a script (its own output is not what is tested)
cat >mk.lua <<'LUA'
E = "\27]52;c;ZWNobyBIT1NUSUxFMyBwd25lZA==\7\27]0;HOSTILE3\7\27[2J\27[H\194\155" .. "6n\226\128\174"
local function w(p, s) local f = assert(io.open(p, "wb")) f:write(s) f:close() end
w("lesson.lua", ("lesson{title = %q, source = \"000\", section = %q, steps = {\n" ..
  "{text = %q, figure = function(s) return %q end, claims = function(s) print(%q) end},\n" ..
  "{text = \"b\", claims = function(s) error(%q) end}}}\n"):format("T" .. E, "S" .. E,
  "text " .. E, "fig " .. E, "print " .. E, "err " .. E))
w("lint.lua", ("lesson{title = \"t\", source = \"000\", section = \"s\", steps = {\n" ..
  "{text = \"a\", set = {[%q] = 1}, claims = function(s) claim(%q, 1) end}}}\n"):format(E, E))
w("state.lua", ("set{kind = %q}\n"):format(E))
w("state2.lua", ("set{eps = 0.5}\nerror(%q)\n"):format(E))
local h = '{"' .. E:gsub("[\1-\31]", function(c) return ("\\u%04x"):format(c:byte()) end) ..
  '":{"dtype":"F64","shape":[3],"data_offsets":[0,24]},' ..
  '"b":{"dtype":"F64","shape":[3],"data_offsets":[24,48]}}'
w("names.safetensors", string.pack("<I8", #h) .. h .. string.rep("\0", 48))
w("x.csv", "1,2\n3," .. E .. "\n")
w("load.lua", "print(select(2, pcall(ns.load, 'names.safetensors')))\n" ..
  "print(select(2, pcall(ns.load, 'x.csv')))\n" ..
  "local e = ns.explorer() print(select(2, pcall(e.load, e, 'state.lua')))\n" ..
  "print(select(2, pcall(e.set, e, {kind = E})))\n")
w("e.lua", "return " .. ("%q"):format(E))
-- typed at the REPL: ASCII only (the prompt echoes what it reads)
w("repl.txt", "E = dofile('e.lua')\nE\nerror(E)\nns.load('x.csv')\nload('state.lua')\n")
LUA
"$ns" run mk.lua || echo "# could not make the files"

# check NAME CMD...: runs CMD (stdin from /dev/null unless given), and finds no raw escape
check() {
  name=$1
  shift
  "$@" >out 2>err </dev/null
  for f in out err; do
    if LC_ALL=C grep -q "$(printf '[\033\007]')" "$f" || LC_ALL=C grep -q "$(printf '\302\233')" "$f" ||
      LC_ALL=C grep -q "$(printf '\342\200\256')" "$f"; then
      not_ok "$name: no escape reaches $f" "$(head -c 300 "$f" | od -c | head -n 4)"
      return
    fi
  done
  if [ -s out ] || [ -s err ]; then ok "$name: nothing raw on stdout or stderr"
  else not_ok "$name: said nothing at all"; fi
}
# shown NAME FILE TEXT: the escapes show as caret notation there
shown() {
  if grep -qF -- "$3" "$2"; then ok "$1: shown as $3"; else not_ok "$1: shown as $3" "$(head -c 300 "$2")"; fi
}

check "lesson --headless (title, section, text, figure, print, error)" "$ns" lesson --headless lesson.lua
shown "  the lesson's text" out 'text ^[]52;c;ZWNobyBIT1NUSUxFMyBwd25lZA==^G^[]0;HOSTILE3^G^[[2J^[[H'
shown "  the lesson's error" err 'err ^[]52;c;'
check "lesson --check (unknown field and claim ids)" "$ns" lesson --check lint.lua
check "the lesson list" env NORMSCOPE_LESSONS="$T" "$ns" lesson
mkdir -p lessons && cp lesson.lua lessons/000-esc.lua
check "the lesson list, with the lesson's title" env NORMSCOPE_LESSONS="$T/lessons" "$ns" lesson
check "--state FILE with a hostile kind" "$ns" --state state.lua
shown "  the kind, quoted" err "unknown kind '^[]52;c;"
check "--state FILE that raises the text" "$ns" --state state2.lua
check "audit of a .safetensors file with a hostile name" "$ns" audit names.safetensors
shown "  the name" err '^[]52;c;'
check "audit of a CSV file with a hostile token" "$ns" audit x.csv
check "the explorer on a hostile .safetensors file" "$ns" names.safetensors
check "the explorer on a hostile CSV file" "$ns" x.csv
check "messages printed by a script (ns.load, load, set)" "$ns" run load.lua
shown "  the CSV token" out "'^[]52;c;"
"$ns" repl <repl.txt >out 2>err
cp out rout
check "the REPL: a value, an error, a file's messages" sh -c "'$ns' repl <repl.txt"
shown "  the value" rout '^[]52;c;'

echo "1..$n"
exit $bad
