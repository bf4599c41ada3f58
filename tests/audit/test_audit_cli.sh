#!/bin/sh
# The audit command: exit statuses (0 ran, 1 unreadable input, 2 bad usage), the TSV,
# JSON and Markdown forms, the safetensors listing, --running in its three spellings, and
# an out-of-core run: a generated file larger than the memory the process may use
# (ulimit -v), sparse, is audited in bounded memory and agrees with the audit of one block
# of it.
# Also --plan: a draft plan of a generated capture, and the capture audited by it. Prints
# TAP. Set NS_AUDIT_BIG_MB=0 to skip the large file, NS_AUDIT_HUGE_GB=10 to audit a 10 GB
# sparse file as well.
NS=${NORMSCOPE:-./normscope}
top=${top_srcdir:-.}
data=$top/tests/data/safetensors
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ns-audit.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
  n=$((n + 1)); echo "not ok $n - $1"
  shift
  for line in "$@"; do echo "#   $line"; done
}
run_ns() { "$NS" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }
check() {
  name=$1; shift
  if "$@"; then ok "$name"; else
    not_ok "$name" "rc=$rc" "stdout: $(head -c 600 "$tmp/out")" "stderr: $(head -c 600 "$tmp/err")"
  fi
}
out=$tmp/out err=$tmp/err
export out err

# ---- usage and input errors
run_ns audit
check "no FILE: exit 2" sh -c '[ $0 = 2 ] && grep -q "^normscope: audit: missing FILE" "$err"' "$rc"
run_ns audit --kind nope x.npy
check "a bad --kind: exit 2, naming it" sh -c '[ $0 = 2 ] && grep -q "nope: --kind must be" "$err"' "$rc"
run_ns audit --frob x.npy
check "an unknown option: exit 2" sh -c '[ $0 = 2 ] && grep -q "frob: unknown option" "$err"' "$rc"
run_ns audit "$tmp/none.npy"
check "a missing file: exit 1" sh -c '[ $0 = 1 ] && grep -q "No such file" "$err"' "$rc"

