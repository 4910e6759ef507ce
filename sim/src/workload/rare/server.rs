//! Connection, server, introspection, scripting, transactions, pub/sub and
//! database commands, in forms that leave the other workloads alone (see
//! the module above); and the ones without such a form, for `rare-solo`.

use rand_chacha::ChaCha8Rng;

use super::{r, Section, SectionFn, HOME_DB, SWAP_DBS};

pub(crate) const SECTIONS: &[SectionFn] = &[
    connection,
    acl,
    client,
    client_reply,
    command_config_info,
    introspection,
    scripting,
    transactions,
    pubsub,
    databases,
    persistence,
];

pub(crate) const SOLO_SECTIONS: &[SectionFn] = &[solo_server_wide, solo_quit];

/// An id no client has (the engine numbers clients from 1, one per
/// connection, and a run opens far fewer).
const NO_CLIENT_ID: u64 = 999_999_999;

/// `SHA1("return 1")`, the script SCRIPT LOAD loads first.
const RETURN_ONE_SHA: &str = "e0e1f9fabfc9d4800c877a703b823ac0578ff8db";

fn connection(s: &mut Section, _rng: &mut ChaCha8Rng) {
    s.batch(HOME_DB)
        .add("PING")
        .add("PING hello")
        .add("ECHO hello")
        .add("AUTH nopassword")
        .add("HELLO")
        .add("HELLO 3")
        .add("HELLO 2 SETNAME rare")
        .add("HELLO 2 AUTH default anything")
        .add("RESET")
        .add(&format!("SELECT {HOME_DB}"))
        .add("TIME")
        .add("DBSIZE");
}

/// ACL users: one made for this section, logged into and deleted again
/// (after the client is back to the default user, whom DELUSER cannot
/// close), with the rest of the family around it. The other workloads
/// run as the default user, which nothing here changes.
fn acl(s: &mut Section, _rng: &mut ChaCha8Rng) {
    let user = s.unique();
    s.batch(HOME_DB)
        .add(&format!(
            "ACL SETUSER {user} on >pw ~rare:* %R~r:* &rare:* +@all -@dangerous (+get ~x*)"
        ))
        .add(&format!("ACL GETUSER {user}"))
        .add(&format!("ACL DRYRUN {user} GET rare:k"))
        .add(&format!("ACL DRYRUN {user} SET other v"))
        .add(&format!("ACL DRYRUN {user} FLUSHALL"))
        .add("ACL LIST")
        .add("ACL USERS")
        .add("ACL CAT")
        .add("ACL CAT stream")
        .add("ACL GENPASS")
        .add("ACL GENPASS 64")
        .add("ACL LOAD")
        .add("ACL SAVE")
        .add("ACL HELP")
        .add(&format!("AUTH {user} pw"))
        .add("ACL WHOAMI")
        .add("AUTH rare-nouser pw")
        .add("AUTH default anything")
        .add("ACL WHOAMI")
        .add("ACL LOG 2")
        .add("ACL LOG RESET")
        .add(&format!("ACL DELUSER {user}"));
}

fn client(s: &mut Section, _rng: &mut ChaCha8Rng) {
    let id = NO_CLIENT_ID;
    s.batch(HOME_DB)
        .add("CLIENT ID")
        .add("CLIENT SETNAME rare")
        .add("CLIENT GETNAME")
        .add("CLIENT SETINFO LIB-NAME seedkv-sim")
        .add("CLIENT SETINFO LIB-VER 1.0")
        .add("CLIENT INFO")
        .add("CLIENT LIST")
        .add("CLIENT LIST TYPE normal")
        .add("CLIENT LIST TYPE pubsub")
        .add(&format!("CLIENT LIST ID {id}"))
        .add("CLIENT NO-EVICT ON")
        .add("CLIENT NO-EVICT OFF")
        // Tracking goes off again in the same batch, and OPTIN without
        // CACHING YES (or OPTOUT with CACHING NO) before it remembers no
        // key, so that no invalidation can reach this client later.
        .add("CLIENT TRACKING ON OPTIN")
        .add("CLIENT CACHING YES")
        .add("CLIENT GETREDIR")
        .add("CLIENT TRACKINGINFO")
        .add("CLIENT TRACKING OFF")
        .add("CLIENT TRACKING ON OPTOUT NOLOOP")
        .add("CLIENT CACHING NO")
        .add("CLIENT TRACKING OFF")
        .add("CLIENT TRACKING ON BCAST PREFIX rare:trk:a PREFIX rare:trk:b")
        .add("CLIENT TRACKING OFF")
        // Filters are ANDed: no client has this id, so none is killed.
        .add(&format!("CLIENT KILL ID {id}"))
        .add(&format!("CLIENT KILL ID {id} TYPE normal SKIPME yes"))
        .add(&format!("CLIENT KILL ID {id} TYPE pubsub"))
        .add(&format!("CLIENT KILL ID {id} ADDR 10.0.0.1:1"))
        .add(&format!("CLIENT KILL ID {id} LADDR 10.0.0.1:1"))
        .add(&format!("CLIENT KILL ID {id} USER default"))
        .add("CLIENT KILL 10.0.0.1:1")
        .add(&format!("CLIENT UNBLOCK {id}"))
        .add(&format!("CLIENT UNBLOCK {id} TIMEOUT"))
        .add(&format!("CLIENT UNBLOCK {id} ERROR"))
        .add("CLIENT HELP");
}

