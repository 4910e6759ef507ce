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
