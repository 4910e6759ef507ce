#!/usr/bin/env python3
"""Memory per element, seedkv-server next to redis-server, for every type
and encoding.

For each case the script flushes the server, reads INFO memory
`used_memory`, loads the data with `redis-cli --pipe` (counting errors: any
error aborts), verifies it (DBSIZE, the element count of every key, the
OBJECT ENCODING of the first key) and reads `used_memory` again; it prints
(after - before) / elements.

    SEEDKV_BIN=target/release/seedkv-server python3 server/benches/memory.py

Both servers are started on free ports with persistence off and stopped at
the end. seedkv's `used_memory` is its counting allocator's figure
(malloc_usable_size of every live block), Redis's is jemalloc's.
"""
import os
import socket
import subprocess
import sys
import time

CASES = [
    # name, type, keys, elements per key, element generator, expected encoding
    ("string (embstr)", "string", 100_000, 1, "short", "embstr"),
    ("list (quicklist, 10-element lists)", "list", 10_000, 10, "short", "quicklist"),
    ("list (quicklist, 10k-element lists)", "list", 10, 10_000, "short", "quicklist"),
    ("hash (listpack)", "hash", 1_000, 100, "short", "listpack"),
    ("hash (hashtable)", "hash", 10, 10_000, "short", "hashtable"),
    ("set (intset)", "set", 1_000, 100, "int", "intset"),
    ("set (hashtable)", "set", 10, 10_000, "short", "hashtable"),
    ("zset (listpack)", "zset", 1_000, 100, "short", "listpack"),
    ("zset (skiplist)", "zset", 10, 10_000, "short", "skiplist"),
]

BATCH_ELEMENTS = 100


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def resp(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def element(kind, i):
    return str(i) if kind == "int" else "member:%08d" % i


def commands(ty, keys, per_key, kind):
    for k in range(keys):
        key = "%s:%06d" % (ty, k)
        if ty == "string":
            yield resp("SET", key, "value:%06d" % k)
            continue
        for start in range(0, per_key, BATCH_ELEMENTS):
            els = [element(kind, i) for i in range(start, min(per_key, start + BATCH_ELEMENTS))]
            if ty == "list":
                yield resp("RPUSH", key, *els)
            elif ty == "hash":
                args = []
                for e in els:
                    args += [e, "v" + e[-6:]]
                yield resp("HSET", key, *args)
            elif ty == "set":
                yield resp("SADD", key, *els)
            elif ty == "zset":
                args = []
                for j, e in enumerate(els):
                    args += [str(start + j), e]
                yield resp("ZADD", key, *args)


def cli(port, *args):
    return subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True,
                          text=True, check=True).stdout.strip()


def used_memory(port):
    for line in cli(port, "INFO", "memory").splitlines():
        if line.startswith("used_memory:"):
            return int(line.split(":")[1])
    raise SystemExit("no used_memory in INFO")


def card(ty, port, key):
    cmd = {"string": "STRLEN", "list": "LLEN", "hash": "HLEN", "set": "SCARD", "zset": "ZCARD"}[ty]
    return int(cli(port, cmd, key))


def run_case(port, case):
    name, ty, keys, per_key, kind, encoding = case
    cli(port, "FLUSHALL")
    time.sleep(0.2)  # let a background free finish before measuring
    before = used_memory(port)
    data = b"".join(commands(ty, keys, per_key, kind))
    out = subprocess.run(["redis-cli", "-p", str(port), "--pipe"], input=data,
                         capture_output=True, check=True).stdout.decode()
    if "errors: 0" not in out:
        raise SystemExit("%s on port %d: %s" % (name, port, out))
    dbsize = int(cli(port, "DBSIZE"))
    if dbsize != keys:
        raise SystemExit("%s: DBSIZE %d, expected %d" % (name, dbsize, keys))
    for k in (0, keys - 1):
        key = "%s:%06d" % (ty, k)
        n = card(ty, port, key)
        if ty != "string" and n != per_key:
            raise SystemExit("%s: %s has %d elements, expected %d" % (name, key, n, per_key))
    got = cli(port, "OBJECT", "ENCODING", "%s:%06d" % (ty, 0))
    if got != encoding:
        raise SystemExit("%s on port %d: encoding %s, expected %s" % (name, port, got, encoding))
    after = used_memory(port)
    return (after - before) / (keys * per_key)


def start(argv):
    port = free_port()
    proc = subprocess.Popen(argv + ["--port", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port)).close()
            return port, proc
        except OSError:
            time.sleep(0.05)
    raise SystemExit("server did not start: %s" % argv)


def main():
    seedkv = os.environ.get("SEEDKV_BIN", "target/release/seedkv-server")
    servers = [("seedkv", start([seedkv])),
               ("redis", start(["redis-server", "--save", "", "--appendonly", "no"]))]
    try:
        print("%-38s %14s %14s %7s" % ("bytes per element (INFO used_memory)", "seedkv", "redis 7.0", "ratio"))
        for case in CASES:
            row = [run_case(port, case) for _, (port, _) in servers]
            print("%-38s %14.1f %14.1f %7.2f" % (case[0], row[0], row[1], row[0] / row[1]))
    finally:
        for _, (_, proc) in servers:
            proc.terminate()


if __name__ == "__main__":
    sys.exit(main())