/// CLIENT REPLY OFF, SKIP and ON around reads and writes whose replies
/// are dropped. The client expects no reply to those (see
/// [`crate::reply_mode`]); every batch ends answered with replies on, so
/// that the client knows when it is done and nothing else on the
/// connection is silenced. The commands are of the kinds the reference
/// model predicts, but it declines to once the connection has sent
/// CLIENT REPLY (until RESET).
fn client_reply(s: &mut Section, _rng: &mut ChaCha8Rng) {
    let value = s.unique();
    s.batch(HOME_DB)
        .add("CLIENT REPLY OFF")
        .add(&format!("SET rare:reply {value}"))
        .add("INCR rare:reply:n")
        .add("CLIENT REPLY SKIP")
        .add("CLIENT REPLY ON")
        .add("CLIENT REPLY SKIP")
        .add("GET rare:reply")
        .add("CLIENT REPLY SKIP")
        .add("CLIENT REPLY SKIP")
        .add("PING skipped")
        .add("GET rare:reply")
        .add("CLIENT REPLY maybe");
    s.batch(HOME_DB)
        .add("CLIENT REPLY SKIP")
        .add("INCR rare:reply:n")
        .add("CLIENT REPLY OFF")
        .add("RESET")
        .add(&format!("SELECT {HOME_DB}"))
        .add("GET rare:reply:n");
}

fn command_config_info(s: &mut Section, _rng: &mut ChaCha8Rng) {
    s.batch(HOME_DB)
        .add("COMMAND COUNT")
        .add("COMMAND LIST")
        .add("COMMAND LIST FILTERBY MODULE nomodule")
        .add("COMMAND LIST FILTERBY ACLCAT hyperloglog")
        .add("COMMAND LIST FILTERBY PATTERN z*")
        .add("COMMAND INFO get set")
        .add("COMMAND DOCS get")
        .add("COMMAND GETKEYS set rare:a b")
        .add("COMMAND GETKEYSANDFLAGS lmove rare:a rare:b left left")
        // Keys that move: found by keyword and key-count specs, or by the
        // command's own procedure when a spec cannot say (SORT's STORE, a
        // key count that does not parse); EVAL may name no key at all.
        .add("COMMAND GETKEYS eval s 2 rare:a rare:b x")
        .add("COMMAND GETKEYS zunionstore rare:c 2x rare:a rare:b")
        .add("COMMAND GETKEYS sort rare:a by w store rare:b")
        .add("COMMAND GETKEYSANDFLAGS set rare:a b get")
        .add("COMMAND GETKEYS xread count 1 streams rare:a rare:b 0 0")
        .add("COMMAND GETKEYS eval s 0")
        .add("COMMAND INFO zunionstore object")
        .add("COMMAND DOCS georadius client")
        .add("COMMAND HELP")
        .add("CONFIG GET maxmemory*")
        // Set to its default: no other workload's behaviour changes.
        .add("CONFIG SET slowlog-max-len 128")
        .add("CONFIG RESETSTAT")
        .add("CONFIG REWRITE")
        .add("CONFIG HELP");
    for section in [
        "server",
        "clients",
        "memory",
        "stats",
        "commandstats",
        "errorstats",
        "latencystats",
        "keyspace",
        "all",
        "default",
        "everything",
    ] {
        s.add(&format!("INFO {section}"));
    }
    s.add("INFO");
    // COMMAND alone is the table, with docs: a big reply, once.
    s.batch(HOME_DB).add("COMMAND");
}

