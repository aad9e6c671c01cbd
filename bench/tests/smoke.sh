#!/usr/bin/env bash
# bench/tests/smoke.sh BUILD OUT -- bench/run.sh end to end in seconds: a --smoke run of a few
# experiments (local only) must write report.md with the expected sections, its CSVs and the raw
# data, record no failed step, and leave no process behind. No performance is asserted.
set -u
BUILD=${1:?usage: smoke.sh BUILD OUT}
OUT=${2:?usage: smoke.sh BUILD OUT}
HERE=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$OUT"
FAILS=0
fail() { FAILS=$((FAILS + 1)); echo "FAIL $*"; }

TAG=rc-bench-smoke-$$
RC_BENCH_SMOKE_TAG=$TAG timeout 240 "$HERE/run.sh" --build "$BUILD" --smoke --only en,multirpc,pipeline,xdr --no-netns --out "$OUT" 2>"$OUT.log"
rc=$?
[ $rc -eq 0 ] || fail "run.sh exited $rc: $(tail -5 "$OUT.log")"
grep -q '\[en\]' "$OUT.log" || fail "no progress line on stderr"

R=$OUT/report.md
if [ ! -s "$R" ]; then
	fail "no report.md"
else
	for s in '^# remotecall benchmark report' '^## Targets' '^## 1\. Elliott & Nutt' '^### Table 2' '^### Table 3' \
		'^### The ratios that carry over' '^## 6\. Satyanarayanan & Siegel' '^### Table I-1' '^### Table I-2' \
		'^## 7\. Beyond the papers: pipelined' '^## 8\. Beyond the papers: XDR' '^## Failed steps' '^## Reproduce' \
		'^\| machine \|' '^\| kernel \|' '^\| compiler \|' 'null call ≤ 1\.1' 'XDR int arrays'; do
		grep -Eq "$s" "$R" && echo "ok   report has /$s/" || fail "report.md lacks /$s/"
	done
	for s in '^## 2\. Where the time goes' '^## 4\. Khandker'; do # not run: said so
		grep -A2 -E "$s" "$R" | grep -q 'Not run' && echo "ok   /$s/ says it was not run" || fail "/$s/ should say 'Not run'"
	done
	grep -q 'None: every step of the run succeeded' "$R" && echo "ok   no failed step" ||
		{ fail "failed steps:"; cat "$OUT/failures.jsonl"; }
fi
for f in raw.jsonl meta.json en_table2.csv en_table3.csv multirpc_table_I-1.csv pipeline.csv xdr.csv; do
	[ -s "$OUT/$f" ] && echo "ok   $f" || fail "$f missing or empty"
done
python3 -c "import json,sys; [json.loads(l) for l in open(sys.argv[1])]" "$OUT/raw.jsonl" && echo "ok   raw.jsonl parses" ||
	fail "raw.jsonl does not parse"
if command -v gnuplot >/dev/null; then
	[ -s "$OUT/multirpc_const.png" ] && echo "ok   multirpc_const.png" || fail "multirpc_const.png missing"
fi
# nothing the run started is still running (its processes inherit RC_BENCH_SMOKE_TAG)
sleep 0.3
left=$(grep -l "RC_BENCH_SMOKE_TAG=$TAG" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 | tr '\n' ' ')
[ -z "$left" ] && echo "ok   nothing left running" || fail "left running: $(ps -o pid,args -p ${left// /,} 2>/dev/null | tail -n +2)"
[ $FAILS -eq 0 ] && echo "smoke: all checks passed"
[ $FAILS -eq 0 ]