# ---- a figure's title says once what it leaves out: channel 2 is constant (variance 0),
# which log10 cannot draw (the review's third replay saw "(0 left out) (1 left out)")
cat >"$tmp/dead.lua" <<'LUA'
local v = {}
for n = 1, 4 do for c = 1, 3 do for i = 1, 4 do
  v[#v + 1] = c == 2 and 0.25 or (n * 7 + c * 3 + i * 5) % 11
end end end
ns.save(arg[1], ns.tensor(v, {4, 3, 2, 2}))
LUA
"$NS" run "$tmp/dead.lua" "$tmp/dead.npy" >/dev/null 2>&1
run_ns audit "$tmp/dead.npy" --kind batch
check "a zero variance: the variance figure's title says zeros are left out, and how many" \
  grep -q "log10 variance per statistic, zeros left out (1 not drawn)" "$out"
check "  with no count of 0 beside a count of 1" sh -c '! grep -q "(0 left out)" "$0"' "$out"
run_ns audit "$data/bad-overlap.safetensors"
check "a malformed safetensors file: exit 1 and why" \
  sh -c '[ $0 = 1 ] && grep -q "overlaps" "$err"' "$rc"
run_ns audit "$data/torch.safetensors"
check "several tensors, no --tensor: exit 2 and the list" \
  sh -c '[ $0 = 2 ] && grep -q "name one with --tensor" "$err" && grep -q "^  x_bn  F32 \[32, 4, 12, 12\]" "$err"' "$rc"
run_ns audit "$data/torch.safetensors" --tensor nope
check "a wrong --tensor: exit 1, listing the tensors" \
  sh -c '[ $0 = 1 ] && grep -q "no tensor named \"nope\"" "$err" && grep -q "^  x_bn  F32" "$err"' "$rc"
run_ns audit "$data/torch.safetensors" --tensor x_ln --layout nchw
check "a layout of another rank: exit 2" sh -c '[ $0 = 2 ] && grep -q "layout nchw is for rank 4" "$err"' "$rc"
run_ns audit "$data/torch.safetensors" --tensor x_bn --kind batch --running "$data/torch.safetensors:gn"
check "running buffers that do not exist: exit 1" \
  sh -c '[ $0 = 1 ] && grep -q "gn.running_mean" "$err"' "$rc"
run_ns audit "$data/torch.safetensors" --tensor x_gn --kind group --groups 3
check "groups that do not divide: exit 2" sh -c '[ $0 = 2 ] && grep -q "groups (3) must divide 8" "$err"' "$rc"

# ---- forms
run_ns audit "$data/torch.safetensors" --tensor x_bn --kind batch --running "$data/torch.safetensors:bn" --tsv
check "--tsv: exit 0, seven lines of four fields, known checks and verdicts" sh -c '
  [ $0 = 0 ] && [ $(wc -l <"$out") = 7 ] &&
  awk -F "\t" "NF != 4 { bad = 1 } \$2 !~ /^(ok|warn|yes|no)\$/ { bad = 1 } END { exit bad }" "$out" &&
  cut -f 1 "$out" | tr "\n" " " | grep -q "^axes near_zero_variance precision batch_dependence batch_size_sensitivity train_eval_gap outliers $"' "$rc"
check "--tsv: the buffers come from other batches: train_eval_gap warn" \
  sh -c 'grep -q "^train_eval_gap	warn	" "$out"' "$rc"
# FILE:PREFIX also reads PREFIX.num_batches_tracked; the other spellings give no count
check "--running FILE:PREFIX reads PREFIX.num_batches_tracked" \
  grep -q "tracked over [0-9]* batches (num_batches_tracked)" "$out"
sed 's/; tracked over [^;]*batch would move [^;]*//' "$out" >"$tmp/pfx.tsv"
run_ns audit "$data/torch.safetensors" --tensor x_bn --kind batch --tsv \
  --running "$data/torch.safetensors:bn.running_mean,bn.running_var"
check "--running FILE:MEAN,VAR gives the same as FILE:PREFIX" cmp -s "$out" "$tmp/pfx.tsv"
"$NS" run - "$tmp" "$data/torch.safetensors" <<'LUA' >/dev/null 2>&1
local dir, f = ...
ns.save(dir .. "/m.npy", ns.load(f, "bn.running_mean"))
ns.save(dir .. "/v.npy", ns.load(f, "bn.running_var"))
LUA
run_ns audit "$data/torch.safetensors" --tensor x_bn --kind batch --tsv --running "$tmp/m.npy,$tmp/v.npy"
check "--running MEAN.npy,VAR.npy gives the same" cmp -s "$out" "$tmp/pfx.tsv"
# ---- num_batches_tracked, from a torch BatchNorm2d(momentum=None) (make-torch-running.py)
trd=$top/tests/data/torch-running
run_ns audit "$trd/x.npy" --kind batch --tsv --running "$trd/bn.safetensors:bn"
got=$(sed -n 's/.*tracked over \([0-9]*\) batches .*channel \([0-9]*\).s running mean by \([^ ]*\) and its variance by \([^;	]*\).*/\1 \2 \3 \4/p' "$out")
check "num_batches_tracked: the count and torch's momentum=None update of the worst channel ($got)" \
  awk -v g="$got" -F "\t" 'BEGIN { split(g, w, " "); if (w[1] == "") exit 1 }
    $1 == "count" && $2 != w[1] { exit 1 }
    $1 == "move" && $2 == w[2] { seen = 1
      if ((w[3] - $3) ^ 2 > (2e-3 * $3) ^ 2 || (w[4] - $4) ^ 2 > (2e-3 * $4) ^ 2) exit 1 }
    END { exit !seen }' "$trd/expected.tsv"
run_ns audit "$trd/x.npy" --kind batch --tsv --running "$trd/bad-count.safetensors:bn"
check "a num_batches_tracked beyond 2^53: exit 1, named" \
  sh -c '[ $0 = 1 ] && grep -q "num_batches_tracked.*cannot hold exactly" "$err"' "$rc"

run_ns audit "$data/torch.safetensors" --tensor x_bn --kind batch --json
check "--json: one object with the findings" sh -c '
  [ $0 = 0 ] && [ $(wc -l <"$out") = 1 ] && grep -q "^{\"file\":" "$out" &&
  grep -q "\"shape\":\[32,4,12,12\]" "$out" && grep -q "\"check\":\"outliers\",\"verdict\":\"ok\"" "$out"' "$rc"
if command -v python3 >/dev/null 2>&1 && python3 -c 1 2>/dev/null; then
  check "--json parses as JSON (python3)" python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["findings"]) == 6' "$out"
