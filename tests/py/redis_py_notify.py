"""redis-py driving keyspace notifications: CONFIG SET through the client,
a PubSub object on the keyspace and keyevent patterns (RESP2, as redis-py
4 speaks), writes of several families, and the messages it parsed, printed
one per line so that the Rust test can compare servers. Ends with OK."""

import sys
import time

import redis

port = int(sys.argv[1])
r = redis.Redis(port=port)
r.flushall()
r.config_set("notify-keyspace-events", "KEA")
assert r.config_get("notify-keyspace-events") == {"notify-keyspace-events": "AKE"}

p = r.pubsub()
p.psubscribe("__keyspace@0__:*", "__keyevent@0__:*")
p.subscribe("end")
confirmations = 0
while confirmations < 3:
    m = p.get_message(timeout=5)
    assert m is not None, "no confirmation"
    confirmations += 1

r.set("s", "1")
r.incrby("s", 2)
r.expire("s", 100)
r.persist("s")
r.rpush("l", "a", "b")
r.lpop("l")
r.rpop("l")
r.sadd("set", "x")
r.srem("set", "x")
r.hset("h", mapping={"f": "1", "g": "2"})
r.hdel("h", "f", "g")
r.zadd("z", {"m": 1})
r.zincrby("z", 2, "m")
r.zpopmin("z")
r.rename("nope", "x") if r.exists("nope") else None
r.set("a", "v")
r.rename("a", "b")
r.delete("b")
r.pexpire("missing", 5)
r.publish("end", "done")

deadline = time.time() + 10
while time.time() < deadline:
    m = p.get_message(timeout=1)
    if m is None:
        continue
    if m["type"] == "message" and m["data"] == b"done":
        break
    print(m["type"], m["pattern"].decode(), m["channel"].decode(), m["data"].decode())
else:
    raise SystemExit("no end message")
p.close()
print("OK")
