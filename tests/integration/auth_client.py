#!/usr/bin/python3
"""Clients that load the exporter's basic auth and rate limit.

  auth_client.py wrongpw PORT ADDR N SECS USER
      N keep-alive connections from each address of ADDR ("127.0.2.1x20":
      20 addresses counting up), each asking for /metrics with USER and a
      wrong password again as soon as it has its answer, connecting again
      when closed, for SECS seconds or until SIGTERM.
  auth_client.py anon PORT ADDR RATE SECS [USER]
      Requests from ADDR at RATE a second, without credentials, or with
      USER and a wrong password.

Prints the answers' status codes counted, as "code:count ...".
"""
import base64
import collections
import ipaddress
import resource
import selectors
import signal
import socket
import sys
import time

mode, port = sys.argv[1], int(sys.argv[2])
counts = collections.Counter()
stop = False


def on_term(signum, frame):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)


def addresses(spec):
    first, _, count = spec.partition("x")
    return [str(ipaddress.ip_address(first) + i) for i in range(int(count or 1))]


def request(user):
    head = "GET /metrics HTTP/1.1\r\nHost: x\r\n"
    if user is not None:
        token = base64.b64encode(f"{user}:wrong-password".encode()).decode()
        head += f"Authorization: Basic {token}\r\n"
    return (head + "\r\n").encode()


def status_of(buf):
    """(status, bytes of the whole answer) once a whole answer is in buf."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return None
    head = buf[:end].decode("latin-1").split("\r\n")
    length = 0
    for line in head[1:]:
        k, _, v = line.partition(":")
        if k.strip().lower() == "content-length":
            length = int(v.strip())
    if len(buf) < end + 4 + length:
        return None
    return int(head[0].split()[1]), end + 4 + length


def wrongpw(spec, n, secs, user):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    sel = selectors.DefaultSelector()
    req = request(user)

    def connect(a):
        s = socket.socket()
        s.setblocking(False)
        s.bind((a, 0))
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        sel.register(s, selectors.EVENT_WRITE, [a, b"", False])

    for a in addresses(spec):
        for _ in range(n):
            connect(a)
    end = time.monotonic() + secs
    while time.monotonic() < end and not stop:
        for key, ev in sel.select(0.2):
            s, st = key.fileobj, key.data
            try:
                if ev & selectors.EVENT_WRITE:
                    s.send(req)
                    sel.modify(s, selectors.EVENT_READ, [st[0], b"", True])
                    continue
                data = s.recv(65536)
            except OSError:
                data = b""
            if not data:
                sel.unregister(s)
                s.close()
                counts["closed"] += 1
                connect(st[0])
                continue
            st[1] += data
            got = status_of(st[1])
            if got:
                counts[got[0]] += 1
                sel.modify(s, selectors.EVENT_WRITE, [st[0], b"", False])
    for key in list(sel.get_map().values()):
        key.fileobj.close()


def anon(addr, rate, secs, user):
    end = time.monotonic() + secs
    t = time.monotonic()
    while t < end and not stop:
        try:
            with socket.create_connection(("127.0.0.1", port), source_address=(addr, 0)) as s:
                s.settimeout(5)
                s.sendall(request(user))
                buf = b""
                while not status_of(buf):
                    data = s.recv(65536)
                    if not data:
                        break
                    buf += data
                got = status_of(buf)
                counts[got[0] if got else "closed"] += 1
        except OSError:
            counts["error"] += 1
        t += 1.0 / rate
        time.sleep(max(0.0, t - time.monotonic()))


if mode == "wrongpw":
    wrongpw(sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), sys.argv[6])
else:
    anon(sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), sys.argv[6] if len(sys.argv) > 6 else None)
print(" ".join(f"{k}:{v}" for k, v in sorted(counts.items(), key=str)))
