//! The values stored under keys.

use crate::types::{Hash, List, Set, Stream, ZSet};

mod rstring;

pub use rstring::RString;

/// A stored value. Every command checks the variant and replies `WRONGTYPE`
/// on a mismatch. Collections are boxed so that a dict entry stays small.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Str(RString),
    List(Box<List>),
    Hash(Box<Hash>),
    Set(Box<Set>),
    ZSet(Box<ZSet>),
    Stream(Box<Stream>),
}

/// The error every command gives when a key holds the wrong kind of value.
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

impl Value {
    /// The name `TYPE` reports.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
            Value::List(_) => "list",
            Value::Hash(_) => "hash",
            Value::Set(_) => "set",
            Value::ZSet(_) => "zset",
            Value::Stream(_) => "stream",
        }
    }

    /// The name `OBJECT ENCODING` reports.
    pub fn encoding_name(&self) -> &'static str {
        match self {
            Value::Str(s) => s.encoding_name(),
            Value::List(l) => l.encoding_name(),
            Value::Hash(h) => h.encoding_name(),
            Value::Set(s) => s.encoding_name(),
            Value::ZSet(z) => z.encoding_name(),
            Value::Stream(s) => s.encoding_name(),
        }
    }

    /// Elements a free of this value visits: the unit of work for `DEL`,
    /// `UNLINK` and background freeing.
    pub fn free_cost_units(&self) -> u64 {
        match self {
            Value::Str(s) => 1 + (s.len() as u64 >> 16),
            Value::List(l) => 1 + l.free_cost_units(),
            Value::Hash(h) => 1 + h.free_cost_units(),
            Value::Set(s) => 1 + s.free_cost_units(),
            Value::ZSet(z) => 1 + z.free_cost_units(),
            Value::Stream(s) => 1 + s.free_cost_units(),
        }
    }

    /// Approximate heap bytes held (for INFO memory and MEMORY USAGE).
    pub fn size_bytes(&self) -> usize {
        match self {
            Value::Str(s) => s.capacity_bytes() + 16,
            Value::List(l) => l.size_bytes(),
            Value::Hash(h) => h.size_bytes(),
            Value::Set(s) => s.size_bytes(),
            Value::ZSet(z) => z.size_bytes(),
            Value::Stream(s) => s.size_bytes(),
        }
    }

    pub fn as_str(&self) -> Option<&RString> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_list_mut(&mut self) -> Option<&mut List> {
        match self {
            Value::List(l) => Some(l),
            _ => None,
        }
    }

    pub fn as_hash_mut(&mut self) -> Option<&mut Hash> {
        match self {
            Value::Hash(h) => Some(h),
            _ => None,
        }
    }

    pub fn as_set_mut(&mut self) -> Option<&mut Set> {
        match self {
            Value::Set(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_zset_mut(&mut self) -> Option<&mut ZSet> {
        match self {
            Value::ZSet(z) => Some(z),
            _ => None,
        }
    }

    pub fn as_stream_mut(&mut self) -> Option<&mut Stream> {
        match self {
            Value::Stream(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_stream(&self) -> Option<&Stream> {
        match self {
            Value::Stream(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_list(&self) -> Option<&List> {
        match self {
            Value::List(l) => Some(l),
            _ => None,
        }
    }

    pub fn as_hash(&self) -> Option<&Hash> {
        match self {
            Value::Hash(h) => Some(h),
            _ => None,
        }
    }

    pub fn as_set(&self) -> Option<&Set> {
        match self {
            Value::Set(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_zset(&self) -> Option<&ZSet> {
        match self {
            Value::ZSet(z) => Some(z),
            _ => None,
        }
    }
}
