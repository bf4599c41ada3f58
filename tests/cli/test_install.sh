#!/bin/sh
# test_install.sh: `make install` into a scratch DESTDIR places the program, the manual
# page, every lesson of lessons/, the claims registry and the Lua module normscope.so (in
# a lua/5.4 folder), and `make uninstall` takes back every file it placed and the
# package's own folders. TAP.
set -u
top=${top_srcdir:-.}
build=${top_builddir:-.}
make=${MAKE:-make}
T=$(mktemp -d "${TMPDIR:-/tmp}/nsinst.XXXXXX") || exit 1
# a home of its own: the installed program reads no user's progress or state
HOME="$T/home"
XDG_STATE_HOME="$HOME/.local/state"
export HOME XDG_STATE_HOME
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
n=0
bad=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; bad=1; }
listing() { (cd "$T/root" && find . \( -type f -o -type l \) | sort); }

if ! $make -s -C "$build" install DESTDIR="$T/root" >"$T/install.log" 2>&1; then
  notok "make install failed:"
  tail -n 5 "$T/install.log" | sed 's/^/#   /'
  echo "1..$n"
  exit 1
fi
listing >"$T/installed"
count=$(wc -l <"$T/installed")
ok "make install placed $count files"
has() { # has PATTERN WHAT: exactly one installed file matches the extended regex
  k=$(grep -cE -- "$1" "$T/installed")
  if [ "$k" -eq 1 ]; then ok "$2: $(grep -E -- "$1" "$T/installed")"; else notok "$2 ($k files match $1)"; fi
}
has '/bin/normscope$' "the program"
has '/man/man1/normscope\.1$' "the manual page"
has '/normscope/claims\.tsv$' "the claims registry"
has '/lua/5\.4/normscope\.so$' "the Lua module where lua5.4 looks"
if grep -qE '/lua/5\.4/normscope\.la$' "$T/installed"; then notok "libtool's normscope.la installed beside it"; fi
missing=0
for l in "$top"/lessons/[0-9]*.lua; do
  grep -qE "/normscope/lessons/$(basename "$l" | sed 's/\./\\./g')\$" "$T/installed" || {
    missing=$((missing + 1))
    echo "#   not installed: $(basename "$l")"
  }
done
nl=$(ls "$top"/lessons/[0-9]*.lua | wc -l)
[ "$missing" -eq 0 ] && ok "all $nl lessons installed" || notok "$missing of $nl lessons not installed"
# the installed program finds its installed lessons (not the source tree's)
prog=$(grep -E '/bin/normscope$' "$T/installed")
lessons_dir=$(dirname "$(grep -E '/normscope/lessons/' "$T/installed" | head -n 1)")
if NORMSCOPE_LESSONS="$T/root/$lessons_dir" NORMSCOPE_CLAIMS="$T/root/$lessons_dir/../claims.tsv" \
   "$T/root/$prog" lesson </dev/null >"$T/list.txt" 2>&1 &&
   [ "$(grep -c . "$T/list.txt")" -ge "$nl" ]; then
  ok "the installed program lists the installed lessons"
else
  notok "the installed program cannot list the installed lessons:"
  head -n 3 "$T/list.txt" | sed 's/^/#   /'
fi

if ! $make -s -C "$build" uninstall DESTDIR="$T/root" >"$T/uninstall.log" 2>&1; then
  notok "make uninstall failed:"
  tail -n 5 "$T/uninstall.log" | sed 's/^/#   /'
else
  listing >"$T/left"
  if [ -s "$T/left" ]; then
    notok "make uninstall left $(wc -l <"$T/left") files:"
    sed 's/^/#   /' "$T/left" | head -n 10
  else
    ok "make uninstall removed all $count files"
  fi
  # the package's own folders (not the prefix, which may itself be named normscope-...)
  dirs=$(cd "$T/root" && find . -type d \( -path '*/share/normscope' -o -path '*/share/normscope/*' \
    -o -path '*/share/doc/normscope' \) | sort)
  if [ -n "$dirs" ]; then notok "make uninstall left the package's folders: $dirs"; else ok "and the package's own folders"; fi
fi
echo "1..$n"
exit $bad
