#!/usr/bin/env python3
"""Generates seedkv's command metadata from a running redis-server.

Redis builds its command table (commands.def) from src/commands/*.json;
seedkv builds its copy from what redis-server 7.0.15 itself answers to
COMMAND INFO and COMMAND DOCS, so that every key spec, flag, tip and
documentation string is exactly Redis's. The output is Rust source under
engine/src/meta/table/: one file per COMMAND DOCS group, plus an index
sorted by name. Nobody needs to read it; engine/src/meta.rs describes the
types.

Usage (from the repository root):

    redis-server --port 7390 --save '' --daemonize yes
    python3 engine/gen/commands.py --port 7390
    cargo fmt --all

It speaks RESP3 over a plain socket (no client library), so that the types
of the reply (sets, maps, simple strings) are seen as Redis sends them.
"""

import argparse
import os
import re
import socket
import sys

OUT_DIR = os.path.join(os.path.dirname(__file__), "..", "src", "meta", "table")

# Fields of a COMMAND DOCS entry, of an argument, and of a key spec, in the
# order redis 7.0 writes them; the generator refuses anything else, so that
# a new field cannot be silently dropped.
DOC_FIELDS = ["summary", "since", "group", "complexity", "doc_flags",
              "deprecated_since", "replaced_by", "history", "arguments",
              "subcommands"]
ARG_FIELDS = ["name", "type", "key_spec_index", "token", "summary", "since",
              "flags", "deprecated_since", "arguments"]


