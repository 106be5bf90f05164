import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * The lab's guest for Apache Curator's InterProcessMutex: it reads one JSON
 * request a line on stdin and writes one JSON answer (or event) a line on
 * stdout, as docs/guests/protocol.md describes. stdout belongs to the
 * protocol alone, so System.out is pointed at stderr before any library can
 * print to it.
 *
 * Requests are handled in order on the reading thread, except acquire and
 * try-acquire, which may wait and so run on the lease's own thread (Curator
 * ties a mutex's ownership to the thread that acquired it, so release must
 * run there too).
 */
public final class CuratorGuest {
    static final String NAME = "curator";
    static final int PROTOCOL = 1;

    private final ObjectMapper json = new ObjectMapper();
    private final OutputStream out;
    private CuratorFramework client;
    private boolean fenced;
    private final Map<Long, CuratorLease> leases = new ConcurrentHashMap<>();
    private final AtomicLong nextLease = new AtomicLong(1);
    /** The latest connection state Curator reported; null before the first. */
    private volatile ConnectionState state;

    private CuratorGuest(OutputStream out) {
        this.out = out;
    }

    public static void main(String[] args) throws Exception {
        OutputStream protocolOut = new FileOutputStream(FileDescriptor.out);
        System.setOut(new PrintStream(new FileOutputStream(FileDescriptor.err), true));
        new CuratorGuest(protocolOut).serve();
    }

