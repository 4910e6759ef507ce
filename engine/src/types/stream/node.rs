//! One node of a stream: what Redis keeps as a listpack under a radix-tree
//! key (the node's master ID), mirrored entry for entry.
//!
//! Redis lays a node out as a master entry (`count`, `deleted`, the field
//! names of the node's first entry, a 0 terminator) followed by entries
//! (`flags`, ms and seq deltas from the master ID, the fields unless they
//! are the master's (`SAMEFIELDS`), the values, and `lp-count`). A deleted
//! entry stays in place with its `DELETED` flag until the whole node is
//! freed. The node here keeps the same entries, tombstones included, and
//! the listpack's size in bytes, because both decide where Redis starts a
//! new node, and nodes decide what approximate (`~`) trimming removes and
//! what an RDB holds.

use super::StreamId;
use crate::rdb::listpack::{entry_size_bytes, EMPTY_BYTES};

/// An entry's flags in the listpack.
pub const FLAG_DELETED: u64 = 1 << 0;
pub const FLAG_SAMEFIELDS: u64 = 1 << 1;

/// One entry of a node.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    pub id: StreamId,
    pub deleted: bool,
    /// The entry's field names are the node's master fields: `data` holds
    /// the values alone.
    pub same_fields: bool,
    /// Values (with `same_fields`) or field, value, field, value...,
    /// packed (see [`Packed`]).
    pub data: Packed,
}

/// Byte strings packed end to end in one allocation, each after its
/// length as a LEB128 varint: an entry costs one allocation, however many
/// fields it has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packed {
    bytes: Box<[u8]>,
    count: u32,
}

impl Packed {
    pub fn new<'a>(elements: impl IntoIterator<Item = &'a [u8]>) -> Packed {
        let mut bytes = Vec::new();
        let mut count = 0u32;
        for e in elements {
            let mut n = e.len();
            loop {
                let low = (n & 0x7f) as u8;
                n >>= 7;
                if n == 0 {
                    bytes.push(low);
                    break;
                }
                bytes.push(low | 0x80);
            }
            bytes.extend_from_slice(e);
            count += 1;
        }
        Packed {
            bytes: bytes.into_boxed_slice(),
            count,
        }
    }

    pub fn len(&self) -> usize {
        self.count as usize
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        let mut at = 0usize;
        (0..self.count).map(move |_| {
            let mut n = 0usize;
            let mut shift = 0;
            loop {
                let b = self.bytes[at];
                at += 1;
                n |= usize::from(b & 0x7f) << shift;
                shift += 7;
                if b & 0x80 == 0 {
                    break;
                }
            }
            let e = &self.bytes[at..at + n];
            at += n;
            e
        })
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.bytes.len()
    }
}

/// A node: the entries from its master ID on, up to the next node's.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub master: StreamId,
    pub master_fields: Box<[Vec<u8>]>,
    /// Entries in ID order, tombstones included.
    pub items: Vec<Item>,
    /// Entries not deleted (the master entry's `count`).
    pub live: usize,
    /// Listpack bytes of the entries (not of the header or master entry).
    items_bytes: usize,
}

fn int_size(v: i64) -> usize {
    entry_size_bytes(v.to_string().as_bytes())
}

impl Item {
    /// The number of field-value pairs.
    pub fn pairs_count(&self) -> usize {
        if self.same_fields {
            self.data.len()
        } else {
            self.data.len() / 2
        }
    }

    /// The listpack elements of this entry in `node`, as Redis writes them.
    fn elements(&self, master: StreamId) -> Vec<Vec<u8>> {
        let mut flags = 0;
        if self.deleted {
            flags |= FLAG_DELETED;
        }
        if self.same_fields {
            flags |= FLAG_SAMEFIELDS;
        }
        let mut out = Vec::with_capacity(self.data.len() + 5);
        out.push(flags.to_string().into_bytes());
        out.push(delta(self.id.ms, master.ms).to_string().into_bytes());
        out.push(delta(self.id.seq, master.seq).to_string().into_bytes());
        let fields = self.pairs_count();
        if !self.same_fields {
            out.push(fields.to_string().into_bytes());
        }
        out.extend(self.data.iter().map(<[u8]>::to_vec));
        out.push(lp_count(fields, self.same_fields).to_string().into_bytes());
        out
    }

