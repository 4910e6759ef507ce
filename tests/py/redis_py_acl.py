"""redis-py's ACL helpers against one server: prints what they return, one
line per call, with ACL LOG's times and client details masked, so that the
output on seedkv-server can be compared with redis-server's.

Usage: redis_py_acl.py PORT
"""

import sys

import redis


def masked_log(entries):
    out = []
    for e in entries:
        e = dict(e)
        e["age-seconds"] = "<age>"
        info = e.get("client-info", {})
        e["client-info"] = {k: v for k, v in info.items() if k in ("cmd", "user")}
        out.append(sorted(e.items()))
    return out


def sorted_rules(text):
    """Single-command rules in sorted order: Redis lists them in its
    command dict's hash order, which changes from run to run."""
    words = text if isinstance(text, list) else text.split(" ")
    head = [w for w in words if w.startswith(("+@", "-@")) or not w.startswith(("+", "-"))]
    single = sorted(w for w in words if w not in head)
    return head + single if isinstance(text, list) else " ".join(head + single)


def main(port):
    r = redis.Redis(port=port, decode_responses=True)
    show = lambda name, value: print(f"{name}: {value!r}")
    show("setuser", r.acl_setuser(
        "py", enabled=True, passwords=["+secret"], categories=["+@hash", "-@dangerous"],
        commands=["+get", "+set", "-hdel"], keys=["k*", "%R~r*"], channels=["ch*"],
        selectors=[("+lpush", "~l*")],
    ))
    user = r.acl_getuser("py")
    user["commands"] = sorted_rules(user["commands"])
    show("getuser", sorted(user.items()))
    show("getuser missing", r.acl_getuser("nosuch"))
    show("list", [sorted_rules(line) for line in r.acl_list()])
    show("users", r.acl_users())
    show("whoami", r.acl_whoami())
    show("cat", r.acl_cat())
    show("dryrun ok", r.acl_dryrun("py", "get", "k1"))
    show("dryrun key", r.acl_dryrun("py", "get", "other"))
    show("dryrun command", r.acl_dryrun("py", "del", "k1"))
    show("dryrun selector", r.acl_dryrun("py", "lpush", "l1", "v"))
    show("genpass length", len(r.acl_genpass()))
    show("genpass 10 length", len(r.acl_genpass(10)))
    r.acl_log_reset()
    u = redis.Redis(port=port, decode_responses=True, username="py", password="secret")
    show("as py get", u.get("k1"))
    for args in (("del", "k1"), ("get", "other"), ("publish", "nope", "m")):
        try:
            u.execute_command(*args)
            show(args[0], "no error")
        except redis.exceptions.NoPermissionError as e:
            show(args[0], str(e))
    try:
        redis.Redis(port=port, username="py", password="wrong").ping()
    except redis.exceptions.ResponseError as e:
        show("wrong password", str(e))
    show("log", masked_log(r.acl_log()))
    show("log 1", masked_log(r.acl_log(count=1)))
    show("deluser", r.acl_deluser("py", "nosuch"))
    show("users after", r.acl_users())


if __name__ == "__main__":
    main(int(sys.argv[1]))
