#!/usr/bin/env python3
"""cgdiff.py A.cg B.cg [N] -- instructions per function in callgrind profile B less those in A,
divided by N (the number of calls B made more than A), largest first: what one call costs, by
function (exclusive), start-up cancelled out. Uses callgrind_annotate."""
import re
import subprocess
import sys


def per_fn(path):
    out = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", path],
                         capture_output=True, text=True, check=True).stdout
    d = {}
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+(.*)$", line)
        if m and "PROGRAM TOTALS" not in line and "=>" not in line:
            d[m.group(2)] = d.get(m.group(2), 0) + int(m.group(1).replace(",", ""))
    return d


a, b = per_fn(sys.argv[1]), per_fn(sys.argv[2])
n = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
rows = sorted(((b.get(k, 0) - a.get(k, 0)) / n, k) for k in set(a) | set(b))
rows.reverse()
print("%10.0f  total" % sum(r[0] for r in rows))
for v, k in rows[:int(sys.argv[4]) if len(sys.argv) > 4 else 45]:
    if abs(v) >= 1:
        print("%10.0f  %s" % (v, k))
