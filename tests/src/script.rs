//! Command scripts (`tests/scripts/*.txt`): one command per line in
//! redis-cli syntax, shared by the differential test (seedkv vs redis-server
//! through `redis-cli`) and the snapshot tests (the engine alone).
//!
//! A line is one of:
//!
//! - empty, or starting with `#`: ignored, except `#! requires CMD...`,
//!   which names commands the script needs beyond the basics: the
//!   differential test skips the script (saying so) while seedkv lacks one;
//! - `CMD args...`: its output must match redis-server's exactly;
//! - `~CMD args...`: run, but its output legitimately differs between
//!   servers (INFO, CLIENT LIST, TIME, ...), so it is masked in the
//!   differential test (snapshots still show it);
//! - `%CMD args...`: an unordered reply (KEYS, SCAN): compared as a sorted
//!   list of elements, because the two servers hash keys differently.

use std::path::{Path, PathBuf};

use seedkv_engine::resp::reply::encode_request;
use seedkv_engine::testing::{TestEngine, UNIX_ORIGIN_US};
use seedkv_engine::{ClientId, Now};

use crate::render::{decode_all, render_reply_to};

/// How a line's output is compared against redis-server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compare {
    Exact,
    Masked,
    Sorted,
}

/// One command of a script.
#[derive(Clone, Debug)]
pub struct Line {
    /// 1-based line number in the file.
    pub number: usize,
    /// The command as written, without its `~`/`%` marker.
    pub command: String,
    pub compare: Compare,
}

/// Parses a script's text.
pub fn parse(text: &str) -> Vec<Line> {
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let (compare, command) = match trimmed.as_bytes()[0] {
            b'~' => (Compare::Masked, &trimmed[1..]),
            b'%' => (Compare::Sorted, &trimmed[1..]),
            _ => (Compare::Exact, trimmed),
        };
        lines.push(Line {
            number: i + 1,
            command: command.trim().to_owned(),
            compare,
        });
    }
    lines
}

/// The commands a script declares with `#! requires CMD...` lines.
pub fn requires(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("#! requires"))
        .flat_map(|rest| rest.split_whitespace().map(str::to_ascii_lowercase))
        .collect()
}

/// Every script in `tests/scripts`, sorted by name.
pub fn all_scripts() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    paths.sort();
    paths
}

/// Reads and parses the script `tests/scripts/<name>.txt`.
pub fn load(name: &str) -> Vec<Line> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts")
        .join(format!("{name}.txt"));
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    parse(&text)
}

/// Splits a command line like redis-cli does (quotes, `\x` escapes).
pub fn split(command: &str) -> Vec<Vec<u8>> {
    seedkv_engine::resp::parse::split_args(command.as_bytes())
        .unwrap_or_else(|| panic!("unbalanced quotes in script line {command:?}"))
}

/// Virtual time the snapshot runner waits for the reply of a command that
/// blocked (`BLPOP k 0.01` replies after 10 ms; `BLPOP k 0` would never).
pub const BLOCKED_WAIT_NS_MAX: u64 = 60 * 1_000_000_000;

/// Timer steps the runner takes while waiting (each step runs the engine's
/// next deadline: a blocked client's timeout or a cron tick).
const BLOCKED_WAIT_STEPS_MAX: usize = 10_000;

/// After a command produced no reply (it blocked), advances the virtual
/// clock from deadline to deadline, as a host would, until `client` gets
/// output or [`BLOCKED_WAIT_NS_MAX`] passes. Returns the output.
fn wait_for_reply(engine: &mut TestEngine, client: ClientId) -> Vec<u8> {
    let give_up_ns = engine.now.mono_ns + BLOCKED_WAIT_NS_MAX;
    let mut out = Vec::new();
    for _ in 0..BLOCKED_WAIT_STEPS_MAX {
        let deadline_ns = engine.engine.poll_timeout();
        if deadline_ns > give_up_ns {
            break;
        }
        let mono_ns = deadline_ns.max(engine.now.mono_ns);
        engine.now = Now::from_ns(mono_ns, UNIX_ORIGIN_US);
        engine.engine.handle_timeout(engine.now);
        while let Some(e) = engine.engine.poll_event() {
            engine.events.push(e);
        }
        while let Some(c) = engine.engine.poll_transmit() {
            let bytes = engine.engine.pending_output(c).to_vec();
            engine.engine.consume_output(c, bytes.len());
            if c == client {
                out.extend_from_slice(&bytes);
            }
        }
        if !out.is_empty() {
            break;
        }
    }
    out
}

