//! The streams command family (t_stream.c): XADD XLEN XRANGE XREVRANGE
//! XDEL XTRIM XSETID, XREAD, and the consumer-group commands XGROUP
//! XREADGROUP XACK XPENDING XCLAIM XAUTOCLAIM XINFO, with Redis 7.0's
//! replies, errors and the order it checks arguments in.
//!
//! The files: `write` (adding, trimming, deleting), `range` (reading by
//! range, and the entry reply every read shares), `read` (XREAD and
//! XREADGROUP, blocking ones included), `groups` (XGROUP), `pending`
//! (XACK XPENDING XCLAIM XAUTOCLAIM), `info` (XINFO).

use crate::cmd::{flags::*, CommandSpec, Ctx, Lookup, WrongType};
use crate::types::stream::{ParsedId, Stream, StreamId};
use crate::value::{Value, WRONGTYPE};

mod groups;
mod info;
mod pending;
mod range;
mod read;
#[cfg(test)]
mod tests;
mod write;

const SYNTAX_ERROR: &str = "ERR syntax error";
const NOT_AN_INTEGER: &str = "ERR value is not an integer or out of range";
const INVALID_ID: &str = "ERR Invalid stream ID specified as stream command argument";

const STREAM: CommandSpec = CommandSpec {
    group: "stream",
    since: "5.0.0",
    first_key: 1,
    last_key: 1,
    key_step: 1,
    ..CommandSpec::DEFAULT
};

const WRITE_FAST: &[&str] = &["write", "stream", "fast"];
const WRITE_SLOW: &[&str] = &["write", "stream", "slow"];
const READ_FAST: &[&str] = &["read", "stream", "fast"];
const READ_SLOW: &[&str] = &["read", "stream", "slow"];

/// XGROUP's subcommands, as a container's.
const XGROUP_SUB: CommandSpec = CommandSpec {
    group: "stream",
    since: "5.0.0",
    first_key: 2,
    last_key: 2,
    key_step: 1,
    ..CommandSpec::DEFAULT
};

pub const XGROUP_SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "xgroup|create",
        arity: -5,
        flags: WRITE | DENYOOM,
        acl_categories: WRITE_SLOW,
        summary: "Create a consumer group.",
        handler: Some(groups::create),
        key_spec_flags: &["RW", "insert"],
        ..XGROUP_SUB
    },
    CommandSpec {
        name: "xgroup|createconsumer",
        arity: 5,
        flags: WRITE | DENYOOM,
        acl_categories: WRITE_SLOW,
        summary: "Create a consumer in a consumer group.",
        since: "6.2.0",
        handler: Some(groups::createconsumer),
        key_spec_flags: &["RW", "insert"],
        ..XGROUP_SUB
    },
    CommandSpec {
        name: "xgroup|delconsumer",
        arity: 5,
        flags: WRITE,
        acl_categories: WRITE_SLOW,
        summary: "Delete a consumer from a consumer group.",
        handler: Some(groups::delconsumer),
        key_spec_flags: &["RW", "delete"],
        ..XGROUP_SUB
    },
    CommandSpec {
        name: "xgroup|destroy",
        arity: 4,
        flags: WRITE,
        acl_categories: WRITE_SLOW,
        summary: "Destroy a consumer group.",
        complexity:
            "O(N) where N is the number of entries in the group's pending entries list (PEL).",
        handler: Some(groups::destroy),
        key_spec_flags: &["RW", "delete"],
        ..XGROUP_SUB
    },
    CommandSpec {
        name: "xgroup|help",
        arity: 2,
        flags: LOADING | STALE,
        acl_categories: &["stream", "slow"],
        summary: "Show helpful text about the different subcommands",
        first_key: 0,
        last_key: 0,
        key_step: 0,
        handler: Some(groups::help),
        ..XGROUP_SUB
    },
    CommandSpec {
        name: "xgroup|setid",
        arity: -5,
        flags: WRITE,
        acl_categories: WRITE_SLOW,
        summary: "Set a consumer group to an arbitrary last delivered ID value.",
        handler: Some(groups::setid),
        key_spec_flags: &["RW", "update"],
        ..XGROUP_SUB
    },
];

