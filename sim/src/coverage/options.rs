//! Each command's option tokens, from the Redis 7.0 command docs (the engine
//! keeps no argument docs). A token counts when an executed request of that
//! command carries it (case-insensitively) after the command's name.
//!
//! Only named tokens are listed: positional arguments (keys, counts,
//! timeouts) are not options. A value that is itself a keyword (AGGREGATE
//! SUM, CLIENT KILL TYPE normal) is listed as `AGGREGATE` plus the keyword,
//! so that each choice shows in the report.

/// `(full command name, its option tokens)`, uppercase.
pub const OPTIONS: &[(&str, &[&str])] = &[
    (
        "set",
        &["NX", "XX", "GET", "EX", "PX", "EXAT", "PXAT", "KEEPTTL"],
    ),
    ("getex", &["EX", "PX", "EXAT", "PXAT", "PERSIST"]),
    (
        "xadd",
        &["NOMKSTREAM", "MAXLEN", "MINID", "~", "=", "LIMIT"],
    ),
    ("xrange", &["COUNT"]),
    ("xrevrange", &["COUNT"]),
    ("xread", &["COUNT", "BLOCK", "STREAMS"]),
    (
        "xreadgroup",
        &["GROUP", "COUNT", "BLOCK", "NOACK", "STREAMS"],
    ),
    ("xtrim", &["MAXLEN", "MINID", "~", "=", "LIMIT"]),
    ("xsetid", &["ENTRIESADDED", "MAXDELETEDID"]),
    ("xpending", &["IDLE"]),
    (
        "xclaim",
        &["IDLE", "TIME", "RETRYCOUNT", "FORCE", "JUSTID", "LASTID"],
    ),
    ("xautoclaim", &["COUNT", "JUSTID"]),
    ("xgroup|create", &["MKSTREAM", "ENTRIESREAD"]),
    ("xgroup|setid", &["ENTRIESREAD"]),
    ("xinfo|stream", &["FULL", "COUNT"]),
    ("bitcount", &["BYTE", "BIT"]),
    ("bitpos", &["BYTE", "BIT"]),
    ("bitop", &["AND", "OR", "XOR", "NOT"]),
    (
        "bitfield",
        &["GET", "SET", "INCRBY", "OVERFLOW", "WRAP", "SAT", "FAIL"],
    ),
    ("bitfield_ro", &["GET"]),
    ("pfdebug", &["ENCODING", "GETREG", "DECODE", "TODENSE"]),
    ("geoadd", &["NX", "XX", "CH"]),
    ("geodist", &["M", "KM", "FT", "MI"]),
    (
        "geosearch",
        &[
            "FROMMEMBER",
            "FROMLONLAT",
            "BYRADIUS",
            "BYBOX",
            "ASC",
            "DESC",
            "COUNT",
            "ANY",
            "WITHCOORD",
            "WITHDIST",
            "WITHHASH",
        ],
    ),
    (
        "geosearchstore",
        &[
            "FROMMEMBER",
            "FROMLONLAT",
            "BYRADIUS",
            "BYBOX",
            "ASC",
            "DESC",
            "COUNT",
            "ANY",
            "STOREDIST",
        ],
    ),
    (
        "georadius",
        &[
            "WITHCOORD",
            "WITHDIST",
            "WITHHASH",
            "COUNT",
            "ANY",
            "ASC",
            "DESC",
            "STORE",
            "STOREDIST",
        ],
    ),
    (
        "georadius_ro",
        &[
            "WITHCOORD",
            "WITHDIST",
            "WITHHASH",
            "COUNT",
            "ANY",
            "ASC",
            "DESC",
        ],
    ),
    (
        "georadiusbymember",
        &[
            "WITHCOORD",
            "WITHDIST",
            "WITHHASH",
            "COUNT",
            "ANY",
            "ASC",
            "DESC",
            "STORE",
            "STOREDIST",
        ],
    ),
    (
        "georadiusbymember_ro",
        &[
            "WITHCOORD",
            "WITHDIST",
            "WITHHASH",
            "COUNT",
            "ANY",
            "ASC",
            "DESC",
        ],
    ),
    ("lcs", &["LEN", "IDX", "MINMATCHLEN", "WITHMATCHLEN"]),
    ("expire", &["NX", "XX", "GT", "LT"]),
    ("pexpire", &["NX", "XX", "GT", "LT"]),
    ("expireat", &["NX", "XX", "GT", "LT"]),
    ("pexpireat", &["NX", "XX", "GT", "LT"]),
    ("copy", &["DB", "REPLACE"]),
    ("restore", &["REPLACE", "ABSTTL", "IDLETIME", "FREQ"]),
    ("scan", &["MATCH", "COUNT", "TYPE"]),
    ("hscan", &["MATCH", "COUNT"]),
    ("sscan", &["MATCH", "COUNT"]),
    ("zscan", &["MATCH", "COUNT"]),
    (
        "sort",
        &["BY", "LIMIT", "GET", "ASC", "DESC", "ALPHA", "STORE"],
    ),
    ("sort_ro", &["BY", "LIMIT", "GET", "ASC", "DESC", "ALPHA"]),
    ("lpos", &["RANK", "COUNT", "MAXLEN"]),
    ("linsert", &["BEFORE", "AFTER"]),
    ("lmove", &["LEFT", "RIGHT"]),
    ("blmove", &["LEFT", "RIGHT"]),
    ("lmpop", &["LEFT", "RIGHT", "COUNT"]),
    ("blmpop", &["LEFT", "RIGHT", "COUNT"]),
    ("zadd", &["NX", "XX", "GT", "LT", "CH", "INCR"]),
    (
        "zrange",
        &["BYSCORE", "BYLEX", "REV", "LIMIT", "WITHSCORES"],
    ),
    ("zrangestore", &["BYSCORE", "BYLEX", "REV", "LIMIT"]),
    ("zrangebyscore", &["WITHSCORES", "LIMIT"]),
    ("zrevrangebyscore", &["WITHSCORES", "LIMIT"]),
    ("zrangebylex", &["LIMIT"]),
    ("zrevrangebylex", &["LIMIT"]),
    ("zrevrange", &["WITHSCORES"]),
    (
        "zunion",
        &["WEIGHTS", "AGGREGATE", "SUM", "MIN", "MAX", "WITHSCORES"],
    ),
    (
        "zinter",
        &["WEIGHTS", "AGGREGATE", "SUM", "MIN", "MAX", "WITHSCORES"],
    ),
    ("zdiff", &["WITHSCORES"]),
    (
        "zunionstore",
        &["WEIGHTS", "AGGREGATE", "SUM", "MIN", "MAX"],
    ),
    (
        "zinterstore",
        &["WEIGHTS", "AGGREGATE", "SUM", "MIN", "MAX"],
    ),
    ("zintercard", &["LIMIT"]),
    ("sintercard", &["LIMIT"]),
    ("zmpop", &["MIN", "MAX", "COUNT"]),
    ("bzmpop", &["MIN", "MAX", "COUNT"]),
    ("zrandmember", &["WITHSCORES"]),
    ("hrandfield", &["WITHVALUES"]),
    ("flushall", &["ASYNC", "SYNC"]),
    ("flushdb", &["ASYNC", "SYNC"]),
    ("hello", &["AUTH", "SETNAME"]),
    ("acl|log", &["RESET"]),
    (
        "client|kill",
        &[
            "ID", "TYPE", "NORMAL", "PUBSUB", "ADDR", "LADDR", "SKIPME", "USER",
        ],
    ),
    ("client|list", &["TYPE", "NORMAL", "PUBSUB", "ID"]),
    ("client|pause", &["WRITE", "ALL"]),
    ("client|no-evict", &["ON", "OFF"]),
    ("client|reply", &["ON", "OFF", "SKIP"]),
    ("lolwut", &["VERSION"]),
    (
        "client|tracking",
        &["ON", "OFF", "BCAST", "PREFIX", "OPTIN", "OPTOUT", "NOLOOP"],
    ),
    ("client|caching", &["YES", "NO"]),
    ("client|setinfo", &["LIB-NAME", "LIB-VER"]),
    ("client|unblock", &["TIMEOUT", "ERROR"]),
    ("command|list", &["FILTERBY", "MODULE", "ACLCAT", "PATTERN"]),
    ("script|flush", &["ASYNC", "SYNC"]),
    ("function|load", &["REPLACE"]),
    ("function|flush", &["ASYNC", "SYNC"]),
    ("function|list", &["LIBRARYNAME", "WITHCODE"]),
    ("function|restore", &["FLUSH", "APPEND", "REPLACE"]),
    ("memory|usage", &["SAMPLES"]),
    ("debug", &["SLEEP", "HELP"]),
    (
        "info",
        &[
            "SERVER",
            "CLIENTS",
            "MEMORY",
            "STATS",
            "COMMANDSTATS",
            "ERRORSTATS",
            "LATENCYSTATS",
            "KEYSPACE",
            "ALL",
            "DEFAULT",
            "EVERYTHING",
        ],
    ),
];

