//! Hashes. Owned by the hashes work; this is the shared skeleton.

/// A hash: `listpack` while small, `hashtable` past the limits.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Hash {
    pairs: Vec<(Box<[u8]>, Box<[u8]>)>,
}

impl Hash {
    pub fn len(&self) -> usize {
        self.pairs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
    pub fn encoding_name(&self) -> &'static str {
        "listpack"
    }
    pub fn free_cost_units(&self) -> u64 {
        self.pairs.len() as u64
    }
    pub fn size_bytes(&self) -> usize {
        self.pairs.len() * 32
    }
}
