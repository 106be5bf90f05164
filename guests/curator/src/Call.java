import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Call is one request awaiting its answer. The protocol wants exactly one
 * answer per request, but several parties may try to give it: the lease's
 * thread when Curator returns, a deadline timer when Curator does not
 * return in time, a cancel, a close. The first one wins; the others learn
 * they lost (answer returns false), so a grant that comes too late is
 * released instead of being left held by nobody.
 */
final class Call {
    final long id;
    final String op;
    private final CuratorGuest guest;
    private final AtomicBoolean answered = new AtomicBoolean();
    /** cancelled: the lab sent cancel for this call. */
    volatile boolean cancelled;
    /** work is the call's task on its lease's thread, to interrupt on cancel. */
    volatile Future<?> work;

    Call(CuratorGuest guest, long id, String op) {
        this.guest = guest;
        this.id = id;
        this.op = op;
    }

    boolean answered() {
        return answered.get();
    }

    /** answer sends a, unless the call was already answered. */
    boolean answer(ObjectNode a) {
        if (!answered.compareAndSet(false, true)) {
            return false;
        }
        guest.forgetCall(this);
        guest.write(a);
        return true;
    }

    boolean ok() {
        return answer(guest.ok(id));
    }

    boolean fail(String kind, String message) {
        return answer(guest.error(id, kind, message));
    }
}
