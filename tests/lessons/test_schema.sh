#!/bin/sh
# test_schema.sh: lessons/README.md's table of the lesson format is the one the engine
# declares (src/lesson/schema.h, printed by `normscope lesson --schema`), row for row.
NS=${NORMSCOPE:-./normscope}
top=${top_srcdir:-.}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ns-schema.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
"$NS" lesson --schema >"$tmp/schema" 2>"$tmp/err"
rc=$?
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
if [ $rc -eq 0 ] && [ -s "$tmp/schema" ]; then ok "lesson --schema prints the table"; else
  not_ok "lesson --schema prints the table (rc $rc: $(cat "$tmp/err"))"; fi
# the README's table: its lines that start with "| " from the header row on
grep '^|' "$top/lessons/README.md" >"$tmp/readme"
if cmp -s "$tmp/schema" "$tmp/readme"; then ok "lessons/README.md carries the same table"; else
  not_ok "lessons/README.md carries the same table (paste lesson --schema's output there)"
  diff "$tmp/readme" "$tmp/schema" | sed 's/^/#   /'
fi
# every attribute row names one of the five tables
bad=$(awk -F' \\| ' 'NR > 2 && $1 !~ /^\| (lesson|step|try|try\.answer|predict)$/' "$tmp/schema")
if [ -z "$bad" ]; then ok "every row belongs to lesson, step, try, try.answer or predict"; else
  not_ok "rows of an unknown table: $bad"; fi
echo "1..$n"
