#!/usr/bin/python3
"""Hostile HTTP clients for the load and attack tests.

  hostile_client.py PORT MODE ADDR N SECS

N connections to 127.0.0.1:PORT from ADDR, held SECS seconds. MODE: idle
(connect and send nothing), slowloris (a request head byte a second on
each), noread (ask for /metrics with a 4 KiB receive buffer and never read),
tlshold (the first bytes of a TLS ClientHello, and no more), pipeline (300
GET /metrics at once, read at 1,000 bytes a second), slowread (one GET
/metrics read at 300 bytes a second, above the exporter's minimum rate), body (a POST to
/statistics/ promising 60,000 bytes and sending a byte a second), keepalive
(one GET /-/healthy read whole, then idle as a kept-alive scraper between
scrapes). A MODE ending
in "+" connects again whenever the exporter closes one, as a determined
attacker would. ADDR may be a range, "127.0.1.1x64": N connections from
each of 64 addresses counting up from 127.0.1.1.
"""
import ipaddress
import resource
import select
import socket
import sys
import time

port, mode, addr, n, secs = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
again = mode.endswith("+")
mode = mode.rstrip("+")
first, _, count = addr.partition("x")
addrs = [str(ipaddress.ip_address(first) + i) for i in range(int(count or 1))]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
HELLO = bytes.fromhex("16030100c8010000c40303") + b"\x00" * 16  # a record of 200 promised, 27 sent


def connect(a):
    s = socket.socket()
    if mode in ("noread", "pipeline", "slowread"):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.bind((a, 0))
    try:
        s.connect(("127.0.0.1", port))
        if mode == "noread":
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        elif mode == "tlshold":
            s.sendall(HELLO)
        elif mode in ("pipeline", "slowread"):
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * (300 if mode == "pipeline" else 1))
            s.setblocking(False)
        elif mode == "body":
            s.sendall(b"POST /statistics/x HTTP/1.1\r\nHost: x\r\nContent-Length: 60000\r\n\r\n")
        elif mode == "keepalive":
            s.sendall(b"GET /-/healthy HTTP/1.1\r\nHost: x\r\n\r\n")
            s.settimeout(5)
            got = b""
            while b"Healthy" not in got:
                b = s.recv(4096)
                if not b:
                    raise OSError("closed")
                got += b
    except OSError:
        s.close()
        return None
    return s


conns = {}
for a in addrs:
    for _ in range(n):
        s = connect(a)
        if s:
            conns[s] = a
print("connected", len(conns), flush=True)
end = time.time() + secs
last_byte = 0.0
reconnects = 0
while time.time() < end:
    if mode in ("slowloris", "body", "pipeline", "slowread") and time.time() - last_byte >= 1:
        last_byte = time.time()
        for s in list(conns):
            try:
                if mode in ("pipeline", "slowread"):  # 1,000 or 300 bytes a second, or closed
                    if not s.recv(1000 if mode == "pipeline" else 300, socket.MSG_DONTWAIT):
                        raise ConnectionError
                else:
                    s.send(b"G" if mode == "slowloris" else b"x")
            except BlockingIOError:
                pass
            except OSError:
                if again:
                    a = conns.pop(s)
                    s.close()
                    t = connect(a)
                    reconnects += 1
                    if t:
                        conns[t] = a
    if not again or mode in ("pipeline", "slowread"):  # these reconnect above
        time.sleep(0.05 if again else 0.2)
        continue
    poller = select.poll()  # not select(): over a thousand sockets
    byfd = {s.fileno(): s for s in conns}
    for fd in byfd:
        poller.register(fd, select.POLLIN)
    for fd, _ in poller.poll(200):
        s = byfd[fd]
        try:
            closed = mode == "noread" or not s.recv(4096)
        except OSError:
            closed = True
        if closed and mode != "noread":
            a = conns.pop(s)
            s.close()
            t = connect(a)
            reconnects += 1
            if t:
                conns[t] = a
print("reconnects", reconnects, flush=True)
