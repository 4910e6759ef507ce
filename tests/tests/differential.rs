//! Differential test: every script in `tests/scripts` runs through
//! `redis-cli --no-raw` against a real redis-server 7.0 and against
//! seedkv-server; the outputs must match command by command, except lines the
//! scripts mark as legitimately different (see tests/scripts/README.md).
//!
//! Skipped, with a printed reason, when redis-server or redis-cli is not
//! installed (`.ci/run` installs both).

use std::collections::BTreeMap;
use std::path::Path;

use seedkv_tests::render::render_reply_to;
use seedkv_tests::script::{self, normalize, Compare, Line};
use seedkv_tests::{cli, redis_cli, redis_server, run_tool, RespClient, ServerProcess};

/// Runs `lines` on one redis-cli connection to `port`, returning each
/// line's raw output keyed by line number. Each command is preceded by an
/// `ECHO "##N"` marker so that the output can be cut per command.
fn run_script(cli: &Path, port: u16, lines: &[Line]) -> BTreeMap<usize, String> {
    let mut input = String::new();
    for line in lines {
        input.push_str(&format!("ECHO \"##{}\"\n{}\n", line.number, line.command));
    }
    let port = port.to_string();
    let (_, stdout, stderr) = run_tool(cli, &["--no-raw", "-p", &port], input.as_bytes());
    let mut outputs = BTreeMap::new();
    let mut current: Option<usize> = None;
    for out_line in stdout.lines() {
        let marker = out_line
            .strip_prefix("\"##")
            .and_then(|rest| rest.strip_suffix('"'))
            .and_then(|n| n.parse::<usize>().ok());
        match marker {
            Some(n) => {
                current = Some(n);
                outputs.insert(n, String::new());
            }
            None => match current {
                Some(n) => {
                    let o = outputs.get_mut(&n).expect("inserted at its marker");
                    o.push_str(out_line);
                    o.push('\n');
                }
                None => panic!(
                    "redis-cli output before the first marker: {out_line:?}\nstderr: {stderr}"
                ),
            },
        }
    }
    outputs
}

#[test]
fn scripts_match_redis_server() {
    let Some(cli_bin) = redis_cli() else { return };
    let Some(redis) = redis_server() else { return };
    let seedkv = ServerProcess::seedkv(&[]);

    let mut report = String::new();
    let mut differing = 0;
    let mut compared = 0;
    for path in script::all_scripts() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let missing: Vec<String> = script::requires(&text)
            .into_iter()
            .filter(|cmd| {
                cli(seedkv.port, &["command", "info", cmd])
                    .trim()
                    .is_empty()
            })
            .collect();
        if !missing.is_empty() {
            eprintln!(
                "SKIPPED {name}: seedkv-server lacks {missing:?} (declared with `#! requires`)"
            );
            continue;
        }
        let lines = script::parse(&text);
        let expected = run_script(&cli_bin, redis.port, &lines);
        let actual = run_script(&cli_bin, seedkv.port, &lines);
        for line in &lines {
            let missing = "(no output: the connection was lost)\n".to_string();
            let want = expected.get(&line.number).unwrap_or(&missing);
            let got = actual.get(&line.number).unwrap_or(&missing);
            compared += 1;
            if line.compare != Compare::Masked
                && normalize(want, line.compare) != normalize(got, line.compare)
            {
                differing += 1;
                report.push_str(&format!("--- {name}:{} > {}\n", line.number, line.command));
                for l in want.lines() {
                    report.push_str(&format!("  redis : {l}\n"));
                }
                for l in got.lines() {
                    report.push_str(&format!("  seedkv: {l}\n"));
                }
            }
        }
    }
    assert!(compared > 0, "no script lines found");
    if differing > 0 {
        panic!(
            "{differing} of {compared} commands differ between redis-server and seedkv-server:\n{report}"
        );
    }
    eprintln!("{compared} commands compared, all equal");
}

/// The snapshot tests render replies with our own renderer; this checks it
/// prints exactly what redis-cli prints, on every script line, against
/// redis-server.
#[test]
fn renderer_matches_redis_cli() {
    let Some(cli_bin) = redis_cli() else { return };
    let Some(redis) = redis_server() else { return };
    let mut report = String::new();
    let mut compared = 0;
    for path in script::all_scripts() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let lines = script::parse(&std::fs::read_to_string(&path).unwrap());
        let by_cli = run_script(&cli_bin, redis.port, &lines);
        let mut client = RespClient::connect(redis.port);
        // Inside MULTI the ECHO markers that split redis-cli's output are
        // queued too, so its output for MULTI..EXEC arrives as one block:
        // those lines are not compared one by one (the differential test
        // still compares the block between the two servers).
        let mut in_multi = false;
        for line in &lines {
            let args = script::split(&line.command);
            let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
            let mut ours = render_reply_to(&args, &client.command(&refs));
            let name_is = |n: &str| {
                args.first()
                    .is_some_and(|a| a.eq_ignore_ascii_case(n.as_bytes()))
            };
            // The unsubscribe family answers one confirmation per channel
            // named, each its own frame; redis-cli prints them all.
            let unsubscribe = ["unsubscribe", "punsubscribe", "sunsubscribe"];
            if unsubscribe.iter().any(|n| name_is(n)) {
                for _ in 2..args.len() {
                    ours.push_str(&render_reply_to(&args, &client.next_reply()));
                }
            }
            let skip = in_multi || name_is("multi");
            if name_is("multi") {
                in_multi = true;
            } else if name_is("exec") || name_is("discard") {
                in_multi = false;
            }
            if line.compare == Compare::Masked || skip {
                continue;
            }
            compared += 1;
            let theirs = by_cli.get(&line.number).map(String::as_str).unwrap_or("");
            // redis-cli's own banner once it believes it is subscribed.
            let theirs = theirs.replace("Reading messages... (press Ctrl-C to quit)\n", "");
            if normalize(&ours, Compare::Exact) != normalize(&theirs, Compare::Exact) {
                report.push_str(&format!(
                    "--- {name}:{} > {}\n  redis-cli:\n{theirs}  ours:\n{ours}",
                    line.number, line.command
                ));
            }
        }
    }
    assert!(compared > 0);
    assert!(
        report.is_empty(),
        "rendering differs from redis-cli:\n{report}"
    );
}
