//! redis-benchmark against seedkv-server, as a correctness check: no
//! errors, and the keyspace afterwards holds exactly the keys the benchmark
//! writes. Throughput is not asserted (tests never assert wall-clock time);
//! `server/benches/compare.sh` measures it against redis-server.

use seedkv_tests::{cli, find_in_path, require_tool, run_tool, ServerProcess};

#[test]
fn redis_benchmark_runs_without_errors() {
    if !require_tool("redis-benchmark") {
        return;
    }
    let bench = find_in_path("redis-benchmark").expect("on PATH");
    let server = ServerProcess::seedkv(&[]);
    let port = server.port.to_string();
    let (ok, out, err) = run_tool(
        &bench,
        &[
            "-p",
            &port,
            "-t",
            "set,get,incr,mset",
            "-n",
            "20000",
            "-P",
            "16",
            "-q",
        ],
        b"",
    );
    // `-q` prints one line per test, progress overwritten with '\r'.
    let summary: Vec<&str> = out
        .split(['\r', '\n'])
        .filter(|l| l.contains("requests per second"))
        .collect();
    assert!(ok, "redis-benchmark failed:\n{out}\n{err}");
    assert_eq!(
        summary.len(),
        4,
        "one summary per test expected:\n{out}\n{err}"
    );
    let all = format!("{out}{err}");
    assert!(
        !all.contains("Error") && !all.contains("ERR"),
        "redis-benchmark reported errors:\n{all}"
    );
    // Without -r, the benchmark's keys are literal: SET, GET and MSET use
    // `key:__rand_int__`, INCR uses `counter:__rand_int__`.
    assert_eq!(cli(server.port, &["dbsize"]), "2\n");
    assert_eq!(
        cli(server.port, &["get", "counter:__rand_int__"]),
        "20000\n"
    );
    assert_eq!(cli(server.port, &["exists", "key:__rand_int__"]), "1\n");
}
