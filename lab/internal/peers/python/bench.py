"""zkrecipes' kazoo benchmark program (cmd/zkbench).

Run with Debian's /usr/bin/python3 and python3-kazoo:
    bench.py <connect string> <session timeout ms>
It speaks the line protocol of peer.py and answers the same commands as
Bench.java (see there): open, uncontended, contend, rwmix, put, take,
elect-start, elect-resign (contend, rwmix and take name how many of the
open clients take part). Times are time.monotonic_ns() (CLOCK_MONOTONIC,
the clock the Go side reads). Nothing is done inside a holding.
"""
import sys
import threading
import time

from kazoo.client import KazooClient
from kazoo.retry import KazooRetry

_out_lock = threading.Lock()
connect = None
timeout_s = None
clients = []
election = None  # (thread, resign event)


def out(line):
    with _out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def new_client():
    retry = KazooRetry(max_tries=-1, delay=0.1, max_delay=1)
    zk = KazooClient(hosts=connect, timeout=timeout_s,
                     connection_retry=retry, command_retry=retry)
    zk.start(timeout=60)
    return zk


def loop(ms, k, make):
    """One thread for each of the first k clients, started together, each repeating its step
    until the deadline; returns "OK <ops> <elapsed ns>"."""
    ops = [0] * k
    failed = []
    start = threading.Event()
    deadline = [0]
    threads = []
    for i, zk in enumerate(clients[:k]):
        step = make(i, zk)

        def body(i=i, step=step):
            try:
                start.wait()
                j = 0
                while time.monotonic_ns() < deadline[0]:
                    step(j)
                    j += 1
                ops[i] = j
            except Exception as e:  # reported after the join
                failed.append(e)

        t = threading.Thread(target=body, daemon=True)
        t.start()
        threads.append(t)
    t0 = time.monotonic_ns()
    deadline[0] = t0 + ms * 1000000
    start.set()
    for t in threads:
        t.join()
    el = time.monotonic_ns() - t0
    if failed:
        raise failed[0]
    return "OK %d %d" % (sum(ops), el)


def contend_step(path):
    def make(i, zk):
        lock = zk.Lock(path, "bench")

        def step(j):
            lock.acquire()
            lock.release()
        return step
    return make


def rwmix_step(path, every):
    def make(i, zk):
        r, w = zk.ReadLock(path, "bench"), zk.WriteLock(path, "bench")

        def step(j):
            lock = w if (i + j) % every == 0 else r
            lock.acquire()
            lock.release()
        return step
    return make


def take_all(path, n, k):
    left = [n]
    mu = threading.Lock()
    failed = []
    start = threading.Event()

    def body(q):
        try:
            start.wait()
            while True:
                with mu:
                    if left[0] <= 0:
                        return
                    left[0] -= 1
                # kazoo's Queue.get does not block: None means it found the
                # queue empty (another consumer took the last items it saw).
                while q.get() is None:
                    time.sleep(0.001)
        except Exception as e:
            failed.append(e)

    threads = [threading.Thread(target=body, args=(zk.Queue(path),), daemon=True) for zk in clients[:k]]
    for t in threads:
        t.start()
    t0 = time.monotonic_ns()
    start.set()
    for t in threads:
        t.join()
    el = time.monotonic_ns() - t0
    if failed:
        raise failed[0]
    return "OK %d" % el


def elect_start(path):
    global election
    zk = clients[0]
    resign = threading.Event()

    def lead():
        out("EVENT leader %d" % time.monotonic_ns())
        resign.wait()

    def body():
        try:
            zk.Election(path, "bench").run(lead)
        except Exception as e:  # the session may be gone: nothing to report
            sys.stderr.write("election: %s\n" % e)

    t = threading.Thread(target=body, daemon=True)
    t.start()
    election = (t, resign)
    return "OK"


def elect_resign():
    global election
    t0 = time.monotonic_ns()
    t, resign = election
    resign.set()
    election = None
    return "OK %d" % t0


def run(f):
    cmd = f[0]
    if cmd == "open":
        while len(clients) < int(f[1]):
            clients.append(new_client())
        return "OK %d" % len(clients)
    if cmd == "uncontended":
        lock = clients[0].Lock(f[1], "bench")
        lat = []
        for _ in range(int(f[2])):
            t0 = time.monotonic_ns()
            lock.acquire()
            lock.release()
            lat.append(time.monotonic_ns() - t0)
        return "OK " + " ".join(str(x) for x in lat)
    if cmd == "contend":
        return loop(int(f[2]), int(f[3]), contend_step(f[1]))
    if cmd == "rwmix":
        return loop(int(f[2]), int(f[4]), rwmix_step(f[1], int(f[3])))
    if cmd == "put":
        q = clients[0].Queue(f[1])
        item = bytes(100)
        t0 = time.monotonic_ns()
        for _ in range(int(f[2])):
            q.put(item)
        return "OK %d" % (time.monotonic_ns() - t0)
    if cmd == "take":
        return take_all(f[1], int(f[2]), int(f[3]))
    if cmd == "elect-start":
        return elect_start(f[1])
    if cmd == "elect-resign":
        return elect_resign()
    return "ERR unknown command " + cmd


def main():
    global connect, timeout_s
    if len(sys.argv) != 3:
        sys.stderr.write("usage: bench.py <connect string> <session timeout ms>\n")
        sys.exit(2)
    connect = sys.argv[1]
    timeout_s = int(sys.argv[2]) / 1000.0
    clients.append(new_client())
    out("READY %x" % clients[0].client_id[0])
    for line in sys.stdin:
        f = line.split()
        if not f:
            continue
        if f[0] == "quit":
            break
        try:
            out(run(f))
        except Exception as e:  # report and go on, as the Java peer does
            out("ERR %s: %s" % (type(e).__name__, str(e).replace("\n", " ")))
    if election is not None:
        election[1].set()
    for zk in clients:
        zk.stop()
        zk.close()


if __name__ == "__main__":
    main()
