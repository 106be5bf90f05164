import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * The lab's guest for Apache Curator's InterProcessMutex: one JSON request a
 * line on stdin, one JSON answer or event a line on stdout, as
 * docs/guests/protocol.md (version 1) describes. stdout belongs to the
 * protocol alone, so System.out is pointed at stderr before any library can
 * print to it.
 *
 * The reading thread never waits on ZooKeeper except in hello: every lease
 * operation runs on that lease's own thread (Curator ties a mutex to the
 * thread that acquired it), so a refresh or a cancel is read while an
 * acquire waits.
 */
public final class CuratorGuest {
    static final String NAME = "curator";
    static final int PROTOCOL = 1;
    /** How long after a cancel (or a deadline) Curator gets to return before the guest answers for it. */
    static final long GRACE_MS = 2000;

    private final ObjectMapper json = new ObjectMapper();
    private final OutputStream out;
    private CuratorFramework client;
    private final Map<String, CuratorLease> leases = new ConcurrentHashMap<>();
    private final Map<Long, Call> calls = new ConcurrentHashMap<>();
    private final AtomicLong nextLease = new AtomicLong(1);
    final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "deadlines");
        t.setDaemon(true);
        return t;
    });
    /** The latest connection state Curator reported; null before the first. */
    private volatile ConnectionState state;
    private volatile boolean closed;

    private CuratorGuest(OutputStream out) {
        this.out = out;
    }

    public static void main(String[] args) throws Exception {
        OutputStream protocolOut = new FileOutputStream(FileDescriptor.out);
        System.setOut(new PrintStream(new FileOutputStream(FileDescriptor.err), true));
        new CuratorGuest(protocolOut).serve();
    }

    /** serve reads requests until stdin ends, then exits without releasing anything, as a crash would. */
    private void serve() throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode req;
            try {
                req = json.readTree(line);
            } catch (IOException e) {
                // Without a readable id there is nothing to answer to.
                System.err.println("curator guest: unreadable request: " + e.getMessage());
                continue;
            }
            handle(req);
        }
        closeClient();
        System.exit(0);
    }

    private void handle(JsonNode req) {
        long id = req.path("id").asLong();
        String op = req.path("op").asText("");
        Call call = new Call(this, id, op);
        calls.put(id, call);
        try {
            if (closed && !op.equals("close") && !op.equals("cancel")) {
                throw new GuestError("backend", "the client was closed");
            }
            switch (op) {
                case "hello":
                    hello(call, req);
                    break;
                case "acquire":
                case "try-acquire":
                    acquire(call, req);
                    break;
                case "refresh":
                    lease(req).refresh(call, req.path("timeout_ms").asLong(0));
                    break;
                case "release":
                    lease(req).release(call, req.path("timeout_ms").asLong(0));
                    break;
                case "cancel":
                    cancel(req.path("target").asLong(-1));
                    call.ok();
                    break;
                case "close":
                    close();
                    call.ok();
                    break;
                default:
                    throw new GuestError("protocol", "unknown op \"" + op + "\"");
            }
        } catch (GuestError e) {
            call.fail(e.kind, e.getMessage());
        }
    }

    private void hello(Call call, JsonNode req) throws GuestError {
        int protocol = req.path("protocol").asInt(-1);
        if (protocol != PROTOCOL) {
            throw new GuestError("protocol", "this guest speaks protocol " + PROTOCOL + ", asked for " + protocol);
        }
        JsonNode config = req.path("config");
        List<String> servers = new ArrayList<>();
        config.path("servers").path("zookeeper").forEach(s -> servers.add(s.asText()));
        if (servers.isEmpty()) {
            throw new GuestError("protocol", "hello's config.servers has no zookeeper addresses");
        }
        int ttl = config.path("ttl_ms").asInt(10000);
        String clientId = config.path("client_id").asText("");
        OwnerAudit.clientId = clientId;
        // The session timeout is the lease: the server ends a silent
        // client's session, and deletes its lock nodes, after it. Curator's
        // connection timeout bounds each wait for a connection, and the
        // retries are short, so the library's own timeouts stay near it.
        CuratorFrameworkFactory.Builder b = CuratorFrameworkFactory.builder()
                .connectString(String.join(",", servers))
                .sessionTimeoutMs(ttl)
                .connectionTimeoutMs(ttl)
                .retryPolicy(new ExponentialBackoffRetry(50, 3));
        if (!clientId.isEmpty()) {
            // Curator writes this into every lock node (by default the
            // host's address), so the lab's client id is what a human
            // reading the lock's children sees.
            b.defaultData(clientId.getBytes(StandardCharsets.UTF_8));
        }
        client = b.build();
        client.getConnectionStateListenable().addListener((c, newState) -> onState(newState));
        client.start();
        try {
            if (!client.blockUntilConnected(10, TimeUnit.SECONDS)) {
                throw new GuestError("backend", "no ZooKeeper session with " + servers + " within 10s");
            }
        } catch (InterruptedException e) {
            throw new GuestError("backend", "interrupted while connecting");
        }
        ObjectNode a = ok(call.id);
        a.put("name", "curator-recipes");
        a.put("version", curatorVersion());
        a.put("protocol", PROTOCOL);
        ObjectNode caps = a.putObject("capabilities");
        caps.put("fencing", true);
        caps.put("reentrant", false);
        caps.put("renewal", true);
        caps.put("lostnotify", true);
        caps.put("nopolling", true);
        caps.put("queued", true);
        caps.put("expiry", true);
        caps.put("validity", false);
        call.answer(a);
    }

    /** curatorVersion reads the version Maven recorded in the recipes jar (its manifest has none). */
    private static String curatorVersion() {
        String res = "/META-INF/maven/org.apache.curator/curator-recipes/pom.properties";
        try (InputStream in = InterProcessMutex.class.getResourceAsStream(res)) {
            if (in == null) {
                return "unknown";
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version", "unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }

    private void acquire(Call call, JsonNode req) throws GuestError {
        if (client == null) {
            throw new GuestError("protocol", call.op + " before hello");
        }
        String key = req.path("key").asText("");
        if (key.isEmpty()) {
            throw new GuestError("protocol", call.op + " without a key");
        }
        String leaseId = "L" + nextLease.getAndIncrement();
        CuratorLease lease = new CuratorLease(this, leaseId, key);
        lease.acquire(call, call.op.equals("acquire"), req.path("timeout_ms").asLong(0));
    }

    /**
     * lease finds the lease a refresh or release names. One the guest no
     * longer has (released, or given up after a late grant) is answered
     * "lost" by the lease-less stand-in, as the protocol asks of a lease
     * that is no longer ours.
     */
    private CuratorLease lease(JsonNode req) throws GuestError {
        String leaseId = req.path("lease").asText("");
        if (leaseId.isEmpty()) {
            throw new GuestError("protocol", "no lease named");
        }
        CuratorLease l = leases.get(leaseId);
        if (l == null) {
            throw new GuestError("lost", "lease " + leaseId + " is no longer held");
        }
        return l;
    }

    /**
     * cancel ends a waiting acquire: its thread is interrupted, Curator
     * deletes the node it stood in line with and throws, and the acquire is
     * answered "timeout" (or with its grant, if that came first). Should
     * Curator not return within GRACE_MS, the guest answers for it.
     */
    private void cancel(long target) {
        Call c = calls.get(target);
        if (c == null || c.answered()) {
            return;
        }
        c.cancelled = true;
        if (c.work != null) {
            c.work.cancel(true);
        }
        timers.schedule(() -> c.fail("timeout", "cancelled"), GRACE_MS, TimeUnit.MILLISECONDS);
    }

    /**
     * close ends the session without releasing anything: the server deletes
     * the session's ephemeral nodes at once, which frees every lock it held
     * or waited for. Requests still waiting are answered first.
     */
    private void close() {
        closed = true;
        for (Call c : calls.values()) {
            if (c.work != null) {
                c.work.cancel(true);
            }
            if (!c.op.equals("close")) {
                c.fail("backend", "the client was closed");
            }
        }
        closeClient();
    }

    private void closeClient() {
        for (CuratorLease l : leases.values()) {
            l.stop();
        }
        if (client != null) {
            client.close();
        }
    }

    /**
     * onState follows Curator's advice for its locks: after SUSPENDED the
     * holder can no longer be sure it holds the lock (the server may expire
     * the session and grant the next waiter before this client hears of
     * it), and after LOST it surely does not. Either way every lease held is
     * reported lost; a RECONNECTED does not give it back.
     */
    private void onState(ConnectionState s) {
        state = s;
        if (s == ConnectionState.SUSPENDED || s == ConnectionState.LOST) {
            for (CuratorLease l : leases.values()) {
                l.markLost("connection " + s.name());
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

    void track(CuratorLease l) {
        leases.put(l.id, l);
    }

    void forget(CuratorLease l) {
        leases.remove(l.id);
    }

    void forgetCall(Call c) {
        calls.remove(c.id, c);
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

    /** write sends one line, whole; lines from several threads never interleave. */
    synchronized void write(ObjectNode a) {
        try {
            out.write(json.writeValueAsBytes(a));
            out.write('\n');
            out.flush();
        } catch (IOException e) {
            // The lab has gone: nothing is left to answer to.
            System.exit(1);
        }
    }
}
