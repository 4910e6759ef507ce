//! Access: no execution ran a command, touched a key or delivered a
//! message outside the permissions its user had at that moment.
//!
//! The checker keeps its own small ACL evaluator (Redis 7.0's rules, not
//! the engine's `acl` module) over the `ACL SETUSER`/`DELUSER` requests
//! the `acl` workload sent, applied where they executed, and follows each
//! connection's user through the AUTH and HELLO AUTH requests that
//! executed (their success predicted from the users' passwords and state,
//! and compared with the reply when it came). Then, in execution order:
//!
//! - every command that ran on an `acl` connection, including those EXEC
//!   ran and the `redis.call`s of the workload's two scripts (a script's
//!   calls are recorded under its request, in order; the n-th runs the
//!   script's command on the n-th of its keys), is one the connection's
//!   user was allowed, with its keys and channels;
//! - nothing ran on a connection after its user was deleted (Redis closes
//!   those connections);
//! - no message published after Redis would have closed a subscriber
//!   reached it: DELUSER closes the user's connections, and a SETUSER
//!   closes its subscribers holding a channel or pattern the new rules
//!   refuse, by Redis 7.0's own rule (`ACLKillPubsubClientsIfNeeded`,
//!   shortcut included: a user narrowed from `allchannels` keeps its
//!   subscribers, which then go on receiving what they subscribed to
//!   while it was allowed; each SUBSCRIBE is judged when it ran);
//! - an ACL LOAD answered `+OK` brings back the users of the last ACL
//!   SAVE answered `+OK` (a failed save left the file as it was) and
//!   closes every connection of a named user, as Redis 7.0.15 does;
//! - (the model's part) each request the evaluator denies was refused
//!   with exactly Redis's NOPERM message for the denial it finds (channel
//!   over key over command, across selectors), each NOPERM was a denial,
//!   and each SETUSER, DELUSER and AUTH answered as predicted.
//!
//! Declined (documented): users defined with a rule the evaluator does
//! not know (their connections are not judged), commands outside its
//! table, scripts other than the workload's, the EXEC reply of a command
//! refused at EXEC and the error of a refused `redis.call`, and the
//! deliveries of a connection that authenticated after it subscribed
//! (Redis keeps such subscriptions).

use std::collections::{BTreeMap, BTreeSet};

use seedkv_engine::resp::Frame;

use super::model::index_ops;
use super::model::redis_c::stringmatchlen;
use super::{Checker, RunFacts, Violation};
use crate::check::pipeline::render_args;
use crate::history::{ConnId, History, MessageKind, Op};
use crate::workload::acl::{user_name, ARGV_SCRIPT, KEYS_SCRIPT, USERS_COUNT};

pub struct AccessCheck;

const NAME: &str = "access";
/// The workload whose connections are judged.
const WORKLOAD: &str = "acl";

/// Key access a command asks for (Redis's key-spec `access` reads;
/// `insert`, `delete`, `update` write; `RO` alone asks for neither).
const READ: u8 = 1;
const WRITE: u8 = 2;

/// The commands the evaluator knows, with their ACL categories in Redis
/// 7.0.15 (`ACL CAT <category>` on redis-server).
const COMMANDS: &[(&str, &[&str])] = &[
    ("get", &["read", "string", "fast"]),
    ("set", &["write", "string", "slow"]),
    ("incr", &["write", "string", "fast"]),
    ("mget", &["read", "string", "fast"]),
    ("mset", &["write", "string", "slow"]),
    ("del", &["write", "keyspace", "slow"]),
    ("exists", &["read", "keyspace", "fast"]),
    ("publish", &["pubsub", "fast"]),
    ("subscribe", &["pubsub", "slow"]),
    ("psubscribe", &["pubsub", "slow"]),
    ("unsubscribe", &["pubsub", "slow"]),
    ("punsubscribe", &["pubsub", "slow"]),
    ("eval", &["scripting", "slow"]),
    ("multi", &["transaction", "fast"]),
    ("exec", &["transaction", "slow"]),
    ("discard", &["transaction", "fast"]),
    ("ping", &["connection", "fast"]),
    ("auth", &["connection", "fast"]),
    ("hello", &["connection", "fast"]),
];

/// Commands every user may run (Redis's `no-auth` flag).
const NO_AUTH: &[&str] = &["auth", "hello"];

fn known(name: &str) -> Option<&'static str> {
    COMMANDS.iter().find(|(n, _)| *n == name).map(|(n, _)| *n)
}