fi
run_ns audit "$data/torch.safetensors" --tensor x_bn --kind batch --report "$tmp/r.md" --ascii
check "--report: the text on stdout and a Markdown file with figures" sh -c '
  [ $0 = 0 ] && grep -q "^batch_dependence        yes" "$out" && grep -q "^# normscope audit" "$1" &&
  grep -q "^| precision | ok |" "$1" && grep -q "^\`\`\`text" "$1" &&
  ! LC_ALL=C grep -q "[^ -~]" "$1"' "$rc" "$tmp/r.md"
run_ns audit "$data/torch.safetensors" --tensor x_bn --report "$tmp/r.txt"
check "--report wants FILE.md: exit 2" sh -c '[ $0 = 2 ]' "$rc"

# ---- a whole capture by a plan (tests/audit/make-capture.lua writes the capture)
cap=$tmp/capture.safetensors
"$NS" run "$top/tests/audit/make-capture.lua" "$cap" >/dev/null 2>&1
run_ns audit "$cap" --plan
cp "$out" "$tmp/plan.tsv"
check "--plan alone: a draft plan of the five layers' inputs, parameters and outputs left out" sh -c '
  [ $0 = 0 ] && [ $(grep -vc "^#" "$1") = 6 ] && grep -q "^tensor	kind	axes	layout	groups	eps	running$" "$1" &&
  grep -q "^stem.bn.input	batch	-	-	-	-	stem.bn$" "$1" && grep -q "^block1.bn.input	batch	.*	block1.bn$" "$1" &&
  grep -q "^block1.gn.input	group	-	-	8	" "$1" && grep -q "^attn.ln.input	layer	" "$1" &&
  grep -q "^mlp.rms.input	rms	" "$1" && ! grep -q "weight\|bias\|head.out\|num_batches" "$1"' "$rc" "$tmp/plan.tsv"
run_ns audit "$cap" --plan "$tmp/plan.tsv"
check "--plan PLAN: one table, a row per layer, worst first, then each warning" sh -c '
  [ $0 = 0 ] && grep -q "5 tensors, 3 with warnings (worst first)" "$1" &&
  awk "/^tensor / { t = 1; next } t && NF == 0 { exit } t { print \$1, \$(NF-7) }" "$1" | tr "\n" " " |
    grep -q "^block1.bn.input 2 attn.ln.input 1 mlp.rms.input 1 stem.bn.input 0 block1.gn.input 0 $" &&
  grep -q "^  near_zero_variance: 1 of 8 statistics" "$1" && grep -q "^  outliers: .*sqrt(n) = 8" "$1"' "$rc" "$out"
run_ns audit "$cap" --plan "$tmp/plan.tsv" --tsv
cp "$out" "$tmp/plan.out.tsv"
check "--plan --tsv: TENSOR, then the single audit's fields, worst layer first" sh -c '
  [ $0 = 0 ] && [ $(wc -l <"$1") = 32 ] && head -n 1 "$1" | grep -q "^block1.bn.input	axes	ok	" &&
  awk -F "\t" "NF != 5 { bad = 1 } END { exit bad }" "$1"' "$rc" "$tmp/plan.out.tsv"
"$NS" audit "$cap" --tensor attn.ln.input --kind layer --tsv >"$tmp/one.tsv" 2>&1
check "a layer's lines are the audit of that tensor alone" sh -c '
  grep "^attn.ln.input	" "$0" | cut -f 2- | cmp -s - "$1"' "$tmp/plan.out.tsv" "$tmp/one.tsv"
run_ns audit "$cap" --plan "$tmp/plan.tsv" --json
if command -v python3 >/dev/null 2>&1 && python3 -c 1 2>/dev/null; then
  check "--plan --json: one object, the layers worst first" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [l["tensor"] for l in d["layers"]][:3] == ["block1.bn.input", "attn.ln.input", "mlp.rms.input"]
