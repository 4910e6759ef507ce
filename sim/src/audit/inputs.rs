//! What the audit runs for each command of the table: a setup (untimed)
//! and one measured request, as templates over a size `n` (see
//! [`super::template`]), and which dimension `n` grows.
//!
//! One dimension grows at a time. Where the command's declared complexity
//! names the dimension grown, the declared exponent comes from the table's
//! `complexity` text ([`super::fit::declared_exponent`]); where it does not
//! (O(1) commands grown over the keyspace, an `O(N*K)` grown in N alone,
//! a per-item `O(log(N))` grown in the number of items) the input states
//! its own exponent and why. A command may have several inputs (KEYS over
//! the keyspace, and KEYS with a pathological pattern).

/// One audited shape of one command.
#[derive(Clone, Debug)]
pub struct Input {
    /// Full table name (`lrange`, `client|list`).
    pub name: &'static str,
    /// What `n` is.
    pub grows: &'static str,
    pub setup: &'static [&'static str],
    pub run: &'static str,
    /// `n` is the audit size divided by this (quadratic or costly inputs).
    pub shrink: usize,
    /// The exponent in `n` when the table's text does not give it, and why.
    pub declared: Option<(f64, &'static str)>,
    /// Why an error reply is the expected answer, when it is.
    pub error_ok: Option<&'static str>,
}

impl Input {
    fn declared(mut self, exponent: f64, why: &'static str) -> Input {
        self.declared = Some((exponent, why));
        self
    }

    fn error_ok(mut self, why: &'static str) -> Input {
        self.error_ok = Some(why);
        self
    }

    fn shrink(mut self, by: usize) -> Input {
        self.shrink = by;
        self
    }
}

fn c(
    name: &'static str,
    grows: &'static str,
    setup: &'static [&'static str],
    run: &'static str,
) -> Input {
    Input {
        name,
        grows,
        setup,
        run,
        shrink: 1,
        declared: None,
        error_ok: None,
    }
}

/// An O(1) command measured over a keyspace of `n` keys (plus a counter `c`,
/// a hash `h`, a list `l` and a sorted set `z` of one element each).
fn db(name: &'static str, run: &'static str) -> Input {
    c(
        name,
        "keys in the db",
        &[
            "MSET {kvs}",
            "SET c 10",
            "HSET h f v",
            "RPUSH l a",
            "ZADD z 1 m",
        ],
        run,
    )
}

/// The Lua state is made once per server: a setup creates it, so that the
/// measured EVAL pays for its own script only.
const WARM_LUA: &[&str] = &["EVAL return~1 0"];

/// A library of two functions that loop `ARGV[1]` times, one of them
/// read-only (FCALL_RO runs only `no-writes` functions).
const LOOP_LIBRARY: &str = "FUNCTION LOAD #!lua~name=loops{nl}redis.register_function('loop',function(k,a)~for~i=1,tonumber(a[1])~do~end~return~1~end)~redis.register_function{function_name='loop_ro',callback=function(k,a)~for~i=1,tonumber(a[1])~do~end~return~1~end,flags={'no-writes'}}";

/// `n` libraries `l0 ... l(n-1)` of one function each (see
/// `template::library_code`).
const N_LIBRARIES: &[&str] = &[
    "*n FUNCTION LOAD #!lua~name=l{i}{nl}redis.register_function('f{i}',function()~return~1~end)",
];
const QUADRATIC_PATTERNS: &str = "O(N) per pattern in the patterns already subscribed \
     (Redis's list search): n patterns in one call are O(n^2)";
const INFO_MEMORY: &str = "Redis reads its allocator (O(1)); seedkv estimates the dataset \
     by visiting every key, charged per key (commands/server/memory_estimate.rs)";
const LONG_A_KEY: &str = "SET {rep:a:n} 1";
const GLOB_KEY: &str = "key of n `a`s against `a*` x16 then `b`";
const GLOB_KEY_LINEAR: &str =
    "a polynomial matcher's steps grow linearly in the key for a fixed pattern";
const PER_ITEM: &str = "O(log(N)) or O(1) per item, n items";
const TWO_INPUTS: &str = "grows N, the smallest input, with K = 2 inputs";
const KEY_40A: &str = "SET aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 1";
const GLOB: &str = "pattern `a*a*...b` of n groups against a 40-byte key of `a`s";
const GLOB_LINEAR: &str =
    "a polynomial matcher's steps grow linearly in the pattern for a fixed key";

