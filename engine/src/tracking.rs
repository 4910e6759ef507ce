//! Client-side caching: the tracking table (Redis's tracking.c, 7.0.15).
//!
//! A client that turned CLIENT TRACKING on caches what it reads; the server
//! remembers, per key, which clients read it (the tracking table), and when
//! the key is modified it tells each of them once, with an `invalidate`
//! message, and forgets them: a client that reads the key again is
//! remembered again. In BCAST mode nothing is remembered: every write to a
//! key under one of the client's prefixes is collected, and the collected
//! keys go out in one message per prefix at the end of the engine's input
//! (Redis sends them in `beforeSleep`).
//!
//! Messages go to the tracking client itself when it speaks RESP3 (a `>2`
//! push), or to the client it REDIRECTs to: a RESP3 client gets the push, a
//! RESP2 client in subscribed mode gets a pub/sub message on the
//! `__redis__:invalidate` channel, and anyone else gets nothing, as in
//! Redis. A redirect target that has gone makes the tracking client's
//! redirect "broken": it gets a `tracking-redir-broken` push (RESP3) each
//! time a message cannot be delivered.
//!
//! A message meant for the client whose command is running is held until
//! that command's reply is written (Redis's `tracking_pending_keys`): the
//! reply of a GET that follows a SET in one MULTI comes before the SET's
//! invalidation, and the invalidation comes after the whole EXEC. The
//! engine moves a running client's output into the reply being built, so
//! holding those messages is also what keeps them in the right buffer.
//!
//! The table is global, not per database (keys are names, as in Redis);
//! FLUSHDB and FLUSHALL send every tracking client the null invalidation
//! and empty it. `tracking-table-max-keys` bounds it: over the limit,
//! keys are invalidated (their clients told) until it is met again, with
//! a bounded effort per command.

use std::collections::{BTreeMap, BTreeSet};

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::client::{Client, ClientId, Clients};
use crate::resp::{Protocol, ReplyWriter};

#[cfg(test)]
mod tests;

/// Redis's default `tracking-table-max-keys`.
pub const TRACKING_TABLE_MAX_KEYS_DEFAULT: u64 = 1_000_000;

/// Keys invalidated per round of `tracking-table-max-keys` enforcement;
/// the effort grows by this much for each consecutive command that ended
/// still over the limit (Redis's `trackingLimitUsedSlots`).
const LIMIT_EFFORT_KEYS_PER_ROUND: u64 = 100;

/// The effort's growth stops here, so that one command never invalidates
/// more than `LIMIT_EFFORT_KEYS_PER_ROUND * LIMIT_ROUNDS_MAX` keys (Redis
/// lets the effort grow without bound).
const LIMIT_ROUNDS_MAX: u64 = 16;

/// An evicted key is drawn among this many of the table's first keys in
/// name order: Redis walks its radix tree at random; a bounded draw keeps
/// the choice a function of the seed and each eviction O(1).
const LIMIT_DRAW_KEYS_MAX: u64 = 64;

/// The channel a RESP2 redirect target receives invalidations on.
pub const INVALIDATE_CHANNEL: &[u8] = b"__redis__:invalidate";

/// A client's tracking mode (Redis's CLIENT_TRACKING_* flags and
/// `client_tracking_redirection`, `client_tracking_prefixes`).
#[derive(Debug, Default, Clone)]
pub struct ClientTracking {
    pub on: bool,
    pub bcast: bool,
    pub optin: bool,
    pub optout: bool,
    pub noloop: bool,
    /// CLIENT CACHING YES (under OPTIN) or NO (under OPTOUT) was given for
    /// the next command (or the whole MULTI).
    pub caching: bool,
    /// A message could not go to the redirect target: it has gone.
    pub broken_redirect: bool,
    /// The client id messages go to; 0 for the client itself.
    pub redirect: u64,
    /// BCAST prefixes, in name order.
    pub prefixes: BTreeSet<Box<[u8]>>,
}