/// One selector: the root of a user or one in parentheses.
#[derive(Clone, Debug, Default)]
struct Selector {
    commands: BTreeSet<&'static str>,
    all_keys: bool,
    /// Patterns with the access ([`READ`] | [`WRITE`]) each grants.
    keys: Vec<(Vec<u8>, u8)>,
    all_channels: bool,
    channels: Vec<Vec<u8>>,
}

/// Why a rule was not applied: Redis refuses it (the whole SETUSER fails),
/// or the evaluator does not know it (the user is no longer judged).
#[derive(Debug, PartialEq, Eq)]
enum RuleError {
    Refused,
    Unsupported,
}

impl Selector {
    fn set_commands(&mut self, names: impl Iterator<Item = &'static str>, allow: bool) {
        for name in names {
            match allow {
                true => self.commands.insert(name),
                false => self.commands.remove(name),
            };
        }
    }

    fn add_key(&mut self, pattern: &[u8], access: u8) -> Result<(), RuleError> {
        if self.all_keys {
            return Err(RuleError::Refused);
        }
        if pattern == b"*" && access == READ | WRITE {
            self.all_keys = true;
            self.keys.clear();
        } else {
            self.keys.push((pattern.to_vec(), access));
        }
        Ok(())
    }

    fn apply(&mut self, rule: &[u8]) -> Result<(), RuleError> {
        let all = || COMMANDS.iter().map(|(n, _)| *n);
        let text = std::str::from_utf8(rule).map_err(|_| RuleError::Unsupported)?;
        let lower = text.to_ascii_lowercase();
        match lower.as_str() {
            "allcommands" | "+@all" => self.set_commands(all(), true),
            "nocommands" | "-@all" => self.set_commands(all(), false),
            "allkeys" => {
                self.all_keys = true;
                self.keys.clear();
            }
            "resetkeys" => {
                self.all_keys = false;
                self.keys.clear();
            }
            "allchannels" => {
                self.all_channels = true;
                self.channels.clear();
            }
            "resetchannels" => {
                self.all_channels = false;
                self.channels.clear();
            }
            _ => return self.apply_pattern_or_command(text, &lower),
        }
        Ok(())
    }

    fn apply_pattern_or_command(&mut self, text: &str, lower: &str) -> Result<(), RuleError> {
        if let Some(pattern) = text.strip_prefix('~') {
            return self.add_key(pattern.as_bytes(), READ | WRITE);
        }
        if let Some(rest) = text.strip_prefix('%') {
            let (flags, pattern) = rest.split_once('~').ok_or(RuleError::Unsupported)?;
            let mut access = 0;
            for f in flags.chars() {
                access |= match f.to_ascii_uppercase() {
                    'R' => READ,
                    'W' => WRITE,
                    _ => return Err(RuleError::Unsupported),
                };
            }
            return self.add_key(pattern.as_bytes(), access);
        }
        if let Some(pattern) = text.strip_prefix('&') {
            if self.all_channels {
                return Err(RuleError::Refused);
            }
            if pattern == "*" {
                self.all_channels = true;
                self.channels.clear();
            } else {
                self.channels.push(pattern.as_bytes().to_vec());
            }
            return Ok(());
        }
        let allow = match lower.as_bytes().first() {
            Some(b'+') => true,
            Some(b'-') => false,
            _ => return Err(RuleError::Unsupported),
        };
        let target = &lower[1..];
        if let Some(category) = target.strip_prefix('@') {
            let names = COMMANDS
                .iter()
                .filter(|(_, cats)| cats.contains(&category))
                .map(|(n, _)| *n);
            if names.clone().next().is_none() {
                return Err(RuleError::Unsupported);
            }
            self.set_commands(names, allow);
            return Ok(());
        }
        let name = known(target).ok_or(RuleError::Unsupported)?;
        self.set_commands(std::iter::once(name), allow);
        Ok(())
    }

    fn key_allowed(&self, key: &[u8], access: u8) -> bool {
        self.all_keys
            || self
                .keys
                .iter()
                .any(|(p, a)| a & access == access && stringmatchlen(p, key))
    }

    /// Redis's `ACLCheckChannelAgainstList`: a pattern subscription must
    /// name an allowed pattern literally.
    fn channel_allowed(&self, channel: &[u8], literal: bool) -> bool {
        self.all_channels
            || self.channels.iter().any(|p| match literal {
                true => p == channel,
                false => stringmatchlen(p, channel),
            })
    }

