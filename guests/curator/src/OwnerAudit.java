import java.io.FileWriter;
import java.io.IOException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.Stat;

/**
 * OwnerAudit looks for CURATOR-604 (two clients both believe they hold the
 * lock after a session expiry): Curator grants on a node it finds first in
 * line, without asking whether that node is its current session's. When
 * LOCKLAB_CURATOR_OWNER_LOG names a file, every grant reads its node's
 * ephemeral owner and appends a line there when it is not the session the
 * client has now (the node was made by a session that expired, and the
 * server will delete it). Off by default: it costs a read per grant, and
 * it only reports; the grant goes ahead as Curator made it.
 */
final class OwnerAudit {
    private static final String LOG = System.getenv("LOCKLAB_CURATOR_OWNER_LOG");
    /** clientId is hello's client_id, which names the client in the lab's history. */
    static volatile String clientId = "";

    private OwnerAudit() {
    }

    static void check(CuratorFramework client, String node) {
        if (LOG == null || LOG.isEmpty()) {
            return;
        }
        String line;
        try {
            long session = client.getZookeeperClient().getZooKeeper().getSessionId();
            Stat stat = client.checkExists().forPath(node);
            if (stat == null) {
                line = "granted on " + node + ", which no longer exists (session 0x" + Long.toHexString(session) + ")";
            } else if (stat.getEphemeralOwner() != session) {
                line = "granted on " + node + ", owned by session 0x" + Long.toHexString(stat.getEphemeralOwner())
                        + ", not the client's session 0x" + Long.toHexString(session);
            } else {
                line = "ok " + node;
            }
        } catch (Exception e) {
            line = "could not check " + node + ": " + e;
        }
        synchronized (OwnerAudit.class) {
            try (FileWriter w = new FileWriter(LOG, true)) {
                w.write(System.currentTimeMillis() + " pid " + ProcessHandle.current().pid() + " client " + clientId + " " + line + "\n");
            } catch (IOException e) {
                System.err.println("curator guest: owner audit: " + e.getMessage());
            }
        }
    }
}
