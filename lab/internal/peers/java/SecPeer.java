// SecPeer is the Curator counterpart of the security interop tests: a
// CuratorFramework authenticated with the digest scheme, whose nodes carry
// the ACL of an ACLProvider (all for the creator's principals, read for
// anyone), holding InterProcessMutexes step by step. It speaks Peer's line
// protocol (READY, then OK/ERR per command). Settings come as system
// properties, so that the runner's arguments stay those of every peer:
//   zkpeer.digest   user:password, added with authorization("digest", ...)
// TLS is the ZooKeeper client's own business (zookeeper.client.secure and
// the ssl properties, set by the test).
// Commands:
//   acquire <path>    InterProcessMutex(path).acquire(): OK <nanoTime once held>
//   release <path>    release it: OK <nanoTime just before the release>
//   delete <path>     delete one node: OK, or ERR NoAuthException ...
//   session           OK <session id hex>
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryForever;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;

public class SecPeer {
    private static CuratorFramework client;
    private static final Map<String, InterProcessMutex> locks = new HashMap<>();

    private static synchronized void out(String line) {
        System.out.println(line);
        System.out.flush();
    }

    // creatorAllWorldRead is the provider's only answer: all permissions for
    // the principals of the connection that creates the node, read for anyone.
    private static List<ACL> creatorAllWorldRead() {
        List<ACL> acl = new ArrayList<>(ZooDefs.Ids.CREATOR_ALL_ACL);
        acl.addAll(ZooDefs.Ids.READ_ACL_UNSAFE);
        return acl;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: SecPeer <connect string> <session timeout ms>");
            System.exit(2);
        }
        String digest = System.getProperty("zkpeer.digest");
        if (digest == null || !digest.contains(":")) {
            System.err.println("SecPeer needs -Dzkpeer.digest=user:password");
            System.exit(2);
        }
        int timeout = Integer.parseInt(args[1]);
        client = CuratorFrameworkFactory.builder()
                .connectString(args[0])
                .sessionTimeoutMs(timeout)
                .connectionTimeoutMs(Math.max(1000, timeout / 2))
                .retryPolicy(new RetryForever(100))
                .authorization("digest", digest.getBytes(StandardCharsets.UTF_8))
                .aclProvider(new ACLProvider() {
                    public List<ACL> getDefaultAcl() {
                        return creatorAllWorldRead();
                    }

                    public List<ACL> getAclForPath(String path) {
                        return creatorAllWorldRead();
                    }
                })
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
        for (InterProcessMutex m : locks.values()) {
            if (m.isAcquiredInThisProcess()) {
                m.release();
            }
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
            case "acquire": {
                InterProcessMutex m = locks.computeIfAbsent(f[1], p -> new InterProcessMutex(client, p));
                m.acquire();
                return "OK " + System.nanoTime();
            }
            case "release": {
                InterProcessMutex m = locks.get(f[1]);
                if (m == null) {
                    return "ERR no lock on " + f[1];
                }
                long t = System.nanoTime();
                m.release();
                return "OK " + t;
            }
            case "delete":
                client.delete().forPath(f[1]);
                return "OK";
            default:
                return "ERR unknown command " + f[0];
        }
    }
}