    /// Redis's `ACLSelectorCheckCmd` for a command of the table.
    fn check(&self, call: &Call) -> Result<(), Denied> {
        if !NO_AUTH.contains(&call.name) && !self.commands.contains(call.name) {
            return Err(Denied::Command);
        }
        for &(index, access) in &call.keys {
            if !self.key_allowed(&call.args[index], access) {
                return Err(Denied::Key(index));
            }
        }
        for &(index, literal) in &call.channels {
            if !self.channel_allowed(&call.args[index], literal) {
                return Err(Denied::Channel(index));
            }
        }
        Ok(())
    }
}

/// A user as the evaluator sees it.
#[derive(Clone, Debug, Default)]
struct User {
    on: bool,
    nopass: bool,
    passwords: BTreeSet<Vec<u8>>,
    root: Selector,
    selectors: Vec<Selector>,
}

impl User {
    fn apply(&mut self, rule: &[u8]) -> Result<(), RuleError> {
        let lower = rule.to_ascii_lowercase();
        match lower.as_slice() {
            b"on" => self.on = true,
            b"off" => self.on = false,
            b"nopass" => {
                self.nopass = true;
                self.passwords.clear();
            }
            b"resetpass" => {
                self.nopass = false;
                self.passwords.clear();
            }
            b"clearselectors" => self.selectors.clear(),
            b"reset" => *self = User::default(),
            _ => match rule.first() {
                Some(b'>') => {
                    self.nopass = false;
                    self.passwords.insert(rule[1..].to_vec());
                }
                Some(b'<') => {
                    self.passwords.remove(&rule[1..]);
                }
                Some(b'(') if rule.last() == Some(&b')') => {
                    let mut selector = Selector::default();
                    let inner = &rule[1..rule.len() - 1];
                    for part in inner.split(|&b| b == b' ').filter(|p| !p.is_empty()) {
                        selector.apply(part)?;
                    }
                    self.selectors.push(selector);
                }
                _ => self.root.apply(rule)?,
            },
        }
        Ok(())
    }

    fn auth_ok(&self, password: &[u8]) -> bool {
        self.on && (self.nopass || self.passwords.contains(password))
    }

