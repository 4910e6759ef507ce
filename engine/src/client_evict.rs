//! Client eviction (`maxmemory-clients`, Redis 7.0's `evictClients`): when
//! the memory of the normal and pub/sub connections together reaches the
//! limit, the largest evictable connection is closed at once, then the next
//! largest, until the total is under it. Replicas, the primary link and
//! clients that said `CLIENT NO-EVICT on` are never evicted (their memory
//! still counts toward the total, as in Redis).
//!
//! Redis keeps clients in power-of-two memory buckets and evicts from the
//! topmost bucket in list order; seedkv takes the largest client exactly
//! (the lowest id among equals), which is the same pick whenever the
//! largest client is alone in its bucket. It runs after each input is
//! served (Redis: before each command) and at the end of each turn; when
//! the limit is 0 (the default) it costs nothing.

use std::collections::VecDeque;

use crate::client::{Client, ClientId, Clients, CloseReason};
use crate::clients::close_client;
use crate::event::{Event, LogLevel};
use crate::repl::ClientRole;
use crate::time::Now;

/// Redis's floor, so that a tiny setting cannot cut every connection.
pub const LIMIT_MIN_BYTES: u64 = 128 * 1024;

/// The limit in bytes (Redis's `getClientEvictionLimit`): 0 when eviction
/// is off, a percentage of `maxmemory` (off while `maxmemory` is 0), never
/// under [`LIMIT_MIN_BYTES`].
pub fn limit_bytes(maxmemory_clients: i64, maxmemory_bytes: u64) -> u64 {
    let limit = match maxmemory_clients {
        0 => return 0,
        v if v < 0 && maxmemory_bytes == 0 => return 0,
        v if v < 0 => (maxmemory_bytes as f64 * (-v) as f64 / 100.0) as u64,
        v => v as u64,
    };
    limit.max(LIMIT_MIN_BYTES)
}

/// The memory a connection holds, as CLIENT LIST's `tot-mem` counts it
/// between commands: its struct, query buffer, a blocked command's
/// arguments, queued MULTI commands and output buffers.
pub fn client_memory_bytes(c: &Client) -> usize {
    let blocked_args = c.blocked.as_ref().map_or(0, |b| b.args_bytes());
    let multi = c.tx.multi.as_ref().map_or(0, |m| m.mem_bytes);
    crate::client::CLIENT_STRUCT_BYTES
        + c.parser.buffered_bytes()
        + blocked_args
        + multi
        + c.output_capacity_bytes()
}

fn counted(c: &Client) -> bool {
    c.repl_role == ClientRole::Normal && c.closing.is_none()
}

/// Evicts clients while the counted memory is at or over the limit;
/// returns how many were evicted. A pass over the clients per call and per
/// eviction, like the cron's idle check (clients are bounded by
/// `maxclients`, not by a request).
pub fn evict_clients(
    limit: u64,
    clients: &mut Clients,
    events: &mut VecDeque<Event>,
    now: Now,
) -> u64 {
    if limit == 0 {
        return 0;
    }
    let mut total: u64 = clients
        .values()
        .filter(|c| counted(c))
        .map(|c| client_memory_bytes(c) as u64)
        .sum();
    let mut evicted = 0;
    while total >= limit {
        let pick = clients
            .values()
            .filter(|c| counted(c) && !c.no_evict)
            .map(|c| (client_memory_bytes(c), std::cmp::Reverse(c.id)))
            .max();
        let Some((bytes, std::cmp::Reverse(id))) = pick else {
            events.push_back(Event::Log {
                level: LogLevel::Warning,
                text: "Over client maxmemory after evicting all evictable clients".into(),
            });
            break;
        };
        log_eviction(clients, events, id, now);
        close_client(clients, events, id, CloseReason::ClientEviction);
        total = total.saturating_sub(bytes as u64);
        evicted += 1;
    }
    evicted
}