class Resp3:
    """A blocking RESP3 connection that parses replies into tagged values."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.buf = b""

    def call(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a.encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.sock.sendall(out)
        return self.read()

    def line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise EOFError("connection closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def exact(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise EOFError("connection closed")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read(self):
        line = self.line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return ("simple", rest.decode())
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return ("int", int(rest))
        if kind == b"$":
            return ("bulk", self.exact(int(rest)).decode())
        if kind == b"=":
            return ("bulk", self.exact(int(rest))[4:].decode())
        if kind == b"_":
            return ("null", None)
        if kind in (b"*", b"~"):
            items = [self.read() for _ in range(int(rest))]
            return ("array" if kind == b"*" else "set", items)
        if kind == b"%":
            n = int(rest)
            pairs = []
            for _ in range(n):
                k = self.read()
                pairs.append((k[1], self.read()))
            return ("map", pairs)
        raise ValueError("unexpected RESP3 type %r" % line)


def expect(value, kind):
    assert value[0] == kind, "expected %s, got %r" % (kind, value)
    return value[1]


def check_order(keys, canonical, what):
    positions = [canonical.index(k) for k in keys if k in canonical]
    unknown = [k for k in keys if k not in canonical]
    assert not unknown, "%s: unknown fields %r" % (what, unknown)
    assert positions == sorted(positions), "%s: field order %r" % (what, keys)


def rs(s):
    """A Rust string literal."""
    if s is None:
        return "None"
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def opt(s):
    return "None" if s is None else "Some(%s)" % rs(s)


def strs(items):
    return "&[" + ", ".join(rs(s) for s in items) + "]"


def simple_set(value):
    return [expect(v, "simple") for v in expect(value, "set")]


def key_spec(value):
    fields = dict(expect(value, "map"))
    keys = [k for k, _ in expect(value, "map")]
    check_order(keys, ["notes", "flags", "begin_search", "find_keys"], "key spec")
    begin = dict(expect(fields["begin_search"], "map"))
    bspec = dict(expect(begin["spec"], "map"))
    btype = expect(begin["type"], "bulk")
    if btype == "index":
        bs = "BeginSearch::Index { index: %d }" % expect(bspec["index"], "int")
    elif btype == "keyword":
        bs = "BeginSearch::Keyword { keyword: %s, startfrom: %d }" % (
            rs(expect(bspec["keyword"], "bulk")), expect(bspec["startfrom"], "int"))
    else:
        assert btype == "unknown", btype
        bs = "BeginSearch::Unknown"
    find = dict(expect(fields["find_keys"], "map"))
    fspec = dict(expect(find["spec"], "map"))
    ftype = expect(find["type"], "bulk")
    if ftype == "range":
        fk = "FindKeys::Range { lastkey: %d, keystep: %d, limit: %d }" % tuple(
            expect(fspec[k], "int") for k in ("lastkey", "keystep", "limit"))
    elif ftype == "keynum":
        fk = "FindKeys::Keynum { keynumidx: %d, firstkey: %d, keystep: %d }" % tuple(
            expect(fspec[k], "int") for k in ("keynumidx", "firstkey", "keystep"))
    else:
        assert ftype == "unknown", ftype
        fk = "FindKeys::Unknown"
    notes = expect(fields["notes"], "bulk") if "notes" in fields else None
    return "KeySpec { notes: %s, flags: %s, begin_search: %s, find_keys: %s }" % (
        opt(notes), strs(simple_set(fields["flags"])), bs, fk)


def argument(value, indent):
    pairs = expect(value, "map")
    check_order([k for k, _ in pairs], ARG_FIELDS, "argument")
    f = dict(pairs)
    parts = ["name: %s" % rs(expect(f["name"], "bulk")),
             "kind: %s" % rs(expect(f["type"], "bulk"))]
    if "key_spec_index" in f:
        parts.append("key_spec_index: Some(%d)" % expect(f["key_spec_index"], "int"))
    for field in ("token", "summary", "since", "deprecated_since"):
        if field in f:
            parts.append("%s: Some(%s)" % (field, rs(expect(f[field], "bulk"))))
    if "flags" in f:
        flags = simple_set(f["flags"])
        assert flags, "empty argument flags"
        parts.append("flags: %s" % strs(flags))
    if "arguments" in f:
        parts.append("arguments: " + arguments(f["arguments"], indent + 1))
    # Struct update only when a field is left out (clippy: needless_update).
    if len(parts) < 9:
        parts.append("..Arg::DEFAULT")
    return "Arg { " + ", ".join(parts) + " }"


def arguments(value, indent):
    items = expect(value, "array")
    pad = "    " * (indent + 1)
    inner = "".join("%s%s,\n" % (pad, argument(a, indent + 1)) for a in items)
    return "&[\n%s%s]" % (inner, "    " * indent)


def docs(value, indent):
    pairs = expect(value, "map")
    check_order([k for k, _ in pairs], DOC_FIELDS, "docs")
    f = dict(pairs)
    pad = "    " * (indent + 1)
    out = ["Docs {"]
    for field in ("summary", "since", "complexity", "deprecated_since", "replaced_by"):
        if field in f:
            out.append("%s%s: Some(%s)," % (pad, field, rs(expect(f[field], "bulk"))))
    out.append("%sgroup: %s," % (pad, rs(expect(f["group"], "bulk"))))
    if "doc_flags" in f:
        flags = simple_set(f["doc_flags"])
        assert flags, "empty doc_flags"
        out.append("%sdoc_flags: %s," % (pad, strs(flags)))
    if "history" in f:
        entries = []
        for e in expect(f["history"], "set"):
            version, text = expect(e, "array")
            entries.append("(%s, %s)" % (rs(expect(version, "bulk")), rs(expect(text, "bulk"))))
        assert entries, "empty history"
        out.append("%shistory: &[%s]," % (pad, ", ".join(entries)))
    if "arguments" in f:
        args = expect(f["arguments"], "array")
        assert args, "empty arguments"
        out.append("%sarguments: %s," % (pad, arguments(f["arguments"], indent + 1)))
    if len(out) < 10:
        out.append("%s..Docs::DEFAULT" % pad)
    out.append("    " * indent + "}")
    return "\n".join(out)


def command(info, docs_by_name, indent):
    (name, arity, flags, first, last, step, acl, tips, specs, subs) = expect(info, "array")
    name = expect(name, "bulk")
    pad = "    " * (indent + 1)
    doc = docs_by_name[name]
    sub_items = sorted(expect(subs, "array") if subs[0] == "array" else expect(subs, "set"),
                       key=lambda s: expect(expect(s, "array")[0], "bulk"))
    sub_docs = {}
    for k, v in expect(doc, "map"):
        if k == "subcommands":
            sub_docs = {sk: sv for sk, sv in expect(v, "map")}
    assert sorted(sub_docs) == [expect(expect(s, "array")[0], "bulk") for s in sub_items], name
    out = ["CommandMeta {",
           "%sname: %s," % (pad, rs(name)),
           "%sarity: %d," % (pad, expect(arity, "int")),
           "%sflags: %s," % (pad, strs(simple_set(flags))),
           "%sfirst_key: %d," % (pad, expect(first, "int")),
           "%slast_key: %d," % (pad, expect(last, "int")),
           "%skey_step: %d," % (pad, expect(step, "int")),
           "%sacl_categories: %s," % (pad, strs(simple_set(acl))),
           "%stips: %s," % (pad, strs([expect(t, "bulk") for t in expect(tips, "set")]))]
    spec_items = expect(specs, "set")
    if spec_items:
        out.append("%skey_specs: &[" % pad)
        for s in spec_items:
            out.append("%s    %s," % (pad, key_spec(s)))
        out.append("%s]," % pad)
    else:
        out.append("%skey_specs: &[]," % pad)
    out.append("%sdocs: %s," % (pad, docs(doc, indent + 1)))
    if sub_items:
        out.append("%ssubcommands: &[" % pad)
        for s in sub_items:
            out.append("%s    %s," % (pad, command(s, sub_docs, indent + 2)))
        out.append("%s]," % pad)
    else:
        out.append("%ssubcommands: &[]," % pad)
    out.append("    " * indent + "}")
    return "\n".join(out)


def ident(name):
    return name.upper().replace("-", "_").replace("|", "_")


def module_name(group):
    return group.replace("-", "_")


HEADER = """// @generated by engine/gen/commands.py from redis-server {version}'s
// COMMAND INFO and COMMAND DOCS. Do not edit; regenerate (see the script).
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=7390)
    opts = parser.parse_args()
    conn = Resp3(opts.port)
    conn.call("HELLO", "3")
    info = conn.call("INFO", "server")[1]
    version = next(l.split(":", 1)[1] for l in info.split("\r\n")
                   if l.startswith("redis_version:"))
    all_info = expect(conn.call("COMMAND"), "array")
    all_docs = {k: v for k, v in expect(conn.call("COMMAND", "DOCS"), "map")}
    by_group = {}
    for entry in all_info:
        name = expect(expect(entry, "array")[0], "bulk")
        group = expect(dict(expect(all_docs[name], "map"))["group"], "bulk")
        by_group.setdefault(group, []).append((name, entry))
    os.makedirs(OUT_DIR, exist_ok=True)
    index = []
    for group, entries in sorted(by_group.items()):
        entries.sort()
        body = []
        for name, entry in entries:
            body.append("pub static %s: CommandMeta = %s;\n" % (
                ident(name), command(entry, all_docs, 0)))
            index.append((name, module_name(group), ident(name)))
        text = "\n".join(body)
        used = [t for t in ("Arg", "BeginSearch", "CommandMeta", "Docs", "FindKeys", "KeySpec")
                if re.search(r"\b%s\b" % t, text)]
        lines = [HEADER.format(version=version),
                 "use crate::meta::{%s};\n" % ", ".join(used)] + body
        path = os.path.join(OUT_DIR, module_name(group) + ".rs")
        with open(path, "w") as f:
            f.write("\n".join(lines))
    index.sort()
    with open(OUT_DIR + ".rs", "w") as f:
        f.write(HEADER.format(version=version))
        f.write("\n")
        for group in sorted(by_group):
            f.write("mod %s;\n" % module_name(group))
        f.write("\nuse crate::meta::CommandMeta;\n\n")
        f.write("/// Every command redis-server %s has, sorted by name.\n" % version)
        f.write("pub static ALL: &[&CommandMeta] = &[\n")
        for name, module, ident_ in index:
            f.write("    &%s::%s,\n" % (module, ident_))
        f.write("];\n")
    print("%d commands in %d groups" % (len(index), len(by_group)), file=sys.stderr)


if __name__ == "__main__":
    main()