pub const XINFO_SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "xinfo|consumers",
        arity: 4,
        flags: READONLY,
        acl_categories: READ_SLOW,
        summary: "List the consumers in a consumer group",
        tips: &["nondeterministic_output"],
        handler: Some(info::consumers),
        ..XGROUP_SUB
    },
    CommandSpec {
        name: "xinfo|groups",
        arity: 3,
        flags: READONLY,
        acl_categories: READ_SLOW,
        summary: "List the consumer groups of a stream",
        handler: Some(info::groups),
        ..XGROUP_SUB
    },
    CommandSpec {
        name: "xinfo|help",
        arity: 2,
        flags: LOADING | STALE,
        acl_categories: &["stream", "slow"],
        summary: "Show helpful text about the different subcommands",
        first_key: 0,
        last_key: 0,
        key_step: 0,
        handler: Some(info::help),
        ..XGROUP_SUB
    },
    CommandSpec {
        name: "xinfo|stream",
        arity: -3,
        flags: READONLY,
        acl_categories: READ_SLOW,
        summary: "Get information about a stream",
        handler: Some(info::stream),
        ..XGROUP_SUB
    },
];

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "xadd",
        arity: -5,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: WRITE_FAST,
        summary: "Appends a new entry to a stream",
        complexity: "O(1) when adding a new entry, O(N) when trimming where N being the number of entries evicted.",
        tips: &["nondeterministic_output"],
        handler: Some(write::xadd),
        key_spec_flags: &["RW", "update"],
        ..STREAM
    },
    CommandSpec {
        name: "xlen",
        arity: 2,
        flags: READONLY | FAST,
        acl_categories: READ_FAST,
        summary: "Return the number of entries in a stream",
        handler: Some(range::xlen),
        key_spec_flags: &["RO"],
        ..STREAM
    },
    CommandSpec {
        name: "xrange",
        arity: -4,
        flags: READONLY | O_N,
        acl_categories: READ_SLOW,
        summary: "Return a range of elements in a stream, with IDs matching the specified IDs interval",
        complexity: "O(N) with N being the number of elements being returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).",
        handler: Some(range::xrange),
        key_spec_flags: &["RO", "access"],
        ..STREAM
    },
    CommandSpec {
        name: "xrevrange",
        arity: -4,
        flags: READONLY | O_N,
        acl_categories: READ_SLOW,
        summary: "Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse order (from greater to smaller IDs) compared to XRANGE",
        complexity: "O(N) with N being the number of elements returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).",
        handler: Some(range::xrevrange),
        key_spec_flags: &["RO", "access"],
        ..STREAM
    },
    CommandSpec {
        name: "xdel",
        arity: -3,
        flags: WRITE | FAST,
        acl_categories: WRITE_FAST,
        summary: "Removes the specified entries from the stream. Returns the number of items actually deleted, that may be different from the number of IDs passed in case certain IDs do not exist.",
        complexity: "O(1) for each single item to delete in the stream, regardless of the stream size.",
        handler: Some(write::xdel),
        key_spec_flags: &["RW", "delete"],
        ..STREAM
    },
    CommandSpec {
        name: "xtrim",
        arity: -4,
        flags: WRITE | O_N,
        acl_categories: WRITE_SLOW,
        summary: "Trims the stream to (approximately if '~' is passed) a certain size",
        complexity: "O(N), with N being the number of evicted entries. Constant times are very small however, since entries are organized in macro nodes containing multiple entries that can be released with a single deallocation.",
        tips: &["nondeterministic_output"],
        handler: Some(write::xtrim),
        key_spec_flags: &["RW", "delete"],
        ..STREAM
    },
    CommandSpec {
        name: "xsetid",
        arity: -3,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: WRITE_FAST,
        summary: "An internal command for replicating stream values",
        handler: Some(write::xsetid),
        key_spec_flags: &["RW", "update"],
        ..STREAM
    },
    CommandSpec {
        name: "xread",
        arity: -4,
        flags: READONLY | BLOCKING | O_N,
        first_key: 0,
        last_key: 0,
        key_step: 0,
        acl_categories: &["read", "stream", "slow", "blocking"],
        summary: "Return never seen elements in multiple streams, with IDs greater than the ones reported by the caller for each stream. Can block.",
        complexity: "For each stream mentioned: O(N) with N being the number of elements being returned, it means that XREAD-ing with a fixed COUNT is O(1). Note that when the BLOCK option is used, XADD will pay O(M) time in order to serve the M clients blocked on the stream getting new data.",
        handler: Some(read::xread),
        key_spec_flags: &["RO", "access"],
        ..STREAM
    },
    CommandSpec {
        name: "xreadgroup",
        arity: -7,
        flags: WRITE | BLOCKING | O_N,
        first_key: 0,
        last_key: 0,
        key_step: 0,
        acl_categories: &["write", "stream", "slow", "blocking"],
        summary: "Return new entries from a stream using a consumer group, or access the history of the pending entries for a given consumer. Can block.",
        complexity: "For each stream mentioned: O(M) with M being the number of elements returned. If M is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1). On the other side when XREADGROUP blocks, XADD will pay the O(N) time in order to serve the N clients blocked on the stream getting new data.",
        handler: Some(read::xreadgroup),
        key_spec_flags: &["RW", "access", "update"],
        ..STREAM
    },
    CommandSpec {
        name: "xack",
        arity: -4,
        flags: WRITE | FAST,
        acl_categories: WRITE_FAST,
        summary: "Marks a pending message as correctly processed, effectively removing it from the pending entries list of the consumer group. Return value of the command is the number of messages successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL.",
        complexity: "O(1) for each message ID processed.",
        handler: Some(pending::xack),
        key_spec_flags: &["RW", "update"],
        ..STREAM
    },
    CommandSpec {
        name: "xpending",
        arity: -3,
        flags: READONLY | O_N,
        acl_categories: READ_SLOW,
        summary: "Return information and entries from a stream consumer group pending entries list, that are messages fetched but never acknowledged.",
        complexity: "O(N) with N being the number of elements returned, so asking for a small fixed number of entries per call is O(1). O(M), where M is the total number of entries scanned when used with the IDLE filter. When the command returns just the summary and the list of consumers is small, it runs in O(1) time; otherwise, an additional O(N) time for iterating every consumer.",
        tips: &["nondeterministic_output"],
        handler: Some(pending::xpending),
        key_spec_flags: &["RO", "access"],
        ..STREAM
    },
    CommandSpec {
        name: "xclaim",
        arity: -6,
        flags: WRITE | FAST,
        acl_categories: WRITE_FAST,
        summary: "Changes (or acquires) ownership of a message in a consumer group, as if the message was delivered to the specified consumer.",
        complexity: "O(log N) with N being the number of messages in the PEL of the consumer group.",
        tips: &["nondeterministic_output"],
        handler: Some(pending::xclaim),
        key_spec_flags: &["RW", "update"],
        ..STREAM
    },
    CommandSpec {
        name: "xautoclaim",
        arity: -6,
        flags: WRITE | FAST,
        acl_categories: WRITE_FAST,
        summary: "Changes (or acquires) ownership of messages in a consumer group, as if the messages were delivered to the specified consumer.",
        since: "6.2.0",
        complexity: "O(1) if COUNT is small.",
        tips: &["nondeterministic_output"],
        handler: Some(pending::xautoclaim),
        key_spec_flags: &["RW", "update"],
        ..STREAM
    },
    CommandSpec {
        name: "xgroup",
        arity: -2,
        acl_categories: &["slow"],
        summary: "A container for consumer groups commands",
        complexity: "Depends on subcommand.",
        subcommands: XGROUP_SUBCOMMANDS,
        ..CommandSpec::DEFAULT
    },
    CommandSpec {
        name: "xinfo",
        arity: -2,
        acl_categories: &["slow"],
        summary: "A container for stream introspection commands",
        complexity: "Depends on subcommand.",
        group: "stream",
        since: "5.0.0",
        subcommands: XINFO_SUBCOMMANDS,
        ..CommandSpec::DEFAULT
    },
];