    /// Redis's `ACLCheckAllUserCommandPerm`: one selector allowing all,
    /// else the worst denial (channel over key over command; the later
    /// argument within a kind).
    fn check(&self, call: &Call) -> Result<(), Denied> {
        let mut worst: Option<Denied> = None;
        for selector in std::iter::once(&self.root).chain(&self.selectors) {
            match selector.check(call) {
                Ok(()) => return Ok(()),
                Err(d) => {
                    if worst.is_none_or(|w| d.rank() > w.rank()) {
                        worst = Some(d);
                    }
                }
            }
        }
        Err(worst.unwrap_or(Denied::Command))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Denied {
    Command,
    Key(usize),
    Channel(usize),
}

impl Denied {
    fn rank(self) -> (u8, usize) {
        match self {
            Denied::Command => (1, 0),
            Denied::Key(i) => (2, i),
            Denied::Channel(i) => (4, i),
        }
    }

    /// The NOPERM error of a refused request (Redis's `processCommand`).
    fn message(self, name: &str) -> String {
        match self {
            Denied::Command => {
                format!("NOPERM this user has no permissions to run the '{name}' command")
            }
            Denied::Key(_) => {
                "NOPERM this user has no permissions to access one of the keys used as arguments"
                    .to_string()
            }
            Denied::Channel(_) => "NOPERM this user has no permissions to access one of the channels used as arguments".to_string(),
        }
    }
}

/// A command of the table with its keys and channels, as Redis's key
/// specs and `getChannelsFromCommand` find them.
struct Call<'a> {
    name: &'static str,
    args: &'a [Vec<u8>],
    /// Argument index and the access asked for.
    keys: Vec<(usize, u8)>,
    /// Argument index, and whether it is a pattern (matched literally).
    channels: Vec<(usize, bool)>,
}

impl<'a> Call<'a> {
    /// `None` for a command outside the table (not judged).
    fn of(args: &'a [Vec<u8>]) -> Option<Call<'a>> {
        let lower = String::from_utf8_lossy(args.first()?).to_ascii_lowercase();
        let name = known(&lower)?;
        let rest = 1..args.len();
        let keys: Vec<(usize, u8)> = match name {
            "get" => vec![(1, READ)],
            "set" => vec![(1, WRITE)],
            "incr" => vec![(1, READ | WRITE)],
            "mget" => rest.clone().map(|i| (i, READ)).collect(),
            "mset" => rest.clone().step_by(2).map(|i| (i, WRITE)).collect(),
            "del" => rest.clone().map(|i| (i, WRITE)).collect(),
            "exists" => rest.clone().map(|i| (i, 0)).collect(),
            // Redis checks EVAL's declared keys for read and write access
            // (`RW access update`; on redis-server 7.0.15 a user without
            // them gets NOPERM before the script runs); each `redis.call`
            // is judged again as its own command.
            "eval" => {
                let count: usize = std::str::from_utf8(args.get(2)?).ok()?.parse().ok()?;
                (3..3 + count).map(|i| (i, READ | WRITE)).collect()
            }
            _ => Vec::new(),
        };
        let channels = match name {
            "publish" => vec![(1, false)],
            "subscribe" => rest.map(|i| (i, false)).collect(),
            "psubscribe" => rest.map(|i| (i, true)).collect(),
            _ => Vec::new(),
        };
        let indices = keys.iter().map(|k| k.0).chain(channels.iter().map(|c| c.0));
        if indices.into_iter().any(|i| i >= args.len()) {
            return None;
        }
        Some(Call {
            name,
            args,
            keys,
            channels,
        })
    }
}

/// Who a connection runs as.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ConnUser {
    /// The `default` user, which the workload never changes: every
    /// permission.
    Default,
    Named(Vec<u8>),
    /// Not judged (see the module's declined cases).
    Unknown,
    /// Redis closed it (its user was deleted, or a SETUSER took away a
    /// channel it is subscribed to, as [`State::setuser_kills`] decides):
    /// it must run and receive nothing more.
    Closed(Vec<u8>, &'static str),
}

/// A connection's channels and patterns.
type Subscriptions = (BTreeSet<Vec<u8>>, BTreeSet<Vec<u8>>);

/// The users (as [`State::users`] holds them) of each name.
type Users = BTreeMap<Vec<u8>, Option<User>>;

/// What the `aclfile` holds, as far as the replies tell.
#[derive(Clone, Debug)]
enum AclFile {
    /// The users of the last ACL SAVE answered `+OK` (none at first: the
    /// file starts empty, or is absent and every LOAD fails).
    Saved(Users),
    /// A SAVE got no reply: the file holds those users or older ones.
    Unknown,
}

impl Default for AclFile {
    fn default() -> AclFile {
        AclFile::Saved(Users::new())
    }
}

#[derive(Default)]
struct State {
    /// `None`: defined with a rule the evaluator does not know.
    users: Users,
    file: AclFile,
    conns: BTreeMap<ConnId, ConnUser>,
    /// Connections that ran a subscription.
    subscribed: BTreeSet<ConnId>,
    /// What each connection is subscribed to: channels, and patterns.
    subscriptions: BTreeMap<ConnId, Subscriptions>,
    /// Calls recorded so far for each script request.
    script_calls: BTreeMap<(ConnId, u64), usize>,
    /// By payload: the execution index of its PUBLISH and the connections
    /// Redis had closed by then.
    publishes: BTreeMap<Vec<u8>, (usize, BTreeMap<ConnId, ConnUser>)>,
}

fn violation(index: usize, op: &Op, what: String) -> Violation {
    Violation {
        checker: NAME,
        message: format!(
            "execution #{index} (conn {} request {}): `{}`: {what}",
            op.conn,
            op.seq_in_conn,
            render_args(&op.args)
        ),
    }
}

fn reply_of(op: &Op) -> Option<&Frame> {
    op.complete.as_ref().map(|(_, f)| f)
}

fn is_error(frame: &Frame) -> bool {
    matches!(frame, Frame::Error(_))
}

/// The `n`-th call a script of the workload makes: its command on its
/// `n`-th key. `None` for another script.
fn script_call(args: &[Vec<u8>], n: usize) -> Option<Vec<Vec<u8>>> {
    let body = args.get(1)?;
    let count: usize = std::str::from_utf8(args.get(2)?).ok()?.parse().ok()?;
    let (keys, argv) = (args.get(3..3 + count)?, args.get(3 + count..)?);
    let (command, key) = if body == KEYS_SCRIPT.as_bytes() {
        (argv.first()?, keys.get(n)?)
    } else if body == ARGV_SCRIPT.as_bytes() {
        (argv.first()?, argv.get(n + 1)?)
    } else {
        return None;
    };
    Some(vec![command.clone(), key.clone()])
}

impl State {
    fn conn_user(&self, conn: ConnId) -> ConnUser {
        self.conns.get(&conn).cloned().unwrap_or(ConnUser::Default)
    }

