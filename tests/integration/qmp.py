"""A QMP client for the tests and benchmarks that talk to QEMU.

As a program: qmp.py SOCKET COMMAND [ARGUMENTS_JSON] prints the command's
return as JSON (an error exits 1 with QEMU's message)."""
import json
import socket
import sys


class QMP:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(10)
        self.sock.connect(path)
        self.buf = b""
        self.read()  # greeting
        self.call("qmp_capabilities")

    def read(self):
        while b"\n" not in self.buf:
            self.buf += self.sock.recv(65536)
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def call(self, cmd, **args):
        self.sock.sendall(json.dumps({"execute": cmd, "arguments": args}).encode() + b"\n")
        while True:
            msg = self.read()
            if "return" in msg:
                return msg["return"]
            if "error" in msg:
                raise RuntimeError(f"{cmd}: {msg['error']}")


if __name__ == "__main__":
    args = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    try:
        print(json.dumps(QMP(sys.argv[1]).call(sys.argv[2], **args)))
    except RuntimeError as e:
        sys.exit(str(e))
