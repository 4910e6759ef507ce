//! The engine's structural invariants, asserted TigerBeetle-style: every
//! check panics with a message naming the structure and what broke in it.
//!
//! [`check`] (behind [`crate::Engine::check_invariants`]) walks
//!
//! - the keyspace: each database's keys and expires dicts (both tables
//!   during a rehash, see [`crate::dict::Dict::check_invariants`]), and the
//!   expiry index against the keys (every TTL belongs to a key);
//! - the blocking index: every blocked client is queued once on exactly the
//!   keys it lists, every queued client is blocked on that key, the deadline
//!   table holds exactly the blocked clients' deadlines, the counts agree;
//! - the watch table, both ways: key → watchers and client → watched keys;
//! - the client table: slots and index agree, ids increase, and the next id
//!   to assign is above every id assigned.
//!
//! It only reads, so running it changes nothing (the simulator's trace
//! hashes are the same with and without it). It is O(keys + buckets +
//! clients + blocked and watched pairs × their queues); callers pace it
//! (the simulator: `sim/src/world/invariants.rs`).

use std::collections::BTreeSet;

use crate::clients::Clients;
use crate::db::DATABASES_COUNT;
use crate::server::Server;

/// Asserts every invariant of `server` and `clients`; returns the items
/// visited (keys, TTLs, clients, blocked and watched pairs), the measure
/// callers pace it by.
pub(crate) fn check(server: &Server, clients: &Clients) -> usize {
    let mut visited = check_keyspace(server);
    visited += check_clients(server, clients);
    visited += check_blocking(server, clients);
    visited += check_watches(server, clients);
    visited
}

fn shown(key: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(key))
}

/// Both dicts of every database, and every TTL on a key.
fn check_keyspace(server: &Server) -> usize {
    let dbs = &server.keyspace.dbs;
    assert_eq!(
        dbs.len(),
        DATABASES_COUNT,
        "keyspace: {} databases, not {DATABASES_COUNT}",
        dbs.len()
    );
    let mut visited = 0;
    for (i, db) in dbs.iter().enumerate() {
        assert_eq!(db.id, i, "keyspace: database {i} says it is {}", db.id);
        db.keys.check_invariants();
        db.expires.check_invariants();
        assert!(
            db.expires.len() <= db.keys.len(),
            "keyspace: db {i} has {} TTLs for {} keys",
            db.expires.len(),
            db.keys.len()
        );
        for (key, _) in db.expires.iter() {
            assert!(
                db.keys.contains_key(key),
                "keyspace: db {i} has a TTL for {}, which is not a key",
                shown(key)
            );
        }
        visited += db.keys.len() + db.expires.len();
    }
    visited
}

/// Slots and index agree, ids increase, and none is at or above the next
/// id to assign.
fn check_clients(server: &Server, clients: &Clients) -> usize {
    let (slots, index, last_id) = (clients.slots(), clients.slot_index(), clients.last_id());
    let mut live = 0;
    let mut previous = None;
    for (slot, entry) in slots.iter().enumerate() {
        let Some((id, client)) = entry else { continue };
        assert_eq!(
            client.id, *id,
            "client table: slot {slot} is filed under id {} but holds client {}",
            id.0, client.id.0
        );
        assert_eq!(
            index.get(id),
            Some(&slot),
            "client table: client {} is in slot {slot} but the index points at {:?}",
            id.0,
            index.get(id)
        );
        assert!(
            previous < Some(*id),
            "client table: ids do not increase: {:?} before {} (slot {slot})",
            previous.map(|p: crate::ClientId| p.0),
            id.0
        );
        assert!(
            Some(*id) <= last_id,
            "client table: client {} is above the last id inserted {:?}",
            id.0,
            last_id.map(|l| l.0)
        );
        previous = Some(*id);
        live += 1;
    }
    assert_eq!(
        live,
        index.len(),
        "client table: {live} live slots but {} index entries",
        index.len()
    );
    if let Some(last) = last_id {
        assert!(
            server.next_client_id > last.0,
            "client table: the next id to assign, {}, is not above the last assigned, {}",
            server.next_client_id,
            last.0
        );
    }
    live
}

