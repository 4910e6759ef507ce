//! Per-command statistics, found in O(1) on every call and listed in name
//! order for INFO commandstats / latencystats.
//!
//! Every executed command updates its entry, so the lookup is on the
//! request path: entries are found by the identity of the spec's static name
//! strings (their addresses and lengths, hashed with a fixed hasher), and
//! only a name seen for the first time at a new address is compared by
//! content (two equal literals need not share an address). Listing sorts by
//! the full name's bytes, as the `BTreeMap` this replaces iterated.

use rustc_hash::FxHashMap;

use crate::stats::{CommandName, CommandStats};

/// A name's identity: the addresses and lengths of its two static parts.
/// The empty parent may sit at any address, so it is keyed as 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct NameKey {
    parent_addr: usize,
    parent_len: usize,
    name_addr: usize,
    name_len: usize,
}

impl NameKey {
    fn of(name: &CommandName) -> NameKey {
        let parent_addr = if name.parent.is_empty() {
            0
        } else {
            name.parent.as_ptr() as usize
        };
        NameKey {
            parent_addr,
            parent_len: name.parent.len(),
            name_addr: name.name.as_ptr() as usize,
            name_len: name.name.len(),
        }
    }
}

#[derive(Debug, Default, Clone)]
pub struct CommandStatsTable {
    /// One entry per distinct full name, in first-use order.
    entries: Vec<(CommandName, CommandStats)>,
    /// Name identity -> index into `entries`; several keys may point at one
    /// entry. Never iterated.
    index: FxHashMap<NameKey, usize>,
    /// Name content (`parent`, `name`) -> index into `entries`: finds the
    /// entry of an identity not seen before in O(1). Every engine meets
    /// a few hundred names for the first time, and comparing each with
    /// every entry cost ~1% of a simulated run. Never iterated.
    by_content: FxHashMap<(&'static str, &'static str), usize>,
    /// The last identity found and its index: a pipeline repeats its
    /// command, and comparing four words is cheaper than hashing them.
    /// Entries are never removed, so an index stays valid.
    last: Option<(NameKey, usize)>,
}

impl CommandStatsTable {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn get(&self, name: &CommandName) -> Option<&CommandStats> {
        let slot = match self.index.get(&NameKey::of(name)) {
            Some(&slot) => slot,
            None => *self.by_content.get(&(name.parent, name.name))?,
        };
        Some(&self.entries[slot].1)
    }

    /// The entry for `name`, created empty on first use.
    #[inline]
    pub fn entry(&mut self, name: CommandName) -> &mut CommandStats {
        let key = NameKey::of(&name);
        let slot = match self.last {
            Some((last, slot)) if last == key => slot,
            _ => {
                let slot = match self.index.get(&key) {
                    Some(&slot) => slot,
                    None => self.add_key(key, name),
                };
                self.last = Some((key, slot));
                slot
            }
        };
        debug_assert_eq!(self.entries[slot].0, name);
        &mut self.entries[slot].1
    }

    /// Indexes a name identity not seen before: an existing entry with an
    /// equal name, or a new one.
    #[cold]
    fn add_key(&mut self, key: NameKey, name: CommandName) -> usize {
        let entries = &mut self.entries;
        let slot = *self
            .by_content
            .entry((name.parent, name.name))
            .or_insert_with(|| {
                entries.push((name, CommandStats::default()));
                entries.len() - 1
            });
        debug_assert_eq!(self.entries[slot].0, name);
        self.index.insert(key, slot);
        slot
    }

    /// Entries in full-name order.
    pub fn iter(&self) -> std::vec::IntoIter<(&CommandName, &CommandStats)> {
        let mut sorted: Vec<(&CommandName, &CommandStats)> =
            self.entries.iter().map(|(n, s)| (n, s)).collect();
        sorted.sort_by(|a, b| a.0.cmp(b.0));
        sorted.into_iter()
    }
}

impl<'a> IntoIterator for &'a CommandStatsTable {
    type Item = (&'a CommandName, &'a CommandStats);
    type IntoIter = std::vec::IntoIter<(&'a CommandName, &'a CommandStats)>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_names_at_different_addresses_share_an_entry() {
        let mut t = CommandStatsTable::default();
        let a = String::from("get");
        let b = String::from("get");
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        let (a, b) = (leak(a), leak(b));
        assert_ne!(a.as_ptr(), b.as_ptr());
        t.entry(CommandName::top(a)).calls += 1;
        t.entry(CommandName::top(b)).calls += 1;
        assert_eq!(t.len(), 1);
        assert_eq!(t.get(&CommandName::top("get")).map(|s| s.calls), Some(2));
    }

    #[test]
    fn repeated_and_alternating_names_count_in_their_own_entries() {
        let mut t = CommandStatsTable::default();
        for name in ["incr", "incr", "get", "incr", "get", "get", "get"] {
            t.entry(CommandName::top(name)).calls += 1;
        }
        assert_eq!(t.get(&CommandName::top("incr")).map(|s| s.calls), Some(3));
        assert_eq!(t.get(&CommandName::top("get")).map(|s| s.calls), Some(4));
        assert_eq!(t.len(), 2);
    }

    #[test]
    fn lists_in_full_name_order() {
        let mut t = CommandStatsTable::default();
        for name in ["set", "config|set", "append", "config"] {
            t.entry(CommandName::top(name)).calls += 1;
        }
        let names: Vec<String> = t.iter().map(|(n, _)| n.full()).collect();
        assert_eq!(names, ["append", "config", "config|set", "set"]);
    }
}
