#!/usr/bin/env python3
"""redis-py against a server on 127.0.0.1:PORT: common commands of every
type, an error reply, a pipeline, transactions (MULTI/EXEC and WATCH) and
pub/sub. Run by tests/tests/redis_py.rs against seedkv-server (and, when it
is installed, against redis-server, to keep the script itself honest).

    python3 tests/py/redis_py_smoke.py PORT

Exits non-zero with a traceback on the first mismatch.
"""
import sys

import redis


def main(port):
    r = redis.Redis(host="127.0.0.1", port=port, decode_responses=True)
    r.flushall()
    common(r)
    pipeline(r)
    transactions(r, port)
    pubsub(r)
    print("redis-py", redis.__version__, "OK on port", port)


def common(r):
    assert r.ping() is True
    assert r.set("greeting", "hello") is True
    assert r.get("greeting") == "hello"
    assert r.set("greeting", "other", nx=True) is None
    assert r.set("ttl", "v", ex=100) is True
    assert 0 < r.ttl("ttl") <= 100
    assert r.incr("n") == 1
    assert r.incrby("n", 41) == 42
    assert r.incrbyfloat("f", 1.5) == 1.5
    assert r.mset({"a": "1", "b": "2"}) is True
    assert r.mget(["a", "b", "nosuch"]) == ["1", "2", None]
    assert r.rpush("l", "a", "b", "c") == 3
    assert r.lrange("l", 0, -1) == ["a", "b", "c"]
    assert r.lpop("l") == "a"
    assert r.hset("h", mapping={"f1": "v1", "f2": "v2"}) == 2
    assert r.hgetall("h") == {"f1": "v1", "f2": "v2"}
    assert r.hincrby("h", "n", 5) == 5
    assert r.sadd("s", "x", "y") == 2
    assert r.smembers("s") == {"x", "y"}
    assert r.zadd("z", {"m1": 1, "m2": 2.5}) == 2
    assert r.zrange("z", 0, -1, withscores=True) == [("m1", 1.0), ("m2", 2.5)]
    assert r.zscore("z", "m2") == 2.5
    assert r.exists("a", "b", "nosuch") == 2
    assert r.type("l") == "list"
    assert r.expire("a", 50) is True
    assert r.persist("a") is True
    assert set(r.scan_iter(match="[ab]")) == {"a", "b"}
    assert r.delete("a", "b") == 2
    assert r.dbsize() == 8
    try:
        r.lpush("greeting", "x")
        raise AssertionError("LPUSH on a string must fail")
    except redis.ResponseError as e:
        assert str(e).startswith("WRONGTYPE"), e
    assert r.client_setname("py") is True
    assert r.client_getname() == "py"
    assert r.info("server")["redis_version"] == "7.0.15"
    assert r.config_get("maxclients") == {"maxclients": "10000"}


def pipeline(r):
    p = r.pipeline(transaction=False)
    for i in range(100):
        p.set(f"p{i}", i)
    p.get("p99")
    p.incr("greeting")  # an error inside a pipeline
    res = p.execute(raise_on_error=False)
    assert res[:100] == [True] * 100, res[:5]
    assert res[100] == "99"
    assert isinstance(res[101], redis.ResponseError), res[101]


def transactions(r, port):
    p = r.pipeline(transaction=True)
    p.incr("tx")
    p.incr("tx")
    p.get("tx")
    assert p.execute() == [1, 2, "2"]

    # WATCH: another client's write in between aborts the EXEC.
    other = redis.Redis(host="127.0.0.1", port=port, decode_responses=True)
    with r.pipeline() as p:
        p.watch("w")
        assert p.get("w") is None
        other.set("w", "theirs")
        p.multi()
        p.set("w", "mine")
        try:
            p.execute()
            raise AssertionError("EXEC after a watched key changed must fail")
        except redis.WatchError:
            pass
    assert r.get("w") == "theirs"

    # The optimistic-locking helper retries until it wins.
    def append_mine(pipe):
        current = pipe.get("w")
        pipe.multi()
        pipe.set("w", current + "+mine")

    r.transaction(append_mine, "w")
    assert r.get("w") == "theirs+mine"


def pubsub(r):
    ps = r.pubsub()
    ps.subscribe("ch")
    msg = ps.get_message(timeout=2)
    assert msg == {"type": "subscribe", "pattern": None, "channel": "ch", "data": 1}, msg
    ps.psubscribe("ne*")
    msg = ps.get_message(timeout=2)
    assert msg["type"] == "psubscribe" and msg["data"] == 2, msg
    assert r.publish("ch", "hi") == 1
    msg = ps.get_message(timeout=2)
    assert msg == {"type": "message", "pattern": None, "channel": "ch", "data": "hi"}, msg
    assert r.publish("news", "extra") == 1
    msg = ps.get_message(timeout=2)
    assert msg == {"type": "pmessage", "pattern": "ne*", "channel": "news", "data": "extra"}, msg
    assert r.pubsub_numsub("ch") == [("ch", 1)]
    ps.unsubscribe("ch")
    msg = ps.get_message(timeout=2)
    assert msg["type"] == "unsubscribe" and msg["data"] == 1, msg
    ps.punsubscribe()
    msg = ps.get_message(timeout=2)
    assert msg["type"] == "punsubscribe" and msg["data"] == 0, msg
    assert r.publish("ch", "nobody") == 0
    ps.close()


if __name__ == "__main__":
    main(int(sys.argv[1]))
