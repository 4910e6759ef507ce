//! The engine's memory estimate, shared by INFO memory, MEMORY STATS and
//! USAGE, and eviction: a fixed startup size, the dicts' tables, a fixed
//! size per entry and the clients' buffers.

use crate::cmd::Ctx;

/// Bytes INFO counts per bucket of a keyspace dict table.
pub const BUCKET_BYTES: usize = 8;

/// Bytes INFO counts per dict entry besides the value itself: the entry,
/// the key's header and a typical short key (Redis's dictEntry + sds).
pub const ENTRY_OVERHEAD_BYTES: usize = 48;

/// Bytes INFO counts for an empty server (Redis 7.0 reports about 860 KB
/// of `used_memory_startup`).
pub const USED_MEMORY_STARTUP_BYTES: u64 = 860_000;

/// What INFO memory reports, in bytes.
pub struct MemoryReport {
    /// `used_memory`: the host allocator's count when the host measures
    /// (the real server), else the engine's estimate.
    pub used_bytes: u64,
    /// `used_memory_dataset`: keys, values, expiry entries and dict tables.
    pub dataset_bytes: u64,
    /// `mem_clients_normal`: client structs and their buffers.
    pub clients_bytes: u64,
    /// Keys visited to compute it (the work INFO memory is charged).
    pub keys_visited: u64,
}

/// The engine's estimate of the dataset: every value's `size_bytes` (an
/// O(1) running figure each type keeps) plus the dicts' own tables, entries
/// and key bytes. Visits every key: INFO memory is O(keys) here.
pub fn memory_report(ctx: &Ctx) -> MemoryReport {
    memory_report_of(ctx.server, ctx.clients)
}

/// [`memory_report`] from the server and client table alone (eviction
/// measures memory before any command context exists).
pub fn memory_report_of(
    server: &crate::server::Server,
    clients: &crate::client::Clients,
) -> MemoryReport {
    let mut keys_visited = 0u64;
    let dataset_bytes: u64 = server
        .keyspace
        .dbs
        .iter()
        .map(|db| {
            let values: usize = db.keys.iter().map(|(_, v)| v.size_bytes()).sum();
            keys_visited += db.keys.len() as u64;
            let (e0, e1) = db.expires.table_sizes();
            let expires = (e0 + e1) * BUCKET_BYTES
                + db.expires.len() * (std::mem::size_of::<u64>() + ENTRY_OVERHEAD_BYTES);
            (db.keys.memory_estimate_bytes() + values + expires) as u64
        })
        .sum();
    let clients_bytes: u64 = clients
        .values()
        .map(|c| {
            (crate::client::CLIENT_STRUCT_BYTES
                + c.output_capacity_bytes()
                + c.parser.buffered_bytes()) as u64
        })
        .sum();
    let estimate = USED_MEMORY_STARTUP_BYTES + dataset_bytes + clients_bytes;
    let used_bytes = server.allocated_bytes.unwrap_or(estimate);
    MemoryReport {
        used_bytes,
        dataset_bytes: dataset_bytes.min(used_bytes),
        clients_bytes,
        keys_visited,
    }
}
