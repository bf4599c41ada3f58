#!/bin/sh
# The command line: help, version, usage errors, `run` (arg table, errors, stdin) and
# a piped `repl`. Prints TAP. Expected texts are written out by hand from doc/ARCHITECTURE.md
# ("Conventions") and lua.c's conventions, not taken from the program's own output.
NS=${NORMSCOPE:-./normscope}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ns-cli.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# The REPL keeps a history file: never the user's own.
HOME=$tmp/home XDG_STATE_HOME=$tmp/state
export HOME XDG_STATE_HOME
mkdir -p "$HOME"
cd "$tmp" || exit 1

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
  n=$((n + 1)); echo "not ok $n - $1"
  shift
  for line in "$@"; do echo "#   $line"; done
}
# run_ns ARGS...: runs normscope, stdout to out, stderr to err, status to rc.
run_ns() { "$NS" "$@" >out 2>err; rc=$?; }
# check NAME COND...: COND is a shell command; on failure show rc and the outputs.
check() {
  name=$1; shift
  if "$@"; then ok "$name"; else
    not_ok "$name" "rc=$rc" "stdout: $(head -c 400 out 2>/dev/null)" \
      "stderr: $(head -c 400 err 2>/dev/null)"
  fi
}
has() { grep -q -F -- "$2" "$1"; }           # has FILE TEXT
first_line() { [ "$(head -n 1 "$1")" = "$2" ]; } # first_line FILE TEXT
empty() { [ ! -s "$1" ]; }

# ---- help and version
run_ns --help
check "--help exits 0 with a usage line" \
  sh -c '[ $0 = 0 ] && head -n 1 out | grep -q "^Usage: normscope "' "$rc"
check "--help lists run, repl and the explorer options" \
  sh -c 'grep -q "^  run " out && grep -q "^  repl" out && grep -q -- "--no-mouse" out && grep -q -- "--ascii" out && grep -q -- "--no-color" out'
check "--help writes nothing to stderr" empty err
# every command's line: its synopsis, then two spaces or a new line before its summary
# ("verify [--tsv] [--source LIST]run every lesson" ran the two together)
check "--help keeps each command's synopsis and summary apart" \
  awk '/^Commands:/ { on = 1; next } on && /^$/ { exit bad } on && /^  [a-z]/ {
         line = substr($0, 3); if (index(line, "  ")) next
         if ((getline nxt) > 0 && nxt ~ /^                          [^ ]/) next
         print "run together: " $0; bad = 1 } END { exit bad }' out
cp out help.txt
run_ns -h
check "-h is --help" cmp -s out help.txt
run_ns help
check "help is --help" cmp -s out help.txt

version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "${top_builddir:-.}/config.h" 2>/dev/null)
run_ns --version
if [ -n "$version" ]; then
  check "--version prints 'normscope $version' first" first_line out "normscope $version"
else
  check "--version prints 'normscope X.Y.Z' first" \
    sh -c 'head -n 1 out | grep -Eq "^normscope [0-9]+\.[0-9]+\.[0-9]+$"'
fi
check "--version exits 0 and has a warranty line" sh -c '[ $0 = 0 ] && grep -qi "warranty" out' "$rc"

run_ns run --help
check "run --help shows the run usage" sh -c '[ $0 = 0 ] && grep -q "^Usage: normscope run " out' "$rc"
cp out runhelp.txt
run_ns help run
check "help run is run --help" cmp -s out runhelp.txt
run_ns repl --help
check "repl --help shows the repl usage" sh -c '[ $0 = 0 ] && grep -q "^Usage: normscope repl" out' "$rc"

if [ -w /dev/full ]; then
  "$NS" --help >/dev/full 2>err
  rc=$?
  check "--help >/dev/full: exit 1 and a write error" sh -c '[ $0 = 1 ] && grep -q "^normscope: write error" err' "$rc"
  "$NS" --version >/dev/full 2>err
  rc=$?
  check "--version >/dev/full: exit 1" sh -c '[ $0 = 1 ] && grep -q "^normscope: write error" err' "$rc"
  echo 'print("hello")' >hello.lua
  "$NS" run hello.lua >/dev/full 2>err
  rc=$?
  check "a script printing to /dev/full: exit 1" sh -c '[ $0 = 1 ] && grep -q "^normscope: write error" err' "$rc"
else
  for i in 1 2 3; do n=$((n + 1)); echo "ok $n # SKIP no /dev/full"; done
fi

# ---- usage errors: "normscope: <what>: <why>", a hint, exit 2
run_ns --frobnicate
check "unknown option: exit 2 and 'normscope: --frobnicate: ...'" \
  sh -c '[ $0 = 2 ] && grep -q "^normscope: --frobnicate: " err && grep -q -- "--help" err && [ ! -s out ]' "$rc"