    /// The user's definition, or `None` when the connection is not judged.
    fn judged_user(&self, user: &ConnUser) -> Option<&User> {
        match user {
            ConnUser::Named(name) => self.users.get(name)?.as_ref(),
            _ => None,
        }
    }

    /// Whether `args`, run on `conn` now, was allowed.
    fn judge(
        &self,
        index: usize,
        op: &Op,
        conn: ConnId,
        args: &[Vec<u8>],
    ) -> Result<(), Violation> {
        let user = self.conn_user(conn);
        if let ConnUser::Closed(name, why) = &user {
            return Err(violation(
                index,
                op,
                format!(
                    "`{}` ran on a connection of user {} after {why} (Redis closes it)",
                    render_args(args),
                    String::from_utf8_lossy(name)
                ),
            ));
        }
        let (Some(u), Some(call)) = (self.judged_user(&user), Call::of(args)) else {
            return Ok(());
        };
        match u.check(&call) {
            Ok(()) => Ok(()),
            Err(denied) => Err(violation(index, op, format!(
                "`{}` ran as user {} although its permissions refuse it ({denied:?}; the user: {u:?})",
                render_args(args),
                String::from_utf8_lossy(match &user {
                    ConnUser::Named(n) => n,
                    _ => b"?",
                })
            ))),
        }
    }

    /// A request refused before running: its error is the NOPERM the
    /// evaluator predicts, word for word, exactly when the evaluator
    /// denies it. Redis checks ACLs right after the command's lookup and
    /// NOAUTH (`processCommand`), and the workload sends no unknown
    /// command, wrong arity or unauthenticated request, so a denied
    /// request has no other error to get; an allowed one may be refused
    /// for another reason (OOM, BUSY), never NOPERM. A refusal without an
    /// error reply (a command queued, then refused at EXEC) is declined.
    fn check_refusal(&self, index: usize, op: &Op) -> Result<(), Violation> {
        let Some(Frame::Error(text)) = reply_of(op) else {
            return Ok(());
        };
        let noperm = text.starts_with(b"NOPERM");
        let user = self.conn_user(op.conn);
        if user == ConnUser::Default {
            return match noperm {
                true => Err(violation(
                    index,
                    op,
                    "the default user was refused".to_string(),
                )),
                false => Ok(()),
            };
        }
        let (Some(u), Some(call)) = (self.judged_user(&user), Call::of(&op.args)) else {
            return Ok(());
        };
        let expected = match u.check(&call) {
            Ok(()) if noperm => {
                return Err(violation(
                    index,
                    op,
                    "refused with NOPERM, but its user may run it".to_string(),
                ))
            }
            Ok(()) => return Ok(()),
            Err(denied) => denied.message(call.name),
        };
        if text.as_slice() != expected.as_bytes() {
            return Err(violation(
                index,
                op,
                format!(
                    "replied `{}`, expected `{expected}`",
                    String::from_utf8_lossy(text)
                ),
            ));
        }
        Ok(())
    }

    /// AUTH or HELLO ... AUTH: the connection's user changes when the
    /// predicted outcome is a success; the reply must agree.
    fn authenticate(
        &mut self,
        index: usize,
        op: &Op,
        name: &[u8],
        password: &[u8],
    ) -> Result<(), Violation> {
        let outcome = match self.users.get(name) {
            None => Some(false),
            Some(None) => None,
            Some(Some(u)) => Some(u.auth_ok(password)),
        };
        if let (Some(ok), Some(reply)) = (outcome, reply_of(op)) {
            if ok == is_error(reply) {
                return Err(violation(
                    index,
                    op,
                    format!(
                        "authentication predicted to {}, replied {reply:?}",
                        if ok { "succeed" } else { "fail" }
                    ),
                ));
            }
        }
        let user = match outcome {
            Some(false) => return Ok(()),
            // A subscriber that changes user keeps its subscriptions.
            _ if self.subscribed.contains(&op.conn) => ConnUser::Unknown,
            Some(true) => ConnUser::Named(name.to_vec()),
            None => ConnUser::Unknown,
        };
        self.conns.insert(op.conn, user);
        Ok(())
    }

