#!/usr/bin/env python3
"""Write the seed corpora (tests/fuzz/corpus/TARGET/*): a few well-formed inputs per target.
Run from anywhere: python3 tests/fuzz/make_seeds.py. The files are committed; rerun after
changing this script."""
import os, struct, glob

here = os.path.dirname(os.path.abspath(__file__))
P = 0x2000A5EC


def w(target, name, data):
    d = os.path.join(here, 'corpus', target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), 'wb') as f:
        f.write(data)


def u32(*v):
    return b''.join(struct.pack('>I', x & 0xffffffff) for x in v)


def opaque(b):
    return u32(len(b)) + b + b'\0' * ((4 - len(b) % 4) % 4)


def authsys(machine=b'host', uid=1000, gid=100, gids=(1, 2)):
    return u32(12345) + opaque(machine) + u32(uid, gid, len(gids)) + u32(*gids)


def call(xid, proc, args=b'', flavor=0, cred=b'', vers=2, prog=P, pvers=1):
    return u32(xid, 0, vers, prog, pvers, proc, flavor) + opaque(cred) + u32(0, 0) + args


# ---- fuzz_call: calls to the security program (tests/security/sec_prog.c)
w('fuzz_call', 'null', call(1, 0))
w('fuzz_call', 'str', call(2, 1, opaque(b'hello')))
w('fuzz_call', 'opq', call(3, 2, opaque(b'\x01\x02\x03')))
w('fuzz_call', 'arr', call(4, 3, u32(3, 1, 2, 3)))
w('fuzz_call', 'arrs', call(5, 4, u32(2) + opaque(b'ab') + u32(7) + opaque(b'') + u32(8)))
w('fuzz_call', 'list', call(6, 5, u32(1, 1, 0, 5, 6)))
w('fuzz_call', 'tree', call(7, 6, u32(2, 0, 1, 0, 2, 3)))
w('fuzz_call', 'union', call(8, 7, u32(1, 1, 1, 1, 0)))
w('fuzz_call', 'who_sys', call(9, 8, flavor=1, cred=authsys()))
w('fuzz_call', 'big', call(10, 12, u32(2, 1, 2)))
w('fuzz_call', 'echo', call(11, 13, opaque(b'ping')))
w('fuzz_call', 'rpcvers3', call(12, 0, vers=3))
w('fuzz_call', 'progunavail', call(13, 0, prog=1))
w('fuzz_call', 'versmismatch', call(14, 0, pvers=9))
w('fuzz_call', 'procunavail', call(15, 99))
w('fuzz_call', 'reply', u32(16, 1, 0, 0, 0, 0))

# ---- fuzz_authsys: credential bodies
w('fuzz_authsys', 'plain', authsys())
w('fuzz_authsys', 'nogids', authsys(gids=()))
w('fuzz_authsys', 'max', authsys(machine=b'm' * 255, gids=tuple(range(16))))
w('fuzz_authsys', 'empty_name', authsys(machine=b''))
w('fuzz_authsys', 'seventeen', authsys(gids=tuple(range(17))))


# ---- fuzz_reply: mode, result type, patch flag, reply
def reply(xid, body=b'', stat=0):
    return u32(xid, 1, 0, 0, 0, stat) + body


results = {0: opaque(b'abcd'), 1: opaque(b'str'), 2: u32(1, 0, 7), 3: u32(1, 0, 1, 2),
           4: u32(1, 1, 0), 5: u32(1) + opaque(b'k') + u32(3), 6: u32(42)}
for mode in range(3):
    for t, body in results.items():
        r = reply(0, body)
        if mode == 2:
            r = u32(0x80000000 | len(r)) + r
        w('fuzz_reply', 'm%d_t%d' % (mode, t), bytes([mode, t, 1]) + r)
    r = u32(0, 1, 1, 0, 2, 2)  # RPC_MISMATCH
    if mode == 2:
        r = u32(0x80000000 | len(r)) + r
    w('fuzz_reply', 'm%d_mismatch' % mode, bytes([mode, 0, 1]) + r)