/// The options of CLIENT TRACKING ON, parsed and checked.
#[derive(Debug, Default, Clone)]
pub struct TrackingOptions {
    pub redirect: u64,
    pub bcast: bool,
    pub optin: bool,
    pub optout: bool,
    pub noloop: bool,
    pub prefixes: Vec<Vec<u8>>,
}

/// One BCAST prefix: its clients, and the keys under it modified since the
/// last broadcast, each with the client that modified it last (so that a
/// NOLOOP client is not told about its own writes).
#[derive(Debug, Default)]
struct Prefix {
    clients: BTreeSet<ClientId>,
    keys: BTreeMap<Box<[u8]>, Option<ClientId>>,
}

/// What a message says: these keys are invalid, or everything is (a
/// flush).
#[derive(Debug, Clone)]
enum Message {
    Keys(Vec<Box<[u8]>>),
    Flush,
}

/// The server's tracking state.
#[derive(Debug, Default)]
pub struct Tracking {
    /// Key -> the clients that read it since it was last invalidated.
    table: BTreeMap<Box<[u8]>, BTreeSet<ClientId>>,
    /// (key, client) pairs in `table` (INFO `tracking_total_items`).
    items: u64,
    /// BCAST prefix -> its clients and pending keys.
    prefixes: BTreeMap<Box<[u8]>, Prefix>,
    /// Messages held for the client whose command runs, sent after its
    /// reply: (tracking client, message).
    pending: Vec<(ClientId, Message)>,
    /// Clients with tracking on (INFO `tracking_clients`).
    clients_count: u64,
    /// The client whose command runs (Redis's `server.current_client`):
    /// set by the pipeline around a request, `None` between commands.
    pub current: Option<ClientId>,
    /// Consecutive commands that ended over `tracking-table-max-keys`.
    over_limit_rounds: u64,
    /// Clients given output since the engine last looked, with whether
    /// their output was empty before (the engine queues those for
    /// transmission and checks their output limits).
    pub delivered: Vec<(ClientId, bool)>,
}

impl Tracking {
    /// Nobody tracks anything: every hook returns at once.
    pub fn is_idle(&self) -> bool {
        self.clients_count == 0 && self.table.is_empty() && self.prefixes.is_empty()
    }

    pub fn clients_count(&self) -> u64 {
        self.clients_count
    }

    /// Keys in the table (INFO `tracking_total_keys`).
    pub fn keys_count(&self) -> usize {
        self.table.len()
    }

    /// (key, client) pairs (INFO `tracking_total_items`).
    pub fn items_count(&self) -> u64 {
        self.items
    }

    /// BCAST prefixes of all clients (INFO `tracking_total_prefixes`).
    pub fn prefixes_count(&self) -> usize {
        self.prefixes.len()
    }

    /// Whether any client has `key` remembered.
    pub fn is_tracked_by_anyone(&self, key: &[u8]) -> bool {
        self.table.contains_key(key)
    }

    /// Whether `key` is remembered for `client` (for tests).
    pub fn is_tracked(&self, key: &[u8], client: ClientId) -> bool {
        self.table.get(key).is_some_and(|ids| ids.contains(&client))
    }
}

/// The first prefix of `prefixes` that overlaps `prefix` (one is a prefix
/// of the other: Redis's `stringCheckPrefix`).
fn overlapping<'a>(
    prefixes: impl IntoIterator<Item = &'a [u8]>,
    prefix: &[u8],
) -> Option<&'a [u8]> {
    prefixes.into_iter().find(|p| {
        let n = p.len().min(prefix.len());
        p[..n] == prefix[..n]
    })
}