assert len(d["layers"]) == 5 and d["errors"] == []' "$out"
fi
run_ns audit "$cap" --plan "$tmp/plan.tsv" --report "$tmp/cap.md"
check "--plan --report: the table, then each layer's sections" sh -c '
  [ $0 = 0 ] && grep -q "^# normscope audit of a capture" "$1" && grep -q "^| block1.bn.input | batch |" "$1" &&
  grep -q "^## attn.ln.input" "$1" && grep -q "^### precision: warn" "$1"' "$rc" "$tmp/cap.md"
printf 'tensor\tkind\nstem.bn.input\tbatch\nnope\tlayer\n' >"$tmp/missing.tsv"
run_ns audit "$cap" --plan "$tmp/missing.tsv" --tsv
check "a plan naming a missing tensor: exit 1, the others audited" sh -c '
  [ $0 = 1 ] && grep -q "nope (line 3 of .*): no tensor named" "$2" && grep -c "^stem.bn.input	" "$1" | grep -q "^6$"' "$rc" "$out" "$err"
printf 'stem.bn.input\tbatchy\n' >"$tmp/bad.tsv"
run_ns audit "$cap" --plan "$tmp/bad.tsv"
check "a plan line that does not parse: exit 2, naming the line" sh -c '
  [ $0 = 2 ] && grep -q "line 1: kind \"batchy\"" "$1"' "$rc" "$err"
run_ns audit "$cap" --plan "$tmp/plan.tsv" --kind batch
check "--plan with --kind: exit 2" sh -c '[ $0 = 2 ] && grep -q "the plan gives each tensor" "$1"' "$rc" "$err"

# ---- the element cap bounds what is held, not the file: a 121-element file under a cap
# of 100 is audited (the precision slice takes at most 100 elements); a CSV file, read whole,
# is refused (tests/cli/bad_input.tsv)
"$NS" run - "$tmp" <<'LUA' >/dev/null 2>&1
ns.save((...) .. "/big121.npy", ns.rng(1):normal(0, 1, {11, 11}))
LUA
NS_MAX_ELEMENTS=100 "$NS" audit "$tmp/big121.npy" --tsv >"$out" 2>"$err"
rc=$?
check "NS_MAX_ELEMENTS=100 and a file of 121 elements: audited, the slice of at most 100" \
  sh -c '[ $0 = 0 ] && [ $(wc -l <"$out") = 6 ] && grep -q "on a slice (9, 11)" "$out"' "$rc"

# ---- a CSV file whose first line names its columns: the header is skipped and said on
# stderr, in the words of the explorer's file open and ns.load (it was skipped without a word)
printf 'a,b,c\n1,2,3\n4,5,7\n2,0,1\n' >"$tmp/named.csv"
printf '1,2,3\n4,5,7\n2,0,1\n' >"$tmp/plain.csv"
run_ns audit "$tmp/named.csv" --tsv
check "a CSV with a header: exit 0, the header's line named on stderr" \
  sh -c '[ $0 = 0 ] && [ $(wc -l <"$out") = 6 ] &&
    [ "$(cat "$err")" = "normscope: $1: its line 1, a,b,c, is a header of names: skipped" ]' \
  "$rc" "$tmp/named.csv"
cp "$out" "$tmp/named.tsv"
run_ns audit "$tmp/plain.csv" --tsv
check "a CSV without one: nothing on stderr, the same findings" \
  sh -c '[ $0 = 0 ] && [ ! -s "$err" ] && cmp -s "$out" "$1"' "$rc" "$tmp/named.tsv"

# ---- out of core: a file larger than the process may map or allocate, and sparse: 4 of
# every 16 examples written, the rest holes (zeros), so the suite writes a quarter of it
mb=${NS_AUDIT_BIG_MB:-300}
# A sanitizer build reserves terabytes of shadow address space: no ulimit -v there.
if command -v ldd >/dev/null 2>&1 && ldd "$NS" 2>/dev/null | grep -q 'libasan\|libtsan'; then
  echo "ok $((n + 1)) - out-of-core run # SKIP sanitizer build (ulimit -v cannot apply)"
  n=$((n + 1))
  mb=0