/// Every audited input; [`super::table_commands`] names are all covered
/// (see the test below).
pub fn inputs() -> Vec<Input> {
    let list = &["RPUSH l {ints}"][..];
    let hash = &["HSET h {pairs}"][..];
    let set = &["SADD s {elems}"][..];
    let zset = &["ZADD z {scored}"][..];
    let two_sets = &["SADD a {elems}", "SADD b {keys}"][..];
    let two_zsets = &["ZADD a {scored}", "ZADD b {kscored}"][..];
    let string = &["SET s {rep:x:n}"][..];
    let stream = &["*n XADD x {i}-1 f v"][..];
    let grouped = &["*n XADD x {i}-1 f v", "XGROUP CREATE x g 0"][..];
    let delivered = &[
        "*n XADD x {i}-1 f v",
        "XGROUP CREATE x g 0",
        "XREADGROUP GROUP g c STREAMS x >",
    ][..];
    vec![
        // Strings.
        c(
            "append",
            "length of the existing value",
            string,
            "APPEND s tail",
        ),
        db("get", "GET k:0"),
        db("getdel", "GETDEL k:0"),
        db("getex", "GETEX k:0 EX 100"),
        c("getrange", "length returned", string, "GETRANGE s 0 -1"),
        c("substr", "length returned", string, "SUBSTR s 0 -1"),
        db("getset", "GETSET k:0 w"),
        db("set", "SET k:0 w"),
        db("setex", "SETEX k:0 100 w"),
        db("psetex", "PSETEX k:0 100000 w"),
        db("setnx", "SETNX new w"),
        c(
            "setrange",
            "offset written (the string is zero-padded to it)",
            &["SET s x"],
            "SETRANGE s {n} y",
        )
        .declared(
            1.0,
            "Redis pads the string to the offset: linear in the offset",
        ),
        db("strlen", "STRLEN k:0"),
        db("incr", "INCR c"),
        db("decr", "DECR c"),
        db("incrby", "INCRBY c 5"),
        db("decrby", "DECRBY c 5"),
        db("incrbyfloat", "INCRBYFLOAT c 1.5"),
        c("mget", "keys read", &["MSET {kvs}"], "MGET {keys}"),
        c("mset", "keys set", &[], "MSET {kvs}"),
        c("msetnx", "keys set", &[], "MSETNX {kvs}"),
        c(
            "lcs",
            "length of both strings (2n bytes each)",
            &["SET a {rep:ab:n}", "SET b {rep:ba:n}"],
            "LCS a b LEN",
        )
        .shrink(16),
        // Bitmaps.
        c(
            "setbit",
            "offset written (the string is zero-padded to it)",
            &["SET s x"],
            "SETBIT s {n} 1",
        )
        .declared(
            1.0,
            "Redis pads the string to the offset: linear in the offset",
        ),
        db("getbit", "GETBIT k:0 5"),
        c("bitcount", "length of the string", string, "BITCOUNT s"),
        c(
            "bitcount",
            "length of a bit range",
            string,
            "BITCOUNT s 1 -2 BIT",
        ),
        c(
            "bitpos",
            "zero bytes scanned before a set bit",
            &["SETRANGE s {n} x"],
            "BITPOS s 1",
        ),
        c(
            "bitop",
            "length of both sources",
            &["SET a {rep:x:n}", "SET b {rep:y:n}"],
            "BITOP XOR d a b",
        ),
        c("bitop", "source keys", &["MSET {kvs}"], "BITOP OR d {keys}"),
        db("bitfield", "BITFIELD k:0 INCRBY i8 0 1 GET u4 #3"),
        db("bitfield_ro", "BITFIELD_RO k:0 GET i8 0 GET u4 #3"),
        // HyperLogLog (a dense value is 16384 registers: a fixed pass).
        c("pfadd", "elements added", &[], "PFADD h {elems}").declared(1.0, PER_ITEM),
        c(
            "pfcount",
            "keys counted (their union)",
            &["*n PFADD k:{i} a b c"],
            "PFCOUNT {keys}",
        )
        .declared(1.0, "a register pass per key"),
        c(
            "pfmerge",
            "keys merged",
            &["*n PFADD k:{i} a b c"],
            "PFMERGE d {keys}",
        )
        .declared(1.0, "a register pass per key"),
        c(
            "pfdebug",
            "keys in the db",
            &["MSET {kvs}", "PFADD h a b c"],
            "PFDEBUG TODENSE h",
        )
        .declared(0.0, "a fixed pass over 16384 registers"),
        db("pfselftest", "PFSELFTEST").declared(0.0, "a fixed self-test"),
        // Geo (a sorted set of geohash scores).
        c(
            "geoadd",
            "members of the geo set",
            &["*n GEOADD g 13.{i} 52.{i} m{i}"],
            "GEOADD g 13.5 52.5 new",
        )
        .declared(0.0, "O(log(N)) per item added, one item"),
        c(
            "geodist",
            "members of the geo set",
            &["*n GEOADD g 13.{i} 52.{i} m{i}"],
            "GEODIST g m0 m1 km",
        )
        .declared(0.0, "O(log(N)): two member lookups"),
        c(
            "geohash",
            "members asked for",
            &["*n GEOADD g 13.{i} 52.{i} m{i}"],
            "GEOHASH g {elems}",
        )
        .declared(1.0, PER_ITEM),
        c(
            "geopos",
            "members asked for",
            &["*n GEOADD g 13.{i} 52.{i} m{i}"],
            "GEOPOS g {elems}",
        )
        .declared(1.0, PER_ITEM),
        c(
            "geosearch",
            "points in the box and the circle",
            &["*n GEOADD g 13.4{i} 52.5{i} m{i}"],
            "GEOSEARCH g FROMLONLAT 13.45 52.55 BYRADIUS 200 km ASC",
        )
        .declared(1.0, "O(N+log(M)) with every point inside, then sorted"),
        c(
            "geosearchstore",
            "points in the box and the circle",
            &["*n GEOADD g 13.4{i} 52.5{i} m{i}"],
            "GEOSEARCHSTORE d g FROMLONLAT 13.45 52.55 BYRADIUS 200 km ASC",
        )
        .declared(1.0, "O(N+log(M)) with every point inside, then stored"),
        c(
            "georadius",
            "points in the box and the circle",
            &["*n GEOADD g 13.4{i} 52.5{i} m{i}"],
            "GEORADIUS g 13.45 52.55 200 km ASC",
        )
        .declared(1.0, "O(N+log(M)) with every point inside, then sorted"),
        c(
            "georadius_ro",
            "points in the box and the circle",
            &["*n GEOADD g 13.4{i} 52.5{i} m{i}"],
            "GEORADIUS_RO g 13.45 52.55 200 km ASC",
        )
        .declared(1.0, "O(N+log(M)) with every point inside, then sorted"),
        c(
            "georadiusbymember",
            "points in the box and the circle",
            &["*n GEOADD g 13.4{i} 52.5{i} m{i}"],
            "GEORADIUSBYMEMBER g m0 200 km ASC",
        )
        .declared(1.0, "O(N+log(M)) with every point inside, then sorted"),
        c(
            "georadiusbymember_ro",
            "points in the box and the circle",
            &["*n GEOADD g 13.4{i} 52.5{i} m{i}"],
            "GEORADIUSBYMEMBER_RO g m0 200 km ASC",
        )
        .declared(1.0, "O(N+log(M)) with every point inside, then sorted"),
        // Streams (`{i}-1` IDs: 0-1, 1-1, ...).
        c("xadd", "entries in the stream", stream, "XADD x * f v")
            .declared(0.0, "O(1) per entry added"),
        c("xlen", "entries in the stream", stream, "XLEN x").declared(0.0, "O(1)"),
        c("xrange", "entries returned", stream, "XRANGE x - +"),
        c("xrevrange", "entries returned", stream, "XREVRANGE x + -"),
        c("xread", "entries returned", stream, "XREAD STREAMS x 0")
            .declared(1.0, "O(N) in the entries returned"),
        c("xdel", "entries in the stream", stream, "XDEL x 0-1")
            .declared(0.0, "O(1) per entry deleted"),
        c("xtrim", "entries evicted", stream, "XTRIM x MAXLEN 0")
            .declared(1.0, "O(N) in the entries evicted"),
        c(
            "xsetid",
            "entries in the stream",
            stream,
            "XSETID x 99999999999999-0",
        )
        .declared(0.0, "O(1)"),
        c(
            "xreadgroup",
            "entries delivered",
            grouped,
            "XREADGROUP GROUP g c STREAMS x >",
        )
        .declared(1.0, "O(M) in the entries returned"),
        c("xack", "entries pending", delivered, "XACK x g 0-1")
            .declared(0.0, "O(1) per ID acknowledged"),
        c(
            "xpending",
            "entries pending",
            delivered,
            "XPENDING x g - + {n}",
        )
        .declared(1.0, "O(N) in the entries returned"),
        c(
            "xclaim",
            "entries pending",
            delivered,
            "XCLAIM x g c2 0 0-1",
        )
        .declared(0.0, "O(log N) per ID claimed"),
        c(
            "xautoclaim",
            "entries claimed",
            delivered,
            "XAUTOCLAIM x g c2 0 0-0 COUNT {n}",
        )
        .declared(1.0, "O(1) per entry claimed"),
        c(
            "xgroup|create",
            "entries in the stream",
            stream,
            "XGROUP CREATE x g2 0",
        )
        .declared(0.0, "O(1)"),
        c(
            "xgroup|createconsumer",
            "entries pending",
            delivered,
            "XGROUP CREATECONSUMER x g c3",
        )
        .declared(0.0, "O(1)"),
        c(
            "xgroup|delconsumer",
            "entries the consumer held",
            delivered,
            "XGROUP DELCONSUMER x g c",
        )
        .declared(1.0, "O(N) in the consumer's pending entries"),
        c(
            "xgroup|destroy",
            "entries pending",
            delivered,
            "XGROUP DESTROY x g",
        )
        .declared(1.0, "O(N) in the group's pending entries"),
        c(
            "xgroup|setid",
            "entries pending",
            delivered,
            "XGROUP SETID x g 0",
        )
        .declared(0.0, "O(1)"),
        db("xgroup|help", "XGROUP HELP"),
        c(
            "xinfo|stream",
            "entries in the stream",
            delivered,
            "XINFO STREAM x FULL COUNT 0",
        )
        .declared(1.0, "FULL lists every entry, group and pending entry"),
        c(
            "xinfo|groups",
            "groups of the stream",
            &["XADD x 0-1 f v", "*n XGROUP CREATE x g{i} 0"],
            "XINFO GROUPS x",
        )
        .declared(1.0, "O(N) in the groups"),
        c(
            "xinfo|consumers",
            "consumers of the group",
            &[
                "XADD x 0-1 f v",
                "XGROUP CREATE x g 0",
                "*n XGROUP CREATECONSUMER x g c{i}",
            ],
            "XINFO CONSUMERS x g",
        )
        .declared(1.0, "O(N) in the consumers"),
        db("xinfo|help", "XINFO HELP"),
        // Keys.
        c("copy", "elements of the copied list", list, "COPY l l2"),
        c("dump", "elements of the dumped list", list, "DUMP l"),
        c(
            "restore",
            "elements of the restored list",
            &[],
            "RESTORE r 0 {dumplist} REPLACE",
        ),
        c("del", "elements of the deleted list", list, "DEL l"),
        c("del", "keys deleted", &["MSET {kvs}"], "DEL {keys}"),
        c("unlink", "keys unlinked", &["MSET {kvs}"], "UNLINK {keys}"),
        c(
            "unlink",
            "elements of the unlinked list (freed in the background)",
            list,
            "UNLINK l",
        ),
        c("exists", "keys checked", &["MSET {kvs}"], "EXISTS {keys}"),
        c("touch", "keys touched", &["MSET {kvs}"], "TOUCH {keys}"),
        db("expire", "EXPIRE k:0 100"),
        db("pexpire", "PEXPIRE k:0 100000"),
        db("expireat", "EXPIREAT k:0 4000000000"),
        db("pexpireat", "PEXPIREAT k:0 4000000000000"),
        c(
            "persist",
            "keys in the db",
            &["MSET {kvs}", "EXPIRE k:0 100"],
            "PERSIST k:0",
        ),
        db("ttl", "TTL k:0"),
        db("pttl", "PTTL k:0"),
        db("expiretime", "EXPIRETIME k:0"),
        db("pexpiretime", "PEXPIRETIME k:0"),
        db("type", "TYPE k:0"),
        c("keys", "keys in the db", &["MSET {kvs}"], "KEYS k:*"),
        c("keys", GLOB, &[KEY_40A], "KEYS {rep:a*:n}b")
            .shrink(8)
            .declared(1.0, GLOB_LINEAR),
        c(
            "keys",
            GLOB_KEY,
            &[LONG_A_KEY],
            "KEYS a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b",
        )
        .shrink(8)
        .declared(1.0, GLOB_KEY_LINEAR),
        c("scan", "COUNT", &["MSET {kvs}"], "SCAN 0 COUNT {n}"),
        c(
            "scan",
            GLOB_KEY,
            &[LONG_A_KEY],
            "SCAN 0 MATCH a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b",
        )
        .shrink(8)
        .declared(1.0, GLOB_KEY_LINEAR),
        c("scan", GLOB, &[KEY_40A], "SCAN 0 MATCH {rep:a*:n}b")
            .shrink(8)
            .declared(1.0, GLOB_LINEAR),
        db("randomkey", "RANDOMKEY"),
        c(
            "rename",
            "elements of the renamed list",
            list,
            "RENAME l l2",
        ),
        c(
            "renamenx",
            "elements of the renamed list",
            list,
            "RENAMENX l l2",
        ),
        c("move", "elements of the moved list", list, "MOVE l 1"),
        c(
            "object|encoding",
            "elements of the list",
            list,
            "OBJECT ENCODING l",
        ),
        c(
            "object|freq",
            "elements of the list",
            &["CONFIG SET maxmemory-policy allkeys-lfu", "RPUSH l {ints}"],
            "OBJECT FREQ l",
        ),
        c(
            "object|idletime",
            "elements of the list",
            list,
            "OBJECT IDLETIME l",
        ),
        c(
            "object|refcount",
            "elements of the list",
            list,
            "OBJECT REFCOUNT l",
        ),
        db("object|help", "OBJECT HELP"),
        c("sort", "elements of the list", list, "SORT l"),
        c("sort_ro", "elements of the list", list, "SORT_RO l DESC"),
        db("dbsize", "DBSIZE"),
        // The audit's engine has no storage: these fail at once (`-ERR`,
        // as on a disk that refuses); the simulator's disk runs them.
        c("save", "keys in the db", &["MSET {kvs}"], "SAVE").error_ok("no storage in the audit"),
        db("bgsave", "BGSAVE").error_ok("no storage in the audit"),
        db("bgrewriteaof", "BGREWRITEAOF").error_ok("no storage in the audit"),
        db("lastsave", "LASTSAVE"),
        db("lolwut", "LOLWUT VERSION 5 1000 200 200")
            .declared(0.0, "the largest canvas seedkv draws, a fixed size"),
        c("flushall", "keys in the db", &["MSET {kvs}"], "FLUSHALL"),
        c("flushdb", "keys in the db", &["MSET {kvs}"], "FLUSHDB"),
        db("swapdb", "SWAPDB 0 1"),
        db("select", "SELECT 1"),
        // Lists.
        c("lpush", "elements pushed", &[], "LPUSH l {elems}"),
        c("rpush", "elements pushed", &[], "RPUSH l {elems}"),
        c(
            "lpushx",
            "elements pushed",
            &["RPUSH l x"],
            "LPUSHX l {elems}",
        ),
        c(
            "rpushx",
            "elements pushed",
            &["RPUSH l x"],
            "RPUSHX l {elems}",
        ),
        c("lpop", "COUNT popped", list, "LPOP l {n}"),
        c("rpop", "COUNT popped", list, "RPOP l {n}"),
        c("lrange", "elements returned", list, "LRANGE l 0 -1"),
        c(
            "lindex",
            "elements traversed (the middle of the list)",
            list,
            "LINDEX l {n/2}",
        ),
        c(
            "linsert",
            "elements traversed to the pivot (the tail)",
            list,
            "LINSERT l BEFORE {n-1} x",
        ),
        c("llen", "elements of the list", list, "LLEN l"),
        c(
            "lmove",
            "elements of the source list",
            list,
            "LMOVE l l2 LEFT RIGHT",
        ),
        c(
            "blmove",
            "elements of the source list",
            list,
            "BLMOVE l l2 LEFT RIGHT 0",
        ),
        c(
            "rpoplpush",
            "elements of the source list",
            list,
            "RPOPLPUSH l l2",
        ),
        c(
            "brpoplpush",
            "elements of the source list",
            list,
            "BRPOPLPUSH l l2 0",
        ),
        c("lmpop", "COUNT popped", list, "LMPOP 1 l LEFT COUNT {n}"),
        c(
            "blmpop",
            "COUNT popped",
            list,
            "BLMPOP 0 1 l LEFT COUNT {n}",
        ),
        c(
            "blpop",
            "keys given (only the last has elements)",
            &["RPUSH k:{n-1} x"],
            "BLPOP {keys} 0",
        ),
        c(
            "brpop",
            "keys given (only the last has elements)",
            &["RPUSH k:{n-1} x"],
            "BRPOP {keys} 0",
        ),
        c("lpos", "elements scanned (no match)", list, "LPOS l absent"),
        c(
            "lrem",
            "elements scanned (no match)",
            list,
            "LREM l 0 absent",
        ),
        c(
            "lset",
            "elements traversed (the middle of the list)",
            list,
            "LSET l {n/2} x",
        ),
        c("ltrim", "elements removed", list, "LTRIM l 0 0"),
        // Hashes.
        c("hset", "fields set", &[], "HSET h {pairs}"),
        c("hmset", "fields set", &[], "HMSET h {pairs}"),
        c("hsetnx", "fields of the hash", hash, "HSETNX h new v"),
        c("hdel", "fields removed", hash, "HDEL h {fields}"),
        c("hget", "fields of the hash", hash, "HGET h f:0"),
        c("hexists", "fields of the hash", hash, "HEXISTS h f:0"),
        c("hstrlen", "fields of the hash", hash, "HSTRLEN h f:0"),
        c("hincrby", "fields of the hash", hash, "HINCRBY h cnt 1"),
        c(
            "hincrbyfloat",
            "fields of the hash",
            hash,
            "HINCRBYFLOAT h cnt 1.5",
        ),
        c("hlen", "fields of the hash", hash, "HLEN h"),
        c("hgetall", "fields of the hash", hash, "HGETALL h"),
        c("hkeys", "fields of the hash", hash, "HKEYS h"),
        c("hvals", "fields of the hash", hash, "HVALS h"),
        c("hmget", "fields requested", hash, "HMGET h {fields}"),
        c("hrandfield", "COUNT returned", hash, "HRANDFIELD h {n}"),
        c("hscan", "COUNT", hash, "HSCAN h 0 COUNT {n}"),
        // Sets.
        c("sadd", "members added", &[], "SADD s {elems}"),
        c("srem", "members removed", set, "SREM s {elems}"),
        c("smembers", "members of the set", set, "SMEMBERS s"),
        c("scard", "members of the set", set, "SCARD s"),
        c("sismember", "members of the set", set, "SISMEMBER s m:0"),
        c("smismember", "members checked", set, "SMISMEMBER s {elems}"),
        c("smove", "members of the set", set, "SMOVE s d m:0"),
        c("spop", "COUNT popped", set, "SPOP s {n}"),
        c("srandmember", "COUNT returned", set, "SRANDMEMBER s {n}"),
        c("sscan", "COUNT", set, "SSCAN s 0 COUNT {n}"),
        c(
            "sinter",
            "members of each of 2 disjoint sets",
            two_sets,
            "SINTER a b",
        )
        .declared(1.0, "N grows with M = 2 sets"),
        c(
            "sintercard",
            "members of each of 2 disjoint sets",
            two_sets,
            "SINTERCARD 2 a b",
        )
        .declared(1.0, "N grows with M = 2 sets"),
        c(
            "sinterstore",
            "members of each of 2 disjoint sets",
            two_sets,
            "SINTERSTORE d a b",
        )
        .declared(1.0, "N grows with M = 2 sets"),
        c(
            "sdiff",
            "members of each of 2 disjoint sets",
            two_sets,
            "SDIFF a b",
        ),
        c(
            "sdiffstore",
            "members of each of 2 disjoint sets",
            two_sets,
            "SDIFFSTORE d a b",
        ),
        c(
            "sunion",
            "members of each of 2 disjoint sets",
            two_sets,
            "SUNION a b",
        ),
        c(
            "sunionstore",
            "members of each of 2 disjoint sets",
            two_sets,
            "SUNIONSTORE d a b",
        ),
        // Sorted sets.
        c("zadd", "members added", &[], "ZADD z {scored}").declared(1.0, PER_ITEM),
        c("zcard", "members of the zset", zset, "ZCARD z"),
        c("zscore", "members of the zset", zset, "ZSCORE z m:0"),
        c("zrank", "members of the zset", zset, "ZRANK z m:{n-1}"),
        c("zrevrank", "members of the zset", zset, "ZREVRANK z m:0"),
        c("zincrby", "members of the zset", zset, "ZINCRBY z 1 m:0"),
        c("zcount", "members of the zset", zset, "ZCOUNT z -inf +inf"),
        c("zlexcount", "members of the zset", zset, "ZLEXCOUNT z - +"),
        c("zmscore", "members requested", zset, "ZMSCORE z {elems}"),
        c("zpopmin", "COUNT popped", zset, "ZPOPMIN z {n}"),
        c("zpopmax", "COUNT popped", zset, "ZPOPMAX z {n}"),
        c("zmpop", "COUNT popped", zset, "ZMPOP 1 z MIN COUNT {n}"),
        c("bzmpop", "COUNT popped", zset, "BZMPOP 0 1 z MAX COUNT {n}"),
        c("bzpopmin", "members of the zset", zset, "BZPOPMIN z 0"),
        c("bzpopmax", "members of the zset", zset, "BZPOPMAX z 0"),
        c("zrandmember", "COUNT returned", zset, "ZRANDMEMBER z {n}"),
        c("zrange", "members returned", zset, "ZRANGE z 0 -1"),
        c(
            "zrange",
            "members returned with fractional scores",
            &["ZADD z {fscored}"],
            "ZRANGE z 0 -1 WITHSCORES",
        ),
        c(
            "zrangebyscore",
            "members returned",
            zset,
            "ZRANGEBYSCORE z -inf +inf",
        ),
        c("zrangebylex", "members returned", zset, "ZRANGEBYLEX z - +"),
        c("zrevrange", "members returned", zset, "ZREVRANGE z 0 -1"),
        c(
            "zrevrangebyscore",
            "members returned",
            zset,
            "ZREVRANGEBYSCORE z +inf -inf",
        ),
        c(
            "zrevrangebylex",
            "members returned",
            zset,
            "ZREVRANGEBYLEX z + -",
        ),
        c(
            "zrangestore",
            "members stored",
            zset,
            "ZRANGESTORE d z 0 -1",
        ),
        c("zrem", "members removed", zset, "ZREM z {elems}"),
        c(
            "zremrangebyrank",
            "members removed",
            zset,
            "ZREMRANGEBYRANK z 0 -1",
        ),
        c(
            "zremrangebyscore",
            "members removed",
            zset,
            "ZREMRANGEBYSCORE z -inf +inf",
        ),
        c(
            "zremrangebylex",
            "members removed",
            zset,
            "ZREMRANGEBYLEX z - +",
        ),
        c("zscan", "COUNT", zset, "ZSCAN z 0 COUNT {n}"),
        c(
            "zinter",
            "members of each of 2 disjoint zsets",
            two_zsets,
            "ZINTER 2 a b",
        )
        .declared(1.0, TWO_INPUTS),
        c(
            "zintercard",
            "members of each of 2 disjoint zsets",
            two_zsets,
            "ZINTERCARD 2 a b",
        )
        .declared(1.0, TWO_INPUTS),
        c(
            "zinterstore",
            "members of each of 2 disjoint zsets",
            two_zsets,
            "ZINTERSTORE d 2 a b",
        )
        .declared(1.0, TWO_INPUTS),
        c(
            "zunion",
            "members of each of 2 disjoint zsets",
            two_zsets,
            "ZUNION 2 a b",
        ),
        c(
            "zunionstore",
            "members of each of 2 disjoint zsets",
            two_zsets,
            "ZUNIONSTORE d 2 a b",
        ),
        c(
            "zdiff",
            "members of each of 2 disjoint zsets",
            two_zsets,
            "ZDIFF 2 a b",
        ),
        c(
            "zdiffstore",
            "members of each of 2 disjoint zsets",
            two_zsets,
            "ZDIFFSTORE d 2 a b",
        ),
        // Connection and server.
        db("auth", "AUTH secret").error_ok("no password is configured (Redis's answer)"),
        db("echo", "ECHO hello"),
        db("hello", "HELLO 2"),
        db("ping", "PING"),
        db("quit", "QUIT"),
        db("reset", "RESET"),
        db("time", "TIME"),
        db("info", "INFO").declared(1.0, INFO_MEMORY),
        db("monitor", "MONITOR"),
        db("psync", "PSYNC ? notanumber").error_ok("the harmless form: a bad offset"),
        c(
            "sync",
            "keys in the db",
            &["MSET {kvs}", "REPLCONF rdb-filter-only functions"],
            "SYNC",
        )
        .error_ok("the harmless form: a filtered SYNC without `capa eof` is refused"),
        db("replconf", "REPLCONF listening-port 6380"),
        db("role", "ROLE"),
        db("replicaof", "REPLICAOF NO ONE"),
        db("failover", "FAILOVER TO 127.0.0.1 6380 TIMEOUT 10 FORCE")
            .error_ok("no replica: FAILOVER's refusal, after its options are parsed"),
        db("slaveof", "SLAVEOF NO ONE"),
        db("wait", "WAIT 0 0"),
        db("debug", "DEBUG SLEEP 0")
            .declared(0.0, "DEBUG SLEEP 0 (a pause of 0 s) is the safe form"),
        db("client|id", "CLIENT ID"),
        db("client|getname", "CLIENT GETNAME"),
        db("client|setname", "CLIENT SETNAME audit"),
        db("client|info", "CLIENT INFO"),
        db("client|help", "CLIENT HELP"),
        db("client|no-evict", "CLIENT NO-EVICT on"),
        db("client|reply", "CLIENT REPLY ON"),
        db(
            "client|tracking",
            "CLIENT TRACKING on bcast prefix a prefix b noloop",
        ),
        db("client|caching", "CLIENT CACHING yes")
            .error_ok("the audit connection is not tracking with OPTIN or OPTOUT (Redis's answer)"),
        db("client|getredir", "CLIENT GETREDIR"),
        db("client|trackinginfo", "CLIENT TRACKINGINFO"),
        db("client|setinfo", "CLIENT SETINFO lib-name audit"),
        db("client|pause", "CLIENT PAUSE 0")
            .declared(0.0, "CLIENT PAUSE 0 (ends at once) is the safe form"),
        db("client|unpause", "CLIENT UNPAUSE"),
        c(
            "client|list",
            "connected clients",
            &["CLIENTS {n}"],
            "CLIENT LIST",
        ),
        c(
            "client|kill",
            "connected clients",
            &["CLIENTS {n}"],
            "CLIENT KILL ADDR 10.0.0.1:1 SKIPME yes",
        ),
        c(
            "client|unblock",
            "connected clients",
            &["CLIENTS {n}"],
            "CLIENT UNBLOCK 3",
        ),
        db("command", "COMMAND"),
        db("command|count", "COMMAND COUNT"),
        db("command|list", "COMMAND LIST"),
        db("command|help", "COMMAND HELP"),
        c(
            "command|info",
            "names looked up",
            &[],
            "COMMAND INFO {each:get}",
        ),
        c(
            "command|docs",
            "names looked up",
            &[],
            "COMMAND DOCS {each:get}",
        ),
        c(
            "command|getkeys",
            "arguments of the command",
            &[],
            "COMMAND GETKEYS MSET {kvs}",
        ),
        c(
            "command|getkeysandflags",
            "arguments of the command",
            &[],
            "COMMAND GETKEYSANDFLAGS MSET {kvs}",
        ),
        c(
            "config|get",
            "parameters requested",
            &[],
            "CONFIG GET {each:maxmemory}",
        ),
        c("config|get", GLOB, &[], "CONFIG GET {rep:a*:n}b")
            .shrink(8)
            .declared(
                1.0,
                "a polynomial matcher's steps grow linearly in the pattern for each parameter name",
            ),
        db("config|set", "CONFIG SET maxmemory 0"),
        db("config|set", "CONFIG SET snapshot-reads no"),
        db("config|resetstat", "CONFIG RESETSTAT"),
        db("config|rewrite", "CONFIG REWRITE")
            .error_ok("no config file in process (Redis's answer)"),
        db("config|help", "CONFIG HELP"),
        db("acl|cat", "ACL CAT"),
        db("acl|cat", "ACL CAT string"),
        db("acl|deluser", "ACL DELUSER nosuch"),
        db("acl|dryrun", "ACL DRYRUN default GET c"),
        db("acl|genpass", "ACL GENPASS"),
        db("acl|getuser", "ACL GETUSER default"),
        db("acl|help", "ACL HELP"),
        db("acl|list", "ACL LIST"),
        db("acl|load", "ACL LOAD").error_ok("no ACL file (Redis's answer without aclfile)"),
        db("acl|log", "ACL LOG"),
        db("acl|save", "ACL SAVE").error_ok("no ACL file (Redis's answer without aclfile)"),
        db("acl|setuser", "ACL SETUSER u on >p {tilde}k* &c* +@read -@hash"),
        db("acl|users", "ACL USERS"),
        db("acl|whoami", "ACL WHOAMI"),
        c(
            "acl|setuser",
            "key patterns given",
            &[],
            "ACL SETUSER u {each:{tilde}k*}",
        )
        .declared(2.0, "each pattern is searched for among those already added (Redis's list search): n patterns are O(n^2)")
        .shrink(8),
        c(
            "acl|dryrun",
            "key patterns of the user, none matching",
            &["ACL SETUSER u +get {each:{tilde}x*}"],
            "ACL DRYRUN u GET k",
        )
        .declared(1.0, "the key is tried against every pattern"),
        db("latency|latest", "LATENCY LATEST"),
        db("latency|graph", "LATENCY GRAPH command")
            .error_ok("no samples for the event (Redis's answer)"),
        db("latency|history", "LATENCY HISTORY command"),
        db("latency|reset", "LATENCY RESET"),
        db("latency|doctor", "LATENCY DOCTOR"),
        db("latency|help", "LATENCY HELP"),
        db("latency|histogram", "LATENCY HISTOGRAM"),
        db("memory|doctor", "MEMORY DOCTOR").declared(1.0, INFO_MEMORY),
        db("memory|help", "MEMORY HELP"),
        db("memory|malloc-stats", "MEMORY MALLOC-STATS"),
        db("memory|purge", "MEMORY PURGE"),
        db("memory|stats", "MEMORY STATS").declared(1.0, INFO_MEMORY),
        c(
            "memory|usage",
            "SAMPLES (of a list of n)",
            list,
            "MEMORY USAGE l SAMPLES {n}",
        ),
        c(
            "slowlog|get",
            "entries returned",
            &[
                "CONFIG SET slowlog-log-slower-than 0",
                "CONFIG SET slowlog-max-len {n}",
                "*n PING",
            ],
            "SLOWLOG GET -1",
        ),
        c(
            "slowlog|reset",
            "entries in the slowlog",
            &[
                "CONFIG SET slowlog-log-slower-than 0",
                "CONFIG SET slowlog-max-len {n}",
                "*n PING",
            ],
            "SLOWLOG RESET",
        ),
        db("slowlog|len", "SLOWLOG LEN"),
        db("slowlog|help", "SLOWLOG HELP"),
        // Transactions.
        db("multi", "MULTI"),
        c(
            "exec",
            "commands queued",
            &["MULTI", "*n SET k:{i} v"],
            "EXEC",
        )
        .declared(1.0, "runs the n queued commands, O(1) each"),
        c(
            "discard",
            "commands queued",
            &["MULTI", "*n SET k:{i} v"],
            "DISCARD",
        ),
        c("watch", "keys watched", &["MSET {kvs}"], "WATCH {keys}")
            .declared(1.0, "O(1) per key, n keys"),
        c(
            "unwatch",
            "keys watched",
            &["MSET {kvs}", "WATCH {keys}"],
            "UNWATCH",
        )
        .declared(
            1.0,
            "Redis says O(1), but forgets each of the n watched keys (unwatchAllKeys)",
        ),
        // Pub/sub.
        c("subscribe", "channels subscribed", &[], "SUBSCRIBE {keys}"),
        c(
            "ssubscribe",
            "channels subscribed",
            &[],
            "SSUBSCRIBE {keys}",
        ),
        c(
            "psubscribe",
            "patterns subscribed",
            &[],
            "PSUBSCRIBE {keys}",
        )
        .declared(2.0, QUADRATIC_PATTERNS),
        c(
            "unsubscribe",
            "channels subscribed",
            &["SUBSCRIBE {keys}"],
            "UNSUBSCRIBE",
        ),
        c(
            "sunsubscribe",
            "channels subscribed",
            &["SSUBSCRIBE {keys}"],
            "SUNSUBSCRIBE",
        ),
        c(
            "punsubscribe",
            "patterns subscribed",
            &["PSUBSCRIBE {keys}"],
            "PUNSUBSCRIBE",
        )
        .declared(2.0, QUADRATIC_PATTERNS),
        c(
            "publish",
            "patterns subscribed (by another client)",
            &["@2 PSUBSCRIBE {keys}"],
            "PUBLISH k:0 hello",
        ),
        c(
            "publish",
            GLOB,
            &["@2 PSUBSCRIBE {rep:a*:n}b"],
            "PUBLISH aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa hello",
        )
        .shrink(8)
        .declared(1.0, GLOB_LINEAR),
        c(
            "spublish",
            "shard channels subscribed (by another client)",
            &["@2 SSUBSCRIBE {keys}"],
            "SPUBLISH k:0 hello",
        ),
        c(
            "pubsub|channels",
            "channels subscribed (by another client)",
            &["@2 SUBSCRIBE {keys}"],
            "PUBSUB CHANNELS",
        ),
        c(
            "pubsub|shardchannels",
            "shard channels subscribed (by another client)",
            &["@2 SSUBSCRIBE {keys}"],
            "PUBSUB SHARDCHANNELS",
        ),
        c(
            "pubsub|numsub",
            "channels requested",
            &[],
            "PUBSUB NUMSUB {keys}",
        ),
        c(
            "pubsub|shardnumsub",
            "channels requested",
            &[],
            "PUBSUB SHARDNUMSUB {keys}",
        ),
        c(
            "pubsub|numpat",
            "patterns subscribed (by another client)",
            &["@2 PSUBSCRIBE {keys}"],
            "PUBSUB NUMPAT",
        ),
        db("pubsub|help", "PUBSUB HELP"),
        // Scripting.
        c(
            "eval",
            "loop iterations",
            WARM_LUA,
            "EVAL for~i=1,{n}~do~end~return~1 0",
        )
        .declared(1.0, "the script loops n times"),
        c(
            "eval",
            "elements the script pushes through redis.call",
            WARM_LUA,
            "EVAL for~i=1,{n}~do~redis.call('RPUSH','l',i)~end~return~1 0",
        )
        .declared(1.0, "the script makes n O(1) calls"),
        c(
            "eval_ro",
            "loop iterations",
            WARM_LUA,
            "EVAL_RO for~i=1,{n}~do~end~return~1 0",
        )
        .declared(1.0, "the script loops n times"),
        c(
            "evalsha",
            "loop iterations",
            &["SCRIPT LOAD for~i=1,tonumber(ARGV[1])~do~end~return~1"],
            "EVALSHA {sha} 0 {n}",
        )
        .declared(1.0, "the script loops n times"),
        c(
            "evalsha_ro",
            "loop iterations",
            &["SCRIPT LOAD for~i=1,tonumber(ARGV[1])~do~end~return~1"],
            "EVALSHA_RO {sha} 0 {n}",
        )
        .declared(1.0, "the script loops n times"),
        c(
            "script|load",
            "bytes of the script",
            WARM_LUA,
            "SCRIPT LOAD return~'{rep:x:n}'",
        ),
        c(
            "script|exists",
            "SHA1s checked",
            &[],
            "SCRIPT EXISTS {each:{sha}}",
        ),
        c(
            "script|flush",
            "scripts cached",
            &["*n SCRIPT LOAD return~{i}"],
            "SCRIPT FLUSH",
        ),
        db("script|kill", "SCRIPT KILL").error_ok("no script is running (Redis's NOTBUSY)"),
        // Functions.
        c(
            "fcall",
            "loop iterations",
            &[LOOP_LIBRARY],
            "FCALL loop 0 {n}",
        )
        .declared(1.0, "the function loops n times"),
        c(
            "fcall_ro",
            "loop iterations",
            &[LOOP_LIBRARY],
            "FCALL_RO loop_ro 0 {n}",
        )
        .declared(1.0, "the function loops n times"),
        c(
            "function|load",
            "bytes of the library's code",
            &[],
            "FUNCTION LOAD REPLACE #!lua~name=big{nl}redis.register_function('f',function()~return~'{rep:x:n}'~end)",
        )
        .declared(1.0, "compiling is linear in the code"),
        c("function|list", "libraries loaded", N_LIBRARIES, "FUNCTION LIST"),
        c("function|dump", "libraries loaded", N_LIBRARIES, "FUNCTION DUMP"),
        c("function|flush", "libraries loaded", N_LIBRARIES, "FUNCTION FLUSH"),
        c(
            "function|restore",
            "libraries in the payload",
            &[],
            "FUNCTION RESTORE {dumplibs} FLUSH",
        ),
        c("function|delete", "libraries loaded", N_LIBRARIES, "FUNCTION DELETE l0"),
        db("function|stats", "FUNCTION STATS"),
        db("function|kill", "FUNCTION KILL").error_ok("no function is running (Redis's NOTBUSY)"),
        db("function|help", "FUNCTION HELP"),
        db("script|debug", "SCRIPT DEBUG NO"),
        db("script|help", "SCRIPT HELP"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_of_the_table_has_an_input() {
        let inputs = inputs();
        let missing: Vec<String> = super::super::table_commands()
            .into_iter()
            .map(|(name, _)| name)
            .filter(|name| !inputs.iter().any(|i| i.name == name))
            .collect();
        assert!(missing.is_empty(), "no audit input for {missing:?}");
        for input in &inputs {
            assert!(
                super::super::table_commands()
                    .iter()
                    .any(|(name, _)| name == input.name),
                "{} is not in the table",
                input.name
            );
        }
    }
}
