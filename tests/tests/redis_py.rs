//! redis-py, the most used Python client, against seedkv-server: common
//! commands, a pipeline, MULTI/EXEC and WATCH, and pub/sub
//! (tests/py/redis_py_smoke.py); and client-side caching the RESP2 way, a
//! listener subscribed to `__redis__:invalidate` that trackers REDIRECT to
//! (tests/py/redis_py_tracking.py). The same scripts run against Debian's
//! redis-server when it is installed, so the script's expectations are
//! Redis's own.
//!
//! redis-py comes from Debian's `python3-redis` (.ci/run installs it). The
//! test skips with a printed reason only when no Python on this machine can
//! import it.

use std::path::PathBuf;
use std::process::Command;

use seedkv_tests::{find_in_path, missing_tool, redis_server, workspace_root, ServerProcess};

/// A Python that can `import redis`: Debian's first (python3-redis installs
/// into the system interpreter, which a pyenv shim may hide), then `python3`
/// on PATH.
fn python_with_redis() -> Option<PathBuf> {
    let candidates = [
        Some(PathBuf::from("/usr/bin/python3")),
        find_in_path("python3"),
    ];
    candidates.into_iter().flatten().find(|py| {
        Command::new(py)
            .args(["-c", "import redis"])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

fn run_script(python: &PathBuf, name: &str, port: u16) -> String {
    let script = workspace_root().join("tests/py").join(name);
    let out = Command::new(python)
        .arg(&script)
        .arg(port.to_string())
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "redis-py script failed on port {port}:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Runs the script `name` against seedkv-server, then redis-server.
fn run_on_both(name: &str) {
    let Some(python) = python_with_redis() else {
        missing_tool("redis-py", "apt-get install python3-redis");
        return;
    };
    let server = ServerProcess::seedkv(&[]);
    let out = run_script(&python, name, server.port);
    eprint!("seedkv: {out}");
    assert!(out.contains("OK"), "{out}");
    if let Some(redis) = redis_server() {
        let out = run_script(&python, name, redis.port);
        eprint!("redis-server: {out}");
    }
}

#[test]
fn redis_py_common_ops_pipeline_transactions_pubsub() {
    run_on_both("redis_py_smoke.py");
}

#[test]
fn redis_py_tracking_redirect_to_a_subscribed_listener() {
    run_on_both("redis_py_tracking.py");
}

/// redis-py's PubSub on the keyspace and keyevent patterns: the messages
/// it parses from seedkv-server are those it parses from redis-server
/// (tests/py/redis_py_notify.py).
#[test]
fn redis_py_receives_keyspace_notifications_as_from_redis() {
    let Some(python) = python_with_redis() else {
        missing_tool("redis-py", "apt-get install python3-redis");
        return;
    };
    let run = |port: u16| run_script(&python, "redis_py_notify.py", port);
    let server = ServerProcess::seedkv(&[]);
    let ours = run(server.port);
    assert!(ours.ends_with("OK\n"), "{ours}");
    assert!(
        ours.contains("pmessage __keyevent@0__:* __keyevent@0__:lpop l\n"),
        "{ours}"
    );
    assert!(
        ours.contains("pmessage __keyspace@0__:* __keyspace@0__:l del\n"),
        "{ours}"
    );
    if let Some(redis) = redis_server() {
        let theirs = run(redis.port);
        assert_eq!(ours, theirs, "seedkv (left) and redis-server (right)");
    }
}

/// redis-py's ACL helpers (`acl_setuser`, `acl_getuser`, `acl_list`,
/// `acl_log`, `acl_dryrun`...) and a login as the user it made
/// (tests/py/redis_py_acl.py): seedkv-server's answers, as redis-py reads
/// them, equal redis-server's line for line.
#[test]
fn redis_py_acl_helpers_answer_as_redis_does() {
    let Some(python) = python_with_redis() else {
        missing_tool("redis-py", "apt-get install python3-redis");
        return;
    };
    let server = ServerProcess::seedkv(&[]);
    let got = run_script(&python, "redis_py_acl.py", server.port);
    assert!(got.contains("setuser: True"), "{got}");
    let Some(redis) = redis_server() else {
        return;
    };
    let expected = run_script(&python, "redis_py_acl.py", redis.port);
    for (e, g) in expected.lines().zip(got.lines()) {
        assert_eq!(g, e, "seedkv (left) differs from redis-server (right)");
    }
    assert_eq!(got.lines().count(), expected.lines().count());
}