    fn setuser(&mut self, index: usize, op: &Op) -> Result<(), Violation> {
        let Some(name) = op.args.get(2) else {
            return Ok(());
        };
        let mut user = match self.users.get(name) {
            Some(None) => return Ok(()),
            Some(Some(u)) => u.clone(),
            None => User::default(),
        };
        let mut result = Ok(());
        for rule in &op.args[3..] {
            result = user.apply(rule);
            if result.is_err() {
                break;
            }
        }
        if let (Ok(()), Some(Some(original))) = (&result, self.users.get(name)) {
            self.setuser_kills(name, original.clone(), &user);
        }
        match result {
            Ok(()) => self.users.insert(name.clone(), Some(user)),
            Err(RuleError::Unsupported) => self.users.insert(name.clone(), None),
            Err(RuleError::Refused) => None,
        };
        if result != Err(RuleError::Unsupported) {
            if let Some(reply) = reply_of(op) {
                if result.is_ok() == is_error(reply) {
                    return Err(violation(
                        index,
                        op,
                        format!("predicted {result:?}, replied {reply:?}"),
                    ));
                }
            }
        }
        Ok(())
    }

    fn deluser(&mut self, index: usize, op: &Op) -> Result<(), Violation> {
        let mut deleted = 0;
        for name in op.args.iter().skip(2) {
            if self.users.remove(name).is_some() {
                deleted += 1;
                for user in self.conns.values_mut() {
                    if *user == ConnUser::Named(name.clone()) {
                        *user = ConnUser::Closed(name.clone(), "its user was deleted");
                    }
                }
            }
        }
        match reply_of(op) {
            Some(Frame::Integer(n)) if *n != deleted => Err(violation(
                index,
                op,
                format!("deleted {deleted} users, replied {n}"),
            )),
            _ => Ok(()),
        }
    }

    /// ACL SAVE: the file holds the users now when the reply says so (a
    /// failed save leaves it as it was).
    fn acl_save(&mut self, op: &Op) {
        match reply_of(op) {
            Some(Frame::Error(_)) => {}
            Some(_) => self.file = AclFile::Saved(self.users.clone()),
            None => self.file = AclFile::Unknown,
        }
    }

    /// ACL LOAD: on `+OK` the users are the file's, and Redis closes every
    /// connection of a named user (it frees all of them, even those loaded
    /// unchanged). Without a reply, nothing about users or their
    /// connections is known any more.
    fn acl_load(&mut self, op: &Op) {
        let loaded = match (reply_of(op), &self.file) {
            (Some(Frame::Error(_)), _) => return,
            (Some(_), AclFile::Saved(users)) => Some(users.clone()),
            _ => None,
        };
        let sure = reply_of(op).is_some();
        self.users = match loaded {
            Some(users) => users,
            None => self
                .users
                .keys()
                .cloned()
                .chain((0..USERS_COUNT).map(user_name))
                .map(|name| (name, None))
                .collect(),
        };
        for user in self.conns.values_mut() {
            if let ConnUser::Named(name) = user {
                *user = match sure {
                    true => ConnUser::Closed(name.clone(), "an ACL LOAD replaced its user"),
                    false => ConnUser::Unknown,
                };
            }
        }
    }

    fn publish(&mut self, index: usize, args: &[Vec<u8>]) {
        let Some(payload) = args.get(2) else { return };
        let closed = self
            .conns
            .iter()
            .filter(|(_, user)| matches!(user, ConnUser::Closed(..)))
            .map(|(&conn, user)| (conn, user.clone()))
            .collect();
        self.publishes.insert(payload.clone(), (index, closed));
    }

    /// Redis 7.0's `ACLKillPubsubClientsIfNeeded` after `name` changed
    /// from `original` to `new`: nothing if a selector of `new` allows
    /// every channel, or if every channel pattern of `original` is, as a
    /// string, one of `new`'s (so narrowing `allchannels`, whose list is
    /// empty, closes no one: Redis's own shortcut); otherwise each
    /// subscriber of the user holding a channel or pattern the new list
    /// refuses is closed.
    fn setuser_kills(&mut self, name: &[u8], original: User, new: &User) {
        let selectors = |u: &User| -> Vec<Selector> {
            std::iter::once(u.root.clone())
                .chain(u.selectors.clone())
                .collect()
        };
        let new_selectors = selectors(new);
        if new_selectors.iter().any(|s| s.all_channels) {
            return;
        }
        let upcoming = Selector {
            channels: new_selectors
                .iter()
                .flat_map(|s| s.channels.clone())
                .collect(),
            ..Selector::default()
        };
        let kept = selectors(&original)
            .iter()
            .flat_map(|s| s.channels.iter())
            .all(|c| upcoming.channels.contains(c));
        if kept {
            return;
        }
        for (conn, user) in self.conns.iter_mut() {
            if *user != ConnUser::Named(name.to_vec()) {
                continue;
            }
            let Some((channels, patterns)) = self.subscriptions.get(conn) else {
                continue;
            };
            let refused = patterns.iter().any(|p| !upcoming.channel_allowed(p, true))
                || channels.iter().any(|c| !upcoming.channel_allowed(c, false));
            if refused {
                *user = ConnUser::Closed(name.to_vec(), "a SETUSER took a channel it held");
            }
        }
    }

