#!/bin/sh
# test_screen_term.sh: the terminal side of the explorer: resize at any moment, the
# message below the minimum size, the help screen, --ascii, NO_COLOR, mouse clicks,
# and a sane terminal after q, Ctrl-C, SIGTERM and SIGHUP.
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

# Resize: 80x24 (tabs) -> 120x40 (every panel) -> too small -> 80x24 again.
start 80 24
started
check "80x24: input, output and spectrum show" wait_re "3 Output"
check "80x24: the spectrum shows" wait_for "4 Spectrum"
check "80x24: the less central panels are tabs" wait_for "[2 Settings]"
T resize-window -t "$SES" -x 120 -y 40
check "resize to 120x40: the precision panel gets its own place" wait_for "╭─ 7 Precision: fp64"
check "resize to 120x40: the train/eval panel shows" wait_for "╭─ 6 Train/eval"
check "resize to 120x40: the batch panel shows" wait_for "╭─ 5 Batch 2x2"
T resize-window -t "$SES" -x 60 -y 20
check "resize to 60x20: a clear message instead of garbage" wait_for "needs at least 80x24"
check "resize to 60x20: the message gives the size" wait_for "(this terminal is 60x20)"
T resize-window -t "$SES" -x 80 -y 24
check "back to 80x24: the screen returns" wait_for "4 Spectrum"
# Tabs at 80x24: Tab moves the focus through the panels; 5 Batch takes the slot.
keys Tab Tab Tab Tab
check "Tab to panel 5: the batch panel takes the shared slot" wait_for "5 Batch 2x2"
check "batch panel: target BN output -0.999995" wait_for "col 1: -0.999995 (was -0.999995)"
# both columns of the target share one format (the + value padded to line up)
check "batch panel: target lines line up" wait_for "col 2:  0.999995 (was  0.999995)"
check "batch panel: says what to try" wait_for "Edit C (Alt-5, arrows, ~ negates)"
# batch, BN and LN side by side at 80x24, each block in one number format
check "batch panel: batch, BN and LN side by side" wait_re "T.1 +0 +1 +-1\.0 +1\.0 +-1\.0 +1\.0"
# The companion sign flip: batch cursor on row 2 (the companion), column 1, negate.
keys Down n
check "negating the companion flips the target's sign" wait_for "SIGN FLIP"
check "the target's output is now +0.999995" wait_for "col 1:  0.999995 (was -0.999995)"
# the flip message fits the 38 columns of the panel at 80x24, not cut mid-word
check "the flip message is whole at 80x24" wait_for "SIGN FLIP: T unchanged, only C moved"
check "the flip says why (BN mixes the rows)" wait_for "BN mixes the rows of a batch"
keys u
check "undo: no flip" gone "SIGN FLIP"
# Alt-digit focuses a panel directly (plain digits type numbers into cells).
keys M-6
check "Alt-6: the train/eval panel takes the slot" wait_for "[6 Train/eval]"
keys M-1
check "Alt-1: focus back on the input" wait_for "1 Input x (4) ◀"
keys q
check "q: exit status 0" wait_for "EXIT=0"
check "q: echo and icanon restored" sane_tty

# A runaway Lua loop is interrupted by Ctrl-C and the screen stays; os.exit() from the
# prompt still leaves a sane terminal.
start 80 24
started
keys :
lit 'while true do end'
keys Enter
sleep 0.3
keys C-c
check "Ctrl-C interrupts a Lua loop at the prompt" wait_for "interrupted"
check "the screen survives the interrupted loop" wait_for "LayerNorm"
lit 'os.exit(3)'
keys Enter
check "os.exit(3) from the prompt: exit status 3" wait_for "EXIT=3"
check "os.exit: terminal sane" sane_tty

# Start below the minimum size.
start 60 20
check "start at 60x20: the size message" wait_for "needs at least 80x24"
keys q
check "q works at the small size" wait_for "EXIT=0"
check "terminal sane after quitting from the message" sane_tty

# Help: every key, scrollable at 80x24.
start 80 24
started
keys ?
check "? opens the help" wait_for "Help  (lines 1-22 of"
# page down until the undo key shows (the focused panel's keys come first)
found=1
for i in 1 2 3 4 5 6 7 8; do
  if capture | grep -qF "u U C-r              undo the last change"; then found=0; break; fi
  keys NPage
  sleep 0.2
