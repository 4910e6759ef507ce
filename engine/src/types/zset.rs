//! Sorted sets. Owned by the sorted-sets work; this is the shared skeleton.

/// A sorted set: `listpack` while small, `skiplist` past the limits.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ZSet {
    members: Vec<(f64, Box<[u8]>)>,
}

impl ZSet {
    pub fn len(&self) -> usize {
        self.members.len()
    }
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }
    pub fn encoding_name(&self) -> &'static str {
        "listpack"
    }
    pub fn free_cost_units(&self) -> u64 {
        self.members.len() as u64
    }
    pub fn size_bytes(&self) -> usize {
        self.members.len() * 24
    }
}
