#!/usr/bin/env bash
# tests/docs/tutorial.sh SRC BUILD -- run docs/tutorial.md as a reader would: install BUILD into
# a temporary prefix (the tutorial's step 1, blocks marked "skip-test"), then run every other
# ```sh block of the tutorial, in order, in one bash in a temporary folder, and check that the
# output contains the lines of the ```text output block. The blocks must stop every server they
# start, by its PID (a job spec like kill %1 fails in a script); what is left fails the test
# and is stopped.
set -u
SRC=$(cd "${1:?usage: tutorial.sh SRC BUILD}" && pwd)
BUILD=$(cd "${2:?usage: tutorial.sh SRC BUILD}" && pwd)
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/rc-tutorial.XXXXXX")
PG=""
trap '[ -n "$PG" ] && kill -- -"$PG" 2>/dev/null; rm -rf "$TMPD"' EXIT

python3 - "$SRC/docs/tutorial.md" "$TMPD/steps.sh" "$TMPD/expected" <<'PY' || exit 1
import re, sys
text = open(sys.argv[1]).read()
blocks = re.findall(r"^```([^\n]*)\n(.*?)^```\s*$", text, re.S | re.M)
run = [b for info, b in blocks if info.split()[:1] == ["sh"] and "skip-test" not in info.split()]
out = [b for info, b in blocks if info.split() == ["text", "output"]]
if len(run) < 5 or len(out) != 1:
    sys.exit(f"tutorial.md: {len(run)} runnable sh blocks, {len(out)} output blocks: not the tutorial this test knows")
# A job spec (kill %1) names a job of an interactive shell's job table: in a script it names
# whichever job bash has not reaped yet, or none ("no such job"), and the server it meant
# keeps running. The blocks stop what they start by its PID ($!).
for b in run:
    m = re.search(r"^.*(?:^|[ \t;&|(])(?:kill|wait|fg|bg|disown)\s+(?:-\S+\s+)*%.*$", b, re.M)
    if m:
        sys.exit(f"tutorial.md: '{m.group(0).strip()}' uses a job spec, which fails when the "
                 "blocks run as a script: keep the PID (srv=$!) and kill $srv")
# a sanitizer build's library needs the same flags in the programs that link it
pre = 'cc() { command cc $RC_DOWNSTREAM_CFLAGS "$@"; }\n'
open(sys.argv[2], "w").write("set -e\n" + pre + "\n".join(run))
open(sys.argv[3], "w").write(out[0])
PY

export RC=$SRC PREFIX=$TMPD/prefix
cmake --install "$BUILD" --prefix "$PREFIX" >"$TMPD/install.log" 2>&1 || {
	echo "FAIL cmake --install"; cat "$TMPD/install.log"; exit 1; }
cd "$TMPD"
# in a process group of its own, so a server the steps leave behind is stopped at exit
setsid timeout 120 bash "$TMPD/steps.sh" >"$TMPD/out" 2>&1 &
PG=$!
if ! wait "$PG"; then
	echo "FAIL the tutorial's commands failed:"
	cat "$TMPD/out"
	exit 1
fi
# every server the steps started must be stopped by the steps themselves (a stop signal
# needs a moment to end a server: up to 3 s)
for _ in $(seq 30); do
	kill -0 -- -"$PG" 2>/dev/null || break
	sleep 0.1
done
if kill -0 -- -"$PG" 2>/dev/null; then
	echo "FAIL the tutorial's commands left processes running:"
	ps -o pid=,args= -g "$PG"
	exit 1
fi
missing=0
while IFS= read -r line; do
	[ -n "$line" ] || continue
	if ! grep -qxF -- "$line" "$TMPD/out"; then
		echo "FAIL the output lacks: $line"
		missing=1
	fi
done <"$TMPD/expected"
if [ $missing -ne 0 ]; then
	echo "--- output:"
	cat "$TMPD/out"
	exit 1
fi
echo "ok   docs/tutorial.md: $(grep -c . "$TMPD/steps.sh") lines of commands ran; the client printed what the tutorial shows"
