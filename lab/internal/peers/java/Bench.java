// Bench is zkrecipes' Apache Curator benchmark program (cmd/zkbench). It
// speaks the line protocol of Peer.java: it prints "READY <session id hex>"
// once its first client is connected, then runs one command per line:
//
//   open <n>                      have n clients (sessions), client 0 included
//   uncontended <path> <n>        n x (acquire + release) of an InterProcessMutex
//                                 on client 0; OK <ns per cycle>...
//   contend <path> <ms> <k>       clients 0..k-1 loop acquire + release, each on its
//                                 own InterProcessMutex, until the deadline;
//                                 OK <acquisitions> <elapsed ns>
//   rwmix <path> <ms> <every> <k> clients 0..k-1 loop, each on its own
//                                 InterProcessReadWriteLock: op j of client i
//                                 writes when (i+j) % every == 0, else reads;
//                                 OK <ops> <elapsed ns>
//   put <path> <n>                n offers to a SimpleDistributedQueue from
//                                 client 0; OK <elapsed ns>
//   take <path> <n> <k>           clients 0..k-1 take, each from its own
//                                 SimpleDistributedQueue, until n were taken in
//                                 all; OK <elapsed ns>
//   elect-start <path>            client 0 joins a LeaderLatch;
//                                 EVENT leader <t> when it leads
//   elect-resign                  closes the latch; OK <t> (t taken before close)
//   elect-join <path> <i>         client i joins with a LeaderLatch of its own
//                                 (clients 0..i must be open); EVENT elected <t> <i>
//                                 when it leads
//   elect-leave <i>               closes client i's latch (resigning, or leaving the
//                                 line); OK <t> (t taken before close)
//   counter <path> <ms> <k>       clients 0..k-1 loop increment() on their own
//                                 DistributedAtomicLong (RetryNTimes(MAX_VALUE, 0):
//                                 compare-and-set retried at once, no promotion)
//                                 until the deadline; OK <successful increments> <elapsed ns>
//   multi-uncontended <n> <path>...  n x (acquire + release) of an
//                                 InterProcessMultiLock over the paths (in the order
//                                 given) on client 0; OK <ns per cycle>...
//   multi-contend <ms> <k> <path>...  as contend, each client on its own
//                                 InterProcessMultiLock over the paths
//   tree-watch <root> <ms>        starts a TreeCache (data cached, no depth limit)
//                                 of root on client 0 and waits, at most ms, for its
//                                 INITIALIZED event; OK <nodes delivered before it>
//   tree-await <ms> (<path> <data>)...  waits, at most ms, until the last event
//                                 delivered for each path carried that data;
//                                 OK <NODE_UPDATED events> <other events> <t>, counted
//                                 since INITIALIZED, t: delivery of the latest of them
//   tree-stop                     closes the TreeCache; OK
//   qtake <path> <n> <ms>         n takes from a SimpleDistributedQueue on client 0,
//                                 on a thread, waiting at most ms; OK <elapsed ns>; on
//                                 time-out client 0 is closed (ending a take that
//                                 retries forever) and replaced, and ERR says so
//   dbarrier-enter <path> <n> <k> <ms>  n DistributedDoubleBarrier members for n,
//                                 member i on client i%k, one daemon thread each,
//                                 started together, enter; OK <ns to the last return>
//                                 (ERR after ms: the members are left blocked)
//   dbarrier-leave <ms>           the members of the last dbarrier-enter leave,
//                                 together; OK <ns to the last return>
//
// The TreeCache is Curator 5's deprecated one: it keeps one-shot watches, as
// zkrecipes' and kazoo's do. CuratorCache, which replaces it, needs
// ZooKeeper 3.6's persistent recursive watches (AddWatch) and so costs no
// request per change: it is not the same experiment.
//
// Times are System.nanoTime() (CLOCK_MONOTONIC on Linux, as on the Go side).
// Nothing is done inside a holding, so the figures are the recipe's own.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.TreeCache;
import org.apache.curator.framework.recipes.cache.TreeCacheEvent;
import org.apache.curator.framework.recipes.cache.TreeCacheListener;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.queue.SimpleDistributedQueue;
import org.apache.curator.retry.RetryForever;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.ZooKeeper;

