#!/usr/bin/env python3
"""quic_peer.py -- an independent RPC-over-QUIC peer (draft-cel-nfsv4-rpc-over-quicv1),
written from the draft's text on Python's aioquic (a generic QUIC stack; nothing of
remotecall's). tests/runtime/test_quic_interop.c runs it against remotecall.

  quic_peer.py client HOST PORT CA CASE   one case against a quic:// server of RT_PROG
                                          (tests/runtime/rt_fixture.h); prints "ok ..." per
                                          check, exits 0 when all hold, else 1 with "FAIL why"
      calls       ALPN sunrpc; NULL; 8 calls pipelined on one stream; a reply on the stream
                  each call took; a record in three fragments fed in pieces; a 1 MiB ECHO on
                  one stream while NULLs run on another; a call with FIN gets its reply and a
                  FIN; then the client closes with RPC_NO_ERROR
      alpn        a client offering ALPN "h3" only is refused in the handshake
      bad-record  a fragment longer than the server takes: CONNECTION_CLOSE RPC_PROTOCOL_VIOLATION
      short       a message of 4 bytes (no XID and type): the same
      wrong-way   a reply on a stream the client created: dropped; the stream still serves
      streams     more streams than the server allows: closed with STREAM_LIMIT_ERROR
  quic_peer.py server CERT KEY            serve RT_PROG 1 (NULL 0, ECHO 1, ADD 2: the argument
                                          back, CALLBACK 9) on quic://127.0.0.1:0; prints
                                          "listening quic://127.0.0.1:PORT", then a line per
                                          event ("FAIL ..." when the client broke a rule)
      CALLBACK(n) first sends a call on the client's stream (the wrong way: the client must
      drop it), then calls CB_ADD1(n) (program 0x40000b01, version 1, procedure 1) on a stream
      the server creates (the back channel) and answers the CALLBACK with its result.

Everything is bounded: the client gives up after 30 s, the server exits after 120 s.
"""
import asyncio
import os
import signal
import struct
import sys

from aioquic.asyncio import QuicConnectionProtocol, connect, serve
from aioquic.quic import events
from aioquic.quic.configuration import QuicConfiguration

PROG, VERS = 0x20000099, 1
CB_PROG = 0x40000B01
RPC_NO_ERROR, RPC_PROTOCOL_VIOLATION = 0x0, 0x1
STREAM_LIMIT_ERROR = 0x4  # RFC 9000 transport error


