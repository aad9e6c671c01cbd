#!/usr/bin/env bash
# examples/printers/run.sh [BIN] -- three printers: laser is busy, inkjet idle but slower to
# answer, plotter busy and slowest. The client stops at inkjet and prints there; plotter is
# never waited for.
. "$(dirname "$0")/../lib.sh" "$@"
serve laser "$BIN/printer-server" --listen udp://127.0.0.1:0 --name laser --queue 3
serve inkjet "$BIN/printer-server" --listen tcp://127.0.0.1:0 --name inkjet --queue 0 --delay 100
serve plotter "$BIN/printer-server" --listen udp://127.0.0.1:0 --name plotter --queue 1 --delay 1000
run "$BIN/printers" --title report.pdf "$laser" "$inkjet" "$plotter"
finish laser inkjet plotter
