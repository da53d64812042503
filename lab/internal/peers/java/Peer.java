// Peer is zkrecipes' Apache Curator counterpart for interoperability tests and
// benchmarks. It connects to ZooKeeper, prints "READY <session id hex>", then
// reads one command per line on stdin and answers on stdout:
//   OK ...    the command finished
//   ERR ...   it failed (the peer goes on)
//   HOLD <kind> <t0> <t1> <value>   one holding: System.nanoTime() (Linux:
//             CLOCK_MONOTONIC, the clock the Go side reads) when it began and
//             ended, and the counter value written (or read) inside it
//             (semcount: when its acquire was called, System.nanoTime())
//   EVENT <name> <t> [...]          an asynchronous event (latch, barrier)
// The protocol is line-based so that a Go test drives Java and Go clients on
// the same paths, step by step. Kept in one file, compiled by the tests.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.nodes.GroupMember;
import org.apache.curator.framework.recipes.queue.SimpleDistributedQueue;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.atomic.PromotedToLock;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.framework.recipes.shared.VersionedValue;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.recipes.queue.DistributedQueue;
import org.apache.curator.retry.RetryForever;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

public class Peer {
    private static CuratorFramework client;
    private static LeaderLatch latch;
    private static final Map<String, GroupMember> members = new HashMap<>();
    private static final Map<String, InterProcessReadWriteLock> rwLocks = new HashMap<>();

