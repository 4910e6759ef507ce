//! The commands' own key-finding procedures, Redis 7.0's `*GetKeys`
//! functions in src/db.c, for the commands whose key specs cannot always
//! say where the keys are. Each mirrors its Redis original, quirks
//! included, because COMMAND GETKEYS replies what they find.

use super::keys::KeyRef;

/// A key-finding procedure: the keys of a request, `args[0]` the command.
pub type Procedure = fn(&[Vec<u8>]) -> Vec<KeyRef>;

const RO_ACCESS: &[&str] = &["RO", "access"];
const OW_UPDATE: &[&str] = &["OW", "update"];
const RW_ACCESS_UPDATE: &[&str] = &["RW", "access", "update"];
const RW_ACCESS_DELETE: &[&str] = &["RW", "access", "delete"];
/// The procedures of commands whose specs are complete leave the flags out.
const NO_FLAGS: &[&str] = &[];

/// The procedure of the command named `name`, as Redis's command table
/// assigns them.
pub fn procedure(name: &str) -> Option<Procedure> {
    Some(match name {
        "zunionstore" | "zinterstore" | "zdiffstore" => |a| numkeys_keys(a, Some(1), 2, 3),
        "zunion" | "zinter" | "zdiff" | "zintercard" | "sintercard" | "lmpop" | "zmpop" => {
            |a| numkeys_keys(a, None, 1, 2)
        }
        "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall" | "fcall_ro" | "blmpop"
        | "bzmpop" => |a| numkeys_keys(a, None, 2, 3),
        "sort" => sort_keys,
        "sort_ro" => |_| vec![key(1, RO_ACCESS)],
        "migrate" => migrate_keys,
        "georadius" | "georadiusbymember" => georadius_keys,
        "xread" | "xreadgroup" => xread_keys,
        "set" => set_keys,
        "bitfield" => bitfield_keys,
        _ => return None,
    })
}

fn key(index: usize, flags: &'static [&'static str]) -> KeyRef {
    KeyRef { index, flags }
}

/// The argument as a C string: Redis compares arguments with `strcasecmp`,
/// which stops at the first NUL byte.
fn c_str(arg: &[u8]) -> &[u8] {
    match arg.iter().position(|&b| b == 0) {
        Some(nul) => &arg[..nul],
        None => arg,
    }
}

/// `strcasecmp(arg, word) == 0`.
pub(super) fn c_str_eq(arg: &[u8], word: &str) -> bool {
    c_str(arg).eq_ignore_ascii_case(word.as_bytes())
}

