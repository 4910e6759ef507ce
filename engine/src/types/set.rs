//! Sets. Owned by the sets work; this is the shared skeleton.

/// A set: `intset` while every member is an integer and the set is small,
/// `hashtable` otherwise.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Set {
    members: Vec<Box<[u8]>>,
}

impl Set {
    pub fn len(&self) -> usize {
        self.members.len()
    }
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }
    pub fn encoding_name(&self) -> &'static str {
        "hashtable"
    }
    pub fn free_cost_units(&self) -> u64 {
        self.members.len() as u64
    }
    pub fn size_bytes(&self) -> usize {
        self.members.len() * 16
    }
}
