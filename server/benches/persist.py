#!/usr/bin/env python3
"""Persistence figures for seedkv-server and redis-server, side by side.

Not a CI test: a measurement run by hand on an otherwise quiet machine.

    cargo build --release -p seedkv-server
    nice python3 server/benches/persist.py [--keys 1000000] [--seedkv target/release/seedkv-server]

For each server, in a fresh temporary `dir`:

1. writes KEYS keys with pipelined SETs (`redis-cli --pipe`, whose error
   count must be 0) and checks DBSIZE;
2. BGSAVE: the time from the command to the "Background saving terminated
   with success" log line, and meanwhile the longest PING round trip from
   another client (the command thread's stall: the fork, and whatever the
   parent does while the child writes);
3. restart on the same dir: the time from the spawn to "Ready to accept
   connections", then DBSIZE must equal KEYS;
4. `redis-benchmark -t set -n 200000 -P 1 -c 50` with `appendonly yes`
   under `appendfsync always` and `everysec` (and without AOF for
   reference), checking no error reply and reporting the AOF bytes written.

Every figure is printed only after its data check passed.
"""

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

VALUE = b"x" * 16


def resp(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def line(self):
        while b"\r\n" not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def reply(self):
        line = self.line()
        kind, rest = line[:1], line[1:]
        if kind in (b"+", b":"):
            return rest
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.s.recv(65536)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data
        if kind == b"*":
            return [self.reply() for _ in range(int(rest))]
        raise RuntimeError("bad reply %r" % line)

    def call(self, *args):
        self.s.sendall(resp(*args))
        return self.reply()


class Server:
    """A server process with its log in `dir`/server.log."""

    def __init__(self, kind, binary, port, dir, extra):
        self.kind, self.port, self.dir = kind, port, dir
        self.log_path = os.path.join(dir, "server.log")
        log = open(self.log_path, "ab")
        if kind == "seedkv":
            cmd = [binary, "--port", str(port), "--dir", dir, "--save", ""] + extra
        else:
            cmd = [binary, "--port", str(port), "--dir", dir, "--save", "",
                   "--daemonize", "no", "--bind", "127.0.0.1"] + extra
        self.log_start = log.tell()
        self.started = time.monotonic()
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        self.ready_s = self.wait_log("Ready to accept connections", 600) - self.started

    def log_text(self):
        with open(self.log_path, "rb") as f:
            f.seek(self.log_start)
            return f.read().decode(errors="replace")

    def wait_log(self, text, timeout_s, count=1):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.log_text().count(text) >= count:
                return time.monotonic()
            if self.proc.poll() is not None:
                sys.exit("%s exited:\n%s" % (self.kind, self.log_text()))
            time.sleep(0.002)
        sys.exit("%s: no %r within %ss:\n%s" % (self.kind, text, timeout_s, self.log_text()))

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def populate(port, keys):
    cmds = b"".join(resp("SET", "key:%d" % i, VALUE) for i in range(keys))
    out = subprocess.run(["redis-cli", "-p", str(port), "--pipe"], input=cmds,
                         capture_output=True, check=True).stdout.decode()
    if "errors: 0," not in out or ("replies: %d" % keys) not in out:
        sys.exit("populate failed: %s" % out)


def check_dbsize(port, keys, what):
    got = int(Conn(port).call("DBSIZE"))
    if got != keys:
        sys.exit("%s: DBSIZE %d, expected %d" % (what, got, keys))


def bgsave_with_pings(server):
    """BGSAVE time and the longest PING round trip while it runs."""
    stop = threading.Event()
    worst = [0.0, 0]

    def pinger():
        c = Conn(server.port)
        while not stop.is_set():
            t = time.perf_counter()
            if c.call("PING") != b"PONG":
                raise RuntimeError("PING")
            worst[0] = max(worst[0], time.perf_counter() - t)
            worst[1] += 1

    done_text = "Background saving terminated with success"
    before = server.log_text().count(done_text)
    thread = threading.Thread(target=pinger)
    thread.start()
    time.sleep(0.2)
    worst[0], worst[1] = 0.0, 0
    c = Conn(server.port)
    t0 = time.monotonic()
    reply = c.call("BGSAVE")
    if reply != b"Background saving started":
        sys.exit("BGSAVE: %r" % reply)
    t1 = server.wait_log(done_text, 600, before + 1)
    stop.set()
    thread.join()
    return t1 - t0, worst[0], worst[1]


def rdb_figures(kind, binary, keys):
    dir = tempfile.mkdtemp(prefix="persist-%s-" % kind)
    try:
        port = free_port()
        s = Server(kind, binary, port, dir, [])
        populate(port, keys)
        check_dbsize(port, keys, kind + " after populate")
        bgsave_s, stall_s, pings = bgsave_with_pings(s)
        size = os.path.getsize(os.path.join(dir, "dump.rdb"))
        s.kill()
        s = Server(kind, binary, port, dir, [])
        check_dbsize(port, keys, kind + " after restart")
        load_s = s.ready_s
        loaded_line = [l for l in s.log_text().splitlines() if "DB loaded from disk" in l]
        s.kill()
        return {
            "bgsave_s": bgsave_s, "stall_ms": stall_s * 1000, "pings": pings,
            "rdb_bytes": size, "restart_ready_s": load_s,
            "loaded_line": loaded_line[-1].split("* ", 1)[-1] if loaded_line else "-",
        }
    finally:
        shutil.rmtree(dir, ignore_errors=True)


def aof_bytes(dir):
    total = 0
    for root, _, files in os.walk(dir):
        for f in files:
            if ".aof" in f and not f.endswith("manifest"):
                total += os.path.getsize(os.path.join(root, f))
    return total


def benchmark(kind, binary, extra):
    dir = tempfile.mkdtemp(prefix="persist-bench-%s-" % kind)
    try:
        port = free_port()
        s = Server(kind, binary, port, dir, extra)
        before = aof_bytes(dir)
        r = subprocess.run(["redis-benchmark", "-p", str(port), "-t", "set",
                            "-n", "200000", "-P", "1", "-c", "50", "-q"],
                           capture_output=True, text=True, timeout=900)
        out = r.stdout + r.stderr
        errors = sum(1 for l in out.splitlines() if "rror" in l)
        if r.returncode != 0 or errors:
            sys.exit("%s %s: redis-benchmark failed:\n%s" % (kind, extra, out))
        if Conn(port).call("GET", "key:__rand_int__") is None:
            sys.exit("%s %s: the benchmark's key is missing" % (kind, extra))
        rps = [l for l in out.replace("\r", "\n").splitlines() if "requests per second" in l]
        written = aof_bytes(dir) - before
        s.kill()
        return rps[-1].strip() if rps else out.strip(), written
    finally:
        shutil.rmtree(dir, ignore_errors=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--keys", type=int, default=1_000_000)
    p.add_argument("--seedkv", default="target/release/seedkv-server")
    p.add_argument("--redis", default=shutil.which("redis-server") or "redis-server")
    p.add_argument("--skip-rdb", action="store_true")
    p.add_argument("--skip-aof", action="store_true")
    a = p.parse_args()
    servers = [("seedkv", a.seedkv), ("redis", a.redis)]
    if not a.skip_rdb:
        print("== RDB, %d keys (SET key:N <16 bytes>)" % a.keys)
        for kind, binary in servers:
            f = rdb_figures(kind, binary, a.keys)
            print("%-7s BGSAVE %.3f s (dump.rdb %d bytes); longest PING during it %.2f ms "
                  "(%d PINGs); restart to ready %.3f s, DBSIZE ok [%s]" % (
                      kind, f["bgsave_s"], f["rdb_bytes"], f["stall_ms"], f["pings"],
                      f["restart_ready_s"], f["loaded_line"]))
            sys.stdout.flush()
    if not a.skip_aof:
        print("== redis-benchmark -t set -n 200000 -P 1 -c 50")
        for extra, label in [([], "appendonly no"),
                             (["--appendonly", "yes", "--appendfsync", "everysec"], "everysec"),
                             (["--appendonly", "yes", "--appendfsync", "always"], "always")]:
            for kind, binary in servers:
                rps, written = benchmark(kind, binary, extra)
                note = ""
                if extra and written == 0:
                    note = "  <- NOT MEANINGFUL: no byte reached the AOF"
                print("%-7s %-14s %s; AOF bytes written %d%s" % (kind, label, rps, written, note))
                sys.stdout.flush()


if __name__ == "__main__":
    main()