w('fuzz_reply', 'm2_frag', bytes([2, 0, 0]) + u32(8) + u32(0, 1) + u32(0x80000000 | 24)
  + u32(0, 0, 0, 0) + opaque(b'abcd'))

# ---- fuzz_recreader: cap index, seed, stream
rec = lambda b, last=True: u32((0x80000000 if last else 0) | len(b)) + b
w('fuzz_recreader', 'two', bytes([7]) + u32(99) + rec(b'abcd') + rec(b'efghijkl'))
w('fuzz_recreader', 'frags', bytes([7]) + u32(3) + rec(b'ab', False) + rec(b'', False)
  + rec(b'cd') + rec(b''))
w('fuzz_recreader', 'cap', bytes([5]) + u32(1) + rec(b'x' * 64) + rec(b'y' * 65))

# ---- fuzz_quic_msg: cap index, seed, one stream's bytes (messages with marks; body >= 8)
w('fuzz_quic_msg', 'calls', bytes([6]) + u32(99) + rec(b'\0\0\0\1\0\0\0\0abcd') + rec(b'\0\0\0\2\0\0\0\1'))
w('fuzz_quic_msg', 'frags', bytes([6]) + u32(3) + rec(b'\0\0\0\1', False) + rec(b'', False)
  + rec(b'\0\0\0\0xyz'))
w('fuzz_quic_msg', 'short', bytes([6]) + u32(5) + rec(b'1234567'))
w('fuzz_quic_msg', 'cap', bytes([4]) + u32(1) + rec(b'x' * 64) + rec(b'y' * 65))
w('fuzz_recreader', 'huge', bytes([0]) + u32(1) + u32(0x7fffffff) + b'zz')

# ---- fuzz_xdr_sys: type index, value (zeros decode as an empty value of most types)
for i in range(0, 140, 7):
    w('fuzz_xdr_sys', 'z%03d' % i, bytes([0, i]) + b'\0' * 64)
w('fuzz_xdr_sys', 'str', bytes([0, 3]) + opaque(b'/export/home'))

# ---- fuzz_idlc: small interfaces (as cpp would print them)
w('fuzz_idlc', 'prog', b'''const MAX = 16;
typedef string name<MAX>;
enum color { RED = 1, GREEN = 2 };
struct node { name n; node *next; color c; };
union res switch (int status) { case 0: node *list; default: void; };
program P { version V { res LIST(name) = 1; void PING(void) = 2; } = 1; } = 0x20000001;
''')
w('fuzz_idlc', 'types', b'''%#include <stdio.h>
typedef opaque fh[32];
typedef int ints<>;
typedef hyper h;
typedef unsigned hyper uh;
typedef float f;
typedef double d;
typedef quadruple q;
typedef bool b;
struct s { int a[4]; unsigned int u; char *p; };
''')
w('fuzz_idlc', 'markers', b'''# 1 "fuzz.x"
# 1 "<built-in>"
# 1 "fuzz.x"
struct x { int y; };
# 5 "fuzz.x"
const Z = -(1 << 4) + 0x10 * 010;
''')
# ---- fuzz_gss: RPCSEC_GSS credential, INIT arguments and results, integrity / privacy bodies
w('fuzz_gss', 'cred_data', u32(1, 0, 7, 2) + opaque(bytes(range(16))))
w('fuzz_gss', 'cred_init', u32(1, 1, 0, 3) + opaque(b''))
w('fuzz_gss', 'init_arg', opaque(b'\x60\x82' + bytes(30)))
w('fuzz_gss', 'init_res', opaque(bytes(16)) + u32(0, 0, 128) + opaque(b'\x60\x81' + bytes(20)))
w('fuzz_gss', 'integ', opaque(u32(7) + b'args') + opaque(bytes(28)))
w('fuzz_gss', 'priv', opaque(bytes(61)))
for g in sorted(glob.glob(os.path.join(here, '..', 'idlc', 'golden', '*.x')))[:6]:
    data = open(g, 'rb').read()
    if len(data) < 4096 and b'#include' not in data:
        w('fuzz_idlc', 'golden_' + os.path.basename(g)[:-2], data)
