#!/usr/bin/env python3
"""Hostile open records against a server's inbound budget (issue 39, max_inbound_bytes).

  scripts/inbound-flood.py BUILD/bench/rc-bench-server NCONN MIB [server args...]

Starts the server on a free loopback TCP port, opens NCONN connections, and on each sends the
header of a MIB MiB record fragment, then its bytes 1 MiB at a time, round robin, without ever
finishing it -- for up to 20 s, or until the server has taken nothing for a second. Meanwhile
it samples the server's resident memory (VmRSS) and at the end runs 10 null calls from a fresh
client (rc-bench-client beside the server). Prints one line: the bytes sent, the server's RSS
before and at its peak, and whether the fresh client was served. Stops everything it starts.
"""
import os
import re
import socket
import struct
import subprocess
import sys
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1])
    return 0


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    server, n, mib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    srv = subprocess.Popen([server, "--listen", "tcp://127.0.0.1:0"] + sys.argv[4:],
                           stdout=subprocess.PIPE, text=True)
    socks = []
    try:
        port = int(re.search(r":(\d+)", srv.stdout.readline()).group(1))
        rss0 = peak = rss_kib(srv.pid)
        for _ in range(n):
            s = socket.create_connection(("127.0.0.1", port))
            s.setblocking(False)
            s.send(struct.pack(">I", (mib << 20) & 0x7FFFFFFF))  # a first fragment, not last
            socks.append(s)
        chunk = b"\x5a" * (1 << 20)
        sent = [0] * n
        t0, stuck = time.time(), 0
        while time.time() - t0 < 20 and stuck <= 20:
            moved = 0
            for i, s in enumerate(socks):
                if sent[i] >= (mib - 1) << 20:
                    continue  # the last MiB never goes: the record stays open
                try:
                    k = s.send(chunk)
                    sent[i] += k
                    moved += k
                except BlockingIOError:
                    pass
                except OSError:
                    sent[i] = mib << 20  # closed by the server
            peak = max(peak, rss_kib(srv.pid))
            stuck = stuck + 1 if moved == 0 else 0
            if moved == 0:
                time.sleep(0.05)
        t1 = time.time()
        client = os.path.join(os.path.dirname(server), "rc-bench-client")
        r = subprocess.run([client, "--uri", f"tcp://127.0.0.1:{port}", "--proc", "null",
                            "--calls", "10", "--warmup", "0", "--timeout", "5000"],
                           capture_output=True, text=True, timeout=30)
        peak = max(peak, rss_kib(srv.pid))
        fresh = "ok" if r.returncode == 0 else "FAILED: " + r.stderr.strip()[:200]
        print(f"{n} connections x {mib} MiB open record: {sum(sent) >> 20} MiB sent; server RSS "
              f"{rss0 >> 10} -> peak {peak >> 10} MiB; fresh client's 10 null calls: {fresh} "
              f"({(time.time() - t1) * 1000:.0f} ms)")
    finally:
        for s in socks:
            s.close()
        srv.terminate()
        srv.wait()


if __name__ == "__main__":
    main()