    /// A subscription change that ran on `conn`.
    fn subscription(&mut self, conn: ConnId, name: &str, args: &[Vec<u8>]) {
        let (channels, patterns) = self.subscriptions.entry(conn).or_default();
        let (set, add) = match name {
            "subscribe" => (channels, true),
            "unsubscribe" => (channels, false),
            "psubscribe" => (patterns, true),
            _ => (patterns, false),
        };
        if !add && args.len() == 1 {
            set.clear();
        }
        for a in &args[1..] {
            match add {
                true => set.insert(a.clone()),
                false => set.remove(a),
            };
        }
    }

    /// What ran changes users, connections' users and subscriptions.
    fn effects(
        &mut self,
        index: usize,
        op: &Op,
        name: &str,
        args: &[Vec<u8>],
    ) -> Result<(), Violation> {
        match name {
            "auth" if args.len() == 3 => self.authenticate(index, op, &args[1], &args[2])?,
            "hello" if args.len() == 5 && args[2].eq_ignore_ascii_case(b"AUTH") => {
                self.authenticate(index, op, &args[3], &args[4])?
            }
            "acl|setuser" => self.setuser(index, op)?,
            "acl|deluser" => self.deluser(index, op)?,
            "subscribe" | "psubscribe" | "unsubscribe" | "punsubscribe" => {
                if matches!(name, "subscribe" | "psubscribe") {
                    self.subscribed.insert(op.conn);
                }
                self.subscription(op.conn, name, args);
            }
            "publish" => self.publish(index, args),
            _ => {}
        }
        Ok(())
    }

    /// No message published after Redis closed a connection reached it.
    fn check_deliveries(&self, history: &History) -> Result<(), Violation> {
        for d in &history.pubsub.deliveries {
            let Some((index, access)) = self.publishes.get(&d.payload) else {
                continue;
            };
            let name = match (d.kind, &d.pattern) {
                (MessageKind::PMessage, Some(pattern)) => pattern,
                _ => &d.channel,
            };
            let refused = match access.get(&d.conn) {
                Some(ConnUser::Closed(user, why)) => Some((user, *why)),
                _ => None,
            };
            if let Some((user, why)) = refused {
                return Err(Violation {
                    checker: NAME,
                    message: format!(
                        "conn {} received {:?} on `{}` (payload {}) published at execution #{index}, when Redis had closed it (its user {}: {why})",
                        d.conn,
                        d.kind,
                        String::from_utf8_lossy(name),
                        String::from_utf8_lossy(&d.payload),
                        String::from_utf8_lossy(user)
                    ),
                });
            }
        }
        Ok(())
    }
}

impl Checker for AccessCheck {
    fn name(&self) -> &'static str {
        NAME
    }

