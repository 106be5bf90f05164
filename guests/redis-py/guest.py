#!/usr/bin/python3
"""redis-py's Lock as a locklab guest (docs/guests/protocol.md, version 1).

One process is one lock client. Each request runs in a thread of its own, so
a waiting acquire never blocks a release or a cancel; answers go out whole,
one line at a time, under a mutex. The lock is redis-py's own: SET NX PX with
a random token, extend and release in its Lua scripts. The key is the Redis
key as the lab gives it.
"""
import json
import sys
import threading
import time

import redis
from redis.exceptions import ConnectionError, LockNotOwnedError, TimeoutError

out = threading.Lock()


def send(obj):
    with out:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


def fail(rid, kind, err):
    send({"id": rid, "ok": False, "error": {"kind": kind, "message": "%s: %s" % (type(err).__name__, err)}})


client = None
ttl = 1.0
leases = {}  # lease id -> redis.lock.Lock
seq = 0
cancelled = set()
table = threading.Lock()


def hello(req):
    global client, ttl
    cfg = req["config"]
    ttl = cfg["ttl_ms"] / 1000.0
    host, port = cfg["servers"]["redis"][0].rsplit(":", 1)
    # Socket timeouts under the TTL, as the lab's own clients have: a
    # stalled server fails a request before the lease it guards runs out.
    client = redis.Redis(host=host, port=int(port), socket_timeout=ttl / 2, socket_connect_timeout=ttl / 2)
    return {"name": "redis-py", "version": redis.__version__, "protocol": 1, "capabilities": {"expiry": True}}


def grant(req, blocking):
    global seq
    # thread_local=False: a lease is acquired in one thread and released in
    # another, so the token must not live in a thread-local.
    lock = client.lock(req["key"], timeout=ttl, sleep=0.01, thread_local=False)
    end = time.monotonic() + req["timeout_ms"] / 1000.0
    while True:
        # A cancel seen between slices ends the wait before another try.
        if blocking and req["id"] in cancelled:
            raise Timeout()
        # One SET NX PX per call; the wait loop is redis-py's own, cut into
        # slices so that a cancel is seen.
        left = end - time.monotonic() if req["timeout_ms"] else 0.05
        if lock.acquire(blocking=blocking, blocking_timeout=max(0.0, min(left, 0.05))):
            with table:
                seq += 1
                lease = "L%d" % seq
                leases[lease] = lock
            return {"lease": lease}
        if not blocking:
            raise Held()
        if req["id"] in cancelled or (req["timeout_ms"] and time.monotonic() >= end):
            raise Timeout()


class Held(Exception):
    pass


class Timeout(Exception):
    pass


def refresh(req):
    leases[req["lease"]].extend(ttl, replace_ttl=True)
    return {}


def release(req):
    lock = leases[req["lease"]]
    try:
        lock.release()
    except (ConnectionError, TimeoutError):
        # The lease stays: a retried release goes to the library again,
        # which decides what it can still do.
        raise
    except BaseException:
        forget(req["lease"])
        raise
    forget(req["lease"])
    return {}


def forget(lease):
    with table:
        leases.pop(lease, None)


ops = {"hello": hello, "acquire": lambda r: grant(r, True), "try-acquire": lambda r: grant(r, False),
       "refresh": refresh, "release": release}


def serve(req):
    rid = req["id"]
    try:
        answer = ops[req["op"]](req)
        send(dict(answer, id=rid, ok=True))
    except Held:
        send({"id": rid, "ok": False, "error": {"kind": "held", "message": "held by another client"}})
    except Timeout:
        send({"id": rid, "ok": False, "error": {"kind": "timeout", "message": "not granted in time"}})
    except (LockNotOwnedError, KeyError) as e:
        fail(rid, "lost", e)
    except (ConnectionError, TimeoutError) as e:
        # The request may have reached the server before the connection
        # failed: redis-py cannot tell, nor can we.
        fail(rid, "unknown", e)
    except redis.exceptions.LockError as e:
        # "Cannot release an unlocked lock": redis-py forgot the token.
        fail(rid, "lost", e)
    except Exception as e:  # noqa: BLE001 - every failure gets an answer
        fail(rid, "unknown", e)


for raw in sys.stdin:
    req = json.loads(raw)
    if req["op"] == "close":
        if client is not None:
            client.close()
        send({"id": req["id"], "ok": True})
    elif req["op"] == "cancel":
        cancelled.add(req["target"])
        send({"id": req["id"], "ok": True})
    elif req["op"] == "hello":
        serve(req)
    else:
        threading.Thread(target=serve, args=(req,), daemon=True).start()
