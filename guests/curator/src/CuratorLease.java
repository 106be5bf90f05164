import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * One grant of Curator's InterProcessMutex, from its acquire to its release.
 *
 * Curator ties a mutex to the thread that acquired it (release from another
 * thread throws IllegalMonitorStateException, and a second acquire on the
 * same thread re-enters), so every lease has a thread of its own, and each
 * lease is a new InterProcessMutex: two acquires of one key by one guest
 * contend like two processes, as the lab's other clients do.
 */
final class CuratorLease {
    /**
     * Root is the lab's own zookeeper lock's root (impls/zklock.Root), and
     * keys are escaped the same way, so the two locks contend on one path:
     * Curator's children are "_c_<guid>-lock-<seq>" like the lab's, and both
     * order them by the sequence after "lock-".
     */
    static final String ROOT = "/locklab/locks";

    final long id;
    private final CuratorGuest guest;
    private final String key;
    private final String dir;
    private final ExecutorService thread;
    private Mutex mutex;
    private boolean granted;
    private boolean lost;
    private boolean released;

    CuratorLease(CuratorGuest guest, long id, String key) {
        this.guest = guest;
        this.id = id;
        this.key = key;
        this.dir = ROOT + "/" + escapeKey(key);
        this.thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "lease-" + id);
            t.setDaemon(true);
            return t;
        });
    }

    /** Mutex exposes the node Curator made for us, to read its sequence. */
    private static final class Mutex extends InterProcessMutex {
        Mutex(CuratorFramework client, String path) {
            super(client, path);
        }

        String nodePath() {
            return getLockPath();
        }
    }

    void acquire(long reqId, boolean wait, long timeoutMs) {
        guest.track(this);
        submit(reqId, () -> {
            mutex = new Mutex(guest.client(), dir);
            boolean got;
            try {
                if (!wait) {
                    // A zero wait: Curator makes its node, looks once, and
                    // deletes the node if it is not first.
                    got = mutex.acquire(0, TimeUnit.MILLISECONDS);
                } else if (timeoutMs > 0) {
                    got = mutex.acquire(timeoutMs, TimeUnit.MILLISECONDS);
                } else {
                    mutex.acquire();
                    got = true;
                }
            } catch (Exception e) {
                guest.forget(this);
                guest.answer(guest.error(reqId, acquireErrorKind(e), describe(e)));
                stop();
                return;
            }
            if (!got) {
                guest.forget(this);
                guest.answer(guest.error(reqId, wait ? "timeout" : "held",
                        wait ? "not granted within " + timeoutMs + "ms" : "held by another client"));
                stop();
                return;
            }
            Long token = null;
            if (guest.fenced()) {
                try {
                    token = token();
                } catch (Exception e) {
                    releaseQuietly();
                    guest.forget(this);
                    guest.answer(guest.error(reqId, e instanceof KeeperException.NoNodeException ? "lost" : "backend",
                            "reading the fencing token: " + describe(e)));
                    stop();
                    return;
                }
            }
            synchronized (this) {
                granted = true;
                ObjectNode a = guest.ok(reqId);
                a.put("lease", id);
                if (token != null) {
                    a.put("token", token);
                }
                guest.answer(a);
                // A grant made while the connection is suspended is in doubt
                // from its first moment, as Curator's advice says of a held
                // lock.
                if (guest.connectionDoubtful()) {
                    markLost("granted while the connection was suspended");
                }
            }
        });
    }

    /**
     * token is the lock directory's creation zxid plus our node's sequence
     * number, the lab's zookeeper lock's token (impls/zklock, lease.Token,
     * says why it grows with every grant of the key, across deletions of the
     * directory; Curator makes the directory a container node, which the
     * server deletes once empty). Curator issues no token, so this costs one
     * listing per grant, made only when the lab asks for fencing. The
     * listing and the directory's stat come in one reply, and our node being
     * in it proves the stat is of the directory our sequence counts in.
     */
    private long token() throws Exception {
        String path = mutex.nodePath();
        String node = path.substring(path.lastIndexOf('/') + 1);
        Stat stat = new Stat();
        List<String> children = guest.client().getChildren().storingStatIn(stat).forPath(dir);
        if (!children.contains(node)) {
            throw new KeeperException.NoNodeException(path);
        }
        return stat.getCzxid() + Long.parseLong(node.substring(node.length() - 10));
    }

    /**
     * refresh has no lease time to extend (the session's pings keep the
     * node); it checks that the node is still this session's.
     */
    void refresh(long reqId) {
        submit(reqId, () -> {
            if (!holding()) {
                guest.answer(guest.error(reqId, "lost", "the lock was lost or released"));
                return;
            }
            try {
                Stat stat = guest.client().checkExists().forPath(mutex.nodePath());
                long session = guest.client().getZookeeperClient().getZooKeeper().getSessionId();
                if (stat == null) {
                    guest.answer(guest.error(reqId, "lost", "lock node " + mutex.nodePath() + " is gone"));
                } else if (stat.getEphemeralOwner() != session) {
                    guest.answer(guest.error(reqId, "lost", "lock node belongs to session 0x"
                            + Long.toHexString(stat.getEphemeralOwner()) + ", ours is 0x" + Long.toHexString(session)));
                } else if (isLost()) {
                    guest.answer(guest.error(reqId, "lost", "the connection was suspended while we asked"));
                } else {
                    guest.answer(guest.ok(reqId));
                }
            } catch (Exception e) {
                guest.answer(guest.error(reqId, "backend", describe(e)));
            }
        });
    }

    /**
     * release deletes our node through Curator, which retries the delete in
     * the background until it succeeds ("guaranteed") and ignores a node
     * already gone: so a lost lease is answered "lost" from what the guest
     * learnt, not from the delete.
     */
    void release(long reqId) {
        submit(reqId, () -> {
            boolean wasLost;
            synchronized (this) {
                if (released) {
                    guest.answer(guest.error(reqId, "lost", "already released"));
                    return;
                }
                released = true;
                wasLost = lost;
            }
            guest.forget(this);
            try {
                mutex.release();
                guest.answer(wasLost ? guest.error(reqId, "lost", "the lock was lost before the release")
                        : guest.ok(reqId));
            } catch (Exception e) {
                guest.answer(guest.error(reqId, "unknown", "release: " + describe(e)));
            }
            stop();
        });
    }

    /** markLost reports a held lease lost, once; a lease not granted yet is left alone. */
    synchronized void markLost(String reason) {
        if (!granted || lost || released) {
            return;
        }
        lost = true;
        ObjectNode e = guest.event("lost");
        e.put("lease", id);
        e.put("reason", reason);
        guest.answer(e);
    }

    private synchronized boolean holding() {
        return granted && !lost && !released;
    }

    private synchronized boolean isLost() {
        return lost;
    }

    private void releaseQuietly() {
        try {
            mutex.release();
        } catch (Exception ignored) {
            // the node is gone or Curator's guaranteed delete will finish it
        }
    }

    void stop() {
        thread.shutdownNow();
    }

    private void submit(long reqId, Runnable r) {
        try {
            thread.execute(r);
        } catch (RejectedExecutionException e) {
            guest.answer(guest.error(reqId, "lost", "lease " + id + " is over"));
        }
    }

    /**
     * acquireErrorKind: a connection loss may have left our node made and in
     * line (Curator's protected mode finds it only on a retry), so the
     * outcome is unknown; anything else failed before a grant.
     */
    private static String acquireErrorKind(Exception e) {
        if (e instanceof KeeperException.ConnectionLossException || e instanceof KeeperException.OperationTimeoutException) {
            return "unknown";
        }
        return "backend";
    }

    private static String describe(Exception e) {
        return e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
    }

    /**
     * escapeKey is Go's url.PathEscape, as impls/zklock's lockDir uses it,
     * so both locks name a key's directory alike: a key with a slash does
     * not reach into another lock's tree, and "." and ".." are spelled
     * escaped, since ZooKeeper refuses them as names.
     */
    static String escapeKey(String key) {
        StringBuilder b = new StringBuilder();
        for (byte c : key.getBytes(StandardCharsets.UTF_8)) {
            int u = c & 0xff;
            boolean keep = (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9')
                    || u == '-' || u == '_' || u == '.' || u == '~'
                    || u == '$' || u == '&' || u == '+' || u == ':' || u == '=' || u == '@';
            if (keep) {
                b.append((char) u);
            } else {
                b.append('%').append(Character.toUpperCase(Character.forDigit(u >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(u & 0xf, 16)));
            }
        }
        String seg = b.toString();
        if (seg.equals(".") || seg.equals("..")) {
            seg = seg.replace(".", "%2E");
        }
        return seg;
    }
}
