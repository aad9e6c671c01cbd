#!/usr/bin/env python3
"""lines.py < LACKEY_TRACE -- cache lines one call touches, from a valgrind lackey trace
(--trace-mem=yes) of a process that made or served N blocking null calls (N = CALLS, 300 unless
given): the trace is cut into calls at an instruction of the main executable run exactly N times
(the first such in the trace), and for each call the distinct 64-byte lines of code and of data
it touched are counted (kernel work unseen). Prints the medians over the calls, the first 30 and
last 5 left out (start-up, shut-down)."""
import collections
import os
import statistics
import sys

calls = int(os.environ.get("CALLS", "300"))
events = []  # (kind, addr, size) of the whole trace, kept compact
counts = collections.Counter()
for line in sys.stdin:
    if len(line) < 4 or line[0] == "=":
        continue
    kind = line[:2].strip()
    try:
        a, n = line[3:].strip().split(",")
        addr, size = int(a, 16), int(n)
    except ValueError:
        continue
    events.append((kind, addr, size))
    if kind == "I" and 0x100000 <= addr < 0x4000000:  # the main executable (valgrind's load base)
        counts[addr] += 1
cut = next((a for k, a, _ in events if k == "I" and counts.get(a) == calls), None)
if cut is None:
    sys.exit("lines.py: no instruction of the main executable ran exactly %d times" % calls)
rows, code, data, ins = [], set(), set(), 0
for kind, addr, size in events:
    if kind == "I":
        if addr == cut:
            rows.append((len(code), len(data), ins))
            code, data, ins = set(), set(), 0
            continue
        ins += 1
        code.update((addr >> 6, (addr + size - 1) >> 6))
    else:
        data.update((addr >> 6, (addr + size - 1) >> 6))
rows = rows[30:-5]
print("code lines %g  data lines %g  instructions %g" % tuple(
    statistics.median(r[i] for r in rows) for i in range(3)))
