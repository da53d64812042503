"""zkrecipes' kazoo counterpart for interoperability tests and benchmarks.

Run with Debian's /usr/bin/python3 and python3-kazoo:
    peer.py <connect string> <session timeout ms>
It prints "READY <session id hex>", then reads one command per line on stdin
and answers on stdout with the same lines as the Java peer (Peer.java):
OK ..., ERR ..., HOLD <kind> <t0> <t1> <value> with time.monotonic_ns()
(CLOCK_MONOTONIC, the clock the Go side reads), EVENT <name> <t>.
"""
import sys
import threading
import time

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError
from kazoo.retry import KazooRetry

_out_lock = threading.Lock()


def out(line):
    with _out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def ensure(zk, counter):
    try:
        zk.create(counter, b"0", makepath=True)
    except NodeExistsError:
        pass


def hold(zk, kind, counter, write):
    t0 = time.monotonic_ns()
    data, stat = zk.get(counter)
    v = int(data.decode().strip())
    if write:
        v += 1
        zk.set(counter, str(v).encode(), version=stat.version)
    t1 = time.monotonic_ns()
    return "HOLD %s %d %d %d" % (kind, t0, t1, v)


def lock_loop(zk, lock, n, counter, kind):
    ensure(zk, counter)
    for _ in range(n):
        with lock:
            out(hold(zk, kind, counter, kind != "read"))
    return "OK %d" % n


def election_loop(zk, path, ident, n, counter):
    ensure(zk, counter)
    election = zk.Election(path, ident)
    for _ in range(n):
        # run returns after the function did, releasing the election's lock.
        election.run(lambda: out(hold(zk, "election", counter, True)))
    return "OK %d" % n


def run(zk, f):
    cmd = f[0]
    if cmd == "session":
        return "OK %x" % zk.client_id[0]
    if cmd == "lock-loop":  # path n counter
        return lock_loop(zk, zk.Lock(f[1], "kazoo"), int(f[2]), f[3], "lock")
    if cmd == "rw-loop":  # path n r|w counter
        write = f[3] == "w"
        lock = zk.WriteLock(f[1], "kazoo") if write else zk.ReadLock(f[1], "kazoo")
        return lock_loop(zk, lock, int(f[2]), f[4], "write" if write else "read")
    if cmd == "election-loop":  # path id n counter
        return election_loop(zk, f[1], f[2], int(f[3]), f[4])
    return "ERR unknown command " + cmd


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: peer.py <connect string> <session timeout ms>\n")
        sys.exit(2)
    retry = KazooRetry(max_tries=-1, delay=0.1, max_delay=1)
    zk = KazooClient(hosts=sys.argv[1], timeout=int(sys.argv[2]) / 1000.0,
                     connection_retry=retry, command_retry=retry)
    zk.start(timeout=60)
    out("READY %x" % zk.client_id[0])
    for line in sys.stdin:
        f = line.split()
        if not f:
            continue
        if f[0] == "quit":
            break
        try:
            out(run(zk, f))
        except Exception as e:  # report and go on, as the Java peer does
            out("ERR %s: %s" % (type(e).__name__, str(e).replace("\n", " ")))
    zk.stop()
    zk.close()


if __name__ == "__main__":
    main()
