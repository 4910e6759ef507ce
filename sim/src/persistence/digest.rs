//! A value's digest, computed the same way from the reference model's
//! value and from what the harness read back from a restarted server:
//! the type, then the parts in a canonical order (a list in order; a
//! hash's fields, a set's members and a sorted set's members sorted),
//! each length-prefixed, through FNV-1a.

/// A value as the digest sees it.
pub enum Canon<'a> {
    Str(&'a [u8]),
    List(Vec<&'a [u8]>),
    /// Field/value pairs in any order.
    Hash(Vec<(&'a [u8], &'a [u8])>),
    /// Members in any order.
    Set(Vec<&'a [u8]>),
    /// Member/score pairs in any order.
    ZSet(Vec<(&'a [u8], f64)>),
}

struct Fnv(u64);

impl Fnv {
    fn part(&mut self, bytes: &[u8]) {
        for b in (bytes.len() as u64).to_le_bytes().iter().chain(bytes) {
            self.0 ^= *b as u64;
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

pub fn digest(value: Canon) -> u64 {
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    match value {
        Canon::Str(s) => {
            h.part(b"string");
            h.part(s);
        }
        Canon::List(items) => {
            h.part(b"list");
            items.iter().for_each(|i| h.part(i));
        }
        Canon::Hash(mut pairs) => {
            h.part(b"hash");
            pairs.sort_unstable();
            for (f, v) in pairs {
                h.part(f);
                h.part(v);
            }
        }
        Canon::Set(mut members) => {
            h.part(b"set");
            members.sort_unstable();
            members.iter().for_each(|m| h.part(m));
        }
        Canon::ZSet(mut pairs) => {
            h.part(b"zset");
            pairs.sort_unstable_by(|a, b| a.0.cmp(b.0));
            for (m, score) in pairs {
                h.part(m);
                // -0 and 0 are one score.
                let score = if score == 0.0 { 0.0 } else { score };
                h.part(&score.to_bits().to_le_bytes());
            }
        }
    }
    h.0
}
