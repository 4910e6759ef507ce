//! ACL users at work (`acl:` keys and channels): an admin client creates
//! and changes users with drawn permissions, while the other clients
//! authenticate as them and run reads, writes, multi-key commands,
//! MULTI/EXEC, scripts, PUBLISH and subscriptions on keys and channels
//! inside and outside what they may touch.
//!
//! Roles follow the client index modulo [`ROLES_COUNT`] (the workload is
//! drawn with that many clients, so each run has every role):
//!
//! - 0, the admin, stays the `default` user (all permissions, never
//!   changed) and sends `ACL SETUSER` (a full `reset` definition, or an
//!   incremental change of the root selector) and, now and then,
//!   `ACL DELUSER`, which closes the connections of that user, and
//!   `ACL SAVE` and `ACL LOAD` (with persistence and no crash the run has
//!   an `aclfile`; without, both are refused): a LOAD brings back the
//!   users of the last successful SAVE and closes every connection of a
//!   named user.
//! - 1 and 2, data clients, `AUTH` (or `HELLO 2 AUTH`) as a drawn user on
//!   each new connection and now and then, then run the data requests of
//!   `requests.rs`.
//! - 3, a subscriber, switches to RESP3 (`HELLO 3`), `AUTH`s once per
//!   connection, before any subscription (a later AUTH keeps
//!   subscriptions its new user may not hold, as Redis does, which the
//!   access checker would have to excuse), and subscribes, unsubscribes
//!   and publishes one channel or pattern per request (a refused
//!   multi-channel SUBSCRIBE is one error, not one frame per channel).
//!
//! The access checker (`check/access.rs`) judges what ran against the
//! rules sent here, read back from the history.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{Request, Workload, WorkloadKind};

mod requests;
mod rules;

/// Clients the workload is drawn with: one per role.
pub const ROLES_COUNT: u32 = 4;
/// Users the admin manages: `acl-u0 ..`.
pub const USERS_COUNT: usize = 3;
/// Key groups (`acl:a:0 .. acl:c:2`): patterns grant a group, or a cut
/// across groups.
pub const KEY_GROUPS: &[&str] = &["a", "b", "c"];
pub const KEYS_PER_GROUP: usize = 3;
/// Channels the users publish to and subscribe to.
pub const CHANNELS: &[&[u8]] = &[b"acl:ch:a", b"acl:ch:b", b"acl:ch:c"];
/// Patterns subscribed to (a PSUBSCRIBE pattern must equal an allowed one).
pub const SUB_PATTERNS: &[&[u8]] = &[b"acl:ch:*", b"acl:ch:[ab]", b"acl:ch:c"];

/// A script that runs `ARGV[1]` on each of its declared keys.
pub const KEYS_SCRIPT: &str = "for i, k in ipairs(KEYS) do redis.call(ARGV[1], k) end return #KEYS";
/// A script that runs `ARGV[1]` on keys it does not declare (`ARGV[2..]`):
/// only the check of each `redis.call` stands between them and the user.
pub const ARGV_SCRIPT: &str =
    "for i = 2, #ARGV do redis.call(ARGV[1], ARGV[i]) end return #ARGV - 1";

/// Longest pause between batches: the admin's, the others'.
pub const ADMIN_THINK_NS_MAX: u64 = 2_000_000;
pub const USER_THINK_NS_MAX: u64 = 300_000;
/// Data requests per batch at most.
pub const BATCH_REQUESTS_MAX: usize = 4;

/// A user's name.
pub fn user_name(user: usize) -> Vec<u8> {
    debug_assert!(user < USERS_COUNT);
    format!("acl-u{user}").into_bytes()
}

/// A user's password (the admin always sets this one).
pub fn user_password(user: usize) -> Vec<u8> {
    format!("pw-acl-u{user}").into_bytes()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Admin,
    Data,
    Subscriber,
}

pub struct Acl {
    client: u32,
    role: Role,
    /// The admin has defined every user once.
    users_created: bool,
    /// The current connection authenticated (or tried to).
    authed: bool,
    /// The subscriber switched the current connection to RESP3.
    hello_sent: bool,
    /// Requests that need a unique tag (values, payloads) so far.
    tags_count: u64,
}

impl Acl {
    pub fn new(client: u32) -> Acl {
        let role = match client % ROLES_COUNT {
            0 => Role::Admin,
            3 => Role::Subscriber,
            _ => Role::Data,
        };
        Acl {
            client,
            role,
            users_created: false,
            authed: false,
            hello_sent: false,
            tags_count: 0,
        }
    }

    fn tag(&mut self) -> Vec<u8> {
        self.tags_count += 1;
        format!("acl:{}.{}", self.client, self.tags_count).into_bytes()
    }

    fn admin_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        if !self.users_created {
            self.users_created = true;
            for user in 0..USERS_COUNT {
                batch.push(rules::define_user(rng, user));
            }
            return;
        }
        let user = rng.gen_range(0..USERS_COUNT);
        batch.push(match rng.gen_range(0..100) {
            0..=49 => rules::define_user(rng, user),
            50..=84 => rules::change_user(rng, user),
            85..=89 => vec![b"ACL".to_vec(), b"DELUSER".to_vec(), user_name(user)],
            90..=94 => vec![b"ACL".to_vec(), b"SAVE".to_vec()],
            _ => vec![b"ACL".to_vec(), b"LOAD".to_vec()],
        });
    }

    fn auth(rng: &mut ChaCha8Rng, hello: Option<&[u8]>) -> Request {
        let user = rng.gen_range(0..USERS_COUNT);
        let (name, password) = (user_name(user), user_password(user));
        match hello {
            Some(protover) => vec![
                b"HELLO".to_vec(),
                protover.to_vec(),
                b"AUTH".to_vec(),
                name,
                password,
            ],
            None => vec![b"AUTH".to_vec(), name, password],
        }
    }

    fn data_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        if !self.authed || rng.gen_ratio(1, 8) {
            self.authed = true;
            let hello = rng.gen_bool(0.3).then_some(&b"2"[..]);
            batch.push(Self::auth(rng, hello));
        }
        for _ in 0..rng.gen_range(1..=BATCH_REQUESTS_MAX) {
            let tag = self.tag();
            requests::data_request(rng, &tag, batch);
        }
    }

    fn subscriber_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        if !self.hello_sent {
            self.hello_sent = true;
            batch.push(vec![b"HELLO".to_vec(), b"3".to_vec()]);
        }
        if !self.authed {
            self.authed = true;
            batch.push(Self::auth(rng, None));
        }
        for _ in 0..rng.gen_range(1..=2) {
            let tag = self.tag();
            batch.push(requests::subscription_request(rng, &tag));
        }
    }
}

impl Workload for Acl {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::Acl
    }

    fn next_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        match self.role {
            Role::Admin => self.admin_batch(rng, batch),
            Role::Data => self.data_batch(rng, batch),
            Role::Subscriber => self.subscriber_batch(rng, batch),
        }
        debug_assert!(!batch.is_empty() && batch.len() <= super::BATCH_REQUESTS_MAX);
    }

    fn takes_messages(&self) -> bool {
        self.role == Role::Subscriber
    }

    fn on_connect(&mut self) {
        self.authed = false;
        self.hello_sent = false;
    }

    fn think_ns(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        match self.role {
            Role::Admin => rng.gen_range(0..=ADMIN_THINK_NS_MAX),
            _ => rng.gen_range(0..=USER_THINK_NS_MAX),
        }
    }
}
