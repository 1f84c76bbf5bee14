"""A scrape that stalls half-way: reads the first FIRST bytes through a
small receive window, writes STARTED and stops reading (the exporter's send
then blocks on full socket buffers) until the file GO exists, then reads
the rest; prints the status code and writes the body to OUT.
  slow_scrape.py HOST PORT FIRST STARTED GO OUT (run in the exporter's
network namespace)"""
import os
import socket
import sys
import time

host, port, first, started, go, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), *sys.argv[4:]
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: the window stays small
s.settimeout(30)
s.connect((host, port))
s.sendall(b"GET /metrics HTTP/1.0\r\nHost: exporter\r\n"
          b"Accept: application/openmetrics-text;version=1.0.0\r\n\r\n")
data = b""
while len(data) < first:
    chunk = s.recv(4096)
    if not chunk:
        break
    data += chunk
open(started, "w").close()
deadline = time.monotonic() + 60
while not os.path.exists(go) and time.monotonic() < deadline:
    time.sleep(0.05)
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
head, _, body = data.partition(b"\r\n\r\n")
with open(out, "wb") as f:
    f.write(body)
print(head.split(b" ")[1].decode() if head.startswith(b"HTTP/") else "none")
