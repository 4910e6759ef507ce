//! ACL key checks against redis-server 7.0.15, command by command: for
//! every command (and subcommand) whose COMMAND INFO has key specs, the
//! requests below are synthesised from its COMMAND DOCS arguments, and
//! both servers are asked `ACL DRYRUN` for users whose key patterns grant
//! read only, write only, both, none of the keys, and read and write
//! split over two patterns (Redis's `ACLSelectorCheckKey` wants one
//! pattern granting all the access a key spec asks for). The verdicts
//! must be equal byte for byte, and so must `COMMAND GETKEYSANDFLAGS`,
//! which shows the key-spec flags the verdicts come from.
//!
//! The requests: the required arguments only, then every optional
//! argument too, each with the first, second, ... alternative of every
//! `oneof` (so that SORT ... STORE, GEORADIUS ... STOREDIST and MIGRATE
//! ... KEYS are asked). A key is `k1`, `k2`, ... in order; a repeatable
//! argument appears twice; a `numkeys` counts the keys that follow it.
//!
//! Skipped, with a printed reason, without redis-server (failing instead
//! under `SEEDKV_REQUIRE_TOOLS=1`).

use seedkv_engine::resp::Frame;
use seedkv_tests::{redis_server, RespClient, ServerProcess};

/// The users asked about: name and key rules (each also has `+@all`
/// and `allchannels`, so that only keys decide).
const USERS: &[(&str, &[&str])] = &[
    ("ks-read", &["%R~*"]),
    ("ks-write", &["%W~*"]),
    ("ks-rw", &["%RW~*"]),
    ("ks-other", &["~other*"]),
    ("ks-split", &["%R~*", "%W~k1"]),
];

/// Commands with key specs whose requests are not synthesised, and why.
/// The test fails if another command joins them (or one leaves).
const NOT_SYNTHESISED: &[(&str, &str)] = &[];

/// Requests per command at most (the alternatives of wide `oneof`s).
const VARIANTS_MAX: usize = 8;

/// One argument of COMMAND DOCS.
#[derive(Debug, Default)]
struct DocArg {
    name: String,
    kind: String,
    token: Option<String>,
    optional: bool,
    multiple: bool,
    multiple_token: bool,
    children: Vec<DocArg>,
}

fn text(frame: &Frame) -> String {
    match frame {
        Frame::Bulk(b) | Frame::Simple(b) | Frame::Error(b) => String::from_utf8_lossy(b).into(),
        other => format!("{other:?}"),
    }
}

/// A RESP2 map (a flat array of name, value, ...) as pairs.
fn pairs(frame: &Frame) -> Vec<(String, &Frame)> {
    match frame {
        Frame::Array(items) => items.chunks(2).map(|p| (text(&p[0]), &p[1])).collect(),
        Frame::Map(items) => items.iter().map(|(k, v)| (text(k), v)).collect(),
        _ => Vec::new(),
    }
}

fn items(frame: &Frame) -> &[Frame] {
    match frame {
        Frame::Array(items) | Frame::Set(items) => items,
        _ => &[],
    }
}

fn doc_arg(frame: &Frame) -> DocArg {
    let mut arg = DocArg::default();
    for (field, value) in pairs(frame) {
        match field.as_str() {
            "name" => arg.name = text(value),
            "type" => arg.kind = text(value),
            "token" => arg.token = Some(text(value)),
            "flags" => {
                for flag in items(value).iter().map(text) {
                    match flag.as_str() {
                        "optional" => arg.optional = true,
                        "multiple" => arg.multiple = true,
                        "multiple_token" => arg.multiple_token = true,
                        _ => {}
                    }
                }
            }
            "arguments" => arg.children = items(value).iter().map(doc_arg).collect(),
            _ => {}
        }
    }
    arg
}

/// The widest `oneof` among `args`, for the number of requests.
fn widest_oneof(args: &[DocArg]) -> usize {
    args.iter()
        .map(|a| {
            let own = if a.kind == "oneof" {
                a.children.len()
            } else {
                1
            };
            own.max(widest_oneof(&a.children))
        })
        .max()
        .unwrap_or(1)
}