    fn size_bytes(&self, master: StreamId) -> usize {
        let fields = self.pairs_count();
        // Flags are 0..3: one byte and its backlen.
        let mut n = 2;
        n += int_size(delta(self.id.ms, master.ms));
        n += int_size(delta(self.id.seq, master.seq));
        if !self.same_fields {
            n += int_size(fields as i64);
        }
        n += self.data.iter().map(entry_size_bytes).sum::<usize>();
        n + int_size(lp_count(fields, self.same_fields))
    }
}

/// Redis stores `id - master` as an `int64_t` of the unsigned difference.
fn delta(v: u64, base: u64) -> i64 {
    v.wrapping_sub(base) as i64
}

/// The entry's `lp-count`: the elements before it.
fn lp_count(fields: usize, same_fields: bool) -> i64 {
    let mut n = fields as i64 + 3;
    if !same_fields {
        n += fields as i64 + 1;
    }
    n
}

impl Node {
    /// A node whose first entry is `id` with `pairs` (field, value...).
    pub fn new(id: StreamId, pairs: &[Vec<u8>]) -> Node {
        let master_fields: Box<[Vec<u8>]> = pairs.iter().step_by(2).cloned().collect();
        let mut node = Node {
            master: id,
            master_fields,
            items: Vec::new(),
            live: 0,
            items_bytes: 0,
        };
        node.push(id, pairs);
        node
    }

    /// Entries, tombstones included (the master entry's `count + deleted`).
    pub fn total(&self) -> usize {
        self.items.len()
    }

    /// The listpack's size in bytes (`lpBytes`).
    pub fn lp_bytes(&self) -> usize {
        let deleted = self.items.len() - self.live;
        EMPTY_BYTES
            + int_size(self.live as i64)
            + int_size(deleted as i64)
            + int_size(self.master_fields.len() as i64)
            + self
                .master_fields
                .iter()
                .map(|f| entry_size_bytes(f))
                .sum::<usize>()
            + int_size(0)
            + self.items_bytes
    }

    /// Appends an entry (its ID above every one here).
    pub fn push(&mut self, id: StreamId, pairs: &[Vec<u8>]) {
        debug_assert!(self.items.last().is_none_or(|i| i.id < id));
        let same_fields = pairs.len() / 2 == self.master_fields.len()
            && pairs
                .iter()
                .step_by(2)
                .zip(self.master_fields.iter())
                .all(|(a, b)| a == b);
        let data = if same_fields {
            Packed::new(pairs.iter().skip(1).step_by(2).map(Vec::as_slice))
        } else {
            Packed::new(pairs.iter().map(Vec::as_slice))
        };
        let item = Item {
            id,
            deleted: false,
            same_fields,
            data,
        };
        self.items_bytes += item.size_bytes(self.master);
        self.items.push(item);
        self.live += 1;
    }

    /// The position of the first entry at or after `id`.
    pub fn lower_bound(&self, id: StreamId) -> usize {
        self.items.partition_point(|i| i.id < id)
    }

    /// Marks the live entry at `pos` deleted.
    pub fn mark_deleted(&mut self, pos: usize) {
        let item = &mut self.items[pos];
        debug_assert!(!item.deleted);
        item.deleted = true;
        self.live -= 1;
    }

    /// The ID of the last entry, tombstone or not (`lpGetEdgeStreamID`).
    pub fn last_id(&self) -> StreamId {
        self.items.last().map_or(self.master, |i| i.id)
    }

