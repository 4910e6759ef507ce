//! `keymiss` keyspace notifications (class `m`) against redis-server
//! 7.0.15: a script reads missing and expired keys through every reading
//! command family (and writes them through commands that must not miss)
//! on both servers, under several `notify-keyspace-events` values, while a
//! RESP2 and a RESP3 subscriber of every keyspace and keyevent channel
//! listen; their byte streams and the writer's replies must be equal.
//!
//! What the script pins: which lookups are Redis's `lookupKeyRead` (a
//! miss raises `keymiss`) and which are `lookupKeyWrite` or
//! `LOOKUP_NONOTIFY` (silent); how many times a command looks a key up
//! (XREAD twice, SORT once per BY and GET pattern key); the order against
//! `expired` (a key expired on read gives `expired`, then `keymiss`) and
//! against a write's own events (SET ... GET); MULTI/EXEC, scripts and
//! functions; and a blocked XREAD, which misses when it blocks but not
//! when a write serves it.
//!
//! Skipped, with a printed reason, when redis-server is not installed
//! (and failing instead under `SEEDKV_REQUIRE_TOOLS=1`).

use seedkv_tests::notify::{assert_same_streams, messages, run, run_counting_reads};
use seedkv_tests::{redis_server, ServerProcess};

/// The script both servers run, in the syntax of
/// [`seedkv_tests::notify`]. Every key is missing when it is read unless
/// the script just wrote it; each section deletes what it wrote.
const SCRIPT: &str = r##"
# Strings: every read of a missing key misses; SET ... GET, GETSET and
# GETDEL read first; writes (SET NX, INCR, APPEND, SETRANGE) never miss.
get k
getdel k
set k v get
getset k2 v
getex k3
getex k3 persist
getex k3 ex notanumber
mget a b a
getrange k4 0 1
substr k4 0 1
strlen k4
lcs a b
set s1 x
lcs a s1
lpush l1 x
lcs l1 a
lcs a l1
set k5 v nx
setnx k6 v
setrange k7 0 x
append k8 x
incr k9
incrbyfloat k10 1
msetnx k11 1 k12 2
del k k2 s1 l1 k5 k6 k7 k8 k9 k10 k11 k12
# Keys: EXISTS, TYPE, TTL and friends, TOUCH, DUMP and COPY's source read;
# OBJECT, MEMORY USAGE, EXPIRE, PERSIST, RENAME, MOVE, DEL do not.
exists a b a
type a
ttl a
pttl a
expiretime a
pexpiretime a
touch a b
dump a
copy a b
object encoding a
object freq a
memory usage a
expire a 10
persist a
rename a b
renamenx a b
move a 1
del a b
unlink a b
keys *
scan 0
randomkey
# Lists: LLEN LINDEX LRANGE LPOS read; pops, pushes and moves write.
llen l
lindex l 0
lindex l notanumber
lrange l 0 -1
lpos l x
lpos l x count 0
lpos l x rank 0
lpop l
rpop l 2
lpushx l x
linsert l before a b
lset l 0 x
ltrim l 0 1
lrem l 0 x
rpoplpush l l2
lmove l l2 left right
lmpop 2 l l2 left
blpop l l2 0.01
blmove l l2 left right 0.01
blmpop 0.01 1 l left
# Sets: every algebra form reads each source, STORE forms too.
scard s
sismember s a
smismember s a b
smembers s
srandmember s
srandmember s 2
srandmember s -2
sscan s 0
sinter s s2
sintercard 2 s s2
sinterstore d s s2
sunion s s2
sunionstore d s s2
sdiff s s2
sdiffstore d s s2
set str v
sunion s str s2
sinter s str s2
spop s
spop s 2
srem s a
smove s s2 a
# Hashes.
hget h f
hmget h f g
hlen h
hstrlen h f
hexists h f
hkeys h
hvals h
hgetall h
hrandfield h
hrandfield h 2 withvalues
hrandfield h 2 bad
hscan h 0
hdel h f
hincrby h2 f 1
del h2
# Sorted sets.
zcard z
zscore z a
zmscore z a b
zrank z a
zrevrank z a
zcount z 0 1
zcount z x 1
zlexcount z - +
zrange z 0 -1
zrange z 0 -1 rev withscores
zrangebyscore z 0 1
zrevrangebyscore z 1 0
zrangebylex z - +
zrevrangebylex z + -
zrevrange z 0 -1
zrange z 0 -1 byscore
zrange z (a [b bylex
zrangestore d z 0 -1
zrandmember z
zrandmember z 2
zrandmember z 2 withscores
zunion 2 z z2
zinter 2 z z2 withscores
zdiff 2 z z2
zintercard 2 z z2
zunionstore d 2 z z2
zinterstore d 2 z z2 weights 1 2
zdiffstore d 2 z z2
zunion 2 z str
zunion 2 z z2 weights x y
zscan z 0
zrem z a
zremrangebyscore z 0 1
zpopmin z
zmpop 2 z z2 min
bzpopmin z 0.01
zincrby z 1 a
del z
# Bitmaps, HyperLogLog, geo.
getbit b 0
bitcount b
bitcount b 0 1
bitpos b 1
bitpos b 0
bitfield b get u8 0
bitfield_ro b get u8 0
bitfield b
bitfield b incrby u8 0 1
del b
bitop and d b1 b2
bitop or d b1 str b2
bitop not d b1
pfcount p
pfcount p q
pfmerge p q r
del p
pfadd p a
pfcount p q
del p
geopos g a
geodist g a b
geodist g a b km
geohash g a
georadius g 0 0 10 km
georadius_ro g 0 0 10 km
georadiusbymember g a 10 km
geosearch g fromlonlat 0 0 byradius 10 km
geosearchstore d g fromlonlat 0 0 byradius 10 km
georadius g 0 0 10 km store d
# SORT: the key, then each BY and GET pattern key, in Redis's order.
sort sl
sort sl store d
sort_ro sl
rpush sl 3 1 2
sort sl by w_*
sort sl by w_* get o_*
sort sl get o_* get #
sort sl by nosort get o_*
sort_ro sl by w_* get o_*
sort sl by w_*->f get h_*->f
sort sl by nosort get h_*->f store d2
set w_1 5
hset h_2 f v
sort sl by w_* get h_*->f
del sl w_1 h_2 d2
# Streams: XREAD looks each stream up twice; XREADGROUP, XACK, XPENDING,
# XCLAIM, XAUTOCLAIM and XINFO read; XGROUP, XADD, XDEL, XTRIM write.
xlen x
xrange x - +
xrevrange x + -
xread streams x 0
xread count 1 streams x y 0 0
xread streams x $
xread block 10 streams x $
xreadgroup group g c streams x >
xpending x g
xpending x g - + 10
xack x g 1-1
xclaim x g c 0 1-1
xautoclaim x g c 0 0
xinfo stream x
xinfo groups x
xinfo consumers x g
xdel x 1-1
xtrim x maxlen 0
xsetid x 1-1
xgroup create x g $
xgroup createconsumer x g c
xadd x 1-1 f v
xread streams x y 0 0
del x
# A blocked XREAD misses (twice) when it blocks, not when a write to
# one of its streams serves it.
block xread block 0 streams xa xb $ $
xadd xb 1-1 f v
unblock
del xb
# Expired keys: `expired`, then `keymiss` for a read; `expired` alone
# for a write.
set e v px 1
sleep 20
get e
set e v px 1
sleep 20
exists e e
set e v px 1
sleep 20
mget e e
set e v px 1
sleep 20
incr e
del e
rpush e a
pexpire e 1
sleep 20
lrange e 0 -1
rpush e a
pexpire e 1
sleep 20
lpush e b
del e
set e v px 1
sleep 20
copy e f
set e v px 1
sleep 20
object encoding e
set e v px 1
sleep 20
set e w get
del e
hset e f v
pexpire e 1
sleep 20
hget e f
zadd e 1 a
pexpire e 1
sleep 20
zunionstore d 1 e
# Keys of another type raise nothing; other databases name theirs.
set str v
get str
llen str
hget str f
del str
select 3
get x3
exists x3
select 0
# MULTI/EXEC, scripts and functions raise each read's miss in order.
multi
get m1
set m1 x
get m1
del m1
llen m1
exec
eval "redis.call('get', KEYS[1]); return redis.call('exists', KEYS[1], KEYS[2])" 2 s1 s2
eval "return redis.pcall('lrange', KEYS[1], 0, -1)" 1 s1
eval "return redis.call('type', KEYS[1])" 1 s1
function load replace "#!lua name=kl\nredis.register_function('kget', function(keys, args) return redis.call('get', keys[1]) end)\nredis.register_function{function_name='kro', callback=function(keys, args) return redis.call('hget', keys[1], 'f') end, flags={'no-writes'}}"
fcall kget 1 fk
fcall_ro kro 1 fk
function delete kl
"##;

/// The `notify-keyspace-events` values the script runs under: `m` with
/// both channel kinds and every other class; `m` alone on one channel
/// kind (`A` leaves `m` out, so `Am` differs from `A`); and `A` without
/// `m`, where reads raise nothing.
const FLAG_SETS: &[&str] = &["KEAmn", "Km", "Em", "KA", "EAm"];

/// Events the script must make redis-server raise under `KEAmn`, so that
/// a section that stopped missing cannot pass unnoticed.
const EVENTS_EXPECTED: &[&str] = &[
    "__keyevent@0__:keymiss k\n",
    "__keyevent@0__:keymiss w_3\n",
    "__keyevent@0__:keymiss xa\n",
    "__keyevent@0__:keymiss fk\n",
    "__keyevent@0__:keymiss m1\n",
    "__keyevent@3__:keymiss x3\n",
    "__keyevent@0__:expired e\n__key*__:* __keyspace@0__:e keymiss\n",
];

#[test]
fn keymiss_streams_equal_redis_byte_for_byte() {
    let Some(redis) = redis_server() else { return };
    let seedkv = ServerProcess::seedkv(&[]);
    for flags in FLAG_SETS {
        let theirs = run(redis.port, flags, SCRIPT);
        let ours = run(seedkv.port, flags, SCRIPT);
        if *flags == "KEAmn" {
            let events = messages(&theirs.resp2).join("\n") + "\n";
            for event in EVENTS_EXPECTED {
                assert!(events.contains(event), "redis-server raised no {event}");
            }
        }
        if *flags == "KA" {
            let events = messages(&theirs.resp2).join("\n");
            assert!(!events.contains("keymiss"), "`A` includes no `m`");
        }
        println!("{flags}: {} bytes of RESP2 messages", theirs.resp2.len());
        assert_same_streams(&theirs, &ours);
    }
}

/// INFO stats `keyspace_hits` and `keyspace_misses` count the same read
/// lookups `keymiss` is raised for, hits included, plus OBJECT's (which
/// counts without announcing): after every line of the script both
/// servers' counters are equal. Counting does not depend on the
/// notification flags (`A` leaves `m` out).
#[test]
fn keyspace_hits_and_misses_count_read_lookups_as_redis_does() {
    let Some(redis) = redis_server() else { return };
    let seedkv = ServerProcess::seedkv(&[]);
    for flags in ["KEAm", "KA"] {
        let theirs = run_counting_reads(redis.port, flags, SCRIPT);
        let ours = run_counting_reads(seedkv.port, flags, SCRIPT);
        let last = theirs
            .replies
            .lines()
            .last()
            .unwrap_or_default()
            .to_string();
        assert!(
            last.contains("keyspace_hits:") && !last.contains("keyspace_hits:0 "),
            "the script reads some key that exists: {last}"
        );
        assert_same_streams(&theirs, &ours);
    }
}
