#!/usr/bin/python3
"""Writes fuzz/seeds/rdb_payload/: objects DUMPed by a real redis-server
7.0 (footer stripped; the target adds a valid one), one per type and
encoding. Run from fuzz/seeds/ with a redis-server on port 7777 (its data
is flushed): /usr/bin/python3 rdb_payload.py
"""
import os

import redis

r = redis.Redis(port=7777)
r.flushall()
r.config_set("hash-max-listpack-entries", 128)
r.set("s1", "hello"); r.set("s2", "12345"); r.set("s3", "x" * 200); r.set("s4", "-300")
r.rpush("l1", "a", "1", "-70000", "hello world")
r.rpush("l2", *[f"e{i}" * 20 for i in range(600)])
r.hset("h1", mapping={"f": "v", "n": "5"})
r.hset("h2", mapping={f"f{i}": f"v{i}" for i in range(200)})
r.sadd("st1", 1, 2, 70000); r.sadd("st2", "a", "b"); r.sadd("st3", *range(600))
r.zadd("z1", {"a": 1, "b": 2.5, "c": float("inf")})
r.zadd("z2", {f"m{i}": i / 7 for i in range(200)})
os.makedirs("rdb_payload", exist_ok=True)
for key in ["s1", "s2", "s3", "s4", "l1", "l2", "h1", "h2", "st1", "st2", "st3", "z1", "z2"]:
    with open(os.path.join("rdb_payload", key), "wb") as f:
        f.write(r.dump(key)[:-10])