/// CLIENT TRACKING ON's checks of its options against each other and the
/// client's mode, in Redis 7.0.15's order; the error reply if one fails.
/// Returns the prefix comparisons made, for the work charged.
pub fn check_enable(c: &Client, o: &TrackingOptions) -> Result<u64, String> {
    let t = &c.tracking;
    if !o.bcast && !o.prefixes.is_empty() {
        return Err("ERR PREFIX option requires BCAST mode to be enabled".into());
    }
    if t.on && t.bcast != o.bcast {
        return Err(
            "ERR You can't switch BCAST mode on/off before disabling tracking for \
                    this client, and then re-enabling it with a different mode."
                .into(),
        );
    }
    if o.bcast && (o.optin || o.optout) {
        return Err("ERR OPTIN and OPTOUT are not compatible with BCAST".into());
    }
    if o.optin && o.optout {
        return Err("ERR You can't specify both OPTIN mode and OPTOUT mode".into());
    }
    if (o.optin && t.optout) || (o.optout && t.optin) {
        return Err(
            "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for \
                    this client, and then re-enabling it with a different mode."
                .into(),
        );
    }
    let mut compared = 0;
    if o.bcast {
        for (i, p) in o.prefixes.iter().enumerate() {
            compared += t.prefixes.len() as u64 + (o.prefixes.len() - i) as u64;
            if let Some(old) = overlapping(t.prefixes.iter().map(|p| &**p), p) {
                return Err(format!(
                    "ERR Prefix '{}' overlaps with an existing prefix '{}'. Prefixes for a \
                     single client must not overlap.",
                    String::from_utf8_lossy(p),
                    String::from_utf8_lossy(old)
                ));
            }
            let rest = o.prefixes[i + 1..].iter().map(|p| p.as_slice());
            if let Some(other) = overlapping(rest, p) {
                return Err(format!(
                    "ERR Prefix '{}' overlaps with another provided prefix '{}'. Prefixes \
                     for a single client must not overlap.",
                    String::from_utf8_lossy(p),
                    String::from_utf8_lossy(other)
                ));
            }
        }
    }
    Ok(compared)
}

/// Turns tracking on for `c` with options that passed [`check_enable`]
/// (Redis's `enableTracking`): the mode flags are replaced, the prefixes
/// added to those it has.
pub fn enable(tr: &mut Tracking, c: &mut Client, o: TrackingOptions) {
    if !c.tracking.on {
        tr.clients_count += 1;
    }
    let t = &mut c.tracking;
    t.on = true;
    t.redirect = o.redirect;
    t.broken_redirect = false;
    t.bcast = o.bcast;
    t.optin = o.optin;
    t.optout = o.optout;
    t.noloop = o.noloop;
    if o.bcast {
        let mut prefixes: Vec<Box<[u8]>> = o.prefixes.into_iter().map(Into::into).collect();
        if prefixes.is_empty() {
            prefixes.push(Box::default());
        }
        for p in prefixes {
            let entry = tr.prefixes.entry(p.clone()).or_default();
            if entry.clients.insert(c.id) {
                c.tracking.prefixes.insert(p);
            }
        }
    }
}

/// Turns tracking off for `c` (CLIENT TRACKING OFF, RESET, disconnect):
/// it leaves its prefixes; the keys it read stay in the table until they
/// are invalidated, as in Redis, and it is skipped then.
pub fn disable(tr: &mut Tracking, c: &mut Client) {
    for p in std::mem::take(&mut c.tracking.prefixes) {
        if let Some(entry) = tr.prefixes.get_mut(&p) {
            entry.clients.remove(&c.id);
            if entry.clients.is_empty() {
                tr.prefixes.remove(&p);
            }
        }
    }
    if c.tracking.on {
        tr.clients_count -= 1;
    }
    c.tracking = ClientTracking::default();
}

/// RESET turns tracking off (Redis's `clearClientConnectionState`).
pub fn reset_client(tr: &mut Tracking, c: &mut Client) {
    disable(tr, c);
}

/// Remembers that `c` read `keys` (Redis's `trackingRememberKeys`, after a
/// read-only command), unless OPTIN without CACHING YES or OPTOUT with
/// CACHING NO says not to. Returns the work done.
pub fn remember_keys<'k>(
    tr: &mut Tracking,
    c: &Client,
    keys: impl IntoIterator<Item = &'k [u8]>,
) -> u64 {
    let t = &c.tracking;
    debug_assert!(t.on && !t.bcast);
    if (t.optin && !t.caching) || (t.optout && t.caching) {
        return 0;
    }
    let mut work_units = 0;
    for key in keys {
        work_units += 1;
        let ids = match tr.table.get_mut(key) {
            Some(ids) => ids,
            None => tr.table.entry(key.into()).or_default(),
        };
        if ids.insert(c.id) {
            tr.items += 1;
        }
    }
    work_units
}

