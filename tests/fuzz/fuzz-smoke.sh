#!/bin/sh
# fuzz-smoke.sh: each libFuzzer harness of tests/fuzz for a few seconds on a copy of its
# corpus (the committed corpus is never written to). TAP: one line per harness.
#   FUZZ_HARNESSES   names (default: every corpus folder); FUZZ_SECONDS per harness (3)
set -u
src=${top_srcdir:-.}/tests/fuzz
bin=${top_builddir:-.}/tests/fuzz
secs=${FUZZ_SECONDS:-3}
names=${FUZZ_HARNESSES:-$(ls "$src/corpus")}
work=$(mktemp -d "${TMPDIR:-/tmp}/nsfuzz-smoke.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
n=0
bad=0
for h in $names; do
  n=$((n + 1))
  exe="$bin/fuzz_$h"
  if [ ! -x "$exe" ]; then
    echo "not ok $n - fuzz_$h: not built (configure --enable-fuzz)"
    bad=1
    continue
  fi
  mkdir -p "$work/$h"
  log="$work/$h.log"
  seeds="$src/corpus/$h"
  [ "$h" = lesson ] && seeds="$seeds ${top_srcdir:-.}/lessons" # the lessons, where they are
  # shellcheck disable=SC2086
  if "$exe" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$work/" "$work/$h" $seeds >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
    echo "ok $n - fuzz_$h: ${runs:-?} runs in ${secs}s, $cov"
  else
    echo "not ok $n - fuzz_$h found a failure:"
    grep -E 'ERROR|property broken|SUMMARY|Test unit written' "$log" | head -n 8 | sed 's/^/# /'
    bad=1
  fi
done
echo "1..$n"
exit $bad
