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


parties = {}
partitioners = {}


def partitioner_loop(p, ident, changed, stop):
    """Drives one SetPartitioner as kazoo's docs say a worker should, and
    reports its holdings: EVENT part-acquired <t> <id> <items...> once the
    set is acquired, EVENT part-released <t> <id> before its locks are
    released (release_set, finish), EVENT part-failed <t> <id>."""
    held = False
    while True:
        if stop.is_set():
            if held:
                out("EVENT part-released %d %s" % (time.monotonic_ns(), ident))
            p.finish()
            return
        if p.failed:
            if held:
                out("EVENT part-released %d %s" % (time.monotonic_ns(), ident))
            out("EVENT part-failed %d %s" % (time.monotonic_ns(), ident))
            return
        if p.release:
            if held:
                out("EVENT part-released %d %s" % (time.monotonic_ns(), ident))
                held = False
            p.release_set()
        elif p.acquired:
            if not held:
                held = True
                out("EVENT part-acquired %d %s %s" % (time.monotonic_ns(), ident, " ".join(sorted(p))))
            changed.wait(0.05)
            changed.clear()
        else:
            p.wait_for_acquire(0.05)


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
    if cmd == "party-join":  # path id: a Party member, joined
        p = zk.Party(f[1], f[2])
        p.join()
        parties[f[2]] = p
        return "OK"
    if cmd == "party-members":  # path: OK id... (sorted)
        return " ".join(["OK"] + sorted(zk.Party(f[1])))
    if cmd == "party-leave":  # id
        parties.pop(f[1]).leave()
        return "OK"
    if cmd == "shallow-join":  # path id: a ShallowParty member, joined
        p = zk.ShallowParty(f[1], f[2])
        p.join()
        parties[f[2]] = p
        return "OK"
    if cmd == "shallow-members":  # path: OK id... (sorted)
        return " ".join(["OK"] + sorted(zk.ShallowParty(f[1])))
    if cmd == "partitioner-start":  # path id time_boundary item,item,...
        changed, stop = threading.Event(), threading.Event()
        p = zk.SetPartitioner(f[1], set=f[4].split(","), identifier=f[2],
                              time_boundary=float(f[3]), state_change_event=changed)
        t = threading.Thread(target=partitioner_loop, args=(p, f[2], changed, stop), daemon=True)
        t.start()
        partitioners[f[2]] = (t, stop)
        return "OK"
    if cmd == "partitioner-stop":  # id: release, leave the party
        t, stop = partitioners.pop(f[1])
        stop.set()
        t.join()
        return "OK"
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