fn introspection(s: &mut Section, _rng: &mut ChaCha8Rng) {
    s.batch(HOME_DB)
        .add("SET rare:m hello")
        .add("SLOWLOG GET 5")
        .add("SLOWLOG GET")
        .add("SLOWLOG LEN")
        .add("SLOWLOG RESET")
        .add("SLOWLOG HELP")
        .add("LATENCY LATEST")
        .add("LATENCY HISTORY command")
        .add("LATENCY GRAPH command")
        .add("LATENCY DOCTOR")
        .add("LATENCY HISTOGRAM get set")
        .add("LATENCY RESET")
        .add("LATENCY HELP")
        .add("MEMORY USAGE rare:m")
        .add("MEMORY USAGE rare:m SAMPLES 5")
        .add("MEMORY STATS")
        .add("MEMORY DOCTOR")
        .add("MEMORY MALLOC-STATS")
        .add("MEMORY PURGE")
        .add("MEMORY HELP")
        .add("LOLWUT")
        .add("LOLWUT VERSION 5")
        .add("LOLWUT VERSION 5 20 3 3")
        .add("LOLWUT VERSION 6")
        .add("DEBUG HELP")
        .add("DEBUG SLEEP 0");
}

fn scripting(s: &mut Section, _rng: &mut ChaCha8Rng) {
    s.batch(HOME_DB)
        .add("DEL rare:sc")
        .push(vec![
            b"SCRIPT".to_vec(),
            b"LOAD".to_vec(),
            b"return 1".to_vec(),
        ])
        .add(&format!("SCRIPT EXISTS {RETURN_ONE_SHA} 0000"))
        .add(&format!("EVALSHA {RETURN_ONE_SHA} 0"))
        .add(&format!("EVALSHA_RO {RETURN_ONE_SHA} 0"))
        .push(vec![
            b"EVAL".to_vec(),
            b"return redis.call('SET', KEYS[1], ARGV[1])".to_vec(),
            b"1".to_vec(),
            b"rare:sc".to_vec(),
            b"v".to_vec(),
        ])
        .push(vec![
            b"EVAL_RO".to_vec(),
            b"return redis.call('GET', KEYS[1])".to_vec(),
            b"1".to_vec(),
            b"rare:sc".to_vec(),
        ])
        .add("SCRIPT KILL")
        .add("SCRIPT DEBUG NO")
        .add("SCRIPT HELP");
}

fn transactions(s: &mut Section, _rng: &mut ChaCha8Rng) {
    s.batch(HOME_DB)
        .add("DEL rare:tx")
        .add("WATCH rare:tx")
        .add("UNWATCH")
        .add("MULTI")
        .add("SET rare:tx 1")
        .add("INCR rare:tx")
        .add("EXEC")
        .add("MULTI")
        .add("SET rare:tx 9")
        .add("DISCARD")
        .add("WATCH rare:tx")
        .add("MULTI")
        .add("INCR rare:tx")
        .add("EXEC")
        .add("GET rare:tx");
}

