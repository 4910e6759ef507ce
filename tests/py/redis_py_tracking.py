#!/usr/bin/env python3
"""redis-py driving client-side caching on a server on 127.0.0.1:PORT, the
RESP2 way: one connection subscribed to __redis__:invalidate, trackers that
REDIRECT their invalidations to it (a default one and a BCAST one with a
prefix), and a writer. Run by tests/tests/redis_py.rs against seedkv-server
(and, when it is installed, against redis-server).

    python3 tests/py/redis_py_tracking.py PORT

Exits non-zero with a traceback on the first mismatch.
"""
import sys

import redis

INVALIDATE = "__redis__:invalidate"
TIMEOUT_S = 2.0


def connect(port):
    return redis.Redis(
        host="127.0.0.1", port=port, decode_responses=True, single_connection_client=True
    )


def next_message(p):
    """The next pub/sub message on p (not a confirmation), or None."""
    while True:
        m = p.get_message(timeout=TIMEOUT_S)
        if m is None or m["type"] == "message":
            return m


def main(port):
    w = connect(port)
    w.flushall()
    sub = redis.Redis(host="127.0.0.1", port=port, decode_responses=True)
    p = sub.pubsub()
    p.subscribe(INVALIDATE)
    assert p.get_message(timeout=TIMEOUT_S)["type"] == "subscribe"
    [listener] = w.client_list(_type="pubsub")
    sid = int(listener["id"])

    t = connect(port)
    assert t.client_tracking_on(clientid=sid) == "OK"
    assert t.client_getredir() == sid
    info = t.client_trackinginfo()
    assert info[1] == ["on"] and info[3] == sid, info

    # A read is remembered; another client's write tells the listener once.
    w.set("user:1", "a")
    assert t.get("user:1") == "a"
    w.set("user:1", "b")
    m = next_message(p)
    assert m == {"type": "message", "pattern": None, "channel": INVALIDATE,
                 "data": ["user:1"]}, m
    w.set("user:1", "c")
    assert t.get("user:1") == "c"
    # A flush invalidates everything: a null payload.
    w.flushall()
    m = next_message(p)
    assert m["channel"] == INVALIDATE and m["data"] is None, m

    # BCAST with a prefix: every write under it, read or not, and none
    # outside it.
    b = connect(port)
    assert b.client_tracking_on(clientid=sid, bcast=True, prefix=["obj:"]) == "OK"
    w.set("other", "1")
    w.mset({"obj:1": "x"})
    m = next_message(p)
    assert m["data"] == ["obj:1"], m
    assert next_message(p) is None

    assert t.client_tracking_off() == "OK"
    assert t.client_getredir() == -1
    print("redis-py", redis.__version__, "tracking OK on port", port)


if __name__ == "__main__":
    main(int(sys.argv[1]))
