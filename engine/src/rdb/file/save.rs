//! Writing a keyspace as an RDB file (`rdbSaveRio`), streamed through a
//! sink in fixed-size chunks.

use super::{opcode, MAGIC, REDIS_VERSION};
use crate::config::MaxmemoryPolicy;
use crate::db::{Db, Keyspace};
use crate::lru::{Access, LRU_CLOCK_MAX, LRU_CLOCK_RESOLUTION_MS};
use crate::rdb::codec::{put_len, put_string, CRC64};
use crate::rdb::object;

/// The size of every chunk handed to the sink but the last.
pub const CHUNK_BYTES: usize = 64 * 1024;

/// The CRC64 as a static, so that a running digest can borrow it.
static CRC: crc::Crc<u64, crc::Table<16>> = CRC64;

/// What a save needs besides the keyspace: the host's clock and the
/// configuration that shapes the bytes.
#[derive(Clone, Copy, Debug)]
pub struct SaveOptions {
    /// Wall-clock time of the save: `ctime` (in seconds), and the reference
    /// for each key's LRU idle time and LFU decay.
    pub now_ms: u64,
    /// `rdbcompression`: LZF for strings longer than 20 bytes.
    pub compress: bool,
    /// `rdbchecksum`: a CRC64 after EOF, or eight zero bytes.
    pub checksum: bool,
    /// The `aof-base` aux field: set when the file is the RDB preamble of an
    /// AOF base file (`aof-use-rdb-preamble`).
    pub aof_base: bool,
    /// The `used-mem` aux field (Redis writes `zmalloc_used_memory()`).
    pub used_mem_bytes: u64,
    /// Under an LRU policy each key carries its idle time (IDLE), under an
    /// LFU policy its counter (FREQ), as `rdbSaveKeyValuePair` does.
    pub maxmemory_policy: MaxmemoryPolicy,
    /// `lfu-decay-time`: the counter written is the decayed one.
    pub lfu_decay_time_min: u32,
    /// The replication aux fields (`repl-stream-db`, `repl-id`,
    /// `repl-offset`), written when the saver is in a replication chain
    /// (Redis's `rdbPopulateSaveInfo`), never for an AOF preamble.
    pub repl: Option<ReplSaveInfo>,
}

/// Where the saver's replication stream stands: what a restarted replica
/// offers its primary in PSYNC, and what a restarted primary keeps as its
/// previous history (`replid2`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplSaveInfo {
    /// The database the stream had selected last.
    pub stream_db: u64,
    /// The replication id (40 hex characters).
    pub replid: [u8; 40],
    /// `master_repl_offset`.
    pub offset: u64,
}

/// What a save wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SaveReport {
    pub keys_written: u64,
    /// Keys written with an EXPIRETIME_MS (including already expired
    /// ones: Redis 7.0 writes every key it holds, and a loading master
    /// drops the expired ones).
    pub expires_written: u64,
    pub bytes_written: u64,
    /// One per key, per element serialized and per 64 bytes written.
    pub work_units: u64,
    /// The checksum written after EOF (0 when `rdbchecksum no`).
    pub crc64: u64,
}

/// Streams `keyspace` as a complete RDB file through `sink`, in chunks of
/// [`CHUNK_BYTES`] (the last one shorter). The bytes are those
/// redis-server 7.0.15 writes for a SAVE of the same data, except for the
/// order of keys within a database (Redis's is its dict's, seeded at
/// random per process) and the `ctime` and `used-mem` values.
///
/// `functions` are the function libraries' records, written after the aux
/// fields and before the keys, as `rdbSaveFunctions` does (see
/// `scripting::functions::Functions::rdb_records`).
///
/// Memory held is one chunk plus the serialization of the largest value.
pub fn write_file(
    keyspace: &Keyspace,
    functions: &[u8],
    opts: &SaveOptions,
    sink: &mut dyn FnMut(&[u8]),
) -> SaveReport {
    let mut out = ChunkedOut {
        buf: Vec::with_capacity(CHUNK_BYTES * 2),
        digest: CRC.digest(),
        sink,
        written_bytes: 0,
    };
    let mut report = SaveReport::default();
    out.buf.extend_from_slice(MAGIC);
    write_aux_fields(&mut out.buf, opts);
    out.buf.extend_from_slice(functions);
    let access = access_at(opts);
    for db in keyspace.dbs.iter().filter(|db| !db.is_empty()) {
        write_db(&mut out, db, opts, &access, &mut report);
    }
    out.buf.push(opcode::EOF);
    out.flush_full_chunks();
    let crc64 = if opts.checksum {
        out.digest.update(&out.buf);
        std::mem::replace(&mut out.digest, CRC.digest()).finalize()
    } else {
        0
    };
    out.buf.extend_from_slice(&crc64.to_le_bytes());
    out.emit_rest();
    report.bytes_written = out.written_bytes;
    report.work_units += out.written_bytes / 64;
    report.crc64 = crc64;
    report
}

