"""zkrecipes' kazoo benchmark program (cmd/zkbench).

Run with Debian's /usr/bin/python3 and python3-kazoo:
    bench.py <connect string> <session timeout ms>
It speaks the line protocol of peer.py and answers the same commands as
Bench.java (see there): open, uncontended, contend, rwmix, put, take,
elect-start, elect-resign, elect-join, elect-leave, counter (contend, rwmix, take and counter name
how many of the open clients take part), tree-watch, tree-await and
tree-stop (kazoo.recipe.cache.TreeCache, a port of Curator's), qtake,
dbarrier-enter and dbarrier-leave (kazoo.recipe.barrier.DoubleBarrier);
kazoo has no multi-lock. Times are
time.monotonic_ns() (CLOCK_MONOTONIC, the clock the Go side reads). Nothing
is done inside a holding.

counter uses kazoo's Counter, which stores the value as ASCII text (repr of
an int), so its node is not shared with Curator's 8-byte layout. Its
compare-and-set is retried through client.retry, the client's command retry
policy (here with a 0.1 s delay doubling up to 1 s); the counter is given a
view of its client whose retry has no delay, so that kazoo retries at once
as the Curator and Go counters do.
"""
import sys
import threading
import time

from kazoo.client import KazooClient
from kazoo.recipe.cache import TreeCache, TreeEvent
from kazoo.recipe.counter import Counter
from kazoo.retry import KazooRetry

