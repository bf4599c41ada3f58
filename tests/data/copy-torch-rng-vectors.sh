#!/bin/sh
# Writes tests/data/torch-rng-vectors.tsv from the shared torch test vectors
# (../shared/data/torch-rng/test-vectors.tsv, made by torch 1.13 itself; see its README):
# every row, only the columns the tests read (fn, seed, after, n, i, float32 bits).
#   tests/data/copy-torch-rng-vectors.sh [SHARED_TSV]
set -eu
src=${1:-"$(dirname "$0")/../../../shared/data/torch-rng/test-vectors.tsv"}
out="$(dirname "$0")/torch-rng-vectors.tsv"
{
  echo "# PyTorch 1.13 CPU generator: float32 torch.rand(n) / torch.randn(n) right after"
  echo "# torch.manual_seed(seed) and the calls in 'after'; bits = the float32 bit pattern."
  echo "# Copied by tests/data/copy-torch-rng-vectors.sh from the shared test vectors (torch-made)."
  echo "# fn	seed	after	n	i	bits"
  awk -F'\t' '!/^#/ && $1 != "fn" && NF >= 6 { print $1 "\t" $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6 }' "$src"
} >"$out"
