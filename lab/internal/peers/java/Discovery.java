// Discovery is zkrecipes' curator-x-discovery counterpart for interoperability
// tests: it connects to ZooKeeper, prints "READY <session id hex>", then runs
// one command per line on stdin and answers "OK ..." or "ERR ..." (the line
// protocol of Peer.java). Arguments are key=value pairs; a value "-" is Java's
// null, and "b64:<base64url>" carries UTF-8 text with spaces or newlines.
//
//   session                                         -> OK <session id hex>
//   encode <instance fields> [mode=compat|full]     -> OK <b64 of the serializer's bytes>
//   decode data=<b64> [class=object|details]        -> OK <b64 of the instance re-serialized in full mode> <payload class|null>
//   register base=<path> <instance fields> [mode=]  -> OK      (ServiceDiscovery.registerService)
//   update base=<path> <instance fields> [mode=]    -> OK      (updateService)
//   unregister base=<path> name= id= [mode=]        -> OK      (unregisterService)
//   query base=<path> name= [class=]                -> OK <n> <b64 json>,<payload class> ...   (queryForInstances)
//   instance base=<path> name= id= [class=]         -> OK <b64 json> <payload class> | OK null   (queryForInstance)
//   names base=<path>                               -> OK <name> ...   (queryForNames)
//   provider-start base= name= strategy=round-robin|random|sticky -> OK   (a ServiceProvider, started)
//   provider-get                                    -> OK <id> | OK null   (getInstance)
//   provider-all                                    -> OK <id> ...   (getAllInstances, sorted)
//   provider-note id=                               -> OK   (noteError on the provider's instance with that id)
//   provider-close                                  -> OK
//
// Instance fields: name= id= address= port= ssl= time= type= uri= enabled= and
// payload=<kind>:<value> with kind string (b64 text), long, details
// (<description>,<weight>: a Discovery$Details POJO) or json (b64 JSON read
// into Java objects: a map, a list, a string, a number). A missing field keeps
// Curator's builder default; mode=full uses JsonInstanceSerializer(c, false),
// which also writes "enabled" (the default serializer, mode=compat, does not).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryForever;
import org.apache.curator.x.discovery.ProviderStrategy;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.ServiceInstanceBuilder;
import org.apache.curator.x.discovery.ServiceProvider;
import org.apache.curator.x.discovery.ServiceType;
import org.apache.curator.x.discovery.UriSpec;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;
import org.apache.curator.x.discovery.strategies.RandomStrategy;
import org.apache.curator.x.discovery.strategies.RoundRobinStrategy;
import org.apache.curator.x.discovery.strategies.StickyStrategy;

public class Discovery {
    // Details is a typed payload: Jackson writes it with "@class":"Discovery$Details".
    public static class Details {
        public String description;
        public int weight;

        public Details() {
        }
    }

    private static CuratorFramework client;
    private static final Map<String, ServiceDiscovery<Object>> discoveries = new HashMap<>();
    private static final ObjectMapper mapper = new ObjectMapper();
    private static ServiceProvider<Object> provider;
    private static ServiceDiscovery<Object> providerDiscovery;