/// Every blocked client queued once on each of its keys and nowhere else;
/// the deadline table and the counts agree with the clients.
fn check_blocking(server: &Server, clients: &Clients) -> usize {
    let blocking = &server.blocking;
    let waiting = blocking.waiting_index();
    let deadlines = blocking.deadline_index();
    let mut blocked_count = 0;
    let mut pairs = 0;
    for (id, client) in clients.iter() {
        let Some(blocked) = &client.blocked else {
            continue;
        };
        blocked_count += 1;
        let distinct: BTreeSet<&[u8]> = blocked.keys.iter().map(Vec::as_slice).collect();
        assert!(
            !blocked.keys.is_empty() && distinct.len() == blocked.keys.len(),
            "blocking: client {} is blocked on {} keys, {} distinct (none or repeated)",
            id.0,
            blocked.keys.len(),
            distinct.len()
        );
        for key in &blocked.keys {
            let queue = waiting.get(&blocked.db).and_then(|keys| keys.get(key));
            let queued = queue.map_or(0, |q| q.iter().filter(|&&c| c == *id).count());
            assert_eq!(
                queued,
                1,
                "blocking: client {} is blocked on {} in db {} but queued there {queued} times",
                id.0,
                shown(key),
                blocked.db
            );
        }
        if let Some(ns) = blocked.deadline_ns {
            assert!(
                deadlines.contains(&(ns, *id)),
                "blocking: client {}'s deadline {ns} ns is not in the deadline table",
                id.0
            );
        }
        pairs += blocked.keys.len();
    }
    let mut queued_total = 0;
    for (db, keys) in waiting {
        for (key, queue) in keys {
            assert!(
                !queue.is_empty(),
                "blocking: the queue of {} in db {db} is empty but kept",
                shown(key)
            );
            let distinct: BTreeSet<_> = queue.iter().collect();
            assert_eq!(
                distinct.len(),
                queue.len(),
                "blocking: a client is twice in the queue of {} in db {db}: {queue:?}",
                shown(key)
            );
            for id in queue {
                let on_key = clients
                    .get(id)
                    .and_then(|c| c.blocked.as_ref())
                    .is_some_and(|b| {
                        b.db == *db && b.keys.iter().any(|k| k.as_slice() == key.as_slice())
                    });
                assert!(
                    on_key,
                    "blocking: client {} is in the queue of {} in db {db} but not blocked on it",
                    id.0,
                    shown(key)
                );
            }
            queued_total += queue.len();
        }
    }
    assert_eq!(
        queued_total, pairs,
        "blocking: the queues hold {queued_total} entries for {pairs} (client, key) pairs"
    );
    for &(ns, id) in deadlines {
        let deadline = clients
            .get(&id)
            .and_then(|c| c.blocked.as_ref())
            .and_then(|b| b.deadline_ns);
        assert_eq!(
            deadline,
            Some(ns),
            "blocking: the deadline table holds client {} at {ns} ns, but its deadline is {deadline:?}",
            id.0
        );
    }
    assert_eq!(
        blocking.blocked_count(),
        blocked_count,
        "blocking: counts {} blocked clients but {blocked_count} clients are blocked",
        blocking.blocked_count()
    );
    let ready_set = blocking.ready_index();
    assert!(
        blocking.ready.len() == ready_set.len()
            && blocking.ready.iter().all(|r| ready_set.contains(r)),
        "blocking: the ready keys ({}) and their set ({}) disagree",
        blocking.ready.len(),
        ready_set.len()
    );
    pairs + deadlines.len()
}

/// The watch table, key → watchers, against each client's watched keys.
fn check_watches(server: &Server, clients: &Clients) -> usize {
    let watches = &server.watches;
    let by_db = watches.by_db();
    assert_eq!(
        by_db.len(),
        DATABASES_COUNT,
        "watch table: {} databases, not {DATABASES_COUNT}",
        by_db.len()
    );
    let mut pairs = 0;
    for (db, keys) in by_db.iter().enumerate() {
        for (key, ids) in keys {
            assert!(
                !ids.is_empty(),
                "watch table: {} in db {db} is kept with no watcher",
                shown(key)
            );
            let distinct: BTreeSet<_> = ids.iter().collect();
            assert_eq!(
                distinct.len(),
                ids.len(),
                "watch table: a client watches {} in db {db} twice: {ids:?}",
                shown(key)
            );
            for id in ids {
                let client = clients.get(id).unwrap_or_else(|| {
                    panic!(
                        "watch table: {} in db {db} is watched by client {}, which is gone",
                        shown(key),
                        id.0
                    )
                });
                assert!(
                    client
                        .tx
                        .watched
                        .iter()
                        .any(|w| w.db == db && w.key == *key),
                    "watch table: lists client {} on {} in db {db}, but the client does not \
                     watch it",
                    id.0,
                    shown(key)
                );
            }
            pairs += ids.len();
        }
    }
    assert_eq!(
        watches.len(),
        pairs,
        "watch table: counts {} watched pairs but holds {pairs}",
        watches.len()
    );
    let mut listed = 0;
    for (id, client) in clients.iter() {
        let watched = &client.tx.watched;
        let distinct: BTreeSet<(usize, &[u8])> = watched.iter().map(|w| (w.db, &*w.key)).collect();
        assert_eq!(
            distinct.len(),
            watched.len(),
            "watch table: client {} lists a watched key twice",
            id.0
        );
        for w in watched {
            assert!(
                watches.watchers(w.db, &w.key).contains(id),
                "watch table: client {} watches {} in db {}, but the table does not list it",
                id.0,
                shown(&w.key),
                w.db
            );
        }
        listed += watched.len();
    }
    assert_eq!(
        listed, pairs,
        "watch table: clients list {listed} watched keys but the table holds {pairs}"
    );
    pairs
}

