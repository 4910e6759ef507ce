//! Lists. Owned by the lists work; this is the shared skeleton.

use std::collections::VecDeque;

/// A list (Redis 7.0 reports every list as `quicklist`).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct List {
    items: VecDeque<Box<[u8]>>,
}

impl List {
    pub fn len(&self) -> usize {
        self.items.len()
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    pub fn encoding_name(&self) -> &'static str {
        "quicklist"
    }
    pub fn free_cost_units(&self) -> u64 {
        self.items.len() as u64
    }
    pub fn size_bytes(&self) -> usize {
        self.items.len() * 16
    }
}
