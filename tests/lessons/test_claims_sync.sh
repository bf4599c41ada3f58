#!/bin/sh
# data/claims.tsv keeps the ids of the shared registry (../shared/claims.tsv next to the
# project, or $NORMSCOPE_SHARED_CLAIMS), in the same order, with six columns per row.
# The shared file is not part of the project (nor of its tarball): without it the
# comparison is skipped and only the project copy's own shape is checked.
top=${top_srcdir:-.}
mine=$top/data/claims.tsv
shared=${NORMSCOPE_SHARED_CLAIMS:-$top/../shared/claims.tsv}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ns-claims.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
ids() { awk -F '\t' '!/^#/ && NF { print $1 }' "$1"; }

n=1
if awk -F '\t' '!/^#/ && NF && NF != 6 { bad = 1 } END { exit bad }' "$mine"; then
  echo "ok $n - data/claims.tsv: six columns on every row"
else echo "not ok $n - data/claims.tsv: six columns on every row"; fi
n=2
ids "$mine" >"$tmp/mine"
if [ "$(sort "$tmp/mine" | uniq -d | wc -l)" -eq 0 ]; then echo "ok $n - data/claims.tsv: no id twice"
else echo "not ok $n - data/claims.tsv: no id twice"; fi
n=3
if [ -r "$shared" ]; then
  ids "$shared" >"$tmp/shared"
  if cmp -s "$tmp/mine" "$tmp/shared"; then
    echo "ok $n - the ids of $shared, in its order ($(wc -l <"$tmp/shared"))"
  else
    echo "not ok $n - the ids of $shared, in its order"
    diff "$tmp/shared" "$tmp/mine" | head -20 | sed 's/^/#   /'
  fi
else
  echo "ok $n # SKIP no shared registry at $shared"
fi
echo "1..$n"