#[cfg(test)]
mod tests {
    use crate::client::ClientId;
    use crate::multi::WatchedKey;
    use crate::testing::{simple, TestEngine};

    /// An engine with keys (some with TTLs, enough for a rehash), a client
    /// blocked on two keys with a deadline, one blocked forever, and two
    /// clients watching keys.
    fn busy() -> (TestEngine, [ClientId; 4]) {
        let mut t = TestEngine::new();
        let ids = [t.connect(), t.connect(), t.connect(), t.connect()];
        for i in 0..40 {
            let key = format!("k:{i}");
            assert_eq!(t.cmd(ids[0], &["SET", &key, "v"]), simple("OK"));
            if i % 3 == 0 {
                t.cmd(ids[0], &["EXPIRE", &key, "100"]);
            }
        }
        assert!(t.raw(ids[1], b"BLPOP q1 q2 5\r\n").is_empty());
        assert!(t.raw(ids[2], b"BLPOP q2 0\r\n").is_empty());
        assert_eq!(t.cmd(ids[3], &["WATCH", "k:1", "k:2"]), simple("OK"));
        assert_eq!(t.cmd(ids[0], &["WATCH", "k:2"]), simple("OK"));
        t.engine.check_invariants();
        (t, ids)
    }

    #[test]
    fn a_busy_engine_passes_through_its_life() {
        let (mut t, ids) = busy();
        t.cmd(ids[0], &["RPUSH", "q2", "a"]);
        t.engine.check_invariants();
        t.cmd(ids[3], &["UNWATCH"]);
        t.advance_ms(6_000);
        t.engine.check_invariants();
        t.engine.disconnect(t.now, ids[2]);
        t.engine.check_invariants();
    }

    #[test]
    #[should_panic(expected = "keyspace: db 0 has a TTL for \"gone\", which is not a key")]
    fn a_ttl_without_a_key_is_caught() {
        let (mut t, _) = busy();
        let (server, _) = t.engine.parts_mut();
        server.keyspace.dbs[0]
            .expires
            .insert(b"gone".to_vec().into(), 5);
        t.engine.check_invariants();
    }

