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
//
// Times are System.nanoTime() (CLOCK_MONOTONIC on Linux, as on the Go side).
// Nothing is done inside a holding, so the figures are the recipe's own.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.queue.SimpleDistributedQueue;
import org.apache.curator.retry.RetryForever;

public class Bench {
    private static String connect;
    private static int timeout;
    private static final List<CuratorFramework> clients = new ArrayList<>();
    private static LeaderLatch latch;

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
        for (CuratorFramework c : clients) {
            c.close();
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
            default:
                return "ERR unknown command " + f[0];
        }
    }

    interface Step {
        void run(int j) throws Exception;
    }

    interface StepFactory {
        Step make(int i, CuratorFramework c) throws Exception;
    }

    // loop runs one thread for each of the first k clients, all started together, each repeating
    // its step until the deadline; it returns the steps done in all and the
    // time until the last thread finished.
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
                    for (int j = 0; System.nanoTime() < deadline[0]; j++) {
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
