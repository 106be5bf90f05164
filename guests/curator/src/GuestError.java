/** GuestError is a request that fails with one of the protocol's error kinds. */
final class GuestError extends Exception {
    private static final long serialVersionUID = 1L;

    final String kind;

    GuestError(String kind, String message) {
        super(message);
        this.kind = kind;
    }
}