/// The output buffer: full chunks go to the sink (and the running CRC) as
/// soon as there are any; the tail waits for more.
struct ChunkedOut<'a> {
    buf: Vec<u8>,
    digest: crc::Digest<'static, u64, crc::Table<16>>,
    sink: &'a mut dyn FnMut(&[u8]),
    written_bytes: u64,
}

impl ChunkedOut<'_> {
    fn flush_full_chunks(&mut self) {
        let full = self.buf.len() / CHUNK_BYTES * CHUNK_BYTES;
        if full == 0 {
            return;
        }
        for chunk in self.buf[..full].chunks_exact(CHUNK_BYTES) {
            self.digest.update(chunk);
            (self.sink)(chunk);
        }
        self.written_bytes += full as u64;
        // One move of the tail per flush, however many chunks went out.
        self.buf.drain(..full);
    }

    /// Emits what is left (already in the CRC, or after it), in chunks.
    fn emit_rest(&mut self) {
        for chunk in self.buf.chunks(CHUNK_BYTES) {
            (self.sink)(chunk);
        }
        self.written_bytes += self.buf.len() as u64;
        self.buf.clear();
    }
}

/// `rdbSaveInfoAuxFields`: the replication fields go between `used-mem`
/// and `aof-base`, as Redis writes them.
fn write_aux_fields(out: &mut Vec<u8>, opts: &SaveOptions) {
    let ctime_s = (opts.now_ms / 1000).to_string();
    let used_mem = opts.used_mem_bytes.to_string();
    let aof_base = if opts.aof_base { "1" } else { "0" };
    let mut fields: Vec<(&str, &[u8])> = vec![
        ("redis-ver", REDIS_VERSION.as_bytes()),
        ("redis-bits", b"64"),
        ("ctime", ctime_s.as_bytes()),
        ("used-mem", used_mem.as_bytes()),
    ];
    let repl = opts
        .repl
        .map(|r| (r.stream_db.to_string(), r.replid, r.offset.to_string()));
    if let Some((db, replid, offset)) = &repl {
        fields.push(("repl-stream-db", db.as_bytes()));
        fields.push(("repl-id", replid));
        fields.push(("repl-offset", offset.as_bytes()));
    }
    fields.push(("aof-base", aof_base.as_bytes()));
    for (key, value) in fields {
        out.push(opcode::AUX);
        put_string(out, key.as_bytes(), opts.compress);
        put_string(out, value, opts.compress);
    }
}

/// The clocks a key's IDLE and FREQ are measured against at `now_ms`.
fn access_at(opts: &SaveOptions) -> Access {
    let unix_s = opts.now_ms / LRU_CLOCK_RESOLUTION_MS;
    Access {
        lru_clock: (unix_s & u64::from(LRU_CLOCK_MAX)) as u32,
        lfu_minutes: ((unix_s / 60) & 0xFFFF) as u32,
        lfu: crate::lru::is_lfu(opts.maxmemory_policy),
        touch: false,
        lfu_log_factor: 10,
        lfu_decay_time_min: opts.lfu_decay_time_min,
    }
}

fn write_db(
    out: &mut ChunkedOut<'_>,
    db: &Db,
    opts: &SaveOptions,
    access: &Access,
    report: &mut SaveReport,
) {
    out.buf.push(opcode::SELECTDB);
    put_len(&mut out.buf, db.id as u64);
    out.buf.push(opcode::RESIZEDB);
    put_len(&mut out.buf, db.len() as u64);
    put_len(&mut out.buf, db.expires.len() as u64);
    let save_lru = matches!(
        opts.maxmemory_policy,
        MaxmemoryPolicy::AllkeysLru | MaxmemoryPolicy::VolatileLru
    );
    let any_expires = !db.expires.is_empty();
    for (key, value) in db.keys.iter() {
        if let Some(when_ms) = any_expires.then(|| db.get_expire(key)).flatten() {
            out.buf.push(opcode::EXPIRETIME_MS);
            out.buf.extend_from_slice(&when_ms.to_le_bytes());
            report.expires_written += 1;
        }
        let meta = || db.access_meta(key).unwrap_or(access.lru_clock);
        if save_lru {
            out.buf.push(opcode::IDLE);
            put_len(&mut out.buf, access.idle_ms(meta()) / 1000);
        } else if access.lfu {
            out.buf
                .extend_from_slice(&[opcode::FREQ, access.lfu_counter(meta())]);
        }
        out.buf.push(object::kind_of(value));
        put_string(&mut out.buf, key, opts.compress);
        report.work_units += 1 + object::save_payload(&mut out.buf, value, opts.compress);
        report.keys_written += 1;
        out.flush_full_chunks();
    }
}