fi
if [ "$mb" -gt 0 ]; then
  reps=$((mb / 2)) # 16 examples x 8 x 64 x 64 fp32 = 2 MiB per block
  if "$NS" run "$top/tests/audit/make-big.lua" "$tmp/big.npy" 16 "$reps" 4 2>"$tmp/gen.err"; then
    size=$(wc -c <"$tmp/big.npy")
    block=$tmp/big.npy.block.npy
    # The address space the program needs at all (libraries, Lua, BLAS) differs between
    # machines: find what an audit of the 2 MiB block needs, then allow the big file's
    # audit half as much again plus 32 MiB, far less than the file itself.
    base=40000
    while ! ( ulimit -v "$base" && OPENBLAS_NUM_THREADS=1 exec "$NS" audit "$block" --kind batch --tsv ) >/dev/null 2>&1; do
      base=$((base * 3 / 2))
      [ "$base" -gt $((size / 1024 / 3)) ] && break
    done
    limit_kb=$((base * 3 / 2 + 32768))
    ok "generated a $((size / 1048576)) MiB sparse file ($(du -k "$tmp/big.npy" | cut -f 1) KiB on disk), limit $((limit_kb / 1024)) MiB of address space"
    start=$(date +%s.%N 2>/dev/null || date +%s)
    # OpenBLAS's worker threads reserve large buffers at start and hang on exit when
    # they fail under ulimit -v: one thread is enough for the audit.
    timer=
    [ -x /usr/bin/time ] && timer="/usr/bin/time -f %M -o $tmp/rss"
    ( ulimit -v "$limit_kb" && OPENBLAS_NUM_THREADS=1 exec $timer "$NS" audit "$tmp/big.npy" --kind batch --tsv ) \
      >"$tmp/big.tsv" 2>"$tmp/big.err"
    rc=$?
    end=$(date +%s.%N 2>/dev/null || date +%s)
    check "the file is larger than the limit" sh -c '[ $0 -gt $(($1 * 1024)) ]' "$size" "$limit_kb"
    cp "$tmp/big.tsv" "$out"; cp "$tmp/big.err" "$err"
    check "audited under ulimit -v: exit 0, six findings" sh -c '[ $0 = 0 ] && [ $(wc -l <"$out") = 6 ]' "$rc"
    if [ -s "$tmp/rss" ]; then
      check "peak resident memory under 256 MiB ($(tail -n 1 "$tmp/rss") KiB)" \
        sh -c '[ "$(tail -n 1 "$0")" -lt 262144 ]' "$tmp/rss"
    fi
    OPENBLAS_NUM_THREADS=1 "$NS" audit "$block" --kind batch --tsv >"$tmp/block.tsv" 2>&1
    # every check that depends only on each channel's moments, min and max, and example 1's
    # against the whole batch, agrees with the block's (an in-memory-sized slice of it)
    check "the streamed findings agree with one block's (moments per channel)" awk -F '\t' '
      function near(a, b) { e = a - b; if (e < 0) e = -e; s = b < 0 ? -b : b; return e <= 1e-9 * (s > 1 ? s : 1) }
      NR == FNR { v[$1] = $3; d[$1] = $2; t[$1] = $4; next }
      $1 ~ /^(axes|near_zero_variance|precision|outliers)$/ {
        if ($2 != d[$1]) { print "verdict " $1; bad = 1 }
        if (!near($3 + 0, v[$1] + 0)) { print $1 ": " $3 " vs " v[$1]; bad = 1 }
      }
      $1 == "batch_size_sensitivity" {
        split($4, x, "alone it differs by "); split(t[$1], y, "alone it differs by ")
        if (x[2] + 0 != y[2] + 0 || x[2] == "") { print "alone: " x[2] " vs " y[2]; bad = 1 }
      } END { exit bad }' "$tmp/block.tsv" "$tmp/big.tsv"
    # the element cap is for what is held in memory: the file streams past it
    NS_MAX_ELEMENTS=4M OPENBLAS_NUM_THREADS=1 "$NS" audit "$tmp/big.npy" --kind batch --tsv >"$out" 2>"$err"
    rc=$?
    check "NS_MAX_ELEMENTS=4M, below the file's elements: the same audit" \
      sh -c '[ $0 = 0 ] && cmp -s "$out" "$1"' "$rc" "$tmp/big.tsv"
    secs=$(awk "BEGIN { printf \"%.2f\", $end - $start }")
    echo "# out-of-core audit: $((size / 1048576)) MiB in $secs s ($(awk "BEGIN { if ($secs > 0) printf \"%.0f\", $size / 1048576 / $secs; else print \"-\" }") MiB/s, one pass)"
    # a dense block holds the dead channel (3) and the offset one (6, spread 0.01)
    "$NS" run "$top/tests/audit/make-big.lua" "$tmp/dense.npy" 16 1 2>/dev/null
    OPENBLAS_NUM_THREADS=1 "$NS" audit "$tmp/dense.npy" --kind batch --tsv >"$tmp/dense.tsv" 2>&1
    check "the dead channel (3) and the offset one (6, spread 0.01: also below 100 eps) are found" sh -c '
      grep -q "^near_zero_variance	warn	2	.*1-based 3, 6)" "$0" && grep -q "^precision	warn	" "$0" &&
      grep -q "at statistic 6)" "$0"' "$tmp/dense.tsv"
    # threads change nothing, bit for bit (small chunks: many of them per round)
    NS_THREADS=1 "$NS" audit "$block" --kind batch --tsv --chunk 999 >"$tmp/t1.tsv" 2>&1
    NS_THREADS=3 "$NS" audit "$block" --kind batch --tsv --chunk 999 >"$tmp/t3.tsv" 2>&1
    check "NS_THREADS=1 and 3 give the same report" cmp -s "$tmp/t1.tsv" "$tmp/t3.tsv"
    rm -f "$tmp/big.npy" "$block"
  else
    not_ok "generate the large file" "$(head -c 400 "$tmp/gen.err")"
  fi