    /// The field-value pairs of `item` (an entry of this node).
    pub fn pairs<'a>(&'a self, item: &'a Item) -> impl Iterator<Item = (&'a [u8], &'a [u8])> {
        let same = item.same_fields;
        let mut data = item.data.iter();
        let mut fields = self.master_fields.iter();
        (0..item.pairs_count()).map(move |_| {
            let field = if same {
                fields.next().map_or(&[][..], Vec::as_slice)
            } else {
                data.next().unwrap_or_default()
            };
            (field, data.next().unwrap_or_default())
        })
    }

    /// The node's listpack elements, as Redis lays them out (for RDB).
    pub fn lp_elements(&self) -> Vec<Vec<u8>> {
        let deleted = self.items.len() - self.live;
        let mut out = vec![
            self.live.to_string().into_bytes(),
            deleted.to_string().into_bytes(),
            self.master_fields.len().to_string().into_bytes(),
        ];
        out.extend(self.master_fields.iter().cloned());
        out.push(b"0".to_vec());
        for item in &self.items {
            out.extend(item.elements(self.master));
        }
        out
    }

    /// Rebuilds a node from its listpack elements (an RDB's), checking the
    /// layout as Redis's `streamValidateListpackIntegrity` does. `None` when
    /// it is not a valid node.
    pub fn from_lp_elements(master: StreamId, elements: &[Vec<u8>]) -> Option<Node> {
        let int = |e: &Vec<u8>| crate::util::parse_i64_strict(e);
        let mut it = elements.iter();
        let live = usize::try_from(int(it.next()?)?).ok()?;
        let deleted = usize::try_from(int(it.next()?)?).ok()?;
        let nfields = usize::try_from(int(it.next()?)?).ok()?;
        if nfields > elements.len() {
            return None;
        }
        let mut master_fields = Vec::with_capacity(nfields);
        for _ in 0..nfields {
            master_fields.push(it.next()?.clone());
        }
        if int(it.next()?)? != 0 {
            return None;
        }
        let mut node = Node {
            master,
            master_fields: master_fields.into_boxed_slice(),
            items: Vec::new(),
            live: 0,
            items_bytes: 0,
        };
        while let Some(flags) = it.next() {
            let flags = u64::try_from(int(flags)?).ok()?;
            let ms = master.ms.wrapping_add(int(it.next()?)? as u64);
            let seq = master.seq.wrapping_add(int(it.next()?)? as u64);
            let id = StreamId::new(ms, seq);
            let same_fields = flags & FLAG_SAMEFIELDS != 0;
            let fields = if same_fields {
                nfields
            } else {
                usize::try_from(int(it.next()?)?).ok()?
            };
            let n = if same_fields { fields } else { fields * 2 };
            if n > elements.len() {
                return None;
            }
            let mut data = Vec::with_capacity(n);
            for _ in 0..n {
                data.push(it.next()?.clone());
            }
            if int(it.next()?)? != lp_count(fields, same_fields) {
                return None;
            }
            if node.items.last().is_some_and(|i| i.id >= id) || id < master {
                return None;
            }
            let item = Item {
                id,
                deleted: flags & FLAG_DELETED != 0,
                same_fields,
                data: Packed::new(data.iter().map(Vec::as_slice)),
            };
            node.items_bytes += item.size_bytes(master);
            if !item.deleted {
                node.live += 1;
            }
            node.items.push(item);
        }
        (node.live == live && node.items.len() - live == deleted && live > 0).then_some(node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rdb::listpack;

    fn v(items: &[&str]) -> Vec<Vec<u8>> {
        items.iter().map(|s| s.as_bytes().to_vec()).collect()
    }

    #[test]
    fn size_matches_the_encoded_listpack_and_round_trips() {
        let mut node = Node::new(StreamId::new(5, 1), &v(&["f", "1", "g", "xx"]));
        node.push(StreamId::new(5, 2), &v(&["f", "2", "g", "yy"]));
        node.push(StreamId::new(9, 0), &v(&["other", "3"]));
        node.mark_deleted(1);
        let elements = node.lp_elements();
        let blob = listpack::encode(elements.iter().map(Vec::as_slice));
        assert_eq!(node.lp_bytes(), blob.len());
        let back = Node::from_lp_elements(node.master, &listpack::decode(&blob).unwrap()).unwrap();
        assert_eq!(back, node);
        assert!(node.items[0].same_fields && !node.items[2].same_fields);
    }
}