def record(body, frags=1):
    """body as RFC 5531 record marking: frags fragments, the last one marked."""
    out, step, off = b"", max(1, (len(body) + frags - 1) // frags), 0
    while True:
        part = body[off:off + step]
        off += len(part)
        out += struct.pack(">I", (0x80000000 if off >= len(body) else 0) | len(part)) + part
        if off >= len(body):
            return out


def call(xid, proc, args=b"", prog=PROG):
    return struct.pack(">10I", xid, 0, 2, prog, VERS, proc, 0, 0, 0, 0) + args


def reply(xid, res=b""):
    return struct.pack(">6I", xid, 1, 0, 0, 0, 0) + res


def opaque(b):
    return struct.pack(">I", len(b)) + b + b"\0" * ((4 - len(b) % 4) % 4)


def parse_reply(m):
    """(xid, accept_stat, results) of an accepted reply, or None."""
    xid, mtype, stat = struct.unpack(">3I", m[:12])
    if mtype != 1 or stat != 0:
        return None
    vlen = struct.unpack(">I", m[16:20])[0]
    off = 20 + ((vlen + 3) & ~3)
    return xid, struct.unpack(">I", m[off:off + 4])[0], m[off + 4:]


def parse_call(m):
    """(xid, prog, vers, proc, args) of a call with AUTH_NONE/AUTH_SYS credentials."""
    xid, mtype, rpcvers, prog, vers, proc, cfl, clen = struct.unpack(">8I", m[:32])
    off = 32 + ((clen + 3) & ~3)
    vlen = struct.unpack(">I", m[off + 4:off + 8])[0]
    return xid, prog, vers, proc, m[off + 8 + ((vlen + 3) & ~3):]


class Rpc(QuicConnectionProtocol):
    """Whole RPC messages per stream, the connection's end, and a wake-up on each event."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.buf, self.cur, self.msgs, self.fin = {}, {}, {}, set()
        self.closed = None  # the ConnectionTerminated event
        self.changed = asyncio.Event()
        self.on_message = None  # server: called with (stream id, message)

    def quic_event_received(self, ev):
        if isinstance(ev, events.StreamDataReceived):
            b = self.buf.setdefault(ev.stream_id, bytearray()) + ev.data
            cur = self.cur.setdefault(ev.stream_id, bytearray())
            while len(b) >= 4:
                (mark,) = struct.unpack(">I", b[:4])
                n = mark & 0x7FFFFFFF
                if len(b) < 4 + n:
                    break
                cur += b[4:4 + n]
                b = b[4 + n:]
                if mark & 0x80000000:
                    m = bytes(cur)
                    cur.clear()
                    self.msgs.setdefault(ev.stream_id, []).append(m)
                    if self.on_message:
                        self.on_message(ev.stream_id, m)
            self.buf[ev.stream_id] = b
            if ev.end_stream:
                self.fin.add(ev.stream_id)
        elif isinstance(ev, events.ConnectionTerminated):
            self.closed = ev
        self.changed.set()

    async def until(self, pred, secs=10.0):
        """Wait until pred() holds (True) or secs pass (False)."""
        loop = asyncio.get_running_loop()
        end = loop.time() + secs
        while not pred():
            self.changed.clear()
            left = end - loop.time()
            if left <= 0:
                return False
            try:
                await asyncio.wait_for(self.changed.wait(), left)
            except asyncio.TimeoutError:
                return pred()
        return True

    def send(self, sid, data, end=False):
        self._quic.send_stream_data(sid, data, end_stream=end)
        self.transmit()

    def new_stream(self):
        return self._quic.get_next_available_stream_id()

    async def answer(self, sid, xid, secs=10.0):
        """The reply to xid that comes on stream sid: (accept_stat, results), or None."""
        def find():
            for m in self.msgs.get(sid, []):
                r = parse_reply(m)
                if r and r[0] == xid:
                    return r
            return None
        if not await self.until(lambda: find() is not None or self.closed is not None, secs):
            return None
        r = find()
        return r[1:] if r else None


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)
    print("ok   " + what, flush=True)


async def case_calls(p):
    check(p._quic.tls.alpn_negotiated == "sunrpc", "ALPN %s" % p._quic.tls.alpn_negotiated)
    a = p.new_stream()
    check(a % 4 == 0, "a client-created bidirectional stream (%d)" % a)
    p.send(a, record(call(1, 0)))
    check(await p.answer(a, 1) == (0, b""), "NULL answered on its stream")
    for i in range(8):  # pipelined on one stream, NULLs and ECHOs
        p.send(a, record(call(100 + i, i % 2, opaque(bytes([i]) * (i * 100)) if i % 2 else b"")))
    ok = 0
    for i in range(8):
        want = opaque(bytes([i]) * (i * 100)) if i % 2 else b""
        ok += await p.answer(a, 100 + i) == (0, want)
    check(ok == 8, "8 calls pipelined on one stream answered on it (%d right)" % ok)
    data = os.urandom(100000)
    rec = record(call(200, 1, opaque(data)), frags=3)
    for k in range(0, len(rec), 7001):  # in pieces that cut marks and headers
        p.send(a, rec[k:k + 7001])
    check(await p.answer(a, 200) == (0, opaque(data)), "ECHO in three fragments, fed in pieces")
    big = p.new_stream()
    blob = os.urandom(1 << 20)
    p.send(big, record(call(300, 1, opaque(blob))))
    small = p.new_stream()  # (the next ID once big has data)
    check(small != big, "streams %d and %d" % (big, small))
    for i in range(5):
        p.send(small, record(call(400 + i, 0)))
    nulls = [await p.answer(small, 400 + i) for i in range(5)]
    check(nulls == [(0, b"")] * 5, "5 NULLs on a second stream during a 1 MiB ECHO")
    check(await p.answer(big, 300, 20) == (0, opaque(blob)), "the 1 MiB ECHO on its stream")
    check(all(parse_reply(m)[0] == 300 for m in p.msgs[big]), "no reply strayed onto its stream")
    d = p.new_stream()
    p.send(d, record(call(500, 0)), end=True)
    check(await p.answer(d, 500) == (0, b""), "a call sent with FIN answered")
    check(await p.until(lambda: d in p.fin), "the server ended that stream after its reply")
    check(p.closed is None, "the connection is still up")
    p._quic.close(error_code=RPC_NO_ERROR)
    p.transmit()


async def case_error(p, what, data, code, app):
    s = p.new_stream()
    p.send(s, record(call(1, 0)))
    check(await p.answer(s, 1) == (0, b""), "NULL first")
    if what == "streams":
        p._quic._remote_max_streams_bidi = 1000  # pretend the server allowed more
        for i in range(40):
            p.send(p.new_stream(), record(call(10 + i, 0)))
    else:
        p.send(s, data)
    check(await p.until(lambda: p.closed is not None), "%s: the server closed" % what)
    c = p.closed
    check(c.error_code == code and (c.frame_type is None) == app,
          "%s: with %s 0x%x (got %s 0x%x, %r)" %
          (what, "application" if app else "transport", code,
           "application" if c.frame_type is None else "transport", c.error_code, c.reason_phrase))


async def case_wrong_way(p):
    s = p.new_stream()
    p.send(s, record(reply(77)))  # a reply on a stream the client created: the wrong way
    p.send(s, record(call(78, 0)))
    check(await p.answer(s, 78) == (0, b""), "after a reply the wrong way, the stream serves")
    check(not any(parse_reply(m) and parse_reply(m)[0] == 77 for m in p.msgs[s]),
          "the stray reply came to nothing")
    check(p.closed is None, "the connection is still up")
    p._quic.close(error_code=RPC_NO_ERROR)
    p.transmit()


async def client(host, port, ca, case):
    cfg = QuicConfiguration(is_client=True, alpn_protocols=["h3" if case == "alpn" else "sunrpc"])
    cfg.load_verify_locations(ca)
    cfg.server_name = "localhost"
    if case == "alpn":
        made = []
        try:
            async with connect(host, port, configuration=cfg, wait_connected=True,
                               create_protocol=lambda *a, **k: made.append(Rpc(*a, **k)) or made[-1]):
                check(False, "a client without ALPN sunrpc was served")
        except ConnectionError:
            c = made[0].closed
            check(c is not None and c.error_code == 0x100 + 120,  # TLS no_application_protocol
                  "ALPN h3 refused: %s" % (c and "0x%x %s" % (c.error_code, c.reason_phrase)))
        return 0
    async with connect(host, port, configuration=cfg, create_protocol=Rpc) as p:
        if case == "calls":
            await case_calls(p)
        elif case == "bad-record":
            await case_error(p, case, struct.pack(">I", 0x80000000 | 0x7FFFFFF0) + b"x" * 64,
                             RPC_PROTOCOL_VIOLATION, True)
        elif case == "short":
            await case_error(p, case, record(b"abcd"), RPC_PROTOCOL_VIOLATION, True)
        elif case == "streams":
            await case_error(p, case, b"", STREAM_LIMIT_ERROR, False)
        elif case == "wrong-way":
            await case_wrong_way(p)
        else:
            print("unknown case " + case)
            return 2
    return 0


class Server(Rpc):
    """One connection of the server mode: answers calls on the client's streams."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.on_message = self.got

    def say(self, line):
        print(line, flush=True)

    def got(self, sid, m):
        mtype = struct.unpack(">I", m[4:8])[0]
        if sid % 4 == 1:  # the server's own streams: replies to its calls back only
            if mtype != 1:
                self.say("FAIL a call on a stream the server created (%d)" % sid)
            return
        if sid % 4 != 0:
            self.say("FAIL a message on stream %d (not client bidirectional)" % sid)
            return
        if mtype != 0:
            self.say("FAIL a reply on the client's stream %d" % sid)
            return
        xid, prog, vers, proc, args = parse_call(m)
        if prog != PROG or vers != VERS:
            self.send(sid, record(struct.pack(">6I", xid, 1, 0, 0, 0, 1)))  # PROG_UNAVAIL
        elif proc == 0:
            self.send(sid, record(reply(xid)))
        elif proc in (1, 2):
            self.send(sid, record(reply(xid, args)))
        elif proc == 9:
            asyncio.ensure_future(self.callback(sid, xid, args))
        else:
            self.send(sid, record(struct.pack(">6I", xid, 1, 0, 0, 0, 3)))  # PROC_UNAVAIL

    async def callback(self, sid, xid, args):
        n = struct.unpack(">I", args[:4])[0]
        self.send(sid, record(call(0xBAD0000 | n, 1, args, prog=CB_PROG)))  # the wrong way
        t = self.new_stream()
        self.send(t, record(call(0x7000 + n, 1, args, prog=CB_PROG)))
        r = await self.answer(t, 0x7000 + n)
        if r is None or r[0] != 0:
            self.say("FAIL no answer to the call back on stream %d: %r" % (t, r))
            self.send(sid, record(struct.pack(">6I", xid, 1, 0, 0, 0, 5)))  # SYSTEM_ERR
            return
        self.say("called back on stream %d" % t)
        self.send(sid, record(reply(xid, r[1])))

    def quic_event_received(self, ev):
        super().quic_event_received(ev)
        if isinstance(ev, events.ConnectionTerminated):
            self.say("closed by the client: %s 0x%x" %
                     ("application" if ev.frame_type is None else "transport", ev.error_code))


async def server(cert, key):
    cfg = QuicConfiguration(is_client=False, alpn_protocols=["sunrpc"])
    cfg.load_cert_chain(cert, key)
    srv = await serve("127.0.0.1", 0, configuration=cfg, create_protocol=Server)
    port = srv._transport.get_extra_info("sockname")[1]
    print("listening quic://127.0.0.1:%d" % port, flush=True)
    await asyncio.sleep(120)
    srv.close()


def main():
    a = sys.argv[1:]
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    if len(a) == 5 and a[0] == "client":
        try:
            return asyncio.run(asyncio.wait_for(client(a[1], int(a[2]), a[3], a[4]), 30))
        except asyncio.TimeoutError:
            print("FAIL timed out", flush=True)
        except Fail as e:
            print("FAIL %s" % e, flush=True)
        return 1
    if len(a) == 3 and a[0] == "server":
        asyncio.run(server(a[1], a[2]))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