    fn check(&self, history: &History, _facts: &RunFacts) -> Result<(), Violation> {
        if !history.ops.iter().any(|op| op.workload == WORKLOAD) {
            return Ok(());
        }
        let ops = index_ops(history);
        let mut state = State::default();
        for (index, exec) in history.executions.iter().enumerate() {
            let Some(op) = ops.of_execution(index, exec) else {
                continue;
            };
            // Any workload's ACL SAVE and LOAD change what the file or the
            // users are (the `acl` workload's, when the run has a file).
            if matches!(exec.name, "acl|save" | "acl|load") {
                match exec.name {
                    "acl|save" => state.acl_save(op),
                    _ => state.acl_load(op),
                }
                continue;
            }
            if op.workload != WORKLOAD {
                continue;
            }
            if exec.name.is_empty() {
                state.check_refusal(index, op)?;
                continue;
            }
            let is_script = op.args[0].eq_ignore_ascii_case(b"EVAL");
            let args = if is_script && exec.name != "eval" {
                let n = state
                    .script_calls
                    .entry((exec.conn, exec.seq_in_conn))
                    .or_default();
                let call = script_call(&op.args, *n);
                *n += 1;
                match call {
                    Some(call) => call,
                    None => continue,
                }
            } else {
                op.args.clone()
            };
            let top = exec.name.split('|').next().unwrap_or(exec.name);
            if !args[0].eq_ignore_ascii_case(top.as_bytes()) {
                // Not the request its op describes: not judged.
                continue;
            }
            state.judge(index, op, exec.conn, &args)?;
            state.effects(index, op, exec.name, &args)?;
        }
        state.check_deliveries(history)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(rules: &[&str]) -> User {
        let mut u = User::default();
        for r in rules {
            u.apply(r.as_bytes()).expect("rule applies");
        }
        u
    }

    fn check(u: &User, args: &[&str]) -> Result<(), Denied> {
        let args: Vec<Vec<u8>> = args.iter().map(|a| a.as_bytes().to_vec()).collect();
        u.check(&Call::of(&args).expect("known command"))
    }

    #[test]
    fn keys_commands_and_channels_as_redis_judges_them() {
        let u = user(&[
            "reset",
            "on",
            ">pw",
            "+@read",
            "+mset",
            "~acl:a:*",
            "%R~acl:b:*",
            "&acl:ch:[ab]",
        ]);
        assert!(u.auth_ok(b"pw") && !u.auth_ok(b"other"));
        assert_eq!(check(&u, &["GET", "acl:b:0"]), Ok(()));
        assert_eq!(
            check(&u, &["MSET", "acl:a:0", "1", "acl:b:0", "2"]),
            Err(Denied::Key(3))
        );
        assert_eq!(check(&u, &["SET", "acl:a:0", "1"]), Err(Denied::Command));
        assert_eq!(check(&u, &["EXISTS", "acl:b:1"]), Ok(()));
        assert_eq!(
            check(&u, &["PUBLISH", "acl:ch:a", "x"]),
            Err(Denied::Command)
        );
        let u = user(&["+publish", "&acl:ch:[ab]", "(+get ~acl:c:*)"]);
        assert_eq!(
            check(&u, &["PUBLISH", "acl:ch:c", "x"]),
            Err(Denied::Channel(1))
        );
        assert_eq!(check(&u, &["GET", "acl:c:1"]), Ok(()));
        assert!(u.root.channel_allowed(b"acl:ch:[ab]", true));
        assert!(
            !u.root.channel_allowed(b"acl:ch:*", true)
                && u.root.channel_allowed(b"acl:ch:a", false)
        );
    }

    #[test]
    fn incr_wants_one_pattern_granting_both_and_exists_any_pattern() {
        // redis-server 7.0.15's ACL DRYRUN for the same users.
        let u = user(&["+@all", "%W~acl:a:*", "%R~acl:*", "%RW~acl:c:*"]);
        assert_eq!(check(&u, &["INCR", "acl:a:0"]), Err(Denied::Key(1)));
        assert_eq!(check(&u, &["INCR", "acl:c:0"]), Ok(()));
        assert_eq!(check(&u, &["EXISTS", "acl:a:0", "acl:b:1"]), Ok(()));
        let u = user(&["+@all", "%W~acl:a:*"]);
        assert_eq!(check(&u, &["EXISTS", "acl:a:0"]), Ok(()));
        assert_eq!(
            check(&u, &["EXISTS", "acl:a:0", "acl:b:0"]),
            Err(Denied::Key(2))
        );
    }

    #[test]
    fn a_pattern_after_allkeys_refuses_the_setuser() {
        let mut u = user(&["allkeys"]);
        assert_eq!(u.apply(b"~acl:a:*"), Err(RuleError::Refused));
        assert_eq!(u.apply(b"+@dangerous"), Err(RuleError::Unsupported));
    }

    #[test]
    fn script_calls_follow_the_scripts_keys() {
        let args: Vec<Vec<u8>> = ["EVAL", ARGV_SCRIPT, "0", "GET", "acl:a:0", "acl:b:1"]
            .iter()
            .map(|a| a.as_bytes().to_vec())
            .collect();
        assert_eq!(
            script_call(&args, 1),
            Some(vec![b"GET".to_vec(), b"acl:b:1".to_vec()])
        );
        assert_eq!(script_call(&args, 2), None);
    }
}