/// Looks `key` up as a stream (a [`Lookup::Read`] miss raises `keymiss`);
/// `Err` when it holds another type (the caller replies WRONGTYPE).
fn lookup_stream<'c>(
    ctx: &'c mut Ctx,
    key: &[u8],
    mode: Lookup,
) -> Result<Option<&'c mut Stream>, ()> {
    match ctx.lookup_as_for(key, Value::as_stream_mut, mode) {
        Ok(s) => Ok(s),
        Err(WrongType) => Err(()),
    }
}

/// Replies the error of a failed stream lookup.
fn wrongtype(ctx: &mut Ctx) {
    ctx.error(WRONGTYPE);
}

/// `streamParseIDOrReply`: `-`, `+`, `ms` (seq `missing_seq`) or `ms-seq`.
fn parse_id(arg: &[u8], missing_seq: u64) -> Result<StreamId, &'static str> {
    StreamId::parse(arg, missing_seq, false, false)
        .map(|p| p.id)
        .ok_or(INVALID_ID)
}

/// `streamParseStrictIDOrReply`: as [`parse_id`] without `-` and `+`.
fn parse_strict_id(arg: &[u8], missing_seq: u64) -> Result<StreamId, &'static str> {
    StreamId::parse(arg, missing_seq, true, false)
        .map(|p| p.id)
        .ok_or(INVALID_ID)
}

/// XADD's ID: strict, and `ms-*` allowed.
fn parse_add_id(arg: &[u8]) -> Result<ParsedId, &'static str> {
    StreamId::parse(arg, 0, true, true).ok_or(INVALID_ID)
}

/// `getLongLongFromObjectOrReply` with the generic message.
fn parse_i64(arg: &[u8]) -> Result<i64, &'static str> {
    crate::util::parse_i64_strict(arg).ok_or(NOT_AN_INTEGER)
}

/// Redis compares option words as C strings.
fn is_word(arg: &[u8], word: &str) -> bool {
    crate::commands::lists::c_str(arg).eq_ignore_ascii_case(word.as_bytes())
}