/// Builds one request from a command's documented arguments.
struct Synth {
    args: Vec<String>,
    with_optional: bool,
    /// The alternative taken in every `oneof` (the last one if fewer).
    choice: usize,
    /// Where a `numkeys` stands, to be filled in once the keys are out.
    numkeys_at: Vec<usize>,
    key_positions: Vec<usize>,
}

impl Synth {
    fn emit(&mut self, a: &DocArg) -> Result<(), String> {
        if a.optional && !self.with_optional {
            return Ok(());
        }
        let times = if a.multiple { 2 } else { 1 };
        for n in 0..times {
            if let Some(token) = &a.token {
                if n == 0 || a.multiple_token {
                    self.args.push(token.clone());
                }
            }
            self.value(a)?;
        }
        Ok(())
    }

    fn value(&mut self, a: &DocArg) -> Result<(), String> {
        let value = match a.kind.as_str() {
            "key" => {
                self.key_positions.push(self.args.len());
                format!("k{}", self.key_positions.len())
            }
            "integer" if a.name == "numkeys" => {
                self.numkeys_at.push(self.args.len());
                "0".to_string()
            }
            "string" => "v".to_string(),
            "integer" | "double" | "unix-time" => "1".to_string(),
            "pattern" => "p*".to_string(),
            "pure-token" => return Ok(()),
            "block" => {
                for child in &a.children {
                    self.emit(child)?;
                }
                return Ok(());
            }
            "oneof" => {
                let Some(last) = a.children.len().checked_sub(1) else {
                    return Err(format!("an empty oneof `{}`", a.name));
                };
                let child = &a.children[self.choice.min(last)];
                return self.emit(child);
            }
            other => return Err(format!("argument `{}` of type `{other}`", a.name)),
        };
        self.args.push(value);
        Ok(())
    }

    /// Each `numkeys` counts the keys after it (up to the next one).
    fn fill_numkeys(&mut self) {
        for (n, &at) in self.numkeys_at.iter().enumerate() {
            let end = self.numkeys_at.get(n + 1).copied().unwrap_or(usize::MAX);
            let count = self
                .key_positions
                .iter()
                .filter(|&&p| p > at && p < end)
                .count();
            self.args[at] = count.to_string();
        }
    }
}

/// The requests for command `words` (its name, or container and
/// subcommand) with documented arguments `args`.
fn requests(words: &[String], args: &[DocArg]) -> Result<Vec<Vec<String>>, String> {
    let mut out: Vec<Vec<String>> = Vec::new();
    let widest = widest_oneof(args).min(VARIANTS_MAX);
    for with_optional in [false, true] {
        for choice in 0..widest {
            let mut s = Synth {
                args: words.to_vec(),
                with_optional,
                choice,
                numkeys_at: Vec::new(),
                key_positions: Vec::new(),
            };
            for a in args {
                s.emit(a)?;
            }
            s.fill_numkeys();
            if !out.contains(&s.args) {
                out.push(s.args);
            }
        }
    }
    Ok(out)
}

/// A command with key specs: its words (`["object", "encoding"]`).
fn keyed_commands(info: &Frame, parent: Option<&str>, out: &mut Vec<Vec<String>>) {
    for entry in items(info) {
        let fields = items(entry);
        if fields.len() < 10 {
            continue;
        }
        let name = text(&fields[0]);
        let words: Vec<String> = match parent {
            None => vec![name.clone()],
            Some(p) => vec![
                p.to_string(),
                name.split('|').nth(1).unwrap_or(&name).to_string(),
            ],
        };
        if !items(&fields[8]).is_empty() {
            out.push(words);
        }
        keyed_commands(&fields[9], Some(&name), out);
    }
}

/// The documented arguments of `words` from COMMAND DOCS.
fn documented_args(redis: &mut RespClient, words: &[String]) -> Vec<DocArg> {
    let docs = redis.command(&[b"command", b"docs", words[0].as_bytes()]);
    let Some((_, doc)) = pairs(&docs).into_iter().next() else {
        return Vec::new();
    };
    let doc = match words.get(1) {
        None => doc,
        Some(sub) => {
            let full = format!("{}|{}", words[0], sub);
            let subs = pairs(doc)
                .into_iter()
                .find(|(f, _)| f == "subcommands")
                .map(|(_, v)| v);
            let Some(found) = subs.and_then(|s| {
                pairs(s)
                    .into_iter()
                    .find(|(n, _)| *n == full)
                    .map(|(_, d)| d)
            }) else {
                return Vec::new();
            };
            found
        }
    };
    pairs(doc)
        .into_iter()
        .find(|(f, _)| f == "arguments")
        .map(|(_, v)| items(v).iter().map(doc_arg).collect())
        .unwrap_or_default()
}

