#!/bin/sh
# test_manpage.sh: doc/normscope.1 against the program. TAP, one line per check:
# - groff -man -ww finds nothing to warn about, on each output device installed;
# - every subcommand of `normscope --help` heads an item of COMMANDS;
# - every option (the --help of the program and of each subcommand, and every "--name"
#   string the command-line code compares against) appears in the page;
# - every Lua function of the module, found by walking ns, ns.plot and the method tables
#   of the objects at run time (manpage_names.lua), appears in the page as ns.NAME,
#   ns.plot.NAME or t:NAME, e:NAME, g:NAME, r:NAME.
# The page's source is compared after its escapes are undone (\- is -, fonts dropped), so
# hyphenation and line filling of the formatted page cannot hide or invent a name.
set -u
top=${top_srcdir:-.}
ns=${NORMSCOPE:-${top_builddir:-.}/normscope}
man=${MANPAGE:-$top/doc/normscope.1}
T=$(mktemp -d "${TMPDIR:-/tmp}/nsman.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
HOME="$T"
XDG_STATE_HOME="$T/state"
export HOME XDG_STATE_HOME

n=0
bad=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; bad=1; }

# the page's text with roff escapes undone: fonts, \-, \&, \(dq, \e
sed -e 's/\\f[BIRP]//g' -e 's/\\f\[[A-Z]*\]//g' -e 's/\\-/-/g' -e 's/\\&//g' \
  -e 's/\\(dq/"/g' -e 's/\\(aq/'"'"'/g' -e 's/\\e/\\/g' -e 's/\\ / /g' "$man" >"$T/page.txt"

# 1. groff warnings, per device
if command -v groff >/dev/null 2>&1; then
  for dev in utf8 ascii latin1 ps; do
    if groff -man -ww -z -T"$dev" "$man" >"$T/groff.out" 2>&1 && [ ! -s "$T/groff.out" ]; then
      ok "groff -man -ww -T$dev: no warnings"
    elif grep -q "invalid device\|can't find 'DESC'" "$T/groff.out"; then
      ok "groff -T$dev: # SKIP device not installed"
    else
      notok "groff -man -ww -T$dev warns:"
      sed 's/^/#   /' "$T/groff.out" | head -n 10
    fi
  done
else
  ok "groff -man -ww # SKIP groff is not installed"
fi

# 2. subcommands: each heads a .TP item of COMMANDS (".B name", ".BI name ...")
"$ns" --help >"$T/help.txt" 2>&1 || notok "normscope --help failed"
cmds=$(sed -n '/^Commands:/,/^$/p' "$T/help.txt" | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p')
[ -n "$cmds" ] || notok "no subcommands found in normscope --help"
sed -n '/^\.SH COMMANDS/,/^\.SH /p' "$T/page.txt" >"$T/commands.txt"
for c in $cmds; do
  if awk -v c="$c" 'prev == ".TP" && ($2 == c || $2 == "\"" c || $2 ~ "^\"" c " ") {
        f = 1 } { prev = $1 } END { exit !f }' "$T/commands.txt"; then
    ok "command $c has its item in COMMANDS"
  else
    notok "command $c has no item in COMMANDS"
  fi
done

# 3. options: from every --help, and the "--name" literals of the command-line code
for c in $cmds; do "$ns" help "$c" 2>&1; done >>"$T/help.txt"
{
  grep -oE -- '(^|[][ (,|])--?[a-zA-Z][a-zA-Z0-9-]*' "$T/help.txt" | sed 's/^[][ (,|]//'
  cat "$top"/src/main.c "$top"/src/audit/cmd_*.c "$top"/src/lesson/lesson_run.c 2>/dev/null |
    grep -oE '"--?[a-zA-Z][a-zA-Z0-9-]*"' | tr -d '"'
} | sort -u >"$T/options.txt"
while read -r opt; do
  # a whole word: not followed by a letter, digit or dash (--tensor is not --tensors)
  if grep -qE -- "(^|[^a-zA-Z0-9-])$opt([^a-zA-Z0-9-]|$)" "$T/page.txt"; then
    ok "option $opt is in the page"
  else
    notok "option $opt is not in the page"
  fi
done <"$T/options.txt"

# 4. the Lua functions, walked at run time
if "$ns" run "$top/tests/cli/manpage_names.lua" >"$T/names.txt" 2>"$T/names.err"; then
  count=$(wc -l <"$T/names.txt")
  [ "$count" -ge 50 ] || notok "only $count Lua functions found by the walk"
  while read -r name; do
    if grep -qF -- "$name" "$T/page.txt" &&
       grep -qE -- "(^|[^a-zA-Z0-9_.:])$(printf '%s' "$name" | sed 's/\./\\./g')([^a-zA-Z0-9_]|$)" "$T/page.txt"; then
      ok "Lua $name is in the page"
    else
      notok "Lua $name is not in the page"
    fi
  done <"$T/names.txt"
else
  notok "the walk of the module failed:"
  sed 's/^/#   /' "$T/names.err" | head -n 5
fi

echo "1..$n"
exit $bad