run_ns --ascii=yes
check "an argument to a flag: exit 2" sh -c '[ $0 = 2 ] && grep -q "^normscope: --ascii: " err' "$rc"
run_ns --no-colour=yes
check "an argument to the --no-colour spelling names the flag too" \
  sh -c '[ $0 = 2 ] && grep -q "^normscope: --no-colour: this option takes no argument" err' "$rc"
run_ns frobnicate
check "unknown command: exit 2 and 'normscope: frobnicate: ...'" \
  sh -c '[ $0 = 2 ] && grep -q "^normscope: frobnicate: " err && grep -q -- "--help" err' "$rc"
run_ns help lesson
check "help lesson still explains the command" sh -c '[ $0 = 0 ] && grep -q "^Usage: normscope lesson" out' "$rc"
run_ns help frobnicate
check "help of an unknown command: exit 2" sh -c '[ $0 = 2 ] && grep -q "^normscope: help: frobnicate: " err' "$rc"
run_ns repl extra
check "repl with an argument: exit 2" sh -c '[ $0 = 2 ] && grep -q "^normscope: repl: extra: " err' "$rc"
run_ns run
check "run without a script: exit 2" sh -c '[ $0 = 2 ] && grep -q "^normscope: run: " err' "$rc"
run_ns run --bogus x.lua
check "run with an unknown option: exit 2" sh -c '[ $0 = 2 ] && grep -q "^normscope: run: --bogus: " err' "$rc"
run_ns --ascii repl
check "an explorer option before a command: exit 2" sh -c '[ $0 = 2 ] && grep -q "^normscope: " err' "$rc"
echo 'print(1)' >script.lua
run_ns script.lua
check "a .lua file given to the explorer: exit 2 with a hint to run" \
  sh -c '[ $0 = 2 ] && grep -q "normscope run script.lua" err' "$rc"
run_ns missing.npy
check "a missing data file: exit 1 naming it" sh -c '[ $0 = 1 ] && grep -q "^normscope: missing.npy: " err' "$rc"

