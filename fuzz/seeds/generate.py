#!/usr/bin/env python3
"""Writes the hand-made seed inputs in fuzz/seeds/TARGET/.

Run from fuzz/seeds/ (python3 generate.py); the output is committed, so
this only needs re-running when a seed is added here. Fuzzer-found inputs
worth keeping are copied in by hand (see fuzz/README.md).
"""
import os
import random


def resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else a.encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


STREAMS = {
    "get": resp("GET", "k"),
    "set_get": resp("SET", "k", "v") + resp("GET", "k"),
    "set_ex": resp("SET", "k", "v", "EX", "10"),
    "set_px_nx_get": resp("SET", "k", "v", "PX", "5", "NX", "GET"),
    "incr_pipeline": resp("INCR", "n") * 3 + resp("INCRBY", "n", "-9223372036854775808"),
    "mset_mget": resp("MSET", "a", "1", "b", "2") + resp("MGET", "a", "b", "c"),
    "expire_ttl": resp("SET", "k", "v") + resp("EXPIRE", "k", "1") + resp("TTL", "k") + resp("PTTL", "k"),
    "scan": resp("SCAN", "0", "MATCH", "*", "COUNT", "10", "TYPE", "string"),
    "keys": resp("KEYS", "*"),
    "select_flush": resp("SELECT", "3") + resp("FLUSHDB") + resp("FLUSHALL", "ASYNC"),
    "hello3": resp("HELLO", "3") + resp("GET", "missing") + resp("CLIENT", "INFO"),
    "client_kill": resp("CLIENT", "KILL", "ID", "2") + resp("CLIENT", "LIST"),
    "config_set": resp("CONFIG", "SET", "requirepass", "pw") + resp("AUTH", "pw") + resp("CONFIG", "GET", "*"),
    "info_command": resp("INFO") + resp("COMMAND", "COUNT") + resp("COMMAND", "INFO", "get"),
    "setrange_getrange": resp("SETRANGE", "k", "5", "x") + resp("GETRANGE", "k", "-3", "-1"),
    "incrbyfloat": resp("INCRBYFLOAT", "f", "1.5e3") + resp("INCRBYFLOAT", "f", "inf"),
    "rename_copy": resp("SET", "a", "1") + resp("RENAME", "a", "b") + resp("COPY", "b", "c", "DB", "1", "REPLACE"),
    "swapdb_move": resp("SWAPDB", "0", "1") + resp("MOVE", "k", "2"),
    "lcs": resp("MSET", "a", "ohmytext", "b", "mynewtext") + resp("LCS", "a", "b", "IDX", "MINMATCHLEN", "2", "WITHMATCHLEN"),
    "inline": b"SET k v\r\nGET k\r\nPING\n",
    "inline_quotes": b"SET \"a b\" 'c\\'d' \"\\x41\\n\"\r\nGET \"a b\"\r\n",
    "inline_unbalanced": b"SET \"abc\r\n",
    "blank_lines": b"\r\n\r\n\n*0\r\nPING\r\n",
    "quit": resp("PING") + resp("QUIT") + resp("PING"),
    "reset": resp("SELECT", "1") + resp("RESET") + resp("DBSIZE"),
    "err_bad_multibulk": b"*abc\r\n",
    "err_bad_bulk_len": b"*1\r\n$-5\r\n",
    "err_missing_dollar": b"*1\r\n+OK\r\n",
    "err_huge_multibulk": b"*2147483648\r\n",
    "err_bulk_too_big": b"*1\r\n$536870913\r\n",
    "err_bulk_no_crlf": b"*1\r\n$3\r\nGETxx",
    "err_unknown_command": resp("NOSUCH", "a", "b"),
    "err_arity": resp("GET") + resp("SET", "k"),
    "partial": b"*2\r\n$3\r\nGET\r\n$1",
    "resp3_frames": b"%1\r\n+a\r\n:1\r\n~1\r\n,1.5\r\n#t\r\n=7\r\ntxt:abc\r\n(123\r\n_\r\n>1\r\n-ERR x\r\n",
    "resp2_replies": b"+OK\r\n-ERR no\r\n:42\r\n$-1\r\n*-1\r\n*2\r\n$1\r\na\r\n:1\r\n",
}


def write(target, name, data):
    os.makedirs(target, exist_ok=True)
    with open(os.path.join(target, name), "wb") as f:
        f.write(data)


for name, stream in STREAMS.items():
    # resp_parse: the first byte picks the split point.
    write("resp_parse", name, bytes([len(stream) // 2 % 256]) + stream)
    # client_stream: chunks of at most 63 bytes (header `len << 2`), with a
    # clock advance (header 1 | i << 2) between some, and a slow-read toggle.
    out = b""
    for i in range(0, len(stream), 13):
        chunk = stream[i : i + 13]
        out += bytes([len(chunk) << 2]) + chunk
        if i % 26 == 0:
            out += bytes([1 | (5 << 2)])
    if name in ("hello3", "keys", "info_command"):
        out = b"\x02" + out + b"\x02"
    if name == "quit":
        out += b"\x03" + bytes([len(resp("PING")) << 2]) + resp("PING")
    write("client_stream", name, out)

# engine_commands: arbitrary's choices from fixed pseudo-random bytes.
rng = random.Random(7)
for i in range(24):
    n = rng.choice([8, 16, 32, 64, 128, 256])
    write("engine_commands", "random_%02d" % i, bytes(rng.randrange(256) for _ in range(n)))

# sim_schedule: byte 0 the client count, bytes 1..3 the workload seed, then
# the knob/network/fault choices (one byte each; past the end, a stream
# seeded by the input). Short ones leave most choices to that stream.
rng = random.Random(11)
for i in range(16):
    n = rng.choice([3, 16, 64, 256, 1024, 4096])
    write("sim_schedule", "random_%02d" % i, bytes(rng.randrange(256) for _ in range(n)))
# All-0xff knobs: the largest latency, jitter and fault rates drawn.
write("sim_schedule", "max_knobs", bytes([2, 1, 0]) + b"\xff" * 64)
write("sim_schedule", "zero_choices", bytes([1, 2, 0]) + b"\x00" * 512)
