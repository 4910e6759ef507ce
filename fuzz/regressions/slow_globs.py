#!/usr/bin/env python3
"""Writes the slow-glob regression inputs of client_stream (issue 14).

Run from fuzz/regressions/ (python3 slow_globs.py); the output is
committed. Each input stores a 40-byte key (or channel) of `a`s and then
sends one pathological pattern through one matcher entry point, as raw
RESP (chunks of at most 63 bytes, header `len << 2`), so that the bytes
keep their meaning whatever the adversarial templates become. A
backtracking matcher takes hours on each; Redis 7.0.15's bounded one
(skipLongerMatches) microseconds.
"""

LONG = b"a" * 40
NESTED = b"a*" * 20 + b"b"          # over the long key: C(40, 20) splits
ANY = b"?*" * 20 + b"x"             # over config names (up to 33 bytes)


def resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else a.encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def chunks(stream):
    out = b""
    while stream:
        piece, stream = stream[:63], stream[63:]
        out += bytes([len(piece) << 2]) + piece
    return out


INPUTS = {
    "slow_glob_keys": resp("SET", LONG, "1") + resp("KEYS", NESTED),
    "slow_glob_scan_match": resp("SET", LONG, "1") + resp("SCAN", "0", "MATCH", NESTED),
    "slow_glob_hscan_match": resp("HSET", "h", LONG, "1") + resp("HSCAN", "h", "0", "MATCH", NESTED),
    "slow_glob_sscan_match": resp("SADD", "s", LONG) + resp("SSCAN", "s", "0", "MATCH", NESTED),
    "slow_glob_zscan_match": resp("ZADD", "z", "1", LONG) + resp("ZSCAN", "z", "0", "MATCH", NESTED),
    "slow_glob_pubsub_channels": resp("HELLO", "3") + resp("SUBSCRIBE", LONG) + resp("PUBSUB", "CHANNELS", NESTED),
    "slow_glob_psubscribe_publish": resp("HELLO", "3") + resp("PSUBSCRIBE", NESTED) + resp("PUBLISH", LONG, "x"),
    "slow_glob_config_get": resp("CONFIG", "GET", ANY),
}

for name, stream in INPUTS.items():
    with open("client_stream/" + name, "wb") as f:
        f.write(chunks(stream))
