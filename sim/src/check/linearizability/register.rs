//! The register model: what each single-key operation does to a string
//! value (or no key) and replies, and which requests are such operations.

use seedkv_engine::resp::Frame;

use super::{Action, State, NOT_AN_INTEGER, OVERFLOW};
use crate::check::model::redis_c::parse_i64_strict;

/// Applies `action` to `state`: the new state and the reply.
pub(super) fn step(state: &State, action: &Action<'_>) -> (State, Frame) {
    let int = |n: usize| Frame::Integer(n as i64);
    match action {
        Action::Get => (state.clone(), value_frame(state)),
        Action::Set { value, nx, xx, get } => {
            let found = state.is_some();
            let refused = (*nx && found) || (*xx && !found);
            let new = if refused {
                state.clone()
            } else {
                Some(value.to_vec())
            };
            let reply = match (*get, refused) {
                (true, _) => value_frame(state),
                (false, true) => Frame::Null,
                (false, false) => Frame::Simple(b"OK".to_vec()),
            };
            (new, reply)
        }
        Action::SetNx(value) => match state {
            Some(_) => (state.clone(), int(0)),
            None => (Some(value.to_vec()), int(1)),
        },
        Action::Del => (None, int(usize::from(state.is_some()))),
        Action::Exists => (state.clone(), int(usize::from(state.is_some()))),
        Action::IncrBy(by) => {
            let old = match state {
                None => Some(0),
                Some(v) => parse_i64_strict(v),
            };
            match old {
                None => (state.clone(), Frame::Error(NOT_AN_INTEGER.to_vec())),
                Some(old) => match old.checked_add(*by) {
                    None => (state.clone(), Frame::Error(OVERFLOW.to_vec())),
                    Some(new) => (Some(new.to_string().into_bytes()), Frame::Integer(new)),
                },
            }
        }
        Action::Append(suffix) => {
            let mut value = state.clone().unwrap_or_default();
            value.extend_from_slice(suffix);
            let len = value.len();
            (Some(value), int(len))
        }
        Action::GetDel => (None, value_frame(state)),
        Action::Strlen => (state.clone(), int(state.as_ref().map_or(0, Vec::len))),
    }
}

fn value_frame(state: &State) -> Frame {
    match state {
        Some(v) => Frame::Bulk(v.clone()),
        None => Frame::Null,
    }
}

impl Action<'_> {
    pub(super) fn reads_only(&self) -> bool {
        matches!(self, Action::Get | Action::Exists | Action::Strlen)
    }
}

/// Recognises a single-key operation. `Err(true)`: a write the register
/// model cannot follow (TTL options); `Err(false)`: not a single-key form.
pub(super) fn recognise(args: &[Vec<u8>]) -> Result<(&[u8], Action<'_>), bool> {
    let mut name_buffer = crate::check::name_buffer::NameBuffer::default();
    let name = name_buffer.lower(&args[0]);
    let key = args.get(1).ok_or(false)?.as_slice();
    let action = match (name, args.len()) {
        (b"get", 2) => Action::Get,
        (b"set", n) if n >= 3 => {
            let (mut nx, mut xx, mut get) = (false, false, false);
            for opt in &args[3..] {
                match opt.to_ascii_lowercase().as_slice() {
                    b"nx" if !xx => nx = true,
                    b"xx" if !nx => xx = true,
                    b"get" => get = true,
                    // EX, PX, KEEPTTL...: a TTL, or a syntax error.
                    _ => return Err(true),
                }
            }
            Action::Set {
                value: &args[2],
                nx,
                xx,
                get,
            }
        }
        (b"getset", 3) => Action::Set {
            value: &args[2],
            nx: false,
            xx: false,
            get: true,
        },
        (b"setnx", 3) => Action::SetNx(&args[2]),
        (b"del" | b"unlink", 2) => Action::Del,
        (b"exists", 2) => Action::Exists,
        (b"incr", 2) => Action::IncrBy(1),
        (b"decr", 2) => Action::IncrBy(-1),
        (b"incrby", 3) => Action::IncrBy(parse_i64_strict(&args[2]).ok_or(true)?),
        (b"decrby", 3) => match parse_i64_strict(&args[2]) {
            Some(by) if by != i64::MIN => Action::IncrBy(-by),
            _ => return Err(true),
        },
        (b"append", 3) => Action::Append(&args[2]),
        (b"getdel", 2) => Action::GetDel,
        (b"strlen", 2) => Action::Strlen,
        _ => return Err(false),
    };
    Ok((key, action))
}
