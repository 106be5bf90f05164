#!/usr/bin/env python3
"""A fake guest for the protocol's own tests: it speaks the protocol (or
breaks it in the way its first argument names) over an in-process lock table.
It holds no real lock: the locks themselves are always tested against real
servers; this tests only the lab's side of the protocol."""
import json
import os
import sys
import threading
import time

mode = sys.argv[1] if len(sys.argv) > 1 else "good"
if os.environ.get("FAKE_PIDFILE"):
    with open(os.environ["FAKE_PIDFILE"], "w") as f:
        f.write(str(os.getpid()))

out = threading.Lock()


def send(obj):
    with out:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


if mode == "crash":
    sys.stderr.write("fake guest: cannot load its library\n")
    sys.exit(3)

held = {}  # key -> lease
leases = {}  # lease -> key
seq = [0]
table = threading.Lock()


def grant(key):
    with table:
        if key in held:
            return None
        seq[0] += 1
        lease = "L%d" % seq[0]
        held[key] = lease
        leases[lease] = key
        return lease


def serve(req):
    op, rid = req["op"], req["id"]
    if op == "hello":
        if mode == "silent-hello":
            return
        if mode == "version":
            send({"id": rid, "ok": True, "name": "fake", "version": "0", "protocol": 2, "capabilities": {}})
            return
        if mode == "caps":
            send({"id": rid, "ok": True, "name": "fake", "version": "0", "protocol": 1,
                  "capabilities": {"fencing": True}})
            return
        send({"id": rid, "ok": True, "name": "fake", "version": "0", "protocol": 1,
              "capabilities": {"expiry": True}})
        return
    if mode == "silent":
        return
    if mode == "badjson":
        with out:
            sys.stdout.write("lock granted!\n")
            sys.stdout.flush()
        return
    if mode == "nothing":
        send({"id": rid + 1000, "ok": True})
        return
    if mode == "die":
        os._exit(7)
    if mode == "refuse":
        send({"id": rid, "ok": False, "error": {"kind": "protocol", "message": "fake: no such op " + op}})
        return
    if op in ("acquire", "try-acquire"):
        end = time.time() + req.get("timeout_ms", 0) / 1000.0
        while True:
            # A cancel is read before any later request on the same pipe,
            # so checking it before each try means a wait the lab gave up
            # on never takes a lock released after the cancel.
            if rid in cancelled:
                send({"id": rid, "ok": False, "error": {"kind": "timeout", "message": "cancelled"}})
                return
            lease = grant(req["key"])
            if lease:
                send({"id": rid, "ok": True, "lease": lease})
                if mode == "lose":
                    time.sleep(0.05)
                    send({"event": "lost", "lease": lease, "reason": "fake: told to lose it"})
                return
            if op == "try-acquire":
                send({"id": rid, "ok": False, "error": {"kind": "held", "message": "held"}})
                return
            if req.get("timeout_ms", 0) and time.time() > end:
                send({"id": rid, "ok": False, "error": {"kind": "timeout", "message": "waited"}})
                return
            time.sleep(0.01)
    if op in ("refresh", "release"):
        with table:
            key = leases.get(req["lease"])
            if key is None or held.get(key) != req["lease"]:
                send({"id": rid, "ok": False, "error": {"kind": "lost", "message": "not ours"}})
                return
            if op == "release":
                del held[key]
                del leases[req["lease"]]
        send({"id": rid, "ok": True})
        return
    send({"id": rid, "ok": False, "error": {"kind": "protocol", "message": "unknown op " + op}})


cancelled = set()
for raw in sys.stdin:
    req = json.loads(raw)
    if req["op"] == "close":
        send({"id": req["id"], "ok": True})
        continue
    if req["op"] == "cancel":
        cancelled.add(req["target"])
        send({"id": req["id"], "ok": True})
        continue
    threading.Thread(target=serve, args=(req,), daemon=True).start()
