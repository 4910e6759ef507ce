//! The audit's request templates: one line of text per request, expanded
//! for a size `n`.
//!
//! A template is split on spaces into arguments; `~` inside an argument
//! stands for a space (Lua scripts). Whole-argument expansions, each into
//! `n` arguments (or `n` pairs):
//!
//! | token      | expands to                                     |
//! |------------|------------------------------------------------|
//! | `{ints}`   | `0 1 2 ... n-1` (intset / integer listpack)     |
//! | `{elems}`  | `m:0 m:1 ... m:n-1`                             |
//! | `{keys}`   | `k:0 k:1 ... k:n-1`                             |
//! | `{kvs}`    | `k:0 v k:1 v ...` (n key/value pairs)           |
//! | `{pairs}`  | `f:0 v f:1 v ...` (n field/value pairs)         |
//! | `{fields}` | `f:0 f:1 ... f:n-1`                             |
//! | `{scored}` | `0 m:0 1 m:1 ...` (n score/member pairs)        |
//! | `{kscored}`| `0 k:0 1 k:1 ...` (members disjoint from above) |
//! | `{fscored}`| `0.1 m:0 1.2 m:1 ...` (fractional scores)       |
//! | `{each:X}` | X, n times                                      |
//! | `{dumplist}` | one argument: a DUMP payload of the list `m:0 ... m:n-1` |
//! | `{dumplibs}` | one argument: a FUNCTION DUMP payload of `n` libraries `l0 ... l(n-1)`, each registering one function `f<i>` |
//!
//! Inside an argument: `{n}` is the size, `{n-1}` and `{n/2}`, `{sha}` the
//! SHA1 of [`LOOP_SCRIPT`], `{nl}` a newline (a library's shebang line
//! ends with one), `{tilde}` a literal `~` (a bare `~` is a space inside
//! an argument), `{i}`
//! the repetition index of a `*n ` line, and `{rep:TEXT:COUNT}` repeats
//! TEXT COUNT times, COUNT a number or `n`.
//!
//! A line may start with `*n ` (repeat it `n` times, `{i}` = 0..n) and
//! with `@2 ` (send it on the second client). The pseudo-request
//! `CLIENTS {n}` connects that many extra idle clients.

/// The script EVALSHA runs: a loop of `ARGV[1]` iterations.
pub const LOOP_SCRIPT: &str = "for i=1,tonumber(ARGV[1]) do end return 1";

/// One expanded request and the client (1 or 2) that sends it.
#[derive(Clone, Debug)]
pub struct Request {
    pub client: u8,
    pub args: Vec<Vec<u8>>,
}

/// Extra idle clients asked for by a `CLIENTS n` line.
pub const CLIENTS_PSEUDO: &[u8] = b"CLIENTS";

/// Expands `template` for size `n`, appending the requests to `out`.
pub fn expand(template: &str, n: usize, out: &mut Vec<Request>) {
    let (times, rest) = match template.strip_prefix("*n ") {
        Some(rest) => (n, rest),
        None => (1, template),
    };
    let (client, rest) = match rest.strip_prefix("@2 ") {
        Some(rest) => (2, rest),
        None => (1, rest),
    };
    for i in 0..times {
        let mut args = Vec::new();
        for token in rest.split(' ').filter(|t| !t.is_empty()) {
            expand_token(token, n, i, &mut args);
        }
        out.push(Request { client, args });
    }
}

/// The code of library `l<i>`, which registers one function `f<i>`.
fn library_code(i: usize) -> String {
    format!("#!lua name=l{i}\nredis.register_function('f{i}', function() return 1 end)")
}

/// A FUNCTION DUMP payload (as FUNCTION RESTORE takes it) of the `n`
/// libraries [`library_code`] `0..n`.
fn dump_libraries(n: usize) -> Vec<u8> {
    use seedkv_engine::rdb::{codec, file::opcode, RDB_VERSION};
    let mut p = Vec::new();
    for i in 0..n {
        p.push(opcode::FUNCTION2);
        codec::put_string(&mut p, library_code(i).as_bytes(), false);
    }
    p.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = codec::CRC64.checksum(&p);
    p.extend_from_slice(&crc.to_le_bytes());
    p
}

/// A DUMP payload (as RESTORE takes it) of a list of `n` elements
/// `m:0 ... m:n-1`, in one listpack node.
fn dump_list(n: usize) -> Vec<u8> {
    use seedkv_engine::rdb::{codec, kind, listpack, RDB_VERSION};
    let elements: Vec<Vec<u8>> = (0..n).map(|j| format!("m:{j}").into_bytes()).collect();
    let mut p = vec![kind::LIST_QUICKLIST_2];
    codec::put_len(&mut p, 1);
    codec::put_len(&mut p, 2);
    codec::put_string(
        &mut p,
        &listpack::encode(elements.iter().map(Vec::as_slice)),
        false,
    );
    p.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = codec::CRC64.checksum(&p);
    p.extend_from_slice(&crc.to_le_bytes());
    p
}