done
check "help lists the undo key" test "$found" -eq 0
keys Home
keys NPage
check "PgDn scrolls the help" wait_re "Help  \(lines 23-"
keys End
check "End shows the end of the help" wait_for "what acc holds minus kept"
check "the help is still open after End" wait_for "Help  (lines"
keys Home
check "Home goes back to the top" wait_for "Help  (lines 1-22"
keys Escape
check "Esc closes the help" wait_for "╭─ 3 Output"
# Mouse: a click on the "6 Train/eval" tab label in the header.
col=$(capture | head -n 1 | awk '{ i = index($0, "6 Train/eval"); print i }')
if [ "${col:-0}" -gt 0 ]; then
  # an xterm (X10) mouse press and release at column col, row 1: ESC [ M b x y, each
  # byte 32 + value, 1-based coordinates
  x=$(printf "\\$(printf '%03o' $((32 + col)))")
  lit "$(printf '\033[M ')$x!"
  lit "$(printf '\033[M#')$x!"
  check "a mouse click on a tab shows that panel" wait_for "╭─ 6 Train/eval"
else
  not_ok "a mouse click on a tab shows that panel (no tab label)"
fi
keys C-c
check "Ctrl-C quits" wait_re "EXIT=(0|130)"
check "Ctrl-C: terminal sane" sane_tty

# SIGTERM and SIGHUP: handled by a flag; the loop restores the terminal and exits.
for sig in TERM HUP; do
  start 80 24
  started
  pid=$(ns_pid)
  if [ -n "$pid" ]; then kill -s $sig "$pid"; fi
  check "SIG$sig: normscope exits" wait_re "EXIT=[0-9]+"
  check "SIG$sig: terminal sane" sane_tty
done

# A crash (simulated with SIGSEGV from outside) still gives the terminal back, says so,
# and ends with the signal's own status.
start 80 24
started
pid=$(ns_pid)
if [ -n "$pid" ]; then kill -s SEGV "$pid"; fi
check "SIGSEGV: the crash is reported" wait_for "normscope: crashed"
check "SIGSEGV: exit status 139" wait_for "EXIT=139"
check "SIGSEGV: terminal sane" sane_tty

# --ascii: no Unicode box or bar characters at all.
start 80 24 --ascii
wait_for "1 Input"
sleep 0.2
check "--ascii: only ASCII on screen" ascii_only
check "--ascii: frames drawn with + - |" wait_re "^\+-+ 1 Input"
keys q
wait_for "EXIT=0"

# --no-mouse: the mouse is not even asked for (the default asks: checked first).
start 80 24
started
check "default: mouse reporting requested" has_mouse
keys q
wait_for "EXIT=0"
start 80 24 --no-mouse
started
check "--no-mouse: the screen comes up" wait_for "LayerNorm"
check "--no-mouse: no mouse reporting requested" no_mouse
keys q
wait_for "EXIT=0"

# NO_COLOR and --no-color: the screen works without colour (no SGR colour codes).
start 80 24
started
check "default: colours are used" has_colour
keys q
wait_for "EXIT=0"
start 80 24 --no-color
started
check "--no-color: the screen comes up" wait_for "LayerNorm"
check "--no-color: no colour escapes in the pane" no_colour
keys q
wait_for "EXIT=0"
START_ENV="NO_COLOR=1" start 80 24
started
check "NO_COLOR=1: no colour escapes in the pane" no_colour
keys q
check "NO_COLOR: quits" wait_for "EXIT=0"

# 8 colours (TERM=xterm): starts and draws.
START_ENV="TERM=xterm" start 80 24
check "TERM=xterm (8 colours): the screen comes up" wait_for "LayerNorm"
keys q
check "TERM=xterm: quits" wait_for "EXIT=0"

# A history file that cannot be written: said in the Lua scrollback (stderr would be
# drawn over by curses), and the screen works on.
: >"$tmp/not-a-dir"
START_ENV="XDG_STATE_HOME=$tmp/not-a-dir" start 120 40
started
check "unwritable history: the scrollback says so" wait_re "history.*(Not a directory|not-a-dir)"
keys q
check "unwritable history: quits normally" wait_for "EXIT=0"

# A terminal that cannot place the cursor: a clear message, not a broken screen.
START_ENV="TERM=dumb" start 80 24
check "TERM=dumb: exit status 1" wait_for "EXIT=1"
check "TERM=dumb: says why" wait_for "cannot place the cursor"

done_testing