/// `key` was modified (Redis's `trackingInvalidateKey`, from
/// `signalModifiedKey`): every client that read it is told, once, and
/// forgotten; with `bcast`, the key is also collected for the BCAST
/// prefixes it falls under. The client whose command runs
/// ([`Tracking::current`]) is skipped under NOLOOP, and its messages wait
/// for its reply.
/// Returns the work done.
pub fn invalidate_key(tr: &mut Tracking, clients: &mut Clients, key: &[u8], bcast: bool) -> u64 {
    if tr.is_idle() {
        return 0;
    }
    let current = tr.current;
    let mut work_units = 0;
    if bcast && !tr.prefixes.is_empty() {
        work_units += collect_for_broadcast(tr, current, key);
    }
    let Some(ids) = tr.table.remove(key) else {
        return work_units;
    };
    tr.items -= ids.len() as u64;
    for id in ids {
        work_units += 1;
        let Some(c) = clients.get(&id) else {
            continue;
        };
        let t = &c.tracking;
        if !t.on || t.bcast || (t.noloop && Some(id) == current) {
            continue;
        }
        send(tr, clients, current, id, Message::Keys(vec![key.into()]));
    }
    work_units
}

/// Redis's `trackingRememberKeyToBroadcast`: `key` joins the pending keys
/// of every prefix it falls under. Returns the prefixes compared.
fn collect_for_broadcast(tr: &mut Tracking, current: Option<ClientId>, key: &[u8]) -> u64 {
    let mut compared = 0;
    for (prefix, entry) in tr.prefixes.iter_mut() {
        compared += 1;
        if key.starts_with(prefix) {
            entry.keys.insert(key.into(), current);
        }
    }
    compared
}

/// FLUSHDB/FLUSHALL (Redis's `trackingInvalidateKeysOnFlush`): every
/// tracking client gets the null invalidation, and the table is emptied.
/// Returns the work done.
pub fn invalidate_on_flush(tr: &mut Tracking, clients: &mut Clients) -> u64 {
    if tr.is_idle() {
        return 0;
    }
    let current = tr.current;
    let mut work_units = tr.table.len() as u64;
    if tr.clients_count > 0 {
        let ids: Vec<ClientId> = clients
            .iter()
            .filter(|(_, c)| c.tracking.on)
            .map(|(&id, _)| id)
            .collect();
        work_units += clients.len() as u64;
        for id in ids {
            send(tr, clients, current, id, Message::Flush);
        }
    }
    tr.table.clear();
    tr.items = 0;
    work_units
}

/// Sends the keys collected for each BCAST prefix to its clients, one
/// message per prefix and client (Redis's
/// `trackingBroadcastInvalidationMessages`, in `beforeSleep`); a NOLOOP
/// client is not told about the keys it modified itself. Runs at the end
/// of each input of the engine, when no command runs.
pub fn broadcast(tr: &mut Tracking, clients: &mut Clients) {
    if tr.prefixes.is_empty() {
        return;
    }
    let mut batches = Vec::new();
    for entry in tr.prefixes.values_mut() {
        if entry.keys.is_empty() {
            continue;
        }
        let keys = std::mem::take(&mut entry.keys);
        batches.push((entry.clients.iter().copied().collect::<Vec<_>>(), keys));
    }
    for (ids, keys) in batches {
        for id in ids {
            let noloop = clients.get(&id).is_some_and(|c| c.tracking.noloop);
            let list: Vec<Box<[u8]>> = keys
                .iter()
                .filter(|(_, by)| !noloop || **by != Some(id))
                .map(|(k, _)| k.clone())
                .collect();
            if !list.is_empty() {
                send(tr, clients, None, id, Message::Keys(list));
            }
        }
    }
}