/// Runs `lines` on one connection of a fresh engine and renders a
/// transcript: each command after `> `, then its replies as redis-cli
/// prints them. Masked (`~`) lines run but show `(masked)`: their output
/// is volatile (memory estimates, ids, clocks), and a snapshot must change
/// only when behaviour does. A command that blocks is given virtual time
/// (see [`wait_for_reply`]), as redis-cli waits for its reply.
pub fn transcript(lines: &[Line]) -> String {
    let mut engine = TestEngine::new();
    let client = engine.connect();
    let mut out = String::new();
    for line in lines {
        out.push_str("> ");
        out.push_str(&line.command);
        out.push('\n');
        let args = split(&line.command);
        let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        let mut bytes = engine.raw(client, &encode_request(&refs));
        if bytes.is_empty() && engine.engine.is_blocked(client) {
            bytes = wait_for_reply(&mut engine, client);
        }
        match decode_all(&bytes) {
            Ok(replies) if replies.is_empty() => out.push_str("(no reply)\n"),
            Ok(_) if line.compare == Compare::Masked => out.push_str("(masked)\n"),
            Ok(replies) => replies
                .iter()
                .for_each(|r| out.push_str(&render_reply_to(&args, r))),
            Err(e) => out.push_str(&format!("(undecodable reply: {e})\n")),
        }
    }
    out
}

/// Normalises one command's redis-cli output for comparison.
pub fn normalize(output: &str, compare: Compare) -> String {
    match compare {
        Compare::Masked => "<masked>\n".into(),
        Compare::Exact => mask_client_ids(output),
        Compare::Sorted => {
            let mut items: Vec<&str> = output.lines().map(strip_indexes).collect();
            items.sort_unstable();
            items.iter().map(|l| format!("{l}\n")).collect()
        }
    }
}

/// `2) 1) "a"` -> `"a"`: drops redis-cli's (nested) element numbers.
fn strip_indexes(line: &str) -> &str {
    let mut rest = line.trim_start();
    loop {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return rest;
        }
        match rest[digits..]
            .strip_prefix(") ")
            .or_else(|| rest[digits..].strip_prefix("~ "))
        {
            Some(after) => rest = after.trim_start(),
            None => return rest,
        }
    }
}

/// HELLO reports the connection's id, which depends on how many
/// connections each server has seen: replace it with `<id>`.
fn mask_client_ids(output: &str) -> String {
    let mut out = String::with_capacity(output.len());
    let mut previous_was_id = false;
    for line in output.lines() {
        let key_line = line.trim_end().ends_with("\"id\"");
        if let Some(pos) = line.find("\"id\" => (integer) ") {
            out.push_str(&line[..pos]);
            out.push_str("\"id\" => (integer) <id>");
        } else if previous_was_id && line.contains("(integer) ") {
            let pos = line.find("(integer) ").expect("checked");
            out.push_str(&line[..pos]);
            out.push_str("(integer) <id>");
        } else {
            out.push_str(line);
        }
        out.push('\n');
        previous_was_id = key_line;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers() {
        let text = "# c\n#! requires lpush RPUSH\n\nSET a 1\n~INFO\n%KEYS *\n";
        assert_eq!(requires(text), ["lpush", "rpush"]);
        let lines = parse(text);
        let got: Vec<_> = lines
            .iter()
            .map(|l| (l.number, l.command.as_str(), l.compare))
            .collect();
        assert_eq!(
            got,
            [
                (4, "SET a 1", Compare::Exact),
                (5, "INFO", Compare::Masked),
                (6, "KEYS *", Compare::Sorted)
            ]
        );
    }

    #[test]
    fn sorted_comparison_ignores_order_and_numbering() {
        let a = normalize("1) \"0\"\n2) 1) \"b\"\n   2) \"a\"\n", Compare::Sorted);
        let b = normalize("1) \"0\"\n2) 1) \"a\"\n   2) \"b\"\n", Compare::Sorted);
        assert_eq!(a, b);
    }

    #[test]
    fn client_ids_are_masked() {
        assert_eq!(
            normalize("4# \"id\" => (integer) 7\n", Compare::Exact),
            "4# \"id\" => (integer) <id>\n"
        );
        assert_eq!(
            normalize(
                " 7) \"id\"\n 8) (integer) 12\n 9) \"mode\"\n",
                Compare::Exact
            ),
            " 7) \"id\"\n 8) (integer) <id>\n 9) \"mode\"\n"
        );
    }
}
