//! What the users ask: string commands on one or several `acl:` keys,
//! MULTI/EXEC blocks, the two scripts of [`super`], PUBLISH, and one-channel
//! subscription changes. Keys and channels are drawn from every group, so
//! a user's patterns allow some and refuse the others.
//!
//! The commands ask for every kind of key access Redis's key specs know:
//! GET and MGET read (`RO access`), SET, MSET and DEL write, INCR reads and
//! writes (`RW access update`: one pattern must grant both), and EXISTS
//! asks for neither (`RO` alone: any pattern matching the key will do,
//! `%W~` included).

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{
    Request, ARGV_SCRIPT, CHANNELS, KEYS_PER_GROUP, KEYS_SCRIPT, KEY_GROUPS, SUB_PATTERNS,
};

/// Keys a multi-key command or a script names at most.
const KEYS_PER_REQUEST_MAX: usize = 3;
/// Commands a MULTI block queues at most.
const MULTI_COMMANDS_MAX: usize = 3;
/// What the scripts run on each key: reads for the undeclared keys of
/// [`ARGV_SCRIPT`] (the reference model forgets only declared keys), reads
/// and writes for the declared ones.
const ARGV_SCRIPT_COMMANDS: &[&[u8]] = &[b"GET"];
const KEYS_SCRIPT_COMMANDS: &[&[u8]] = &[b"GET", b"DEL"];

fn key(rng: &mut ChaCha8Rng) -> Vec<u8> {
    let group = KEY_GROUPS[rng.gen_range(0..KEY_GROUPS.len())];
    format!("acl:{group}:{}", rng.gen_range(0..KEYS_PER_GROUP)).into_bytes()
}

fn keys(rng: &mut ChaCha8Rng) -> Vec<Vec<u8>> {
    (0..rng.gen_range(1..=KEYS_PER_REQUEST_MAX))
        .map(|_| key(rng))
        .collect()
}

fn channel(rng: &mut ChaCha8Rng) -> Vec<u8> {
    CHANNELS[rng.gen_range(0..CHANNELS.len())].to_vec()
}

/// A value.
fn value(rng: &mut ChaCha8Rng) -> Vec<u8> {
    rng.gen_range(0..1000u32).to_string().into_bytes()
}

/// One command on keys, or (if `publish`) a PUBLISH of `tag` (payloads
/// are unique in a run, which the pub/sub and access checkers rely on).
/// No PUBLISH is queued in MULTI: the pub/sub checker takes a PUBLISH's
/// reply for its count of receivers.
fn command(rng: &mut ChaCha8Rng, tag: &[u8], publish: bool) -> Request {
    let with = |name: &[u8], args: Vec<Vec<u8>>| {
        let mut r = vec![name.to_vec()];
        r.extend(args);
        r
    };
    let draw_max = if publish { 100 } else { 85 };
    match rng.gen_range(0..draw_max) {
        0..=19 => with(b"GET", vec![key(rng)]),
        20..=33 => with(b"SET", vec![key(rng), value(rng)]),
        34..=45 => with(b"MGET", keys(rng)),
        46..=52 => with(b"INCR", vec![key(rng)]),
        53..=59 => with(b"EXISTS", keys(rng)),
        60..=72 => {
            let mut args = Vec::new();
            for k in keys(rng) {
                args.push(k);
                args.push(value(rng));
            }
            with(b"MSET", args)
        }
        73..=84 => with(b"DEL", keys(rng)),
        _ => with(b"PUBLISH", vec![channel(rng), tag.to_vec()]),
    }
}

/// A script of [`super`]: its keys declared (EVAL's own check covers
/// them) or passed as arguments (only `redis.call`'s check does).
fn script(rng: &mut ChaCha8Rng) -> Request {
    let keys = keys(rng);
    let declared = rng.gen_bool(0.5);
    let (body, commands) = match declared {
        true => (KEYS_SCRIPT, KEYS_SCRIPT_COMMANDS),
        false => (ARGV_SCRIPT, ARGV_SCRIPT_COMMANDS),
    };
    let command = commands[rng.gen_range(0..commands.len())].to_vec();
    let mut r = vec![b"EVAL".to_vec(), body.as_bytes().to_vec()];
    if declared {
        r.push(keys.len().to_string().into_bytes());
        r.extend(keys);
        r.push(command);
    } else {
        r.push(b"0".to_vec());
        r.push(command);
        r.extend(keys);
    }
    r
}

/// Appends one data request (a MULTI block is several) to `batch`.
pub(super) fn data_request(rng: &mut ChaCha8Rng, tag: &[u8], batch: &mut Vec<Request>) {
    match rng.gen_range(0..100) {
        0..=69 => batch.push(command(rng, tag, true)),
        70..=84 => batch.push(script(rng)),
        _ => {
            batch.push(vec![b"MULTI".to_vec()]);
            for _ in 0..rng.gen_range(1..=MULTI_COMMANDS_MAX) {
                batch.push(command(rng, tag, false));
            }
            batch.push(vec![b"EXEC".to_vec()]);
        }
    }
}

fn pattern(rng: &mut ChaCha8Rng) -> Vec<u8> {
    SUB_PATTERNS[rng.gen_range(0..SUB_PATTERNS.len())].to_vec()
}

/// One subscription change of one channel or pattern, or a PUBLISH of
/// `tag`: each is answered by one frame, refused or not.
pub(super) fn subscription_request(rng: &mut ChaCha8Rng, tag: &[u8]) -> Request {
    match rng.gen_range(0..100) {
        0..=34 => vec![b"SUBSCRIBE".to_vec(), channel(rng)],
        35..=59 => vec![b"PSUBSCRIBE".to_vec(), pattern(rng)],
        60..=69 => vec![b"UNSUBSCRIBE".to_vec(), channel(rng)],
        70..=79 => vec![b"PUNSUBSCRIBE".to_vec(), pattern(rng)],
        _ => vec![b"PUBLISH".to_vec(), channel(rng), tag.to_vec()],
    }
}