/// Sends the messages held for the client whose command ran, after its
/// reply (Redis's `trackingHandlePendingKeyInvalidations`).
pub fn flush_pending(tr: &mut Tracking, clients: &mut Clients) {
    for (id, message) in std::mem::take(&mut tr.pending) {
        send(tr, clients, None, id, message);
    }
}

/// Enforces `tracking-table-max-keys` (Redis's `trackingLimitUsedSlots`):
/// over the limit, keys are invalidated as if modified (without BCAST)
/// until the table is back under it or the round's effort is spent; the
/// effort grows with each consecutive round that ended over the limit.
/// Returns the work done.
pub fn limit_keys(
    tr: &mut Tracking,
    clients: &mut Clients,
    rng: &mut ChaCha8Rng,
    max_keys: u64,
) -> u64 {
    if max_keys == 0 || tr.table.len() as u64 <= max_keys {
        tr.over_limit_rounds = 0;
        return 0;
    }
    let effort = LIMIT_EFFORT_KEYS_PER_ROUND * (tr.over_limit_rounds.min(LIMIT_ROUNDS_MAX) + 1);
    let mut work_units = 0;
    for _ in 0..effort {
        let draw_max = (tr.table.len() as u64).min(LIMIT_DRAW_KEYS_MAX);
        let Some(key) = tr
            .table
            .keys()
            .nth(rng.gen_range(0..draw_max.max(1)) as usize)
            .cloned()
        else {
            break;
        };
        work_units += draw_max + invalidate_key(tr, clients, &key, false);
        if tr.table.len() as u64 <= max_keys {
            tr.over_limit_rounds = 0;
            return work_units;
        }
    }
    tr.over_limit_rounds += 1;
    work_units
}

/// Redis's `sendTrackingMessage`: to the client itself in RESP3, or to its
/// redirect target (a push in RESP3, a `__redis__:invalidate` message to a
/// RESP2 client in subscribed mode); nothing where neither applies. A
/// message for `current` (the client whose command runs) waits for its
/// reply.
fn send(
    tr: &mut Tracking,
    clients: &mut Clients,
    current: Option<ClientId>,
    id: ClientId,
    message: Message,
) {
    let Some(c) = clients.get(&id) else {
        return;
    };
    let mut dest = id;
    if c.tracking.redirect != 0 {
        let redirect = c.tracking.redirect;
        if clients.get(&ClientId(redirect)).is_none() {
            if Some(id) == current {
                tr.pending.push((id, message));
                return;
            }
            let c = clients.get_mut(&id).expect("looked up");
            c.tracking.broken_redirect = true;
            if c.protocol == Protocol::Resp3 {
                write(tr, clients, id, |w| {
                    w.push_len(2);
                    w.bulk_str("tracking-redir-broken");
                    w.int(redirect as i64);
                });
            }
            return;
        }
        dest = ClientId(redirect);
    }
    if Some(dest) == current || Some(id) == current {
        tr.pending.push((id, message));
        return;
    }
    let d = clients.get(&dest).expect("looked up");
    let resp3 = d.protocol == Protocol::Resp3;
    // RESP2 has no pushes: only a redirect target in subscribed mode can
    // take a pub/sub message instead.
    let redirected_to_subscriber = dest != id && !d.subscriptions.is_empty();
    if !resp3 && !redirected_to_subscriber {
        return;
    }
    write(tr, clients, dest, |w| {
        w.push_len(if resp3 { 2 } else { 3 });
        if resp3 {
            w.bulk_str("invalidate");
        } else {
            w.bulk_str("message");
            w.bulk(INVALIDATE_CHANNEL);
        }
        match &message {
            Message::Flush => w.null(),
            Message::Keys(keys) => {
                w.array_len(keys.len());
                for k in keys {
                    w.bulk(k);
                }
            }
        }
    });
}