    private static synchronized void out(String line) {
        System.out.println(line);
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: Peer <connect string> <session timeout ms>");
            System.exit(2);
        }
        int timeout = Integer.parseInt(args[1]);
        client = CuratorFrameworkFactory.builder()
                .connectString(args[0])
                .sessionTimeoutMs(timeout)
                .connectionTimeoutMs(Math.max(1000, timeout / 2))
                .retryPolicy(new RetryForever(100))
                .build();
        client.start();
        if (!client.blockUntilConnected(60, TimeUnit.SECONDS)) {
            out("ERR not connected");
            System.exit(1);
        }
        out("READY " + sessionId());
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
        for (GroupMember m : members.values()) {
            m.close();
        }
        client.close();
    }

    private static String sessionId() throws Exception {
        return Long.toHexString(client.getZookeeperClient().getZooKeeper().getSessionId());
    }

    private static String run(String[] f) throws Exception {
        switch (f[0]) {
            case "session":
                return "OK " + sessionId();
            case "lock-loop": // path n counter
                return lockLoop(new InterProcessMutex(client, f[1]), Integer.parseInt(f[2]), f[3], "lock");
            case "multi-loop": { // n counter path...: an InterProcessMultiLock over the paths, in the order given
                java.util.List<String> paths = java.util.Arrays.asList(f).subList(3, f.length);
                return lockLoop(new InterProcessMultiLock(client, paths), Integer.parseInt(f[1]), f[2], "multi");
            }
            case "rw-loop": { // path n r|w counter
                InterProcessReadWriteLock rw = new InterProcessReadWriteLock(client, f[1]);
                boolean write = f[3].equals("w");
                return lockLoop(write ? rw.writeLock() : rw.readLock(), Integer.parseInt(f[2]), f[4], write ? "write" : "read");
            }
            case "sem-loop": { // path n leases counter
                InterProcessSemaphoreV2 sem = new InterProcessSemaphoreV2(client, f[1], Integer.parseInt(f[3]));
                ensure(f[4]);
                int n = Integer.parseInt(f[2]);
                for (int i = 0; i < n; i++) {
                    Lease lease = sem.acquire();
                    try {
                        out(leaseHold(f[4]));
                    } finally {
                        sem.returnLease(lease);
                    }
                }
                return "OK " + n;
            }
            case "semcount-loop": { // path countPath n counter: n leases of a semaphore whose maximum is a SharedCount
                SharedCount count = new SharedCount(client, f[2], 0);
                count.start();
                try {
                    InterProcessSemaphoreV2 sem = new InterProcessSemaphoreV2(client, f[1], count);
                    ensure(f[4]);
                    int n = Integer.parseInt(f[3]);
                    for (int i = 0; i < n; i++) {
                        long called = System.nanoTime();
                        Lease lease = sem.acquire();
                        try {
                            out(leaseHold(f[4], "semcount", called));
                        } finally {
                            sem.returnLease(lease);
                        }
                    }
                    return "OK " + n;
                } finally {
                    count.close();
                }
            }
            case "semcount-try": { // path countPath ms: one lease within ms, given back at once: "OK acquired" or "OK none"
                SharedCount count = new SharedCount(client, f[2], 0);
                count.start();
                try {
                    InterProcessSemaphoreV2 sem = new InterProcessSemaphoreV2(client, f[1], count);
                    Lease lease = sem.acquire(Long.parseLong(f[3]), TimeUnit.MILLISECONDS);
                    if (lease == null) {
                        return "OK none";
                    }
                    sem.returnLease(lease);
                    return "OK acquired";
                } finally {
                    count.close();
                }
            }
            case "count-set": { // path n: the SharedCount set to n
                SharedCount c = new SharedCount(client, f[1], 0);
                c.start();
                try {
                    c.setCount(Integer.parseInt(f[2]));
                    return "OK " + c.getCount();
                } finally {
                    c.close();
                }
            }
            case "selector-loop": // path n counter
                return selectorLoop(f[1], Integer.parseInt(f[2]), f[3]);
            case "latch-start": // path id
                latch = new LeaderLatch(client, f[1], f[2]);
                latch.addListener(new LeaderLatchListener() {
                    public void isLeader() { out("EVENT leader " + System.nanoTime()); }
                    public void notLeader() { out("EVENT notleader " + System.nanoTime()); }
                });
                latch.start();
                return "OK";
            case "latch-close":
                latch.close();
                latch = null;
                return "OK";
            case "dbarrier": { // path n
                DistributedDoubleBarrier b = new DistributedDoubleBarrier(client, f[1], Integer.parseInt(f[2]));
                b.enter();
                out("EVENT entered " + System.nanoTime());
                b.leave();
                out("EVENT left " + System.nanoTime());
                return "OK";
            }
            case "queue-put": { // path item...
                SimpleDistributedQueue q = new SimpleDistributedQueue(client, f[1]);
                for (int i = 2; i < f.length; i++) {
                    if (!q.offer(f[i].getBytes(StandardCharsets.UTF_8))) {
                        return "ERR offer refused";
                    }
                }
                return "OK " + (f.length - 2);
            }
            case "queue-take": { // path n
                SimpleDistributedQueue q = new SimpleDistributedQueue(client, f[1]);
                int n = Integer.parseInt(f[2]);
                StringBuilder sb = new StringBuilder("OK");
                for (int i = 0; i < n; i++) {
                    sb.append(' ').append(new String(q.take(), StandardCharsets.UTF_8));
                }
                return sb.toString();
            }
            case "zkqueue-put": { // path item... with ZooKeeper's own queue recipe
                DistributedQueue q = zkQueue(f[1]);
                for (int i = 2; i < f.length; i++) {
                    q.offer(f[i].getBytes(StandardCharsets.UTF_8));
                }
                return "OK " + (f.length - 2);
            }
            case "zkqueue-take": { // path n with ZooKeeper's own queue recipe
                DistributedQueue q = zkQueue(f[1]);
                int n = Integer.parseInt(f[2]);
                StringBuilder sb = new StringBuilder("OK");
                for (int i = 0; i < n; i++) {
                    sb.append(' ').append(new String(q.take(), StandardCharsets.UTF_8));
                }
                return sb.toString();
            }
            case "count-add": { // path n: n compare-and-set increments of a SharedCount seeded 0
                SharedCount c = new SharedCount(client, f[1], 0);
                c.start();
                try {
                    int n = Integer.parseInt(f[2]);
                    for (int i = 0; i < n; ) {
                        VersionedValue<Integer> v = c.getVersionedValue();
                        if (c.trySetCount(v, v.getValue() + 1)) {
                            i++;
                        }
                    }
                    return "OK " + c.getCount();
                } finally {
                    c.close();
                }
            }
            case "along-add": { // path lockPath n: n increments of a DistributedAtomicLong promoted to a lock, each retried until it succeeds
                DistributedAtomicLong l = new DistributedAtomicLong(client, f[1], new RetryNTimes(3, 10),
                        PromotedToLock.builder().lockPath(f[2]).retryPolicy(new RetryNTimes(3, 10)).timeout(30, TimeUnit.SECONDS).build());
                int n = Integer.parseInt(f[3]);
                int failed = 0;
                for (int i = 0; i < n; ) {
                    AtomicValue<Long> v = l.increment();
                    if (v.succeeded()) {
                        i++;
                    } else {
                        failed++;
                    }
                }
                return "OK " + failed;
            }
            case "along-get": { // path: the DistributedAtomicLong's value
                AtomicValue<Long> v = new DistributedAtomicLong(client, f[1], new RetryNTimes(3, 10)).get();
                return v.succeeded() ? "OK " + v.postValue() : "ERR get did not succeed";
            }
            case "count-get": { // path: the SharedCount's value, read from ZooKeeper
                SharedCount c = new SharedCount(client, f[1], 0);
                c.start();
                try {
                    return "OK " + c.getCount();
                } finally {
                    c.close();
                }
            }
            case "group-join": { // path id payload: a GroupMember, started; OK once its node is ours
                GroupMember m = new GroupMember(client, f[1], f[2], f[3].getBytes(StandardCharsets.UTF_8));
                m.start();
                members.put(f[2], m);
                String node = f[1] + "/" + f[2];
                long sid = client.getZookeeperClient().getZooKeeper().getSessionId();
                for (int i = 0; i < 600; i++) {
                    Stat st = client.checkExists().forPath(node);
                    if (st != null && st.getEphemeralOwner() == sid) {
                        return "OK";
                    }
                    Thread.sleep(50);
                }
                return "ERR " + node + " not created";
            }
            case "group-members": { // id: that member's view (its cache), sorted: OK id=payload...
                StringBuilder sb = new StringBuilder("OK");
                for (Map.Entry<String, byte[]> e : new TreeMap<>(members.get(f[1]).getCurrentMembers()).entrySet()) {
                    sb.append(' ').append(e.getKey()).append('=').append(new String(e.getValue(), StandardCharsets.UTF_8));
                }
                return sb.toString();
            }
            case "group-update": // id payload
                members.get(f[1]).setThisData(f[2].getBytes(StandardCharsets.UTF_8));
                return "OK";
            case "group-leave": // id
                members.remove(f[1]).close();
                return "OK";
            case "rw-wlock": { // path: the write lock of an InterProcessReadWriteLock, held until rw-downgrade
                InterProcessReadWriteLock rw = new InterProcessReadWriteLock(client, f[1]);
                rw.writeLock().acquire();
                rwLocks.put(f[1], rw);
                return "OK";
            }
            case "rw-downgrade": { // path: Curator's downgrade: the read lock taken while the write lock is held, then the write lock released
                InterProcessReadWriteLock rw = rwLocks.get(f[1]);
                rw.readLock().acquire();
                rw.writeLock().release();
                return "OK";
            }
            case "rw-runlock": // path: the read lock released
                rwLocks.remove(f[1]).readLock().release();
                return "OK";
            default:
                return "ERR unknown command " + f[0];
        }
    }

    // lockLoop takes the lock n times; inside each holding it increments the
    // counter with a version-checked write (or, for a read lock, reads it),
    // so an overlapping writer shows up as a BadVersion.
    private static String lockLoop(InterProcessLock lock, int n, String counter, String kind) throws Exception {
        ensure(counter);
        for (int i = 0; i < n; i++) {
            lock.acquire();
            try {
                out(hold(kind, counter, !kind.equals("read")));
            } finally {
                lock.release();
            }
        }
        return "OK " + n;
    }

    private static String hold(String kind, String counter, boolean write) throws Exception {
        long t0 = System.nanoTime();
        Stat st = new Stat();
        long v = Long.parseLong(new String(client.getData().storingStatIn(st).forPath(counter), StandardCharsets.UTF_8).trim());
        if (write) {
            v++;
            client.setData().withVersion(st.getVersion()).forPath(counter, Long.toString(v).getBytes(StandardCharsets.UTF_8));
        }
        long t1 = System.nanoTime();
        return "HOLD " + kind + " " + t0 + " " + t1 + " " + v;
    }

    // leaseHold spends a few round trips inside a lease, so that holdings
    // of different clients have room to overlap (up to the lease count).
    private static String leaseHold(String counter) throws Exception {
        return leaseHold(counter, "lease", 0);
    }

    // leaseHold with a kind and a value: semcount reports when its acquire
    // was called (System.nanoTime) as the value.
    private static String leaseHold(String counter, String kind, long value) throws Exception {
        long t0 = System.nanoTime();
        for (int i = 0; i < 3; i++) {
            client.getData().forPath(counter);
        }
        return "HOLD " + kind + " " + t0 + " " + System.nanoTime() + " " + value;
    }

    private static String selectorLoop(String path, int n, String counter) throws Exception {
        ensure(counter);
        AtomicInteger terms = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(1);
        LeaderSelector sel = new LeaderSelector(client, path, new LeaderSelectorListenerAdapter() {
            public void takeLeadership(CuratorFramework c) throws Exception {
                out(hold("selector", counter, true));
                if (terms.incrementAndGet() >= n) {
                    done.countDown();
                }
            }
        });
        sel.autoRequeue();
        sel.start();
        done.await();
        sel.close();
        return "OK " + n;
    }

    // zkQueue is ZooKeeper's own queue recipe (zookeeper-recipes-queue) on
    // the raw handle; its directory must exist.
    private static DistributedQueue zkQueue(String path) throws Exception {
        try {
            client.create().creatingParentsIfNeeded().forPath(path);
        } catch (KeeperException.NodeExistsException e) {
            // made by another client
        }
        return new DistributedQueue(client.getZookeeperClient().getZooKeeper(), path, ZooDefs.Ids.OPEN_ACL_UNSAFE);
    }

    private static void ensure(String counter) throws Exception {
        try {
            client.create().creatingParentsIfNeeded().forPath(counter, "0".getBytes(StandardCharsets.UTF_8));
        } catch (KeeperException.NodeExistsException e) {
            // another client made it first
        }
    }
}
