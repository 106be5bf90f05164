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
 * Curator ties a mutex to the thread that acquired it (a release from
 * another thread throws IllegalMonitorStateException, and a second acquire
 * on the same thread re-enters), so every lease has a thread of its own, and
 * each lease is a new InterProcessMutex: two acquires of one key by one
 * guest contend like two processes, as the lab's other clients do.
 */
final class CuratorLease {
    /**
     * ROOT is the lab's own zookeeper lock's root (impls/zklock.Root), and
     * keys are escaped the same way, so the two locks contend on one path:
     * Curator's children are "_c_<guid>-lock-<seq>" like the lab's, and both
     * order them by the sequence after "lock-".
     */
    static final String ROOT = "/locklab/locks";

    final String id;
    private final CuratorGuest guest;
    private final String dir;
    private final ExecutorService thread;
    private volatile Mutex mutex;
    private boolean granted;
    private boolean lost;
    private boolean released;

    CuratorLease(CuratorGuest guest, String id, String key) {
        this.guest = guest;
        this.id = id;
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

    /**
     * acquire waits for the lock on the lease's thread. An acquire with a
     * bound is Curator's acquire(time); a try-acquire is Curator's
     * acquire(0): it makes its node, looks once, and deletes the node if it
     * is not first. Should Curator not return within the bound (plus
     * GRACE_MS, for a create stuck behind a cut connection), the guest
     * answers "unknown": the node may stand in line, and a grant that comes
     * after the answer is released at once.
     */
    void acquire(Call call, boolean wait, long timeoutMs) {
        guest.track(this);
        if (timeoutMs > 0) {
            guest.timers.schedule(() -> call.fail("unknown", "Curator did not return within " + timeoutMs + "ms"),
                    timeoutMs + CuratorGuest.GRACE_MS, TimeUnit.MILLISECONDS);
        }
        call.work = submit(call, () -> {
            mutex = new Mutex(guest.client(), dir);
            boolean got;
            try {
                if (!wait) {
                    got = mutex.acquire(0, TimeUnit.MILLISECONDS);
                } else if (timeoutMs > 0) {
                    got = mutex.acquire(timeoutMs, TimeUnit.MILLISECONDS);
                } else {
                    mutex.acquire();
                    got = true;
                }
            } catch (Exception e) {
                end();
                if (call.cancelled || e instanceof InterruptedException) {
                    call.fail("timeout", "cancelled");
                } else {
                    call.fail(acquireErrorKind(e), describe(e));
                }
                return;
            }
            if (!got) {
                end();
                if (!wait) {
                    call.fail("held", "held by another client");
                } else {
                    call.fail("timeout", "not granted within " + timeoutMs + "ms");
                }
                return;
            }
            grant(call);
        });
    }

    /**
     * grant answers the acquire with the lease and its token. A grant made
     * while the connection is suspended is in doubt from its first moment,
     * as Curator's advice says of a held lock, so it is reported lost at
     * once.
     */
    private void grant(Call call) {
        long token;
        try {
            token = token();
        } catch (Exception e) {
            releaseQuietly();
            end();
            call.fail(e instanceof KeeperException.NoNodeException ? "backend" : "unknown",
                    "reading the fencing token: " + describe(e));
            return;
        }
        OwnerAudit.check(guest.client(), mutex.nodePath());
        synchronized (this) {
            ObjectNode a = guest.ok(call.id);
            a.put("lease", id);
            a.put("token", token);
            granted = true;
            if (!call.answer(a)) {
                // Answered already (a deadline, a cancel, a close): nobody
                // will release this grant, so give it up now.
                released = true;
                releaseQuietly();
                end();
                return;
            }
            if (guest.connectionDoubtful()) {
                markLost("granted while the connection was suspended");
            }
        }
    }

    /**
     * token is the lock directory's creation zxid plus our node's sequence
     * number, the lab's zookeeper lock's token (impls/zklock's lease.Token
     * says why it grows with every grant of a key, across deletions of the
     * directory: Curator makes it a container node, which the server deletes
     * once empty). Curator issues no token; reading it costs one listing per
     * grant. The listing and the directory's stat come in one reply, and our
     * node being in it proves the stat is of the directory our sequence
     * counts in.
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
     * node); it checks that the node is still this session's, which also
     * catches a node left from an expired session (CURATOR-604's case).
     */
    void refresh(Call call, long timeoutMs) {
        deadline(call, timeoutMs);
        call.work = submit(call, () -> {
            if (!holding()) {
                call.fail("lost", "the lock was lost or released");
                return;
            }
            try {
                Stat stat = guest.client().checkExists().forPath(mutex.nodePath());
                long session = guest.client().getZookeeperClient().getZooKeeper().getSessionId();
                if (stat == null) {
                    call.fail("lost", "lock node " + mutex.nodePath() + " is gone");
                } else if (stat.getEphemeralOwner() != session) {
                    call.fail("lost", "lock node belongs to session 0x" + Long.toHexString(stat.getEphemeralOwner())
                            + ", ours is 0x" + Long.toHexString(session));
                } else if (!holding()) {
                    call.fail("lost", "the connection was suspended while we asked");
                } else {
                    call.ok();
                }
            } catch (Exception e) {
                call.fail("unknown", describe(e));
            }
        });
    }

    /**
     * release deletes our node through Curator, which retries the delete in
     * the background until it succeeds ("guaranteed") and ignores a node
     * already gone: so whether the lease was still ours comes from what the
     * guest learnt before (a lost lease is answered "lost"), not from the
     * delete. The lease counts as released from the moment the request is
     * read, so no lost event follows it.
     */
    void release(Call call, long timeoutMs) {
        boolean wasLost;
        synchronized (this) {
            if (released) {
                call.fail("lost", "already released");
                return;
            }
            released = true;
            wasLost = lost;
        }
        guest.forget(this);
        deadline(call, timeoutMs);
        call.work = submit(call, () -> {
            try {
                mutex.release();
                if (wasLost) {
                    call.fail("lost", "the lock was lost before the release");
                } else {
                    call.ok();
                }
            } catch (Exception e) {
                call.fail("unknown", "release: " + describe(e));
            }
            stop();
        });
    }

    /** markLost reports a held lease lost, once; a lease not granted yet or released is left alone. */
    synchronized void markLost(String reason) {
        if (!granted || lost || released) {
            return;
        }
        lost = true;
        ObjectNode e = guest.event("lost");
        e.put("lease", id);
        e.put("reason", reason);
        guest.write(e);
    }

    private synchronized boolean holding() {
        return granted && !lost && !released;
    }

    /** deadline answers "unknown" for Curator if it is still at work when the lab stops waiting. */
    private void deadline(Call call, long timeoutMs) {
        if (timeoutMs > 0) {
            guest.timers.schedule(() -> call.fail("unknown", "Curator did not return within " + timeoutMs + "ms"),
                    timeoutMs, TimeUnit.MILLISECONDS);
        }
    }

    private void releaseQuietly() {
        try {
            mutex.release();
        } catch (Exception ignored) {
            // the node is gone, or Curator's guaranteed delete finishes it
        }
    }

    /** end forgets a lease that was never granted (or given up) and stops its thread. */
    private void end() {
        guest.forget(this);
        stop();
    }

    void stop() {
        thread.shutdown();
    }

    private java.util.concurrent.Future<?> submit(Call call, Runnable r) {
        try {
            return thread.submit(r);
        } catch (RejectedExecutionException e) {
            call.fail("lost", "lease " + id + " is over");
            return null;
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