    #[test]
    #[should_panic(
        expected = "blocking: client 2 is blocked on \"q3\" in db 0 but queued there 0 times"
    )]
    fn a_blocked_client_missing_from_a_queue_is_caught() {
        let (mut t, ids) = busy();
        let (_, clients) = t.engine.parts_mut();
        let blocked = clients.get_mut(&ids[1]).unwrap().blocked.as_mut().unwrap();
        blocked.keys.push(b"q3".to_vec());
        t.engine.check_invariants();
    }

    #[test]
    #[should_panic(
        expected = "blocking: client 3 is blocked on \"q2\" in db 0 but queued there 2 times"
    )]
    fn a_blocked_client_queued_twice_is_caught() {
        let (mut t, ids) = busy();
        let (server, _) = t.engine.parts_mut();
        server.blocking.queue_mut(0, b"q2").push_back(ids[2]);
        t.engine.check_invariants();
    }

    #[test]
    #[should_panic(expected = "blocking: a client is twice in the queue of \"q2\" in db 0")]
    fn a_client_twice_in_a_queue_is_caught() {
        let (mut t, ids) = busy();
        let (server, _) = t.engine.parts_mut();
        let queue = server.blocking.queue_mut(0, b"q2");
        queue.push_back(ids[3]);
        queue.push_back(ids[3]);
        t.engine.check_invariants();
    }

    #[test]
    #[should_panic(expected = "blocking: counts 2 blocked clients but 1 clients are blocked")]
    fn a_wrong_blocked_count_is_caught() {
        let (mut t, ids) = busy();
        let (server, clients) = t.engine.parts_mut();
        // Unblocked by hand, without the count: client 3 waited on q2 only,
        // forever.
        clients.get_mut(&ids[2]).unwrap().blocked = None;
        server.blocking.queue_mut(0, b"q2").retain(|&c| c != ids[2]);
        t.engine.check_invariants();
    }

    #[test]
    #[should_panic(expected = "blocking: the queue of \"q9\" in db 3 is empty but kept")]
    fn an_empty_queue_is_caught() {
        let (mut t, _) = busy();
        let (server, _) = t.engine.parts_mut();
        server.blocking.queue_mut(3, b"q9");
        t.engine.check_invariants();
    }

    #[test]
    #[should_panic(expected = "blocking: the deadline table holds client 2")]
    fn a_stale_deadline_is_caught() {
        let (mut t, ids) = busy();
        let (_, clients) = t.engine.parts_mut();
        let blocked = clients.get_mut(&ids[1]).unwrap().blocked.as_mut().unwrap();
        blocked.deadline_ns = None;
        t.engine.check_invariants();
    }

    #[test]
    #[should_panic(
        expected = "blocking: client 3 is in the queue of \"q2\" in db 0 but not blocked on it"
    )]
    fn a_queued_client_that_is_not_blocked_is_caught() {
        let (mut t, ids) = busy();
        let (_, clients) = t.engine.parts_mut();
        clients.get_mut(&ids[2]).unwrap().blocked = None;
        t.engine.check_invariants();
    }

    #[test]
    #[should_panic(
        expected = "watch table: client 4 watches \"k:9\" in db 0, but the table does not list it"
    )]
    fn a_watched_key_missing_from_the_table_is_caught() {
        let (mut t, ids) = busy();
        let (_, clients) = t.engine.parts_mut();
        clients
            .get_mut(&ids[3])
            .unwrap()
            .tx
            .watched
            .push(WatchedKey {
                db: 0,
                key: b"k:9".to_vec().into(),
                expires_at_ms: None,
            });
        t.engine.check_invariants();
    }

    #[test]
    #[should_panic(
        expected = "watch table: lists client 1 on \"k:2\" in db 0, but the client does not watch it"
    )]
    fn a_watcher_that_does_not_watch_is_caught() {
        let (mut t, ids) = busy();
        let (_, clients) = t.engine.parts_mut();
        clients.get_mut(&ids[0]).unwrap().tx.watched.clear();
        t.engine.check_invariants();
    }

    #[test]
    #[should_panic(expected = "watch table: a client watches \"k:1\" in db 0 twice")]
    fn a_watcher_listed_twice_is_caught() {
        let (mut t, ids) = busy();
        let (server, _) = t.engine.parts_mut();
        server.watches.watchers_mut(0, b"k:1").push(ids[3]);
        t.engine.check_invariants();
    }

    #[test]
    #[should_panic(
        expected = "client table: client 2 is in slot 1 but the index points at Some(2)"
    )]
    fn a_wrong_slot_index_is_caught() {
        let (mut t, ids) = busy();
        let (_, clients) = t.engine.parts_mut();
        clients.slot_index_mut().insert(ids[1], 2);
        t.engine.check_invariants();
    }

    #[test]
    #[should_panic(expected = "client table: ids do not increase: Some(2) before 1 (slot 1)")]
    fn ids_out_of_order_are_caught() {
        let (mut t, ids) = busy();
        let (_, clients) = t.engine.parts_mut();
        clients.slots_mut().swap(0, 1);
        clients.slot_index_mut().insert(ids[0], 1);
        clients.slot_index_mut().insert(ids[1], 0);
        t.engine.check_invariants();
    }

    #[test]
    #[should_panic(
        expected = "client table: the next id to assign, 3, is not above the last assigned, 4"
    )]
    fn a_next_id_already_used_is_caught() {
        let (mut t, _) = busy();
        let (server, _) = t.engine.parts_mut();
        server.next_client_id = 3;
        t.engine.check_invariants();
    }

    #[test]
    #[should_panic(expected = "dict: slab entry")]
    fn a_corrupt_keyspace_dict_is_caught() {
        let (mut t, _) = busy();
        let (server, _) = t.engine.parts_mut();
        server.keyspace.dbs[0].keys.corrupt_first_hash();
        t.engine.check_invariants();
    }
}