fn log_eviction(clients: &Clients, events: &mut VecDeque<Event>, id: ClientId, now: Now) {
    let Some(c) = clients.get(&id) else { return };
    let line = crate::commands::client::info_line_running(c, now, c.last_command, 0);
    events.push_back(Event::Log {
        level: LogLevel::Notice,
        text: format!("Evicting client: {}", String::from_utf8_lossy(&line)),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{err, simple, TestEngine};

    const MB: u64 = 1024 * 1024;

    #[test]
    fn the_limit_is_bytes_or_a_share_of_maxmemory_with_a_floor() {
        assert_eq!(limit_bytes(0, 10 * MB), 0);
        assert_eq!(
            limit_bytes(-10, 0),
            0,
            "a percentage of no maxmemory is off"
        );
        assert_eq!(limit_bytes(-10, 10 * MB), MB);
        assert_eq!(limit_bytes(-100, 10 * MB), 10 * MB);
        assert_eq!(limit_bytes(1000, 0), LIMIT_MIN_BYTES);
        assert_eq!(limit_bytes(5 * MB as i64, 0), 5 * MB);
    }

    #[test]
    fn config_takes_a_memory_value_or_a_percentage() {
        let mut t = TestEngine::new();
        let c = t.connect();
        let set =
            |t: &mut TestEngine, v: &str| t.cmd(c, &["CONFIG", "SET", "maxmemory-clients", v]);
        let get = |t: &mut TestEngine| t.cmd(c, &["CONFIG", "GET", "maxmemory-clients"]);
        let bulk = |s: &str| crate::resp::Frame::Bulk(s.as_bytes().to_vec());
        let pair = |v: &str| crate::resp::Frame::Array(vec![bulk("maxmemory-clients"), bulk(v)]);
        // Replies and texts as redis-server 7.0.15's.
        assert_eq!(set(&mut t, "10%"), simple("OK"));
        assert_eq!(get(&mut t), pair("10%"));
        assert_eq!(set(&mut t, "0%"), simple("OK"));
        assert_eq!(get(&mut t), pair("0"));
        assert_eq!(set(&mut t, "5kb"), simple("OK"));
        assert_eq!(get(&mut t), pair("5120"));
        let refused = |why: &str| {
            err(&format!(
                "ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - {why}"
            ))
        };
        assert_eq!(
            set(&mut t, "101%"),
            refused("percentage argument must be less or equal to 100")
        );
        for bad in ["-5", "1.5%", "abc%", "%", "-5%"] {
            assert_eq!(
                set(&mut t, bad),
                refused("argument must be a memory or percent value"),
                "{bad}"
            );
        }
        assert_eq!(get(&mut t), pair("5120"));
    }

    /// Sends raw bytes and returns the clients the engine closed.
    fn feed(t: &mut TestEngine, c: ClientId, bytes: &[u8]) -> Vec<(ClientId, CloseReason)> {
        t.engine.handle_input(t.now, c, bytes);
        std::iter::from_fn(|| t.engine.poll_event())
            .filter_map(|e| match e {
                Event::Close { client, reason } => Some((client, reason)),
                _ => None,
            })
            .collect()
    }

    fn evicted_clients(t: &mut TestEngine, c: ClientId) -> String {
        let crate::resp::Frame::Bulk(info) = t.cmd(c, &["INFO", "stats"]) else {
            panic!("INFO reply");
        };
        let info = String::from_utf8(info).expect("text");
        info.lines()
            .find(|l| l.starts_with("evicted_clients:"))
            .expect("field")
            .to_string()
    }

    #[test]
    fn the_largest_evictable_client_is_closed_and_no_evict_is_spared() {
        let mut t = TestEngine::new();
        let admin = t.connect();
        t.cmd(admin, &["CONFIG", "SET", "maxmemory-clients", "200kb"]);
        let small = t.connect();
        t.cmd(small, &["SET", "k", "v"]);

        // 100 KB of a 300 KB bulk: under the limit, everyone stays.
        let big = t.connect();
        let mut request = b"*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$300000\r\n".to_vec();
        request.extend(std::iter::repeat_n(b'x', 100_000));
        assert!(feed(&mut t, big, &request).is_empty());
        // Another 150 KB: over, and `big` is the largest.
        let closed = feed(&mut t, big, &vec![b'x'; 150_000]);
        assert_eq!(closed, vec![(big, CloseReason::ClientEviction)]);
        assert_eq!(evicted_clients(&mut t, admin), "evicted_clients:1");
        assert_eq!(
            t.cmd(small, &["GET", "k"]),
            crate::resp::Frame::Bulk(b"v".to_vec())
        );

        // A client that said NO-EVICT counts but is never picked.
        let spared = t.connect();
        t.cmd(spared, &["CLIENT", "NO-EVICT", "on"]);
        let mut request = b"*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$300000\r\n".to_vec();
        request.extend(std::iter::repeat_n(b'x', 250_000));
        let closed = feed(&mut t, spared, &request);
        // The others are the next largest: they go, the spared one stays.
        assert!(closed
            .iter()
            .all(|(id, r)| *id != spared && *r == CloseReason::ClientEviction));
        assert!(!closed.is_empty());
    }
}