    private void serve() throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode req;
            try {
                req = json.readTree(line);
            } catch (Exception e) {
                // Without a readable id there is nothing to answer to.
                System.err.println("curator guest: unreadable request: " + e.getMessage());
                continue;
            }
            if (!handle(req)) {
                break;
            }
        }
        shutdown();
        System.exit(0);
    }

    /** handle answers one request; false means close was asked. */
    private boolean handle(JsonNode req) {
        long id = req.path("id").asLong();
        String op = req.path("op").asText("");
        try {
            switch (op) {
                case "hello":
                    hello(id, req);
                    return true;
                case "acquire":
                case "try-acquire":
                    startAcquire(id, req, op.equals("acquire"));
                    return true;
                case "refresh":
                    lease(id, req).refresh(id);
                    return true;
                case "release":
                    lease(id, req).release(id);
                    return true;
                case "close":
                    shutdown();
                    answer(ok(id));
                    return false;
                default:
                    answer(error(id, "protocol", "unknown op \"" + op + "\""));
                    return true;
            }
        } catch (GuestError e) {
            answer(error(id, e.kind, e.getMessage()));
            return true;
        }
    }

    private void hello(long id, JsonNode req) throws GuestError {
        int protocol = req.path("protocol").asInt(-1);
        if (protocol != PROTOCOL) {
            throw new GuestError("protocol", "this guest speaks protocol " + PROTOCOL + ", asked for " + protocol);
        }
        JsonNode config = req.path("config");
        List<String> servers = new ArrayList<>();
        config.path("servers").path("zookeeper").forEach(s -> servers.add(s.asText()));
        if (servers.isEmpty()) {
            throw new GuestError("backend", "no zookeeper servers in config.servers");
        }
        int ttl = config.path("ttl_ms").asInt(10000);
        fenced = config.path("fenced").asBoolean(false);
        // The session timeout is the lease: the server drops a silent
        // client's session, and its lock nodes, after it.
        client = CuratorFrameworkFactory.builder()
                .connectString(String.join(",", servers))
                .sessionTimeoutMs(ttl)
                .connectionTimeoutMs(ttl)
                .retryPolicy(new ExponentialBackoffRetry(50, 3))
                .build();
        client.getConnectionStateListenable().addListener((c, newState) -> onState(newState));
        client.start();
        try {
            if (!client.blockUntilConnected(10, TimeUnit.SECONDS)) {
                throw new GuestError("backend", "no ZooKeeper session with " + servers + " within 10s");
            }
        } catch (InterruptedException e) {
            throw new GuestError("backend", "interrupted while connecting");
        }
        ObjectNode a = ok(id);
        a.put("name", NAME);
        a.put("version", "curator-recipes " + curatorVersion());
        a.put("protocol", PROTOCOL);
        ObjectNode caps = a.putObject("capabilities");
        caps.put("fencing", true);
        caps.put("renewal", true);
        caps.put("lost_notify", true);
        caps.put("no_polling", true);
        caps.put("expiry", true);
        caps.put("reentrant", false);
        answer(a);
    }

    /** curatorVersion reads the version Maven recorded in the recipes jar (its manifest has none). */
    private static String curatorVersion() {
        String res = "/META-INF/maven/org.apache.curator/curator-recipes/pom.properties";
        try (java.io.InputStream in = org.apache.curator.framework.recipes.locks.InterProcessMutex.class.getResourceAsStream(res)) {
            if (in == null) {
                return "unknown";
            }
            java.util.Properties p = new java.util.Properties();
            p.load(in);
            return p.getProperty("version", "unknown");
        } catch (java.io.IOException e) {
            return "unknown";
        }
    }

    private void startAcquire(long id, JsonNode req, boolean wait) throws GuestError {
        if (client == null) {
            throw new GuestError("protocol", "acquire before hello");
        }
        String key = req.path("key").asText("");
        if (key.isEmpty()) {
            throw new GuestError("protocol", "acquire without a key");
        }
        long timeoutMs = req.path("timeout_ms").asLong(0);
        long leaseId = nextLease.getAndIncrement();
        CuratorLease lease = new CuratorLease(this, leaseId, key);
        lease.acquire(id, wait, timeoutMs);
    }

    private CuratorLease lease(long id, JsonNode req) throws GuestError {
        long leaseId = req.path("lease").asLong(-1);
        CuratorLease l = leases.get(leaseId);
        if (l == null) {
            throw new GuestError("protocol", "no lease " + leaseId);
        }
        return l;
    }

    /**
     * onState follows Curator's advice for its locks: on SUSPENDED the holder
     * can no longer be sure it holds the lock (the server may expire the
     * session and grant the next waiter before the client hears of it), and
     * on LOST it surely does not. Either way every lease held is reported
     * lost; a RECONNECTED does not give it back.
     */
    private void onState(ConnectionState s) {
        state = s;
        if (s == ConnectionState.SUSPENDED || s == ConnectionState.LOST) {
            for (CuratorLease l : leases.values()) {
                l.markLost(s.name());
            }
        }
    }

    /** connectionDoubtful says whether a grant made now is already in doubt. */
    boolean connectionDoubtful() {
        ConnectionState s = state;
        return s == ConnectionState.SUSPENDED || s == ConnectionState.LOST;
    }

    CuratorFramework client() {
        return client;
    }

    boolean fenced() {
        return fenced;
    }

    void track(CuratorLease l) {
        leases.put(l.id, l);
    }

    void forget(CuratorLease l) {
        leases.remove(l.id);
    }

    private void shutdown() {
        for (CuratorLease l : leases.values()) {
            l.stop();
        }
        leases.clear();
        if (client != null) {
            client.close();
            client = null;
        }
    }

    ObjectNode ok(long id) {
        ObjectNode a = json.createObjectNode();
        a.put("id", id);
        a.put("ok", true);
        return a;
    }

    ObjectNode error(long id, String kind, String message) {
        ObjectNode a = json.createObjectNode();
        a.put("id", id);
        a.put("ok", false);
        ObjectNode e = a.putObject("error");
        e.put("kind", kind);
        e.put("message", message == null ? "" : message);
        return a;
    }

    ObjectNode event(String name) {
        ObjectNode a = json.createObjectNode();
        a.put("event", name);
        return a;
    }

    /** answer writes one line; lines from several threads never interleave. */
    synchronized void answer(ObjectNode a) {
        try {
            out.write(json.writeValueAsBytes(a));
            out.write('\n');
            out.flush();
        } catch (Exception e) {
            // The lab has gone: nothing is left to answer to.
            System.exit(1);
        }
    }
}
