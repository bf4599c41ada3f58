#!/bin/sh
# test_screen_newuser.sh: the explorer review's (c) items that its replay found still
# open (issue 24), each checked the way a new user meets it:
# - `*` meant three things: a default, the --ascii focus mark and the batch companion;
#   now it means a default only (the focus is `<`, the companion `C`);
# - Enter on an fp32 cell showed only the value's tail: the prompt line shows it whole;
# - the settings rows' keys (`o O C`, `w` on two rows) were not explained: the focused
#   row's keys are, from the keymap;
# - at 80x24 the open Lua pane left a blank line above `>` and wrapped a phrase mid-word;
# - a long safetensors tensor name was cut while the file name could go; the Output
#   panel cut why y is degenerate after two lines over empty rows (B8);
# - orange was positive values and the focus and the cursor; bf16 against torch was only
#   in the README; the L view hid three series under a fourth, and its two figures each
#   had a '●' of a different meaning;
# - the README's "Things to try" lines only held in their order: each now starts from
#   reset(), and they are played here in reverse.
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

# ---- `*` is a default, nothing else
start 80 24 --ascii
started
check "--ascii: the focused panel's title ends in '<', not '*'" wait_re "1 Input x \(4\) < -"
check "  the defaults keep their star" wait_for "{1}*"
keys M-5
check "the batch companion is 'C', without a star" wait_re "\|C 2 +2 +-1"
check "  and no 'C*' anywhere" no_re "C\*"
keys q
wait_for "EXIT=0"

# ---- Enter on an fp32 cell: the whole value on the prompt line
"$NS" run - <<LUA
ns.save("$tmp/v.npy", ns.tensor({0.12573022, -0.13210486, 0.64042265, 0.10490012}, nil, "fp32"))
LUA
start 80 24 "$tmp/v.npy"
started
keys Enter
check "Enter: the prompt line shows the cell and its whole fp32 value" \
  wait_re "^x\[1\] = 0\.125730217?_ +\(Enter applies, Esc cancels\)"
keys Right Right Escape Enter
check "  the cell it names follows the cursor" wait_re "^x\[3\] = 0\.6404226[0-9]*_"
keys Escape q
wait_for "EXIT=0"

# a matrix and the batch panel name their cells by row and column
start 120 40 "$tmp/v.npy"
started
lua 'set{x={{1,2,3},{4,5,6}}}'
keys M-1 Down Right Enter
check "a matrix cell is named by row and column" wait_re "x\[2,2\] = 5_"
keys Escape M-5 Enter
check "a batch cell is named as the batch" wait_re "batch\[1,1\] = 0_"
keys Escape q
wait_for "EXIT=0"

# ---- the settings rows' keys explained, from the keymap
start 120 40
started
keys M-2
i=0
while [ $i -lt 13 ]; do keys Down; i=$((i + 1)); done
check "on the momentum row: what o, O and C do" \
  wait_for "o O: momentum halved / doubled;"
check "  (C's words, as the help screen has them)" wait_for "C: running statistics: momentum /"
keys Up Up Up Up Up
check "on the beta row: w's presets, the same key as gamma's" wait_for "w: gamma/beta: none, gamma 2,"
keys Tab
check "unfocused, the panel says what a star means" wait_for "* = default (kind's or dtype's)"
keys q
wait_for "EXIT=0"

# ---- 80x24: the open Lua pane uses the line above '>' and wraps at spaces
start 80 24
started
keys :
wait_re "^> ?$"
check "80x24: the line above '>' is not blank" \
  sh -c '[ -n "$(printf "%s\n" "$1" | grep -B1 "^> *$" | head -1 | tr -d " ")" ]' - "$(capture)"
check "  the first hint wraps at a space ('changes the' / 'state, get()')" \
  wait_re "set\{\.\.\.\} changes the +│"
check "  and no row starts with the comma the old wrap left" no_re "││, get\(\) shows it"
keys Escape q
wait_for "EXIT=0"

# ---- a degenerate statistic's reason, whole where the Output panel has the rows
start 120 40
started
lua 'set{eps=0, x={9998,9999,10001,10002}, dtype="fp32", algo="raw"}'
check "120x40: the Output panel says why y is degenerate" wait_for "1 degenerate statistic: variance"
check "  to the end of the sentence, as the Spectrum panel does (two copies)" \
  sh -c '[ "$(printf "%s\n" "$1" | grep -c "y = +-inf")" -eq 2 ]' - "$(capture)"
keys q
wait_for "EXIT=0"

# ---- a tensor's name outlives its file's in a narrow title
"$NS" run - <<LUA
local hdr = '{"x_bn":{"dtype":"F64","shape":[16,8,4,4],"data_offsets":[0,16384]},' ..
  '"bn.w":{"dtype":"F64","shape":[8],"data_offsets":[16384,16448]}}'
