#!/usr/bin/python3
"""Hostile peers of the KVM hand-over socket, one attack per command.

  hostile_peer.py kmsg SOCK            /dev/kmsg as a VM's stats fd (its read blocks)
  hostile_peer.py memfd SOCK N         N sparse 1 GiB memfds holding a stats-like header
  hostile_peer.py zerolen SOCK N       N zero-length messages, each carrying an fd
  hostile_peer.py forge SOCK PID UID   its own vCPU's stats fd, as UID, naming VMM PID
  hostile_peer.py own SOCK UID [GIDS]  its own VM's stats fd, as UID with supplementary
                                       groups GIDS (a,b,...); stays until killed
  hostile_peer.py hog SOCK N UID SECS  N idle connections as UID, held SECS seconds
  hostile_peer.py mismatch SOCK        a VM's stats fd that claims to be vCPU 0
  hostile_peer.py starved SOCK N GO    connects, says "connected", and once the file
                                       GO exists sends N messages with an fd each
  hostile_peer.py senders SOCK N UID GIDS SECS
                                       N processes of UID (groups GIDS), one after
                                       another, each connecting and handing over its
                                       own VM's stats fd (a sender that keeps its
                                       connection); says "held", holds SECS seconds

Run as root: it makes its VMs on /dev/kvm first, then drops to UID, as a
local user with access to /dev/kvm (the kvm group) would be.
"""
import fcntl
import os
import signal
import socket
import struct
import sys
import time

KVM_CREATE_VM = 0xAE01
KVM_CREATE_VCPU = 0xAE41
KVM_GET_STATS_FD = 0xAECE
MAGIC = b"BINSTAT-KVM 1\n"


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    return s


def send(s, text, fd):
    try:
        socket.send_fds(s, [text], [fd])
        return True
    except OSError as e:  # refused by the exporter: what some attacks expect
        print("send:", e, file=sys.stderr)
        return False


def make_vm():
    kvm = os.open("/dev/kvm", os.O_RDWR)
    vm = fcntl.ioctl(kvm, KVM_CREATE_VM, 0)
    vcpu = fcntl.ioctl(vm, KVM_CREATE_VCPU, 0)
    return kvm, vm, vcpu


def drop_to(uid, groups=""):
    uid = int(uid)
    if uid != os.getuid():
        os.setgroups([int(g) for g in groups.split(",") if g])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)


def main(argv):
    cmd, path = argv[1], argv[2]
    if cmd == "kmsg":
        fd = os.open("/dev/kmsg", os.O_RDONLY)
        send(connect(path), MAGIC + b"name=kmsg\n", fd)
    elif cmd == "memfd":
        s = connect(path)
        for i in range(int(argv[3])):
            fd = os.memfd_create("fake-stats")
            os.ftruncate(fd, 1 << 30)  # costs its sender nothing
            # flags name_size num_desc id_offset desc_offset data_offset
            os.pwrite(fd, struct.pack("<6I", 0, 48, 1000, 24, 72, 1 << 20), 0)
            os.pwrite(fd, b"kvm-1/vcpu-0\0", 24)
            send(s, MAGIC + b"vcpu=0\n", fd)
            os.close(fd)
    elif cmd == "zerolen":
        s = connect(path)
        null = os.open("/dev/null", os.O_RDONLY)
        for _ in range(int(argv[3])):
            if not send(s, b"", null):
                s = connect(path)
    elif cmd == "forge":
        _, vm, vcpu = make_vm()
        stats = fcntl.ioctl(vcpu, KVM_GET_STATS_FD, 0)
        drop_to(argv[4])
        ok = send(connect(path), MAGIC + b"pid=%d\nvcpu=0\n" % int(argv[3]), stats)
        time.sleep(0.5)
        print("sent" if ok else "refused")
    elif cmd == "own":
        _, vm, vcpu = make_vm()
        stats = fcntl.ioctl(vm, KVM_GET_STATS_FD, 0)
        drop_to(argv[3], argv[4] if len(argv) > 4 else "")
        send(connect(path), MAGIC + b"name=own-%s\n" % argv[3].encode(), stats)
        print("ready", flush=True)
        time.sleep(3600)
    elif cmd == "hog":
        drop_to(argv[4])
        held = []
        for _ in range(int(argv[3])):
            held.append(connect(path))
        print("holding", len(held), flush=True)
        time.sleep(float(argv[5]))
    elif cmd == "mismatch":
        _, vm, vcpu = make_vm()
        stats = fcntl.ioctl(vm, KVM_GET_STATS_FD, 0)
        send(connect(path), MAGIC + b"vcpu=0\n", stats)
    elif cmd == "starved":
        s = connect(path)
        print("connected", flush=True)
        for _ in range(3000):  # 30 s at most
            if os.path.exists(argv[4]):
                break
            time.sleep(0.01)
        null = os.open("/dev/null", os.O_RDONLY)
        sent = sum(send(s, MAGIC + b"name=starved\n", null) for _ in range(int(argv[3])))
        print("sent", sent, flush=True)
        time.sleep(30)
    elif cmd == "senders":
        senders(path, int(argv[3]), argv[4], argv[5], float(argv[6]))
    else:
        sys.exit("unknown command " + cmd)


def senders(path, n, uid, groups, secs):
    children = []

    def end(*_):  # the test's kill ends every sender with it
        for c in children:
            os.kill(c, signal.SIGKILL)
        sys.exit(0)

    signal.signal(signal.SIGTERM, end)
    for i in range(n):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            _, vm, _ = make_vm()
            stats = fcntl.ioctl(vm, KVM_GET_STATS_FD, 0)
            drop_to(uid, groups)
            s = connect(path)
            send(s, MAGIC + b"name=sender-%s-%d\n" % (uid.encode(), i), stats)
            os.write(w, b"x")
            time.sleep(secs)
            os._exit(0)
        os.close(w)
        os.read(r, 1)  # its message is sent: the next one connects after it
        os.close(r)
        children.append(pid)
    print("held", n, flush=True)
    for c in children:
        os.waitpid(c, 0)


if __name__ == "__main__":
    main(sys.argv)