    private static synchronized void out(String line) {
        System.out.println(line);
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: Discovery <connect string> <session timeout ms>");
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
        out("READY " + Long.toHexString(client.getZookeeperClient().getZooKeeper().getSessionId()));
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
                out(run(f[0], args(f)));
            } catch (Exception e) {
                out("ERR " + e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).replace('\n', ' '));
            }
        }
        if (provider != null) {
            provider.close();
            providerDiscovery.close();
        }
        for (ServiceDiscovery<Object> sd : discoveries.values()) {
            sd.close();
        }
        client.close();
    }

    private static Map<String, String> args(String[] f) {
        Map<String, String> m = new HashMap<>();
        for (int i = 1; i < f.length; i++) {
            int eq = f[i].indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException("not key=value: " + f[i]);
            }
            m.put(f[i].substring(0, eq), f[i].substring(eq + 1));
        }
        return m;
    }

    // value decodes "-" (null) and "b64:..." (base64url UTF-8); else the literal.
    private static String value(String v) {
        if (v == null || v.equals("-")) {
            return null;
        }
        if (v.startsWith("b64:")) {
            return new String(Base64.getUrlDecoder().decode(v.substring(4)), StandardCharsets.UTF_8);
        }
        return v;
    }

    private static String b64(byte[] b) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }

    private static Class<?> payloadClass(Map<String, String> a) {
        return "details".equals(a.get("class")) ? Details.class : Object.class;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static JsonInstanceSerializer<Object> serializer(Map<String, String> a) {
        boolean compat = !"full".equals(a.get("mode"));
        return new JsonInstanceSerializer(payloadClass(a), compat);
    }

    private static ServiceDiscovery<Object> discovery(Map<String, String> a) throws Exception {
        String base = a.get("base");
        String key = base + " " + a.getOrDefault("mode", "compat") + " " + a.getOrDefault("class", "object");
        ServiceDiscovery<Object> sd = discoveries.get(key);
        if (sd == null) {
            sd = ServiceDiscoveryBuilder.builder(Object.class)
                    .client(client)
                    .basePath(base)
                    .serializer(serializer(a))
                    .build();
            sd.start();
            discoveries.put(key, sd);
        }
        return sd;
    }

    private static ServiceInstance<Object> instance(Map<String, String> a) throws Exception {
        ServiceInstanceBuilder<Object> b = ServiceInstance.builder();
        b.name(value(a.get("name")));
        if (a.containsKey("id")) {
            b.id(value(a.get("id")));
        }
        if (a.containsKey("address")) {
            b.address(value(a.get("address")));
        }
        if (value(a.get("port")) != null) { // the builder's default is null
            b.port(Integer.parseInt(a.get("port")));
        }
        if (value(a.get("ssl")) != null) {
            b.sslPort(Integer.parseInt(a.get("ssl")));
        }
        if (a.containsKey("time")) {
            b.registrationTimeUTC(Long.parseLong(a.get("time")));
        }
        if (a.containsKey("type")) {
            String t = value(a.get("type"));
            b.serviceType(t == null ? null : ServiceType.valueOf(t));
        }
        if (a.containsKey("uri")) {
            String u = value(a.get("uri"));
            b.uriSpec(u == null ? null : new UriSpec(u));
        }
        if (a.containsKey("enabled")) {
            b.enabled(Boolean.parseBoolean(a.get("enabled")));
        }
        String p = a.get("payload");
        if (p != null && !p.equals("-")) {
            int colon = p.indexOf(':');
            String kind = p.substring(0, colon), v = p.substring(colon + 1);
            switch (kind) {
                case "string":
                    b.payload(value(v));
                    break;
                case "long":
                    b.payload(Long.valueOf(v));
                    break;
                case "details": {
                    Details d = new Details();
                    int comma = v.lastIndexOf(',');
                    d.description = value(v.substring(0, comma));
                    d.weight = Integer.parseInt(v.substring(comma + 1));
                    b.payload(d);
                    break;
                }
                case "json":
                    b.payload(mapper.readValue(value(v), Object.class));
                    break;
                default:
                    throw new IllegalArgumentException("payload kind " + kind);
            }
        }
        return b.build();
    }

    // describe is an instance as Curator parsed it: re-serialized in full
    // mode (every field, "enabled" included) and its payload's Java class.
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static String describe(ServiceInstance<Object> inst) throws Exception {
        JsonInstanceSerializer<Object> full = new JsonInstanceSerializer(Object.class, false);
        Object p = inst.getPayload();
        return b64(full.serialize(inst)) + " " + (p == null ? "null" : p.getClass().getName());
    }

    private static ProviderStrategy<Object> strategy(String name) {
        switch (name) {
            case "round-robin":
                return new RoundRobinStrategy<>();
            case "random":
                return new RandomStrategy<>();
            case "sticky":
                return new StickyStrategy<>(new RoundRobinStrategy<>());
            default:
                throw new IllegalArgumentException("strategy " + name);
        }
    }

    private static String run(String cmd, Map<String, String> a) throws Exception {
        switch (cmd) {
            case "session":
                return "OK " + Long.toHexString(client.getZookeeperClient().getZooKeeper().getSessionId());
            case "encode":
                return "OK " + b64(serializer(a).serialize(instance(a)));
            case "decode": {
                byte[] data = Base64.getUrlDecoder().decode(a.get("data"));
                return "OK " + describe(serializer(a).deserialize(data));
            }
            case "register":
                discovery(a).registerService(instance(a));
                return "OK";
            case "update":
                discovery(a).updateService(instance(a));
                return "OK";
            case "unregister": {
                ServiceInstance<Object> inst = ServiceInstance.builder().name(value(a.get("name"))).id(value(a.get("id"))).build();
                discovery(a).unregisterService(inst);
                return "OK";
            }
            case "query": {
                Collection<ServiceInstance<Object>> all = discovery(a).queryForInstances(value(a.get("name")));
                StringBuilder sb = new StringBuilder("OK ").append(all.size());
                for (ServiceInstance<Object> inst : all) {
                    sb.append(' ').append(describe(inst).replace(' ', ','));
                }
                return sb.toString();
            }
            case "instance": {
                ServiceInstance<Object> inst = discovery(a).queryForInstance(value(a.get("name")), value(a.get("id")));
                return inst == null ? "OK null" : "OK " + describe(inst);
            }
            case "names": {
                StringBuilder sb = new StringBuilder("OK");
                for (String n : discovery(a).queryForNames()) {
                    sb.append(' ').append(n);
                }
                return sb.toString();
            }
            case "provider-start": {
                if (provider != null) {
                    return "ERR provider already started";
                }
                providerDiscovery = ServiceDiscoveryBuilder.builder(Object.class)
                        .client(client)
                        .basePath(a.get("base"))
                        .build();
                providerDiscovery.start();
                provider = providerDiscovery.serviceProviderBuilder()
                        .serviceName(value(a.get("name")))
                        .providerStrategy(strategy(a.getOrDefault("strategy", "round-robin")))
                        .build();
                provider.start();
                return "OK";
            }
            case "provider-get": {
                ServiceInstance<Object> inst = provider.getInstance();
                return inst == null ? "OK null" : "OK " + inst.getId();
            }
            case "provider-all": {
                List<String> ids = new ArrayList<>();
                for (ServiceInstance<Object> inst : provider.getAllInstances()) {
                    ids.add(inst.getId());
                }
                Collections.sort(ids);
                return ("OK " + String.join(" ", ids)).trim();
            }
            case "provider-note": {
                String id = value(a.get("id"));
                for (ServiceInstance<Object> inst : provider.getAllInstances()) {
                    if (inst.getId().equals(id)) {
                        provider.noteError(inst);
                        return "OK";
                    }
                }
                return "ERR no instance " + id;
            }
            case "provider-close":
                provider.close();
                providerDiscovery.close();
                provider = null;
                providerDiscovery = null;
                return "OK";
            default:
                return "ERR unknown command " + cmd;
        }
    }
}
