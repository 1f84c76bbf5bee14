#!/usr/bin/env python3
"""A DCI4 supplier written from docs/dci4-transport.md alone, that can
misbehave on purpose: the hostile suppliers of the collector's tests.

  fake_supplier.py DIR NAME MODE [LOGFILE]

MODE: normal, silent (never answers), slow (each reply after 3 s), badsize
(a size that is not a multiple of 4), billion (claims 10^9 statistics),
nonul (a name without its NUL), changing (stat 0 grows from 4 to 8 bytes
after the first describe; reset unchanged), vanish (dies in the middle of a
read reply, its socket removed), hijack (claims module dci4-netdev and
serves a string named rx_bytes, to take over dci4-netdev's counter family),
netdevlike (module dci4-netdev, its "bytes" named rx_bytes: a genuine one),
big (170 strings of 4 KiB: 0.7 MB of values), reset (at its third SP_INFO
its statistics change, "renamed" and "added" of values 500 and 501, with a
new reset value), partial (300 integers of 4 and 8 bytes, stat i = 7 * i + 1,
and never more than one record in a reply, however large the buffer), drip
(every reply sent a byte at a time, one each 100 ms: an SP_INFO takes 9 s),
features (a features word of 5, where DCI4 defines none), v100 (interface
1.00, yet an address and a time statistic besides its integers), longnames
(a 100-character title, a 200-character description, statistics named with
60 and 250 characters).
LOGFILE gets one line per request:
"op first last bufsize".
"""
import os
import socket
import struct
import sys
import threading
import time

DIR, NAME, MODE = sys.argv[1], sys.argv[2], sys.argv[3]
LOG = open(sys.argv[4], "a", buffering=1) if len(sys.argv) > 4 else None
SA_DESCRIBE, SA_READ, SP_INFO = 0, 1, 2
ST_STRING, ST_INTEGER32, ST_INTEGER64, ST_ADDRESS, ST_TIME = 2, 5, 6, 7, 8
SAF_IP, STF_CTIME = 1, 1
SIF_UNSIGNED = 1
SV_STATIC, SV_VOLATILE = 0, 2

# (type, format, presentation, size, volatility, name)
stats = [
    [ST_INTEGER32, SIF_UNSIGNED, 1, 4, SV_VOLATILE, b"requests"],
    [ST_INTEGER64, SIF_UNSIGNED, 1, 8, SV_STATIC, b"capacity"],
    [ST_STRING, 0, 0, 512, SV_STATIC, b"label"],
    [ST_INTEGER64, SIF_UNSIGNED, 1, 8, SV_VOLATILE, b"bytes"],
]
if MODE == "hijack":
    stats[2][5] = b"rx_bytes"
if MODE == "netdevlike":
    stats[3][5] = b"rx_bytes"
if MODE == "v100":
    stats += [[ST_ADDRESS, SAF_IP, 0, 4, SV_STATIC, b"ipv4"],
              [ST_TIME, STF_CTIME, 0, 8, SV_STATIC, b"changed"]]
LONG_STAT = b"stat_" + b"abcdefghij" * 5 + b"_tail"  # 60 characters
LONGER_STAT = b"long_" + b"0123456789" * 24 + b"_end_"  # 250 characters
if MODE == "longnames":
    stats[0][5] = LONG_STAT
    stats[3][5] = LONGER_STAT
if MODE == "partial":
    stats = [[ST_INTEGER32 if i % 2 else ST_INTEGER64, SIF_UNSIGNED, 1, 4 if i % 2 else 8,
              SV_VOLATILE, b"p%03d" % i] for i in range(300)]
reset_value = b"RESET\0\0\0"
infos = 0
if MODE == "big":
    stats = [[ST_STRING, 0, 0, 4096, SV_VOLATILE, b"s%d" % i] for i in range(170)]
described = 0
reads = 0
lock = threading.Lock()


def header(op, length):
    return b"DCI4" + struct.pack("<HHI", 1, op | 0x8000, length)