/// C's `atoi` as glibc implements it (`(int)strtol(s, NULL, 10)`): leading
/// white space, a sign, the digits up to the first other byte; a value
/// beyond a long saturates, then the cast keeps its low 32 bits.
fn atoi(arg: &[u8]) -> i32 {
    let s = c_str(arg);
    let mut i = s
        .iter()
        .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r'))
        .unwrap_or(s.len());
    let negative = s.get(i) == Some(&b'-');
    if matches!(s.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    let mut value: i64 = 0;
    for &b in s[i..].iter().take_while(|b| b.is_ascii_digit()) {
        let digit = i64::from(b - b'0');
        value = if negative {
            value.saturating_mul(10).saturating_sub(digit)
        } else {
            value.saturating_mul(10).saturating_add(digit)
        };
    }
    value as i32
}

/// Redis's `genericGetKeys`: `numkeys` at `count_at`, the keys from
/// `first`, then the destination at `store`, if any. A count that is not
/// positive or exceeds the arguments names no key.
fn numkeys_keys(
    args: &[Vec<u8>],
    store: Option<usize>,
    count_at: usize,
    first: usize,
) -> Vec<KeyRef> {
    let Some(count) = args.get(count_at).map(|a| atoi(a)) else {
        return Vec::new();
    };
    let available = args.len().saturating_sub(first);
    if count < 1 || count as usize > available {
        return Vec::new();
    }
    let mut keys: Vec<KeyRef> = (first..first + count as usize)
        .map(|i| key(i, NO_FLAGS))
        .collect();
    keys.extend(store.map(|i| key(i, NO_FLAGS)));
    keys
}

/// Redis's `sortGetKeys`: the sorted key, and the argument after the last
/// STORE. Options with arguments (LIMIT, GET, BY) are skipped; STORE's
/// own argument is not, as in Redis.
fn sort_keys(args: &[Vec<u8>]) -> Vec<KeyRef> {
    let mut keys = vec![key(1, RO_ACCESS)];
    let mut store = None;
    let mut i = 2;
    while i < args.len() {
        let arg = &args[i];
        if c_str_eq(arg, "limit") {
            i += 2;
        } else if c_str_eq(arg, "store") && i + 1 < args.len() {
            store = Some(i + 1);
        } else if c_str_eq(arg, "get") || c_str_eq(arg, "by") {
            i += 1;
        }
        i += 1;
    }
    keys.extend(store.map(|i| key(i, OW_UPDATE)));
    keys
}

/// Redis's `migrateGetKeys`: the key at 3, or with KEYS (and an empty key
/// argument) every argument after it.
fn migrate_keys(args: &[Vec<u8>]) -> Vec<KeyRef> {
    let argc = args.len();
    let (mut first, mut num) = (3, 1);
    let mut i = 6;
    while argc > 6 && i < argc {
        let arg = &args[i];
        if c_str_eq(arg, "keys") {
            if !args[3].is_empty() {
                // A syntax error that MIGRATE itself reports.
                num = 0;
            } else {
                first = i + 1;
                num = argc - first;
            }
            break;
        }
        if c_str_eq(arg, "auth") {
            i += 1;
        } else if c_str_eq(arg, "auth2") {
            i += 2;
        }
        i += 1;
    }
    (first..first + num)
        .map(|i| key(i, RW_ACCESS_DELETE))
        .collect()
}

/// Redis's `georadiusGetKeys`: the key, and the argument after the last
/// STORE or STOREDIST from argument 5 on.
fn georadius_keys(args: &[Vec<u8>]) -> Vec<KeyRef> {
    let mut stored = None;
    let mut i = 5;
    while i < args.len() {
        let arg = &args[i];
        if (c_str_eq(arg, "store") || c_str_eq(arg, "storedist")) && i + 1 < args.len() {
            stored = Some(i + 1);
            i += 1;
        }
        i += 1;
    }
    let mut keys = vec![key(1, NO_FLAGS)];
    keys.extend(stored.map(|i| key(i, NO_FLAGS)));
    keys
}

/// Redis's `xreadGetKeys`: the first half of the arguments after STREAMS,
/// found by skipping the options before it.
fn xread_keys(args: &[Vec<u8>]) -> Vec<KeyRef> {
    let argc = args.len();
    let mut streams_at = None;
    let mut i = 1;
    while i < argc {
        let arg = &args[i];
        if c_str_eq(arg, "block") || c_str_eq(arg, "count") {
            i += 1;
        } else if c_str_eq(arg, "group") {
            i += 2;
        } else if c_str_eq(arg, "noack") {
            // No argument to skip.
        } else if c_str_eq(arg, "streams") {
            streams_at = Some(i);
            break;
        } else {
            break;
        }
        i += 1;
    }
    let Some(at) = streams_at else {
        return Vec::new();
    };
    let num = argc - at - 1;
    if num == 0 || !num.is_multiple_of(2) {
        return Vec::new();
    }
    (at + 1..argc - num / 2).map(|i| key(i, NO_FLAGS)).collect()
}

/// Redis's `setGetKeys`: the key, read and written when a GET option
/// follows the value, overwritten otherwise.
fn set_keys(args: &[Vec<u8>]) -> Vec<KeyRef> {
    let get = args.iter().skip(3).any(|a| c_str_eq(a, "get"));
    vec![key(1, if get { RW_ACCESS_UPDATE } else { OW_UPDATE })]
}

/// Redis's `bitfieldGetKeys`: the key, read-only when every operation is
/// a GET (or OVERFLOW).
fn bitfield_keys(args: &[Vec<u8>]) -> Vec<KeyRef> {
    let argc = args.len();
    let mut readonly = true;
    let mut i = 2;
    while i < argc {
        let remaining = argc - i - 1;
        let arg = &args[i];
        if c_str_eq(arg, "get") && remaining >= 2 {
            i += 2;
        } else if (c_str_eq(arg, "set") || c_str_eq(arg, "incrby")) && remaining >= 3 {
            readonly = false;
            break;
        } else if c_str_eq(arg, "overflow") && remaining >= 1 {
            i += 1;
        } else {
            // A syntax error: Redis assumes the safer read-write.
            readonly = false;
            break;
        }
        i += 1;
    }
    vec![key(
        1,
        if readonly {
            RO_ACCESS
        } else {
            RW_ACCESS_UPDATE
        },
    )]
}