local f = assert(io.open("$tmp/m.safetensors", "wb"))
local v = {}
for i = 1, 2056 do v[i] = string.pack("<d", math.sin(i)) end
f:write(string.pack("<I8", #hdr), hdr, table.concat(v))
f:close()
LUA
start 120 40 --tensor x_bn "$tmp/m.safetensors"
started
check "120x40: the Input title names the tensor whole (the file goes first)" \
  wait_re "1 Input x \(16, ?8, ?4, ?4\) x_bn ◀"
keys q
wait_for "EXIT=0"

# ---- one meaning per colour: orange (208) is a positive value, never the focus
start 120 40
started
# sgr_line TEXT: the pane's first line holding TEXT, with its colour codes
sgr_line() { T capture-pane -e -p -t "$SES" | grep -F -- "$1" | head -1; }
focus_frame() {
  l=$(sgr_line "1 Input x (4)")
  case "$l" in *"38;5;231m"*"1 Input x (4)"*) ;; *) return 1 ;; esac
  case "$l" in *"38;5;208m"*"1 Input x (4)"*) return 1 ;; esac
}
check "the focused frame is in the focus colour (231), not orange" focus_frame
pos_value() { T capture-pane -e -p -t "$SES" | grep -q "38;5;208m *2"; }
check "  a positive x is still orange" pos_value
keys ?
wait_for "Help  (lines 1-"
i=0
while [ $i -lt 30 ] && ! capture | grep -qF "where the keyboard is"; do keys NPage; sleep 0.1; i=$((i + 1)); done
check "help: the colours' glossary gives each its meaning" wait_for "where the keyboard is"
i=0
while [ $i -lt 30 ] && ! capture | grep -qF "does not emulate"; do keys NPage; sleep 0.1; i=$((i + 1)); done
check "help: bf16 against torch's all-bf16 modules" wait_for "round their statistics to bf16, which"
keys Escape
gone "Esc closes"
lua 'set{dtype="bf16"}'
check "bf16: the Precision panel says which torch case it is not" \
  wait_for "not torch's all-bf16 modules (bf16 stats)"
keys q
wait_for "EXIT=0"

# ---- the L view: the series on the top row all show, and no marker means two things
start 120 40
started
keys L
check "L: the per-layer figure is drawn" wait_for "std of h_k per layer (batch 512)" 60
top_row() { capture | grep -m1 -E "^│ +1┤"; }
for g in ◆ △ × □; do
  check "L: the top row (std about 1) shows $g, not only the series drawn last" \
    sh -c 'case "$1" in *"$2"*) exit 0;; *) exit 1;; esac' - "$(top_row)" "$g"
done
check "L: the batch-size figure's batch norm is the left's BN 1/16 marker" wait_for "△ batch norm (1/16)"
check "  and layer norm a marker of its own" wait_for "▽ layer norm (1/16)"
check "  no '● batch norm' (● is 'none 1/16' on the left)" no_re "● batch norm"
keys L q
wait_for "EXIT=0"

# ---- the README's "Things to try", in reverse order
README="${top_srcdir:-.}/README.md"
lines=$(awk '/^Things to try/ { on = 1 } on && /^```$/ && seen { exit } on && /^```lua/ { seen = 1 }
  on && seen && /^reset\(\)/ { sub(/  +--.*/, ""); print }' "$README")
count=$(printf '%s\n' "$lines" | grep -c '^reset()')
check "the README has five 'Things to try' lines, each from reset() ($count)" test "$count" -eq 5
RAD=$(f "%.6f" "1e-2 / (2.5 + 1e-2)^1.5")
start 120 40
started
printf '%s\n' "$lines" | sed -n '1!G;h;$p' >"$tmp/readme-lines"
while IFS= read -r line; do
  lua "$line"
  case "$line" in
    *mask=*) check "README, masked rows: a dot, and J's masked zeros" wait_re "masked 4 +0 +0 +0" ;;
    *eps=1e-2*) check "README, eps 1e-2: the radial eigenvalue $RAD" wait_re "radial +1 +$RAD" ;;
    *algo=*) check "README, fp32 raw moments: raw 0, two-pass 2.5" wait_re "twopass +2\.500000" &&
      check "  raw cancelled to 0" wait_re "raw +0 +1 " ;;
    *rms*) check "README, rms eps 0: x+10 moves y by 2.055" wait_re "x\+10 +max\|y'-y\| 2\.055 NOT" &&
      check "  J's rank 3" wait_for "rank 3 of 4" ;;
    *) check "README, layer eps 0: the shift is gone, J's rank 2" wait_re "x\+10 +max\|y'-y\| 0 invariant" &&
      check "  J's rank 2" wait_for "rank 2 of 4" ;;
  esac
done <"$tmp/readme-lines"
keys q
wait_for "EXIT=0"
done_testing