public class Bench {
    private static String connect;
    private static int timeout;
    private static final List<CuratorFramework> clients = new ArrayList<>();
    private static LeaderLatch latch;
    private static final Map<Integer, LeaderLatch> group = new HashMap<>();
    private static TreeWatch tree;
    private static List<DistributedDoubleBarrier> members = new ArrayList<>();

    private static synchronized void out(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private static CuratorFramework newClient() throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .sessionTimeoutMs(timeout)
                .connectionTimeoutMs(Math.max(1000, timeout / 2))
                .retryPolicy(new RetryForever(100))
                .build();
        c.start();
        if (!c.blockUntilConnected(60, TimeUnit.SECONDS)) {
            c.close();
            throw new IllegalStateException("not connected");
        }
        return c;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: Bench <connect string> <session timeout ms>");
            System.exit(2);
        }
        connect = args[0];
        timeout = Integer.parseInt(args[1]);
        clients.add(newClient());
        out("READY " + Long.toHexString(clients.get(0).getZookeeperClient().getZooKeeper().getSessionId()));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.trim().split("\\s+");
            if (f.length == 0 || f[0].isEmpty()) {
                continue;
            }
            if (f[0].equals("quit")) {
                break;
            }
            try {
                out(run(f));
            } catch (Exception e) {
                out("ERR " + e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).replace('\n', ' '));
            }
        }
        if (latch != null) {
            latch.close();
        }
        for (LeaderLatch l : group.values()) {
            l.close();
        }
        if (tree != null) {
            tree.cache.close();
        }
        closeAll();
    }

    // closeAll closes every client at once and returns when each session
    // is closed, or when none has been for a second (at most 8 s). A
    // session is closed, on the server too, once the reply to its
    // closeSession came; the threads of its client end later, one client
    // at a time: ZooKeeper's client ends a connection with a 100 ms sleep
    // under the monitor of a ZooKeeper.States constant, which every client
    // of the JVM shares and also takes to send a request (the closeSession
    // itself). Closing hundreds of clients one by one, or waiting for all
    // their threads, takes minutes; the few sessions still open when this
    // returns expire on the server after the session timeout.
    private static void closeAll() throws Exception {
        List<ZooKeeper> zks = new ArrayList<>();
        for (CuratorFramework c : clients) {
            try {
                zks.add(c.getZookeeperClient().getZooKeeper());
            } catch (Exception e) {
                // not connected: nothing to wait for
            }
        }
        ExecutorService closer = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r);
            t.setDaemon(true);
            return t;
        });
        for (CuratorFramework c : clients) {
            closer.execute(c::close);
        }
        closer.shutdown();
        long end = System.nanoTime() + 8_000_000_000L;
        long closed = -1, since = System.nanoTime();
        while (System.nanoTime() < end && System.nanoTime() - since < 1_000_000_000L) {
            long n = zks.stream().filter(z -> z.getState() == ZooKeeper.States.CLOSED).count();
            if (n == zks.size() || closer.awaitTermination(20, TimeUnit.MILLISECONDS)) {
                return;
            }
            if (n != closed) {
                closed = n;
                since = System.nanoTime();
            }
        }
    }

    private static String run(String[] f) throws Exception {
        switch (f[0]) {
            case "open": {
                int n = Integer.parseInt(f[1]);
                while (clients.size() < n) {
                    clients.add(newClient());
                }
                return "OK " + clients.size();
            }
            case "uncontended": {
                InterProcessMutex m = new InterProcessMutex(clients.get(0), f[1]);
                int n = Integer.parseInt(f[2]);
                StringBuilder sb = new StringBuilder("OK");
                for (int i = 0; i < n; i++) {
                    long t0 = System.nanoTime();
                    m.acquire();
                    m.release();
                    sb.append(' ').append(System.nanoTime() - t0);
                }
                return sb.toString();
            }
            case "contend": {
                String path = f[1];
                long ms = Long.parseLong(f[2]);
                return loop(ms, Integer.parseInt(f[3]), (i, c) -> {
                    InterProcessMutex m = new InterProcessMutex(c, path);
                    return j -> {
                        m.acquire();
                        m.release();
                    };
                });
            }
            case "rwmix": {
                String path = f[1];
                long ms = Long.parseLong(f[2]);
                int every = Integer.parseInt(f[3]);
                return loop(ms, Integer.parseInt(f[4]), (i, c) -> {
                    InterProcessReadWriteLock rw = new InterProcessReadWriteLock(c, path);
                    return j -> {
                        InterProcessLock l = (i + j) % every == 0 ? rw.writeLock() : rw.readLock();
                        l.acquire();
                        l.release();
                    };
                });
            }
            case "put": {
                SimpleDistributedQueue q = new SimpleDistributedQueue(clients.get(0), f[1]);
                int n = Integer.parseInt(f[2]);
                byte[] item = new byte[100];
                long t0 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    if (!q.offer(item)) {
                        return "ERR offer refused";
                    }
                }
                return "OK " + (System.nanoTime() - t0);
            }
            case "take": {
                String path = f[1];
                AtomicLong left = new AtomicLong(Long.parseLong(f[2]));
                List<Thread> ts = new ArrayList<>();
                AtomicReference<Exception> failed = new AtomicReference<>();
                CountDownLatch start = new CountDownLatch(1);
                int k = Integer.parseInt(f[3]);
                for (int i = 0; i < k; i++) {
                    SimpleDistributedQueue q = new SimpleDistributedQueue(clients.get(i), path);
                    Thread t = new Thread(() -> {
                        try {
                            start.await();
                            while (left.decrementAndGet() >= 0) {
                                q.take();
                            }
                        } catch (Exception e) {
                            failed.compareAndSet(null, e);
                        }
                    });
                    t.start();
                    ts.add(t);
                }
                long t0 = System.nanoTime();
                start.countDown();
                for (Thread t : ts) {
                    t.join();
                }
                long el = System.nanoTime() - t0;
                if (failed.get() != null) {
                    throw failed.get();
                }
                return "OK " + el;
            }
            case "elect-start": {
                latch = new LeaderLatch(clients.get(0), f[1]);
                latch.addListener(new LeaderLatchListener() {
                    public void isLeader() { out("EVENT leader " + System.nanoTime()); }
                    public void notLeader() { }
                });
                latch.start();
                return "OK";
            }
            case "elect-resign": {
                long t0 = System.nanoTime();
                latch.close();
                latch = null;
                return "OK " + t0;
            }
            case "elect-join": {
                int i = Integer.parseInt(f[2]);
                if (group.containsKey(i)) {
                    return "ERR client " + i + " takes part already";
                }
                LeaderLatch l = new LeaderLatch(clients.get(i), f[1]);
                l.addListener(new LeaderLatchListener() {
                    public void isLeader() { out("EVENT elected " + System.nanoTime() + " " + i); }
                    public void notLeader() { }
                });
                l.start();
                group.put(i, l);
                return "OK";
            }
            case "elect-leave": {
                LeaderLatch l = group.remove(Integer.parseInt(f[1]));
                if (l == null) {
                    return "ERR client " + f[1] + " takes no part";
                }
                long t0 = System.nanoTime();
                l.close();
                return "OK " + t0;
            }
            case "counter": {
                String path = f[1];
                long ms = Long.parseLong(f[2]);
                return loop(ms, Integer.parseInt(f[3]), (i, c) -> {
                    DistributedAtomicLong l = new DistributedAtomicLong(c, path, new RetryNTimes(Integer.MAX_VALUE, 0));
                    return j -> {
                        AtomicValue<Long> v = l.increment();
                        if (!v.succeeded()) {
                            throw new IllegalStateException("increment of " + path + " gave up");
                        }
                    };
                });
            }
            case "multi-uncontended": {
                int n = Integer.parseInt(f[1]);
                InterProcessMultiLock m = new InterProcessMultiLock(clients.get(0), Arrays.asList(f).subList(2, f.length));
                StringBuilder sb = new StringBuilder("OK");
                for (int i = 0; i < n; i++) {
                    long t0 = System.nanoTime();
                    m.acquire();
                    m.release();
                    sb.append(' ').append(System.nanoTime() - t0);
                }
                return sb.toString();
            }
            case "multi-contend": {
                long ms = Long.parseLong(f[1]);
                List<String> paths = Arrays.asList(f).subList(3, f.length);
                return loop(ms, Integer.parseInt(f[2]), (i, c) -> {
                    InterProcessMultiLock m = new InterProcessMultiLock(c, paths);
                    return j -> {
                        m.acquire();
                        m.release();
                    };
                });
            }
            case "tree-watch": {
                if (tree != null) {
                    return "ERR a tree cache runs already";
                }
                tree = new TreeWatch(clients.get(0), f[1]);
                return "OK " + tree.awaitInitialized(Long.parseLong(f[2]));
            }
            case "tree-await": {
                if (tree == null) {
                    return "ERR no tree cache runs";
                }
                Map<String, String> want = new HashMap<>();
                for (int i = 2; i + 1 < f.length; i += 2) {
                    want.put(f[i], f[i + 1]);
                }
                return "OK " + tree.await(Long.parseLong(f[1]), want);
            }
            case "tree-stop": {
                if (tree != null) {
                    tree.cache.close();
                    tree = null;
                }
                return "OK";
            }
            case "qtake":
                return qtake(f[1], Integer.parseInt(f[2]), Long.parseLong(f[3]));
            case "dbarrier-enter": {
                String path = f[1];
                int n = Integer.parseInt(f[2]), k = Integer.parseInt(f[3]);
                members = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    members.add(new DistributedDoubleBarrier(clients.get(i % k), path, n));
                }
                return together(n, Long.parseLong(f[4]), i -> members.get(i).enter());
            }
            case "dbarrier-leave": {
                List<DistributedDoubleBarrier> ms = members;
                members = new ArrayList<>();
                if (ms.isEmpty()) {
                    return "ERR no barrier entered";
                }
                return together(ms.size(), Long.parseLong(f[1]), i -> ms.get(i).leave());
            }
            default:
                return "ERR unknown command " + f[0];
        }
    }

    // TreeWatch is a TreeCache read as an application reads one: its listener,
    // called on the cache's own thread in delivery order, notes per path the
    // data of the last NODE_ADDED or NODE_UPDATED and when it was delivered,
    // and counts the events after INITIALIZED.
    static final class TreeWatch implements TreeCacheListener {
        final TreeCache cache;
        private final Map<String, String> data = new HashMap<>();
        private final Map<String, Long> at = new HashMap<>();
        private boolean initialized;
        private int nodes;
        private long updates, others;

        @SuppressWarnings("deprecation")
        TreeWatch(CuratorFramework c, String root) throws Exception {
            cache = new TreeCache(c, root);
            cache.getListenable().addListener(this);
            cache.start();
        }

        @Override
        public synchronized void childEvent(CuratorFramework c, TreeCacheEvent e) {
            long t = System.nanoTime();
            TreeCacheEvent.Type type = e.getType();
            ChildData d = e.getData();
            if ((type == TreeCacheEvent.Type.NODE_ADDED || type == TreeCacheEvent.Type.NODE_UPDATED) && d != null) {
                byte[] b = d.getData();
                data.put(d.getPath(), b == null ? "" : new String(b, StandardCharsets.UTF_8));
                at.put(d.getPath(), t);
            }
            if (!initialized) {
                if (type == TreeCacheEvent.Type.INITIALIZED) {
                    initialized = true;
                    nodes = data.size();
                }
            } else if (type == TreeCacheEvent.Type.NODE_UPDATED) {
                updates++;
            } else {
                others++;
            }
            notifyAll();
        }

        synchronized int awaitInitialized(long ms) throws InterruptedException {
            long end = System.nanoTime() + ms * 1_000_000L;
            while (!initialized) {
                long left = end - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException("not initialized within " + ms + " ms");
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            return nodes;
        }

        synchronized String await(long ms, Map<String, String> want) throws InterruptedException {
            long end = System.nanoTime() + ms * 1_000_000L;
            while (true) {
                long last = 0;
                String missing = null;
                for (Map.Entry<String, String> w : want.entrySet()) {
                    if (!w.getValue().equals(data.get(w.getKey()))) {
                        missing = w.getKey();
                        break;
                    }
                    last = Math.max(last, at.get(w.getKey()));
                }
                if (missing == null) {
                    return updates + " " + others + " " + last;
                }
                long left = end - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException("within " + ms + " ms the cache showed " + missing + " = "
                            + data.get(missing) + ", not " + want.get(missing));
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
        }
    }

    // qtake takes n items from a SimpleDistributedQueue on client 0, on a
    // thread of its own, waiting at most ms for it. A take whose listing
    // reply the client cannot read retries forever (RetryForever): on
    // time-out client 0 is closed, which ends the retry, and replaced.
    private static String qtake(String path, int n, long ms) throws Exception {
        SimpleDistributedQueue q = new SimpleDistributedQueue(clients.get(0), path);
        AtomicInteger done = new AtomicInteger();
        AtomicReference<Exception> failed = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                while (done.get() < n) {
                    q.take();
                    done.incrementAndGet();
                }
            } catch (Exception e) {
                failed.set(e);
            }
        });
        t.setDaemon(true);
        long t0 = System.nanoTime();
        t.start();
        t.join(Math.max(1, ms));
        long el = System.nanoTime() - t0;
        if (t.isAlive()) {
            clients.get(0).close();
            t.join(5000);
            clients.set(0, newClient());
            return "ERR " + done.get() + " of " + n + " taken within " + ms + " ms (client 0 replaced)";
        }
        if (failed.get() != null) {
            throw failed.get();
        }
        return "OK " + el;
    }

    interface MemberStep {
        void run(int i) throws Exception;
    }

    // together runs step(i) for i in 0..n-1, one daemon thread each (a member
    // blocked forever must not keep the JVM alive), released at once, and
    // waits at most ms for all; OK <ns from the release to the last return>.
    private static String together(int n, long ms, MemberStep step) throws Exception {
        AtomicReference<Exception> failed = new AtomicReference<>();
        CountDownLatch start = new CountDownLatch(1), done = new CountDownLatch(n);
        AtomicLong last = new AtomicLong();
        for (int i = 0; i < n; i++) {
            int id = i;
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    step.run(id);
                    last.accumulateAndGet(System.nanoTime(), Math::max);
                } catch (Exception e) {
                    failed.compareAndSet(null, e);
                } finally {
                    done.countDown();
                }
            });
            t.setDaemon(true);
            t.start();
        }
        long t0 = System.nanoTime();
        start.countDown();
        if (!done.await(Math.max(1, ms), TimeUnit.MILLISECONDS)) {
            return "ERR " + done.getCount() + " of " + n + " members not done within " + ms + " ms";
        }
        if (failed.get() != null) {
            throw failed.get();
        }
        return "OK " + (last.get() - t0);
    }

    interface Step {
        void run(int j) throws Exception;
    }

    interface StepFactory {
        Step make(int i, CuratorFramework c) throws Exception;
    }

    // loop runs one thread for each of the first k clients, all started together, each repeating
    // its step until the deadline, but at least once (so that each client takes part, however
    // late its thread runs); it returns the steps done in all and the time until the last
    // thread finished.
    private static String loop(long ms, int k, StepFactory factory) throws Exception {
        AtomicLong ops = new AtomicLong();
        AtomicReference<Exception> failed = new AtomicReference<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> ts = new ArrayList<>();
        long[] deadline = new long[1];
        for (int i = 0; i < k; i++) {
            Step step = factory.make(i, clients.get(i));
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    for (int j = 0; j == 0 || System.nanoTime() < deadline[0]; j++) {
                        step.run(j);
                        ops.incrementAndGet();
                    }
                } catch (Exception e) {
                    failed.compareAndSet(null, e);
                }
            });
            t.start();
            ts.add(t);
        }
        long t0 = System.nanoTime();
        deadline[0] = t0 + ms * 1_000_000L;
        start.countDown();
        for (Thread t : ts) {
            t.join();
        }
        long el = System.nanoTime() - t0;
        if (failed.get() != null) {
            throw failed.get();
        }
        return "OK " + ops.get() + " " + el;
    }
}