_out_lock = threading.Lock()
connect = None
timeout_s = None
clients = []
election = None  # (thread, resign event)
group = {}  # client index -> (thread, resign event) of elect-join
tree = None  # the TreeWatch of tree-watch
members = []  # the DoubleBarriers of the last dbarrier-enter


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
    until the deadline, but at least once (so that each client takes part, however late its
    thread runs); returns "OK <ops> <elapsed ns>"."""
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
                while j == 0 or time.monotonic_ns() < deadline[0]:
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


class _RetryAtOnce(object):
    """A KazooClient as a recipe sees it, but for retry(), which retries
    without sleeping."""

    def __init__(self, zk):
        self._zk = zk
        self._retry = KazooRetry(max_tries=-1, delay=0, sleep_func=zk.handler.sleep_func)

    def __getattr__(self, name):
        return getattr(self._zk, name)

    def retry(self, func, *args, **kwargs):
        return self._retry.copy()(func, *args, **kwargs)


def counter_step(path):
    def make(i, zk):
        counter = Counter(_RetryAtOnce(zk), path)

        def step(j):
            c = counter
            c += 1  # one increment: get, then a versioned set, retried at once
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


def qtake(path, n, ms):
    """n takes from a kazoo Queue on client 0, on a thread, waiting at most
    ms. A take that keeps retrying (client.retry never gives up here) is
    ended by stopping client 0, which is then replaced."""
    q = clients[0].Queue(path)
    done = [0]
    failed = []

    def body():
        try:
            while done[0] < n:
                if q.get() is None:  # empty: Queue.get does not block
                    time.sleep(0.001)
                    continue
                done[0] += 1
        except Exception as e:
            failed.append(e)

    t = threading.Thread(target=body, daemon=True)
    t0 = time.monotonic_ns()
    t.start()
    t.join(max(ms, 1) / 1000.0)
    el = time.monotonic_ns() - t0
    if t.is_alive():
        old = clients[0]
        old.stop()
        old.close()
        t.join(5)
        clients[0] = new_client()
        return "ERR %d of %d taken within %d ms (client 0 replaced)" % (done[0], n, ms)
    if failed:
        raise failed[0]
    return "OK %d" % el


def together(n, ms, step):
    """step(i) for i in 0..n-1, one daemon thread each, released at once;
    waits at most ms for all. OK <ns from the release to the last return>."""
    failed = []
    start = threading.Event()
    last = [0]
    mu = threading.Lock()
    left = [n]
    all_done = threading.Event()

    def body(i):
        try:
            start.wait()
            step(i)
            t = time.monotonic_ns()
            with mu:
                last[0] = max(last[0], t)
        except Exception as e:
            failed.append(e)
        finally:
            with mu:
                left[0] -= 1
                if left[0] == 0:
                    all_done.set()

    for i in range(n):
        threading.Thread(target=body, args=(i,), daemon=True).start()
    t0 = time.monotonic_ns()
    start.set()
    if not all_done.wait(max(ms, 1) / 1000.0):
        return "ERR %d of %d members not done within %d ms" % (left[0], n, ms)
    if failed:
        raise failed[0]
    return "OK %d" % (last[0] - t0)


def dbarrier_enter(path, n, k, ms):
    global members
    # An explicit identifier (the members' node data): the default calls
    # socket.getfqdn(), a name lookup per member.
    members = [clients[i % k].DoubleBarrier(path, n, identifier="bench-%d" % i) for i in range(n)]
    ms_ = members

    def step(i):
        ms_[i].enter()
        if not ms_[i].participating:  # enter swallows KazooException
            raise RuntimeError("member %d failed to enter" % i)
    return together(n, ms, step)


def dbarrier_leave(ms):
    global members
    ms_, members = members, []
    if not ms_:
        return "ERR no barrier entered"
    return together(len(ms_), ms, lambda i: ms_[i].leave())


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


def elect_join(path, i):
    """Client i joins with an Election of its own; it reports
    "EVENT elected <t> <i>" when it leads, and leads until elect-leave."""
    if i in group:
        return "ERR client %d takes part already" % i
    zk = clients[i]
    election = zk.Election(path, "bench")
    resign = threading.Event()

    def lead():
        out("EVENT elected %d %d" % (time.monotonic_ns(), i))
        resign.wait()

    def body():
        try:
            election.run(lead)
        except Exception as e:  # the session may be gone: nothing to report
            sys.stderr.write("election %d: %s\n" % (i, e))

    t = threading.Thread(target=body, daemon=True)
    t.start()
    group[i] = (t, resign, election)
    return "OK"


def elect_leave(i):
    """Client i resigns (it leads: its lead() returns and the Election
    deletes its node) or leaves the line (Election.cancel)."""
    if i not in group:
        return "ERR client %d takes no part" % i
    t0 = time.monotonic_ns()
    t, resign, election = group.pop(i)
    resign.set()
    election.cancel()
    return "OK %d" % t0


class TreeWatch(object):
    """A kazoo TreeCache read as an application reads one: its listener,
    called on the cache's own thread in delivery order, notes per path the
    data of the last NODE_ADDED or NODE_UPDATED and when it was delivered,
    and counts the events after INITIALIZED. An error the cache reports to
    its fault listeners fails the waits."""

    def __init__(self, zk, root):
        self.cond = threading.Condition()
        self.data = {}
        self.at = {}
        self.initialized = False
        self.nodes = 0
        self.updates = 0
        self.others = 0
        self.fault = None
        self.cache = TreeCache(zk, root)
        self.cache.listen(self.on_event)
        self.cache.listen_fault(self.on_fault)
        self.cache.start()

    def on_event(self, ev):
        t = time.monotonic_ns()
        with self.cond:
            kind, node = ev.event_type, ev.event_data
            if kind in (TreeEvent.NODE_ADDED, TreeEvent.NODE_UPDATED) and node is not None:
                self.data[node.path] = (node.data or b"").decode("utf-8", "replace")
                self.at[node.path] = t
            if not self.initialized:
                if kind == TreeEvent.INITIALIZED:
                    self.initialized = True
                    self.nodes = len(self.data)
            elif kind == TreeEvent.NODE_UPDATED:
                self.updates += 1
            else:
                self.others += 1
            self.cond.notify_all()

    def on_fault(self, e):
        with self.cond:
            if self.fault is None:
                self.fault = e
            self.cond.notify_all()

    def _wait(self, ms, ready, why):
        end = time.monotonic() + ms / 1000.0
        with self.cond:
            while True:
                if self.fault is not None:
                    raise self.fault
                r = ready()
                if r is not None:
                    return r
                left = end - time.monotonic()
                if left <= 0:
                    raise RuntimeError("within %d ms %s" % (ms, why()))
                self.cond.wait(left)

    def await_initialized(self, ms):
        return self._wait(ms, lambda: self.nodes if self.initialized else None,
                          lambda: "no INITIALIZED event")

    def await_data(self, ms, want):
        def ready():
            last = 0
            for p, d in want.items():
                if self.data.get(p) != d:
                    return None
                last = max(last, self.at[p])
            return "%d %d %d" % (self.updates, self.others, last)

        def why():
            for p, d in want.items():
                if self.data.get(p) != d:
                    return "the cache showed %s = %r, not %s" % (p, self.data.get(p), d)
            return "?"
        return self._wait(ms, ready, why)


def tree_watch(root, ms):
    global tree
    if tree is not None:
        return "ERR a tree cache runs already"
    tree = TreeWatch(clients[0], root)
    return "OK %d" % tree.await_initialized(ms)


def tree_await(ms, f):
    if tree is None:
        return "ERR no tree cache runs"
    want = dict(zip(f[0::2], f[1::2]))
    return "OK " + tree.await_data(ms, want)


def tree_stop():
    global tree
    if tree is not None:
        tree.cache.close()
        tree = None
    return "OK"


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
    if cmd == "counter":
        return loop(int(f[2]), int(f[3]), counter_step(f[1]))
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
    if cmd == "elect-join":
        return elect_join(f[1], int(f[2]))
    if cmd == "elect-leave":
        return elect_leave(int(f[1]))
    if cmd == "tree-watch":
        return tree_watch(f[1], int(f[2]))
    if cmd == "tree-await":
        return tree_await(int(f[1]), f[2:])
    if cmd == "tree-stop":
        return tree_stop()
    if cmd == "qtake":
        return qtake(f[1], int(f[2]), int(f[3]))
    if cmd == "dbarrier-enter":
        return dbarrier_enter(f[1], int(f[2]), int(f[3]), int(f[4]))
    if cmd == "dbarrier-leave":
        return dbarrier_leave(int(f[1]))
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
    for _, resign, e in group.values():
        resign.set()
        e.cancel()
    if tree is not None:
        tree.cache.close()
    for zk in clients:
        zk.stop()
        zk.close()


if __name__ == "__main__":
    main()
