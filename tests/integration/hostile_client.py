#!/usr/bin/python3
"""Hostile HTTP clients for the load and attack tests.

  hostile_client.py PORT MODE ADDR N SECS

N connections to 127.0.0.1:PORT from ADDR, held SECS seconds. MODE: idle
(connect and send nothing), slowloris (a request head byte a second on
each), noread (ask for /metrics with a 4 KiB receive buffer and never read).
"""
import resource
import socket
import sys
import time

port, mode, addr, n, secs = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
conns = []
for _ in range(n):
    s = socket.socket()
    if mode == "noread":
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.bind((addr, 0))
    try:
        s.connect(("127.0.0.1", port))
    except OSError:
        s.close()
        continue
    if mode == "noread":
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    conns.append(s)
print("connected", len(conns), flush=True)
end = time.time() + secs
while time.time() < end:
    if mode == "slowloris":
        for s in conns:
            try:
                s.send(b"G")
            except OSError:
                pass
    time.sleep(1)