/// Appends a message to `dest`'s output and records the delivery.
fn write(
    tr: &mut Tracking,
    clients: &mut Clients,
    dest: ClientId,
    f: impl FnOnce(&mut ReplyWriter),
) {
    let Some(c) = clients.get_mut(&dest) else {
        return;
    };
    if c.closing.is_some() {
        // Closed over its output limit (or killed): it will never read this.
        return;
    }
    let was_idle = c.pending_output().is_empty();
    f(&mut ReplyWriter::new(&mut c.output, c.protocol));
    tr.delivered.push((dest, was_idle));
}

/// The keys of a command, taken before it ran (a handler may take its
/// arguments apart), for [`after_call`]; only while someone tracks.
#[derive(Debug)]
pub struct CallKeys {
    keys: Vec<Box<[u8]>>,
    dirty_before: u64,
    /// A write: its keys are invalidated if it changed the dataset.
    write: bool,
    /// A read of a tracking client: its keys are remembered.
    read: bool,
}

/// Takes what [`after_call`] needs of `spec` run by `client` with `args`;
/// `None` when nobody tracks or the command neither writes nor is a read
/// of a tracking client. Read-only scripts are not remembered themselves,
/// only the commands they run (as in Redis's `call`).
pub fn before_call(
    tr: &Tracking,
    clients: &Clients,
    client: ClientId,
    spec: &crate::cmd::CommandSpec,
    args: &[Vec<u8>],
    dirty: u64,
) -> Option<Box<CallKeys>> {
    use crate::cmd::flags;
    if tr.is_idle() {
        return None;
    }
    let write = spec.has(flags::WRITE) && !(tr.table.is_empty() && tr.prefixes.is_empty());
    let read = spec.has(flags::READONLY)
        && !matches!(spec.name, "eval_ro" | "evalsha_ro" | "fcall_ro")
        && clients
            .get(&client)
            .is_some_and(|c| c.tracking.on && !c.tracking.bcast);
    if !write && !read {
        return None;
    }
    // The keys COMMAND GETKEYS names (Redis's `getKeysFromCommandWithSpecs`
    // in `trackingRememberKeys`), SORT's STORE destination among them.
    let keys: Vec<Box<[u8]>> = crate::meta::request_keys(spec.name, args)
        .into_iter()
        .map(|i| args[i].as_slice().into())
        .collect();
    Some(Box::new(CallKeys {
        keys,
        dirty_before: dirty,
        write,
        read,
    }))
}

/// After the command of [`before_call`] ran, `dirty` being the server's
/// change count now: a write that changed the dataset invalidates its keys
/// (those it changed without a store hook, as EXPIRE's), a read remembers
/// them for its client. Returns the work done.
pub fn after_call(
    tr: &mut Tracking,
    clients: &mut Clients,
    client: ClientId,
    call: &CallKeys,
    dirty: u64,
) -> u64 {
    let mut work_units = 0;
    if call.write && dirty > call.dirty_before {
        for key in &call.keys {
            work_units += invalidate_key(tr, clients, key, true);
        }
    }
    if call.read {
        if let Some(c) = clients.get(&client) {
            if c.tracking.on && !c.tracking.bcast {
                work_units += remember_keys(tr, c, call.keys.iter().map(|k| &**k));
            }
        }
    }
    work_units
}

/// The end of a client's request (Redis's `afterCommand` and
/// `resetClient`): the CACHING flag lasts one command, or the whole
/// MULTI, and no CLIENT subcommand spends it; `tracking-table-max-keys`
/// is enforced; the messages held for the client go out after its reply.
/// Returns the work done.
pub fn after_request(
    tr: &mut Tracking,
    clients: &mut Clients,
    rng: &mut ChaCha8Rng,
    max_keys: u64,
    (client, client_command): (ClientId, bool),
) -> u64 {
    let mut work_units = 0;
    if let Some(c) = clients.get_mut(&client) {
        if !client_command && !c.tx.in_multi() {
            c.tracking.caching = false;
        }
    }
    if !tr.is_idle() {
        work_units += limit_keys(tr, clients, rng, max_keys);
    }
    tr.current = None;
    flush_pending(tr, clients);
    work_units
}