fn pubsub(s: &mut Section, _rng: &mut ChaCha8Rng) {
    let (m1, m2, m3, m4, m5) = (s.unique(), s.unique(), s.unique(), s.unique(), s.unique());
    // RESP3: a subscribed connection runs any command, and messages
    // arrive as pushes between replies.
    s.batch(HOME_DB)
        .add("HELLO 3")
        .add("SUBSCRIBE rare:ps")
        .add("PSUBSCRIBE rare:p*")
        .add("SSUBSCRIBE rare:ss")
        .add(&format!("PUBLISH rare:ps {m1}"))
        .add(&format!("SPUBLISH rare:ss {m2}"))
        .add("PUBSUB CHANNELS rare:*")
        .add("PUBSUB CHANNELS")
        .add("PUBSUB NUMSUB rare:ps rare:none")
        .add("PUBSUB NUMPAT")
        .add("PUBSUB SHARDCHANNELS")
        .add("PUBSUB SHARDCHANNELS rare:*")
        .add("PUBSUB SHARDNUMSUB rare:ss")
        .add("PUBSUB HELP")
        // Subscribed by name and by pattern: drop the name, then the
        // pattern, with a message after each.
        .add("UNSUBSCRIBE rare:ps")
        .add(&format!("PUBLISH rare:ps {m3}"))
        .add("PUNSUBSCRIBE rare:p*")
        .add(&format!("PUBLISH rare:ps {m4}"))
        .add("SUNSUBSCRIBE rare:ss")
        // The other way round: the pattern first, then the name.
        .add("SUBSCRIBE rare:ps")
        .add("PSUBSCRIBE rare:p*")
        .add("PUNSUBSCRIBE rare:p*")
        .add(&format!("PUBLISH rare:ps {m5}"))
        .add("UNSUBSCRIBE rare:ps")
        .add("HELLO 2");
}

fn databases(s: &mut Section, _rng: &mut ChaCha8Rng) {
    let [a, b] = SWAP_DBS;
    s.batch(a)
        .add("SET rare:d1 a")
        .add("SWAPDB 12 13")
        .add("EXISTS rare:d1")
        .add(&format!("SWAPDB {b} {a}"))
        .add("DBSIZE")
        .add("FLUSHDB")
        .add("SET rare:d1 b")
        .add("FLUSHDB ASYNC")
        .add("SET rare:d1 c")
        .add("FLUSHDB SYNC")
        .add(&format!("SELECT {HOME_DB}"));
}

fn persistence(s: &mut Section, _rng: &mut ChaCha8Rng) {
    // Replication in its harmless forms: no replica ever connects, so
    // WAIT 0 answers 0 at once; a filtered SYNC or PSYNC from a replica
    // that cannot read an EOF-marked RDB is refused before the connection
    // becomes a replica; REPLICAOF NO ONE on a
    // primary changes nothing; FAILOVER without a replica (or ABORT with
    // none in progress) is refused.
    s.batch(HOME_DB)
        .add("FAILOVER")
        .add("FAILOVER ABORT")
        .add("FAILOVER TO 127.0.0.1 6380 TIMEOUT 10 FORCE")
        .add("ROLE")
        .add("REPLICAOF NO ONE")
        .add("SLAVEOF no one")
        .add("WAIT 0 0")
        // A filter without `capa eof` makes SYNC and PSYNC refuse before
        // either could turn the connection into a replica (this connection
        // never announces `capa eof`).
        .add("REPLCONF listening-port 6380 capa psync2 rdb-only 0 rdb-filter-only functions")
        .add("SYNC")
        .add("PSYNC ? notanumber");
    s.batch(HOME_DB)
        .add("LASTSAVE")
        .add("BGSAVE")
        .add("BGSAVE SCHEDULE")
        .add("BGREWRITEAOF")
        .add("SAVE")
        .add("LASTSAVE");
}

fn solo_server_wide(s: &mut Section, _rng: &mut ChaCha8Rng) {
    s.batch(HOME_DB)
        .add("SET rare:fa 1")
        .add("FLUSHALL")
        .add("SET rare:fa 2")
        .add("FLUSHALL ASYNC")
        .add("SET rare:fa 3")
        .add("FLUSHALL SYNC")
        .add("SCRIPT FLUSH")
        .add("SCRIPT FLUSH ASYNC")
        .add("SCRIPT FLUSH SYNC")
        .add("CLIENT PAUSE 1 WRITE")
        .add("CLIENT UNPAUSE")
        .add("CLIENT PAUSE 1 ALL")
        .add("CLIENT UNPAUSE")
        .add("CLIENT PAUSE 1")
        .add("CLIENT UNPAUSE")
        .add("PING");
}

/// MONITOR, the very last request of `rare-solo`: from then on the
/// connection streams every command, its own too, so nothing may follow.
pub(crate) fn solo_monitor(s: &mut Section, _rng: &mut ChaCha8Rng) {
    s.batch(HOME_DB).add("MONITOR");
}

fn solo_quit(s: &mut Section, _rng: &mut ChaCha8Rng) {
    s.batch(HOME_DB).push(r("QUIT"));
}
