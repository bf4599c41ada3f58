#!/usr/bin/env python3
"""check_cast.py CAST HANDOUT.md W H STEP: checks a recording (normscope lesson X --export
FILE.cast) against the lesson's handout (--export FILE.md): an asciinema v2 header of the
stated size, events [time, "o", text] at times that never go back, and, in the output of
each step's time window [(k-1) STEP, k STEP), the first words of that step's text (the
screen's escape sequences taken out). Prints one line per problem; exit 1 if any."""
import json
import re
import sys

cast, handout, W, H, STEP = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
problems = []
lines = open(cast, encoding="utf-8").read().splitlines()
head = json.loads(lines[0])
if head.get("version") != 2:
    problems.append("header: version %r, not 2" % head.get("version"))
if head.get("width") != W or head.get("height") != H:
    problems.append("header: %sx%s, not %dx%d" % (head.get("width"), head.get("height"), W, H))
events = []
for i, l in enumerate(lines[1:], 2):
    e = json.loads(l)
    if not (isinstance(e, list) and len(e) == 3 and isinstance(e[0], (int, float)) and e[1] == "o"
            and isinstance(e[2], str)):
        problems.append("line %d: not a [time, \"o\", text] event" % i)
        continue
    if events and e[0] < events[-1][0]:
        problems.append("line %d: time %g goes back (after %g)" % (i, e[0], events[-1][0]))
    events.append(e)
if not events:
    problems.append("no events")

# the steps' texts, from the handout: between "## Step K of N" and its ```lua block
texts, k, cur = {}, None, None
for l in open(handout, encoding="utf-8").read().splitlines():
    m = re.match(r"## Step (\d+) of (\d+)", l)
    if m:
        k, cur = int(m.group(1)), []
        texts[k] = cur
        continue
    if l.startswith("```"):
        k = None
    elif k is not None:
        cur.append(l)

ESC = re.compile(r"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()*+][0-9A-Za-z]|.)")
for k, t in sorted(texts.items()):
    words = [w for w in re.findall(r"[A-Za-z]{4,}", " ".join(t))][:6]
    shown = " ".join(ESC.sub(" ", e[2]) for e in events if (k - 1) * STEP <= e[0] < k * STEP)
    missing = [w for w in words if w not in shown]
    if not words:
        continue
    if missing:
        problems.append("step %d: the screen never shows %s" % (k, ", ".join(missing)))
for p in problems:
    print(p)
print("%d steps, %d events checked" % (len(texts), len(events)))
sys.exit(1 if problems else 0)