/// The option tokens of `command` (a full name), or none.
pub fn options_of(command: &str) -> &'static [&'static str] {
    OPTIONS
        .iter()
        .find(|(name, _)| *name == command)
        .map_or(&[], |(_, options)| options)
}

/// Options counted under `command` in the request `args` (name first; for
/// a subcommand, the subcommand second): each listed token found among
/// the arguments, once per occurrence.
pub fn options_in<'a>(
    command: &str,
    args: &'a [Vec<u8>],
) -> impl Iterator<Item = &'static str> + 'a {
    options_among(command, options_of(command), args)
}

/// [`options_in`] with `command`'s [`options_of`] given.
pub fn options_among<'a>(
    command: &str,
    options: &'static [&'static str],
    args: &'a [Vec<u8>],
) -> impl Iterator<Item = &'static str> + 'a {
    let skip = if command.contains('|') { 2 } else { 1 };
    args.iter().skip(skip).filter_map(move |arg| {
        options
            .iter()
            .find(|option| option.as_bytes().eq_ignore_ascii_case(arg))
            .copied()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_command_is_in_the_table() {
        let table = seedkv_engine::cmd::CommandTable::new(seedkv_engine::commands::FAMILIES);
        let names = super::super::table_commands(&table);
        for (name, _) in OPTIONS {
            assert!(names.iter().any(|n| n == name), "{name} not in the table");
        }
    }

    #[test]
    fn options_are_found_case_insensitively_after_the_name() {
        let args: Vec<Vec<u8>> = vec![
            b"SET".to_vec(),
            b"k".to_vec(),
            b"v".to_vec(),
            b"px".to_vec(),
        ];
        assert_eq!(options_in("set", &args).collect::<Vec<_>>(), ["PX"]);
        let args: Vec<Vec<u8>> = vec![b"CLIENT".to_vec(), b"LIST".to_vec(), b"TYPE".to_vec()];
        assert_eq!(
            options_in("client|list", &args).collect::<Vec<_>>(),
            ["TYPE"]
        );
    }
}
