//! redis-cli, the reference command-line client, against seedkv-server.
//! Skipped with a message when redis-cli is not installed locally (CI
//! installs it through .ci/run).

use seedkv_tests::{cli, redis_cli, run_tool, ServerProcess};

#[test]
fn one_shot_commands() {
    if redis_cli().is_none() {
        return;
    }
    let server = ServerProcess::seedkv(&[]);
    let p = server.port;
    assert_eq!(cli(p, &["ping"]), "PONG\n");
    assert_eq!(cli(p, &["set", "k", "hello world"]), "OK\n");
    assert_eq!(cli(p, &["get", "k"]), "hello world\n");
    assert_eq!(cli(p, &["--no-raw", "get", "k"]), "\"hello world\"\n");
    assert_eq!(cli(p, &["--no-raw", "get", "nosuch"]), "(nil)\n");
    assert_eq!(cli(p, &["--no-raw", "incr", "n"]), "(integer) 1\n");
    assert_eq!(cli(p, &["-n", "3", "set", "in3", "x"]), "OK\n");
    assert_eq!(cli(p, &["-n", "3", "dbsize"]), "1\n");
    assert_eq!(cli(p, &["dbsize"]), "2\n");
    assert!(cli(p, &["--no-raw", "nosuchcommand"]).starts_with("(error) ERR unknown command"));
    assert!(cli(p, &["info", "server"]).contains("redis_version:7.0.15"));
}

#[test]
fn commands_from_stdin_and_resp3() {
    let Some(bin) = redis_cli() else { return };
    let server = ServerProcess::seedkv(&[]);
    let port = server.port.to_string();
    let (ok, out, err) = run_tool(
        &bin,
        &["--no-raw", "-p", &port],
        b"set a 1\nincrby a 41\nget a\nmget a nosuch\n",
    );
    assert!(ok, "{err}");
    assert_eq!(out, "OK\n(integer) 42\n\"42\"\n1) \"42\"\n2) (nil)\n");

    let (ok, out, err) = run_tool(
        &bin,
        &["-3", "--no-raw", "-p", &port, "config", "get", "maxclients"],
        b"",
    );
    assert!(ok, "{err}");
    assert_eq!(out, "1# \"maxclients\" => \"10000\"\n");
}

#[test]
fn requirepass_with_cli() {
    if redis_cli().is_none() {
        return;
    }
    let server = ServerProcess::seedkv(&["--requirepass", "pw"]);
    let p = server.port;
    assert!(cli(p, &["--no-raw", "get", "k"]).contains("NOAUTH"));
    assert_eq!(cli(p, &["--no-auth-warning", "-a", "pw", "ping"]), "PONG\n");
}

/// `redis-cli --rdb` and `--functions-rdb` take a backup over SYNC
/// (REPLCONF capa eof, rdb-only, rdb-filter-only): redis-server 7.0.15
/// started on each file holds what seedkv held (all keys and the library;
/// the library alone).
#[test]
fn rdb_backups_over_sync_load_into_redis() {
    let Some(bin) = redis_cli() else { return };
    if !seedkv_tests::require_tool("redis-server") {
        return;
    }
    let server = ServerProcess::seedkv(&[]);
    let p = server.port;
    assert_eq!(cli(p, &["set", "backup:k", "v1"]), "OK\n");
    assert_eq!(cli(p, &["rpush", "backup:l", "a", "b"]), "2\n");
    let library = "#!lua name=backuplib\nredis.register_function('bf', function() return 7 end)";
    assert_eq!(cli(p, &["function", "load", library]), "backuplib\n");
    let dir = tempfile::tempdir().expect("temp dir");
    let port = p.to_string();
    for (flag, file) in [("--rdb", "all.rdb"), ("--functions-rdb", "functions.rdb")] {
        let path = dir.path().join(file).display().to_string();
        let (ok, out, err) = run_tool(&bin, &["-p", &port, flag, &path], b"");
        assert!(ok, "{flag}: {out}{err}");
        assert!(
            format!("{out}{err}").contains("Transfer finished with success"),
            "{out}{err}"
        );
    }
    // The server goes on serving; the rdb-only connections are gone.
    assert_eq!(cli(p, &["ping"]), "PONG\n");
    assert!(!cli(p, &["client", "list"]).contains("cmd=sync"));

    let dir_arg = dir.path().display().to_string();
    let redis = ServerProcess::redis_with(&["--dir", &dir_arg, "--dbfilename", "all.rdb"])
        .expect("redis-server");
    let r = redis.port;
    assert_eq!(cli(r, &["dbsize"]), "2\n");
    assert_eq!(cli(r, &["get", "backup:k"]), "v1\n");
    assert_eq!(cli(r, &["lrange", "backup:l", "0", "-1"]), "a\nb\n");
    assert_eq!(cli(r, &["fcall", "bf", "0"]), "7\n");
    drop(redis);

    let redis = ServerProcess::redis_with(&["--dir", &dir_arg, "--dbfilename", "functions.rdb"])
        .expect("redis-server");
    assert_eq!(cli(redis.port, &["dbsize"]), "0\n");
    assert_eq!(cli(redis.port, &["fcall", "bf", "0"]), "7\n");
}
