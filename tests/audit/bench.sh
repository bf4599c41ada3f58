#!/bin/sh
# bench.sh: throughput of `normscope audit` on a generated fp32 .npy file (make bench).
# NS_BENCH_AUDIT_MB sets its size (default 256). Prints MiB/s of the file for the whole
# audit (two streaming passes plus the in-memory checks); never asserts a speed.
NS=${NORMSCOPE:-./normscope}
top=${top_srcdir:-.}
mb=${NS_BENCH_AUDIT_MB:-256}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ns-bench-audit.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
"$NS" run "$top/tests/audit/make-big.lua" "$tmp/big.npy" 16 $((mb / 2)) || exit 1
size=$(wc -c <"$tmp/big.npy")
for kind in batch layer; do
  t0=$(date +%s.%N)
  OPENBLAS_NUM_THREADS=1 "$NS" audit "$tmp/big.npy" --kind $kind --tsv >/dev/null || exit 1
  t1=$(date +%s.%N)
  awk -v s="$size" -v a="$t0" -v b="$t1" -v k="$kind" 'BEGIN {
    printf "audit  %-28s %8.2f s   %8.1f MiB/s (file of %d MiB, wall clock)\n",
      k " norm, fp32 .npy", b - a, s / 1048576 / (b - a), s / 1048576 }'
done
