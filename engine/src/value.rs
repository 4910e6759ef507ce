//! The values stored under keys.

/// A stored value. Later data types (lists, hashes, sets, sorted sets) add
/// variants here; every command checks the variant and replies `WRONGTYPE`
/// on a mismatch.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Str(RString),
}

/// The error every command gives when a key holds the wrong kind of value.
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

impl Value {
    /// The name `TYPE` reports.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
        }
    }

    /// The name `OBJECT ENCODING` reports.
    pub fn encoding_name(&self) -> &'static str {
        match self {
            Value::Str(s) => s.encoding_name(),
        }
    }

    /// Elements a free of this value visits: the unit of work for `DEL`,
    /// `UNLINK` and background freeing.
    pub fn free_cost_units(&self) -> u64 {
        match self {
            Value::Str(s) => 1 + (s.bytes.len() as u64 >> 16),
        }
    }

    /// Approximate heap bytes held (for INFO memory and MEMORY USAGE).
    pub fn size_bytes(&self) -> usize {
        match self {
            Value::Str(s) => s.bytes.capacity() + 16,
        }
    }

    pub fn as_str(&self) -> Option<&RString> {
        match self {
            Value::Str(s) => Some(s),
        }
    }
}

/// A string value. Redis picks an encoding from the content (`int` for
/// integers up to 20 characters, `embstr` up to 44 bytes, otherwise `raw`)
/// and a string modified in place (`APPEND`, `SETRANGE`) is always `raw`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RString {
    pub bytes: Vec<u8>,
    /// Set once the string was modified in place.
    pub raw: bool,
}

/// Redis's OBJ_ENCODING_EMBSTR_SIZE_LIMIT.
pub const EMBSTR_SIZE_LIMIT_BYTES: usize = 44;

impl RString {
    pub fn new(bytes: Vec<u8>) -> Self {
        RString { bytes, raw: false }
    }

    pub fn encoding_name(&self) -> &'static str {
        if self.raw {
            return "raw";
        }
        if self.bytes.len() <= 20 && crate::util::parse_i64_strict(&self.bytes).is_some() {
            "int"
        } else if self.bytes.len() <= EMBSTR_SIZE_LIMIT_BYTES {
            "embstr"
        } else {
            "raw"
        }
    }
}
