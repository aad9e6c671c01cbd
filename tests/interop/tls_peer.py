#!/usr/bin/env python3
"""tls_peer.py -- an independent RPC-over-TLS peer (RFC 9289) written from the RFC's text with
Python's standard ssl module, and a relay that checks what crosses the wire.

  tls_peer.py client HOST PORT CA [--udp-port P] [--cert FILE --key FILE]
                                                   probe, handshake, calls (bench.x), checks;
                                                   --cert/--key: the client certificate (mTLS);
                                                   prints "local port N" once connected
  tls_peer.py server CERT KEY                      serve bench.x NULL/ECHO/ADD under TLS
  tls_peer.py tap TARGET_PORT MODE                 relay 127.0.0.1:0 -> TARGET_PORT; prints
                                                   "listening tcp://127.0.0.1:PORT"; at each
                                                   connection's end checks MODE:
      tls      after the STARTTLS reply, both directions are TLS records only
      probe    the client sent exactly one RPC record, an AUTH_TLS probe
The client mode prints "ok ..." lines and exits 0 when every check holds, else 1 with the
reason. The server and tap run until killed; the tap prints "tap ok" / "tap FAIL ..." per
connection.
"""
import os
import signal
import socket
import ssl
import struct
import sys
import threading

PROG, VERS = 0x20524300, 1
AUTH_NONE, AUTH_SYS, AUTH_TLS = 0, 1, 7


def record(body):
    """One RPC record: a last-fragment record mark, then the message."""
    return struct.pack(">I", 0x80000000 | len(body)) + body


def call(xid, proc, flavor=AUTH_NONE, args=b""):
    """An RPC call of bench.x (RFC 5531): empty credential of `flavor`, AUTH_NONE verifier."""
    return struct.pack(">10I", xid, 0, 2, PROG, VERS, proc, flavor, 0, AUTH_NONE, 0) + args


def read_exact(s, n):
    b = b""
    while len(b) < n:
        chunk = s.recv(n - len(b))
        if not chunk:
            raise EOFError("peer closed after %d of %d bytes" % (len(b), n))
        b += chunk
    return b


def read_record(s):
    msg = b""
    while True:
        (mark,) = struct.unpack(">I", read_exact(s, 4))
        msg += read_exact(s, mark & 0x7FFFFFFF)
        if mark & 0x80000000:
            return msg


def parse_reply(m):
    """(xid, 'accepted', verifier flavor, verifier body, accept_stat, results) or
    (xid, 'denied', reject_stat, auth_stat)."""
    xid, mtype, stat = struct.unpack(">3I", m[:12])
    assert mtype == 1, "not a reply"
    if stat == 1:
        rs, detail = struct.unpack(">2I", m[12:20])
        return (xid, "denied", rs, detail)
    vfl, vlen = struct.unpack(">2I", m[12:20])
    pad = (vlen + 3) & ~3
    body = m[20:20 + vlen]
    (astat,) = struct.unpack(">I", m[20 + pad:24 + pad])
    return (xid, "accepted", vfl, body, astat, m[24 + pad:])


def opaque(b):
    return struct.pack(">I", len(b)) + b + b"\0" * ((4 - len(b) % 4) % 4)


def check(cond, what):
    if not cond:
        print("FAIL " + what)
        sys.exit(1)
    print("ok   " + what)


def client(host, port, ca, udp_port, cert=None, key=None):
    s = socket.create_connection((host, port), timeout=10)
    print("local port %d" % s.getsockname()[1], flush=True)
    s.sendall(record(call(0x1001, 0, AUTH_TLS)))
    r = parse_reply(read_record(s))
    check(r[:5] == (0x1001, "accepted", AUTH_NONE, b"STARTTLS", 0),
          "probe answered SUCCESS with verifier AUTH_NONE 'STARTTLS' (%r)" % (r,))
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.load_verify_locations(ca)
    ctx.set_alpn_protocols(["sunrpc"])
    if cert:
        ctx.load_cert_chain(cert, key)
    t = ctx.wrap_socket(s, server_hostname="localhost")
    check(t.version() == "TLSv1.3" and t.selected_alpn_protocol() == "sunrpc",
          "TLS 1.3 handshake, ALPN %s" % t.selected_alpn_protocol())
    check(t.cipher()[0] == "TLS_AES_128_GCM_SHA256",
          "the server's choice of cipher: %s" % t.cipher()[0])
    t.sendall(record(call(0x1002, 0)))
    r = parse_reply(read_record(t))
    check(r[:5] == (0x1002, "accepted", AUTH_NONE, b"", 0), "NULL under TLS")
    data = os.urandom(200000)
    t.sendall(record(call(0x1003, 4, AUTH_NONE, opaque(data))))
    r = parse_reply(read_record(t))
    check(r[4] == 0 and r[5] == opaque(data), "ECHO of 200000 bytes under TLS")
    t.sendall(record(call(0x1004, 0, AUTH_TLS)))
    r = parse_reply(read_record(t))
    check(r == (0x1004, "denied", 1, 1), "a second probe under TLS: AUTH_ERROR / AUTH_BADCRED")
    t.close()
    if udp_port:
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.settimeout(5)
        u.sendto(call(0x1005, 0, AUTH_TLS), (host, udp_port))
        r = parse_reply(u.recvfrom(65536)[0])
        check(r[:5] == (0x1005, "accepted", AUTH_NONE, b"", 0),
              "a probe over UDP: SUCCESS with an empty verifier")
    return 0