fi
# ---- opt-in (NS_AUDIT_HUGE_GB=10): a sparse file of that many GB, the .npy header and two
# written examples, the rest a hole, audited under ulimit -v 1048576. float64, as a float32
# file of 10 GB would pass NS_MAXELEMS (2^31 elements), the shape limit of every reader.
gb=${NS_AUDIT_HUGE_GB:-0}
if [ "$gb" -gt 0 ] && [ "$mb" -gt 0 ]; then
  huge=$tmp/huge.npy
  "$NS" run - "$huge" "$gb" <<'LUA' 2>"$tmp/gen.err"
local path, gb = arg[1], tonumber(arg[2])
local per = 64 * 128 * 128
local N = math.floor(gb * 1e9 / (8 * per))
local dict = string.format("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, 64, 128, 128), }", N)
dict = dict .. string.rep(" ", (64 - (10 + #dict + 1) % 64) % 64) .. "\n"
local h = "\x93NUMPY\x01\x00" .. string.pack("<I2", #dict) .. dict
local f = assert(io.open(path, "wb"))
f:write(h)
local v = ns.rng(3):normal(1, 2, 2 * per):flat()
for i = 1, #v, 4096 do f:write(string.pack("<" .. string.rep("d", math.min(4096, #v - i + 1)), table.unpack(v, i, math.min(i + 4095, #v)))) end
f:seek("set", #h + N * per * 8 - 8)
f:write(string.pack("<d", 0))
f:close()
LUA
  timer=
  [ -x /usr/bin/time ] && timer="/usr/bin/time -f %M -o $tmp/rss"
  ( ulimit -v 1048576 && OPENBLAS_NUM_THREADS=1 exec $timer "$NS" audit "$huge" --kind batch --tsv ) >"$out" 2>"$err"
  rc=$?
  check "a $gb GB sparse file under ulimit -v 1048576: exit 0, six findings ($(tail -n 1 "$tmp/rss" 2>/dev/null) KiB peak)" \
    sh -c '[ $0 = 0 ] && [ $(wc -l <"$out") = 6 ]' "$rc"
  rm -f "$huge"
fi
echo "1..$n"