fn expand_token(token: &str, n: usize, i: usize, args: &mut Vec<Vec<u8>>) {
    match token {
        "{dumplist}" => args.push(dump_list(n)),
        "{dumplibs}" => args.push(dump_libraries(n)),
        "{ints}" => args.extend((0..n).map(|j| j.to_string().into_bytes())),
        "{elems}" => args.extend((0..n).map(|j| format!("m:{j}").into_bytes())),
        "{keys}" => args.extend((0..n).map(|j| format!("k:{j}").into_bytes())),
        "{kvs}" => {
            for j in 0..n {
                args.push(format!("k:{j}").into_bytes());
                args.push(b"v".to_vec());
            }
        }
        "{pairs}" => {
            for j in 0..n {
                args.push(format!("f:{j}").into_bytes());
                args.push(b"v".to_vec());
            }
        }
        "{fields}" => args.extend((0..n).map(|j| format!("f:{j}").into_bytes())),
        "{fscored}" => {
            for j in 0..n {
                args.push(format!("{j}.{}", j % 997 + 1).into_bytes());
                args.push(format!("m:{j}").into_bytes());
            }
        }
        "{scored}" | "{kscored}" => {
            let prefix = if token == "{scored}" { "m" } else { "k" };
            for j in 0..n {
                args.push(j.to_string().into_bytes());
                args.push(format!("{prefix}:{j}").into_bytes());
            }
        }
        _ if token.starts_with("{each:") && token.ends_with('}') => {
            let arg = inline(&token[6..token.len() - 1], n, i);
            args.extend((0..n).map(|_| arg.clone().into_bytes()));
        }
        _ => args.push(inline(token, n, i).into_bytes()),
    }
}

/// Expands the inline forms of one argument.
fn inline(token: &str, n: usize, i: usize) -> String {
    let mut out = String::new();
    let mut rest = token;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let Some(len) = rest[start..].find('}') else {
            out.push_str(&rest[start..]);
            rest = "";
            break;
        };
        let inner = &rest[start + 1..start + len];
        rest = &rest[start + len + 1..];
        match inner {
            "n" => out.push_str(&n.to_string()),
            "n-1" => out.push_str(&n.saturating_sub(1).to_string()),
            "n/2" => out.push_str(&(n / 2).to_string()),
            "sha" => out.push_str(&seedkv_engine::scripting::sha1_hex(LOOP_SCRIPT.as_bytes())),
            "i" => out.push_str(&i.to_string()),
            "nl" => out.push('\n'),
            "tilde" => out.push(TILDE_HELD),
            _ => match inner.strip_prefix("rep:").and_then(|r| r.rsplit_once(':')) {
                Some((text, count)) => {
                    let count = if count == "n" {
                        n
                    } else {
                        count.parse().unwrap_or(0)
                    };
                    out.push_str(&text.repeat(count));
                }
                None => {
                    out.push('{');
                    out.push_str(inner);
                    out.push('}');
                }
            },
        }
    }
    out.push_str(rest);
    out.replace('~', " ").replace(TILDE_HELD, "~")
}

/// Stands for `{tilde}` until the bare `~`s have become spaces.
const TILDE_HELD: char = '\u{1}';

#[cfg(test)]
mod tests {
    use super::*;

    fn one(template: &str, n: usize) -> Vec<String> {
        let mut out = Vec::new();
        expand(template, n, &mut out);
        assert_eq!(out.len(), 1);
        out[0]
            .args
            .iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect()
    }

    #[test]
    fn expands_lists_inline_sizes_and_repeats() {
        assert_eq!(one("RPUSH l {ints}", 3), ["RPUSH", "l", "0", "1", "2"]);
        assert_eq!(one("HSET h {pairs}", 1), ["HSET", "h", "f:0", "v"]);
        assert_eq!(one("LRANGE l 0 {n-1}", 5), ["LRANGE", "l", "0", "4"]);
        assert_eq!(one("KEYS {rep:a*:3}b", 9), ["KEYS", "a*a*a*b"]);
        assert_eq!(one("SET k {rep:x:n}", 4), ["SET", "k", "xxxx"]);
        assert_eq!(one("EVAL return~1 0", 1), ["EVAL", "return 1", "0"]);
        let mut out = Vec::new();
        expand("*n @2 SET k:{i} v", 3, &mut out);
        assert_eq!(out.len(), 3);
        assert_eq!(out[2].client, 2);
        assert_eq!(out[2].args[1], b"k:2");
    }
}