def serve_conn(conn, ctx):
    """RFC 9289 server side on one connection: the probe, STARTTLS, then bench.x calls."""
    try:
        m = read_record(conn)
        xid, mtype, rpcvers, prog, vers, proc, flavor = struct.unpack(">7I", m[:28])
        if mtype != 0 or flavor != AUTH_TLS or proc != 0:
            print("server: first call is not an AUTH_TLS probe", flush=True)
            return
        conn.sendall(record(struct.pack(">5I", xid, 1, 0, AUTH_NONE, 8) + b"STARTTLS" +
                            struct.pack(">I", 0)))
        t = ctx.wrap_socket(conn, server_side=True)
        while True:
            try:
                m = read_record(t)
            except (EOFError, ssl.SSLError, OSError):
                return
            xid, mtype, rpcvers, prog, vers, proc, cfl, clen = struct.unpack(">8I", m[:32])
            off = 32 + ((clen + 3) & ~3)
            vfl, vlen = struct.unpack(">2I", m[off:off + 8])
            args = m[off + 8 + ((vlen + 3) & ~3):]
            head = struct.pack(">6I", xid, 1, 0, AUTH_NONE, 0, 0)
            if proc == 0:
                res = b""
            elif proc == 4:
                res = args
            elif proc == 6:
                res = args
            else:
                head = struct.pack(">6I", xid, 1, 0, AUTH_NONE, 0, 3)  # PROC_UNAVAIL
                res = b""
            t.sendall(record(head + res))
    finally:
        conn.close()


def server(cert, key):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.load_cert_chain(cert, key)
    ctx.set_alpn_protocols(["sunrpc"])
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(16)
    print("listening tcp://127.0.0.1:%d" % ls.getsockname()[1], flush=True)
    while True:
        c, _ = ls.accept()
        threading.Thread(target=serve_conn, args=(c, ctx), daemon=True).start()


def rpc_records(b):
    """The RPC records at the front of b (complete ones), and the bytes they took."""
    out, off = [], 0
    while off + 4 <= len(b):
        (mark,) = struct.unpack(">I", b[off:off + 4])
        n = mark & 0x7FFFFFFF
        if off + 4 + n > len(b):
            break
        out.append(b[off + 4:off + 4 + n])
        off += 4 + n
    return out, off


def tls_records_only(b, what):
    """Whether b is a sequence of TLS records (content type 20..23, legacy version 3.x, length
    at most 2^14 + 256) and nothing else: no cleartext RPC record can hide in it."""
    off = 0
    while off < len(b):
        if off + 5 > len(b):
            return "%s: %d bytes after the last TLS record" % (what, len(b) - off)
        typ, major, n = b[off], b[off + 1], struct.unpack(">H", b[off + 3:off + 5])[0]
        if typ not in (20, 21, 22, 23) or major != 3 or n > 16384 + 256:
            return "%s: not a TLS record at byte %d (%r)" % (what, off, b[off:off + 12])
        off += 5 + n
    return None


def tap_check(mode, up, down):
    if mode == "probe":
        recs, used = rpc_records(up)
        if used != len(up) or len(recs) != 1:
            return "the client sent %d RPC records (%d of %d bytes)" % (len(recs), used, len(up))
        if struct.unpack(">I", recs[0][24:28])[0] != AUTH_TLS:
            return "the client's one record is not an AUTH_TLS probe"
        return None
    recs, used = rpc_records(up)
    if len(recs) < 1 or struct.unpack(">I", recs[0][24:28])[0] != AUTH_TLS:
        return "the client did not begin with a probe"
    drecs, dused = rpc_records(down)
    if len(drecs) < 1 or b"STARTTLS" not in drecs[0]:
        return "the server's first reply is not STARTTLS"
    up_after = up[4 + len(recs[0]):]
    down_after = down[4 + len(drecs[0]):]
    if not up_after or not down_after:
        return "no TLS after STARTTLS"
    return tls_records_only(up_after, "client to server") or \
        tls_records_only(down_after, "server to client")


def tap(target_port, mode):
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(16)
    print("listening tcp://127.0.0.1:%d" % ls.getsockname()[1], flush=True)

    def pump(a, b, buf):
        try:
            while True:
                d = a.recv(65536)
                if not d:
                    break
                buf.append(d)
                b.sendall(d)
        except OSError:
            pass
        try:
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def one(c):
        s = socket.create_connection(("127.0.0.1", target_port))
        up, down = [], []
        t1 = threading.Thread(target=pump, args=(c, s, up))
        t2 = threading.Thread(target=pump, args=(s, c, down))
        t1.start()
        t2.start()
        t1.join()
        t2.join()
        c.close()
        s.close()
        why = tap_check(mode, b"".join(up), b"".join(down))
        print("tap ok" if why is None else "tap FAIL " + why, flush=True)

    while True:
        c, _ = ls.accept()
        threading.Thread(target=one, args=(c,), daemon=True).start()


def main():
    a = sys.argv[1:]
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))  # stopped: a clean exit
    if a and a[-1] == "--listen":  # (lib.sh's start_server counts --listen to await the line)
        a = a[:-1]
    if len(a) >= 4 and len(a) % 2 == 0 and a[0] == "client":
        opt = dict(zip(a[4::2], a[5::2]))
        if set(opt) <= {"--udp-port", "--cert", "--key"} and ("--cert" in opt) == ("--key" in opt):
            return client(a[1], int(a[2]), a[3], int(opt.get("--udp-port", 0)),
                          opt.get("--cert"), opt.get("--key"))
    if len(a) == 3 and a[0] == "server":
        return server(a[1], a[2])
    if len(a) == 3 and a[0] == "tap":
        return tap(int(a[1]), a[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