def info():
    global stats, reset_value, infos
    infos += 1
    if MODE == "reset" and infos == 3:
        with lock:
            stats = [[ST_INTEGER64, SIF_UNSIGNED, 1, 8, SV_VOLATILE, b"renamed"],
                     [ST_INTEGER32, SIF_UNSIGNED, 1, 4, SV_VOLATILE, b"added"]]
            reset_value = b"RESET2\0\0"
    max_stat = 10**9 if MODE == "billion" else len(stats) - 1
    module = b"dci4-netdev\0" if MODE in ("hijack", "netdevlike") else b"fake\0"
    title = (NAME + "\0").encode()
    description = b"A hostile supplier\0"
    if MODE == "longnames":
        title = b"Title-" + b"T" * 94 + b"\0"
        description = b"Description-" + b"d" * 188 + b"\0"
    strings = [module, title, description]
    version = 100 if MODE == "v100" else 101
    features = 5 if MODE == "features" else 0
    body = struct.pack("<IIIIII", 0, version, features, max_stat, 0, 100) + reset_value
    body += struct.pack("<III", *(len(s) for s in strings)) + b"".join(strings)
    return header(SP_INFO, len(body)) + body


def desc_record(s):
    t, f, p, size, vol, name = s
    name = name + (b"" if MODE == "nonul" else b"\0")
    padded = name + b"\0" * (-len(name) % 4)
    if MODE == "badsize":
        size = 6
    return struct.pack("<IIIIIIII", t, f, p, size, vol, 0, 0, len(name)) + padded


def value(i, s):
    if s[0] == ST_STRING:
        return b"static text".ljust(s[3], b"\0")
    if s[0] == ST_ADDRESS:
        return bytes([192, 0, 2, 1])
    if s[0] == ST_TIME:
        return (1700000000).to_bytes(8, "little")
    if MODE == "partial":
        v = 7 * i + 1
    elif MODE == "reset" and reset_value != b"RESET\0\0\0":
        v = 500 + i
    else:
        v = {0: reads, 1: 1 << 40, 3: 1000 * reads}[i]
    return v.to_bytes(s[3], "little")


def answer_range(op, first, last, bufsize):
    global described, reads
    recs = []
    used = 0
    if first > last or last >= len(stats):  # R1/R2 outside 0..max_stat: bad request
        return header(op, 4) + struct.pack("<I", 1)
    with lock:
        if op == SA_READ:
            reads += 1
        for i in range(first, last + 1):
            r = desc_record(stats[i]) if op == SA_DESCRIBE else value(i, stats[i])
            if used + len(r) > bufsize:
                break
            recs.append(r)
            used += len(r)
            if MODE == "partial":
                break  # one record a reply: the gatherer asks again from first + 1
        if op == SA_DESCRIBE and first + len(recs) > last:
            described += 1
            if MODE == "changing" and described == 1:
                stats[0][1], stats[0][3], stats[0][0] = SIF_UNSIGNED, 8, ST_INTEGER64
    body = struct.pack("<III", 0, len(recs), used) + b"".join(recs)
    return header(op, len(body)) + body


def recv_all(c, n):
    b = b""
    while len(b) < n:
        got = c.recv(n - len(b))
        if not got:
            raise EOFError
        b += got
    return b


def serve(c):
    try:
        while True:
            h = recv_all(c, 12)
            op, length = struct.unpack("<HI", h[6:12])
            args = struct.unpack("<III", recv_all(c, length)) if length == 12 else (0, 0, 0)
            if LOG:
                LOG.write("%d %d %d %d\n" % ((op,) + args))
            if MODE == "silent":
                continue
            if MODE == "slow":
                time.sleep(3)
            reply = info() if op == SP_INFO else answer_range(op, *args)
            if MODE == "vanish" and op == SA_READ:
                c.sendall(reply[: len(reply) // 2])
                os.unlink(path)
                os._exit(0)
            if MODE == "drip":
                for i in range(len(reply)):
                    c.sendall(reply[i : i + 1])
                    time.sleep(0.1)
                continue
            c.sendall(reply)
    except (EOFError, OSError):
        pass
    c.close()


path = os.path.join(DIR, NAME + ".sock")
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(16)
print("ready", flush=True)
while True:
    conn, _ = srv.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