fn as_bytes(words: &[String]) -> Vec<&[u8]> {
    words.iter().map(|w| w.as_bytes()).collect()
}

fn render(frame: &Frame) -> String {
    match frame {
        Frame::Simple(s) => format!("+{}", String::from_utf8_lossy(s)),
        Frame::Error(e) => format!("-{}", String::from_utf8_lossy(e)),
        Frame::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
        other => format!("{other:?}"),
    }
}

fn create_users(client: &mut RespClient) {
    for (name, rules) in USERS {
        let mut setuser = vec!["acl", "setuser", name, "reset", "on", "nopass", "+@all"];
        setuser.push("allchannels");
        setuser.extend(rules.iter());
        let words: Vec<&[u8]> = setuser.iter().map(|w| w.as_bytes()).collect();
        assert_eq!(client.command(&words), Frame::Simple(b"OK".to_vec()));
    }
}

/// What one server answers about one request: GETKEYSANDFLAGS, then
/// each user's DRYRUN verdict.
fn answers(client: &mut RespClient, request: &[String]) -> Vec<String> {
    let mut getkeys = vec!["command".to_string(), "getkeysandflags".to_string()];
    getkeys.extend(request.iter().cloned());
    let mut out = vec![render(&client.command(&as_bytes(&getkeys)))];
    for (user, _) in USERS {
        let mut dryrun = vec!["acl".to_string(), "dryrun".to_string(), user.to_string()];
        dryrun.extend(request.iter().cloned());
        out.push(render(&client.command(&as_bytes(&dryrun))));
    }
    out
}

#[test]
fn dryrun_verdicts_equal_redis_for_every_command_with_keys() {
    let Some(redis) = redis_server() else {
        return;
    };
    let seedkv = ServerProcess::seedkv(&[]);
    let mut r = RespClient::connect(redis.port);
    let mut s = RespClient::connect(seedkv.port);
    create_users(&mut r);
    create_users(&mut s);
    let mut commands = Vec::new();
    keyed_commands(&r.command(&[b"command"]), None, &mut commands);
    commands.sort();
    let (mut missing, mut unsynthesised, mut differences) = (Vec::new(), Vec::new(), Vec::new());
    let (mut requests_count, mut denials_count) = (0, 0);
    for words in &commands {
        let full = words.join("|");
        let ours = s.command(&[b"command", b"info", full.as_bytes()]);
        if items(&ours).first().is_none_or(|f| *f == Frame::Null) {
            missing.push(full);
            continue;
        }
        let args = documented_args(&mut r, words);
        let requests = match requests(words, &args) {
            Ok(requests) => requests,
            Err(why) => {
                unsynthesised.push((full, why));
                continue;
            }
        };
        for request in requests {
            requests_count += 1;
            let expected = answers(&mut r, &request);
            let got = answers(&mut s, &request);
            denials_count += expected
                .iter()
                .filter(|v| v.contains("no permissions"))
                .count();
            if got != expected {
                differences.push(format!(
                    "`{}`: redis {expected:?}\n    seedkv {got:?}",
                    request.join(" ")
                ));
            }
        }
    }
    eprintln!(
        "{} commands with key specs, {requests_count} requests x {} users, {denials_count} denials; \
         not in seedkv: {missing:?}",
        commands.len(),
        USERS.len()
    );
    let skipped: Vec<&str> = unsynthesised.iter().map(|(n, _)| n.as_str()).collect();
    let listed: Vec<&str> = NOT_SYNTHESISED.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        skipped, listed,
        "commands whose requests could not be synthesised: {unsynthesised:?}"
    );
    assert!(
        differences.is_empty(),
        "{} requests differ from redis-server:\n{}",
        differences.len(),
        differences.join("\n")
    );
    // The users must see both verdicts often, or the test proves little.
    assert!(
        requests_count > 200 && denials_count * 4 > requests_count,
        "{requests_count} requests, {denials_count} denials"
    );
}