# ---- run: the arg table and varargs, as lua.c builds them
cat >args.lua <<'EOF'
print(arg[0], arg[1], arg[2], #arg, arg[-1], select("#", ...), ...)
print(arg[3] == nil, type(arg[-2]))
EOF
run_ns run args.lua one "two words"
check "run: arg[0], arg[1..], #arg, arg[-1] and ... " \
  sh -c '[ $0 = 0 ] && [ "$(sed -n 1p out)" = "$(printf "args.lua\tone\ttwo words\t2\trun\t2\tone\ttwo words")" ] && [ "$(sed -n 2p out)" = "$(printf "true\tstring")" ]' "$rc"
run_ns run -- args.lua -x
check "run -- FILE: options after the script go to the script" \
  sh -c '[ $0 = 0 ] && [ "$(sed -n 1p out)" = "$(printf "args.lua\t-x\tnil\t1\t--\t1\t-x")" ]' "$rc"
echo 'print(type(ns), package.loaded.normscope == ns, type(ns.normalize))' >mod.lua
run_ns run mod.lua
check "run: the module is the global ns" sh -c '[ "$(cat out)" = "$(printf "table\ttrue\tfunction")" ]'

printf 'print("before")\nlocal t = {}\nerror("boom at three")\n' >err3.lua
run_ns run err3.lua
check "runtime error: exit 1" sh -c '[ $0 = 1 ]' "$rc"
check "runtime error: 'normscope: err3.lua:3: boom at three' first" \
  first_line err "normscope: err3.lua:3: boom at three"
check "runtime error: a traceback follows" sh -c 'grep -q "^stack traceback:" err && grep -q "err3.lua:3: in main chunk" err'
check "runtime error: the output before it is kept" first_line out "before"
printf 'local x = 1\nlocal y = = 2\n' >syn.lua
run_ns run syn.lua
check "syntax error: exit 1 and 'normscope: syn.lua:2: ...'" \
  sh -c '[ $0 = 1 ] && head -n 1 err | grep -q "^normscope: syn.lua:2: .*near" ' "$rc"
run_ns run nope.lua
check "missing script: exit 1 and 'normscope: nope.lua: ...'" \
  sh -c '[ $0 = 1 ] && grep -q "^normscope: nope.lua: No such file" err' "$rc"
mkdir adir
run_ns run adir
check "a folder as the script: exit 1" sh -c '[ $0 = 1 ] && grep -q "^normscope: adir: " err' "$rc"
echo 'error(setmetatable({}, {}))' >obj.lua
run_ns run obj.lua
check "a non-string error object is named, not a crash" \
  sh -c '[ $0 = 1 ] && grep -q "^normscope: (error object is a table value)" err' "$rc"
printf 'print("x")\nos.exit(3)\n' >ex.lua
run_ns run ex.lua
check "os.exit(3) gives status 3" sh -c '[ $0 = 3 ] && [ "$(cat out)" = x ]' "$rc"
printf '\033LuaS' >bin.lua
run_ns run bin.lua
check "a binary chunk is refused" sh -c '[ $0 = 1 ] && grep -q "^normscope: .*binary" err' "$rc"
printf '\177ELF\002\001\001\000\000\000' >elf.lua
run_ns run elf.lua
check "a binary file is named as such, not as a syntax error at its first byte" \
  first_line err "normscope: elf.lua: a binary file, not a Lua script"
# An unreadable script: "normscope: FILE: Permission denied". Root reads anything, so
# as root the check runs as nobody (setpriv) when that user can run the binary.
echo 'print("read")' >unread.lua
chmod 000 unread.lua
if [ "$(id -u)" != 0 ]; then
  run_ns run unread.lua
  check "an unreadable script: exit 1, 'normscope: unread.lua: Permission denied'" \
    sh -c '[ $0 = 1 ] && [ "$(cat err)" = "normscope: unread.lua: Permission denied" ]' "$rc"
elif command -v setpriv >/dev/null 2>&1 && chmod 711 "$tmp" &&
  setpriv --reuid=65534 --regid=65534 --clear-groups "$NS" --version >/dev/null 2>&1; then
  setpriv --reuid=65534 --regid=65534 --clear-groups "$NS" run unread.lua >out 2>err
  rc=$?
  check "an unreadable script: exit 1, 'normscope: unread.lua: Permission denied'" \
    sh -c '[ $0 = 1 ] && [ "$(cat err)" = "normscope: unread.lua: Permission denied" ]' "$rc"
  chmod 700 "$tmp"
else
  n=$((n + 1)); echo "ok $n - an unreadable script # SKIP root, and nobody cannot run $NS"
fi

printf 'print("from stdin", arg[0], ...)\n' | "$NS" run - a b >out 2>err
rc=$?
check "run - reads the script from stdin" \
  sh -c '[ $0 = 0 ] && [ "$(cat out)" = "$(printf "from stdin\t-\ta\tb")" ]' "$rc"
printf 'local a = 1\nerror("in stdin")\n' | "$NS" run - >out 2>err
rc=$?
check "an error in a stdin script names stdin:2" \
  sh -c '[ $0 = 1 ] && head -n 1 err | grep -q "^normscope: stdin:2: in stdin"' "$rc"

# ---- the REPL with piped input (no terminal): values, errors, multi-line chunks
printf '40 + 2\nerror("oops")\nfor i = 1, 2 do\nprint(i * 10)\nend\n1, "a", nil\nlocal s = "x" .. \n"y"\n' |
  "$NS" repl >out 2>err
rc=$?
check "repl: end of input exits 0" sh -c '[ $0 = 0 ]' "$rc"
check "repl: an expression prints its value" grep -q '^42$' out
check "repl: an error goes to stderr as lua.c prints it, and the REPL goes on" \
  sh -c 'grep -q "^stdin:1: oops" err && grep -q "^10$" out && grep -q "^20$" out'
check "repl: several values are tab separated" grep -q "$(printf '^1\ta\tnil$')" out
check "repl: a multi-line chunk uses the continuation prompt" grep -q '^>> ' out
check "repl: no history warning in a writable home" sh -c '! grep -q history err'
check "repl: the history file is under XDG_STATE_HOME" \
  grep -q -F 'for i = 1, 2 do' "$XDG_STATE_HOME/normscope/history"

printf 'for i = 1, 2 do\nprint(i)\n' | "$NS" repl >out 2>err
rc=$?
check "repl: input ending inside a chunk says why it was unfinished" \
  sh -c '[ $0 = 0 ] && grep -q "^stdin:2: .end. expected .*<eof>" err && ! grep -q "^1$" out' "$rc"

# An unusable history location warns once and the REPL still works.
: >"$tmp/afile"
printf '1 + 1\n2 + 2\n' | XDG_STATE_HOME=$tmp/afile "$NS" repl >out 2>err
rc=$?
check "repl: an unusable history folder: one warning, values still printed" \
  sh -c '[ $0 = 0 ] && [ "$(grep -c "^normscope: history: " err)" = 1 ] && grep -q "^2$" out && grep -q "^4$" out' "$rc"

echo "1..$n"
exit 0
