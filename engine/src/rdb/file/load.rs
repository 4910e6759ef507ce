//! Loading a whole RDB file into a keyspace (`rdbLoadRioWithLoadingCtx`),
//! with Redis 7.0.15's checks and its log lines for every refusal.
//!
//! The file is a slice the caller read whole. Every opcode, element and
//! 64 bytes read is charged as work; nothing is allocated beyond what the
//! bytes present can hold (see [`crate::rdb::codec::Reader`]); a truncated
//! or corrupt file is a [`LoadError`], never a panic.

use super::{opcode, MAGIC};
use crate::db::Keyspace;
use crate::lru::{LRU_CLOCK_MAX, LRU_CLOCK_RESOLUTION_MS};
use crate::rdb::codec::{Reader, CRC64};
use crate::rdb::object::{self, Build};
use crate::rdb::{kind, Corrupt, RDB_VERSION};
use crate::value::Value;

pub use super::error::{LoadError, LoadErrorKind};

/// The reason [`Reader`] gives when the bytes run out.
const SHORT_READ: Corrupt = Corrupt("unexpected end of payload");
/// `RDB_MODULE_OPCODE_UINT`: what a module aux field's "when" must be.
const MODULE_OPCODE_UINT: u64 = 2;
/// Characters of module type names (`ModuleTypeNameCharSet`).
const MODULE_NAME_CHARSET: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// How to load.
#[derive(Clone, Copy, Debug)]
pub struct LoadOptions {
    /// Wall-clock time of the load: keys whose expiry is before it are
    /// dropped when `drop_expired`.
    pub now_ms: u64,
    /// `rdbchecksum`: verify the CRC64 after EOF (unless the file says 0,
    /// meaning it was saved without one).
    pub checksum: bool,
    /// A master loading its dump drops keys already expired; the RDB
    /// preamble of an AOF (`RDBFLAGS_AOF_PREAMBLE`) keeps them, because the
    /// AOF tail that follows was written against that exact keyspace.
    pub drop_expired: bool,
    /// The encoding thresholds and hash seed collections are built with.
    pub build: Build,
}

/// The aux fields Redis acts on or logs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuxFields {
    pub redis_ver: Option<String>,
    /// Unix seconds the file was written (`ctime`).
    pub ctime_s: Option<i64>,
    pub used_mem_bytes: Option<i64>,
    /// `aof-base`: the file is the base of a multi-part AOF.
    pub aof_base: bool,
    /// `aof-preamble` (Redis before 7.0): an AOF tail follows.
    pub aof_preamble: bool,
    /// `repl-id`, when it is 40 characters long (Redis ignores others).
    pub repl_id: Option<String>,
    /// `repl-offset`: the saver's `master_repl_offset` (-1 when absent).
    pub repl_offset: Option<i64>,
    /// `repl-stream-db`: the database the replication stream had selected
    /// (-1 when absent).
    pub repl_stream_db: Option<i64>,
    /// Fields whose name starts with '%', which Redis logs at startup.
    pub info: Vec<(String, String)>,
}

/// What a successful load did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// The file's RDB version (1..=10).
    pub version: u32,
    pub keys_loaded: u64,
    /// Keys dropped because they had expired (`rdb_last_load_keys_expired`).
    pub keys_expired: u64,
    /// Empty collections skipped, as Redis 7.0 skips them.
    pub empty_keys_skipped: u64,
    pub aux: AuxFields,
    /// Whether the stored checksum was 0 ("saved with checksum disabled")
    /// and so not checked.
    pub checksum_skipped: bool,
    /// Bytes of the file up to and including the checksum: an AOF with an
    /// RDB preamble goes on from here.
    pub consumed_bytes: usize,
    pub work_units: u64,
    /// The code of each function library (`RDB_OPCODE_FUNCTION2`), in file
    /// order; the caller loads them (see `scripting::functions`).
    pub functions: Vec<Vec<u8>>,
}

impl LoadReport {
    /// The line Redis logs at the end of a successful load.
    pub fn done_log_line(&self) -> String {
        match self.empty_keys_skipped {
            0 => format!(
                "Done loading RDB, keys loaded: {}, keys expired: {}.",
                self.keys_loaded, self.keys_expired
            ),
            skipped => format!(
                "Done loading RDB, keys loaded: {}, keys expired: {}, empty keys skipped: {skipped}.",
                self.keys_loaded, self.keys_expired
            ),
        }
    }
}

/// Attributes that opcodes set for the key that follows them.
#[derive(Clone, Copy, Default)]
struct KeyAttrs {
    expire_ms: Option<i64>,
    lru_idle_s: Option<u64>,
    lfu_freq: Option<u8>,
}

/// The reader over the whole file, turning the codec's complaints into
/// [`LoadError`]s that say where.
struct Cursor<'a> {
    r: Reader<'a>,
    file_bytes: usize,
}

impl<'a> Cursor<'a> {
    fn offset_bytes(&self) -> usize {
        self.file_bytes - self.r.remaining()
    }

    fn fail(&self, kind: LoadErrorKind) -> LoadError {
        LoadError {
            kind,
            offset_bytes: self.offset_bytes(),
        }
    }

    /// Runs one read of the codec; running out of bytes is a short read,
    /// anything else it refuses is corrupt.
    fn read<T>(
        &mut self,
        f: impl FnOnce(&mut Reader<'a>) -> crate::rdb::Result<T>,
    ) -> Result<T, LoadError> {
        f(&mut self.r).map_err(|e| match e {
            SHORT_READ => self.fail(LoadErrorKind::ShortRead),
            e => self.fail(LoadErrorKind::Corrupt(e)),
        })
    }
}

/// Where the loop is: the database keys go to, and what the opcodes
/// since the last key said about the next one.
struct Position {
    db_index: usize,
    attrs: KeyAttrs,
}

/// Loads the RDB file `bytes` into `keyspace`, which should be empty
/// (a key already there is a duplicate). Keys take their LRU/LFU word from
/// the keyspace's access state, which the caller sets to `now` first.
///
/// Bytes after the checksum are not looked at: see
/// [`LoadReport::consumed_bytes`].
pub fn load_file(
    bytes: &[u8],
    opts: &LoadOptions,
    keyspace: &mut Keyspace,
) -> Result<LoadReport, LoadError> {
    let mut c = Cursor {
        r: Reader::new(bytes),
        file_bytes: bytes.len(),
    };
    let mut report = LoadReport {
        version: read_header(&mut c)?,
        ..LoadReport::default()
    };
    let mut at = Position {
        db_index: 0,
        attrs: KeyAttrs::default(),
    };
    // Each pass reads at least one byte, so the loop ends within the file.
    loop {
        c.r.work_units += 1;
        match c.read(Reader::byte)? {
            opcode::EOF => break,
            op => read_entry(&mut c, op, &mut at, opts, keyspace, &mut report)?,
        }
    }
    read_checksum(&mut c, bytes, opts, &mut report)?;
    report.consumed_bytes = c.offset_bytes();
    report.work_units += c.r.work_units;
    Ok(report)
}

/// The magic: "REDIS" and a version from 1 to 10, read as C's `atoi`.
fn read_header(c: &mut Cursor<'_>) -> Result<u32, LoadError> {
    let header = c.read(|r| r.take(MAGIC.len()))?;
    if &header[..5] != b"REDIS" {
        return Err(c.fail(LoadErrorKind::Signature));
    }
    let version = strtoll(&header[5..]);
    if !(1..=i64::from(RDB_VERSION)).contains(&version) {
        return Err(c.fail(LoadErrorKind::Version(version)));
    }
    Ok(version as u32)
}

/// One opcode and its operands, or one key and its value (`op` is then the
/// value's type byte).
fn read_entry(
    c: &mut Cursor<'_>,
    op: u8,
    at: &mut Position,
    opts: &LoadOptions,
    keyspace: &mut Keyspace,
    report: &mut LoadReport,
) -> Result<(), LoadError> {
    match op {
        opcode::EXPIRETIME => {
            let seconds = i32::from_le_bytes(c.read(take_array)?);
            at.attrs.expire_ms = Some(i64::from(seconds) * 1000);
        }
        opcode::EXPIRETIME_MS => at.attrs.expire_ms = Some(i64::from_le_bytes(c.read(take_array)?)),
        opcode::FREQ => at.attrs.lfu_freq = Some(c.read(Reader::byte)?),
        opcode::IDLE => at.attrs.lru_idle_s = Some(c.read(Reader::length)?),
        opcode::SELECTDB => {
            let id = c.read(Reader::length)?;
            let databases = keyspace.dbs.len();
            at.db_index = match usize::try_from(id) {
                Ok(i) if i < databases => i,
                _ => return Err(c.fail(LoadErrorKind::DbIndex { databases })),
            };
        }
        // Only a sizing hint: nothing is reserved on a file's word.
        opcode::RESIZEDB => {
            c.read(Reader::length)?;
            c.read(Reader::length)?;
        }
        opcode::AUX => {
            let key = c.read(Reader::string)?;
            let value = c.read(Reader::string)?;
            read_aux(&mut report.aux, &key, &value);
        }
        opcode::MODULE_AUX => {
            let id = c.read(Reader::length)?;
            let when_opcode = c.read(Reader::length)?;
            c.read(Reader::length)?;
            if when_opcode != MODULE_OPCODE_UINT {
                return Err(c.fail(LoadErrorKind::Corrupt(Corrupt("bad when_opcode"))));
            }
            let name = module_type_name(id);
            return Err(c.fail(LoadErrorKind::ModuleAux { name }));
        }
        opcode::FUNCTION2 => report.functions.push(c.read(Reader::string)?),
        // Redis 7.0's release candidates wrote libraries this way; 7.0
        // refuses them too.
        opcode::FUNCTION => return Err(c.fail(LoadErrorKind::Function)),
        value_kind => {
            let key = c.read(Reader::string)?;
            if matches!(value_kind, kind::MODULE | kind::MODULE_2) {
                let name = module_type_name(c.read(Reader::length)?);
                return Err(c.fail(LoadErrorKind::ModuleValue { name }));
            }
            match c.read(|r| object::load(r, value_kind, opts.build)) {
                Ok(value) => {
                    let attrs = at.attrs;
                    store(keyspace, at.db_index, key, value, attrs, opts, report)
                        .map_err(|kind| c.fail(kind))?;
                }
                Err(LoadError {
                    kind: LoadErrorKind::Corrupt(object::EMPTY),
                    ..
                }) => report.empty_keys_skipped += 1,
                Err(e) => return Err(e),
            }
            at.attrs = KeyAttrs::default();
        }
    }
    Ok(())
}

/// The CRC64 after EOF (files of version 5 and later), checked unless
/// `rdbchecksum no` or the file says 0 ("saved with checksum disabled").
fn read_checksum(
    c: &mut Cursor<'_>,
    bytes: &[u8],
    opts: &LoadOptions,
    report: &mut LoadReport,
) -> Result<(), LoadError> {
    if report.version < 5 {
        return Ok(());
    }
    let body_end = c.offset_bytes();
    let got = u64::from_le_bytes(c.read(take_array)?);
    if !opts.checksum {
        return Ok(());
    }
    if got == 0 {
        report.checksum_skipped = true;
        return Ok(());
    }
    let expected = CRC64.checksum(&bytes[..body_end]);
    c.r.work_units += body_end as u64 / 64;
    if expected != got {
        return Err(c.fail(LoadErrorKind::Checksum { expected, got }));
    }
    Ok(())
}

/// `N` bytes as an array (a time, a checksum).
fn take_array<const N: usize>(r: &mut Reader<'_>) -> crate::rdb::Result<[u8; N]> {
    Ok(r.take(N)?.try_into().expect("N bytes"))
}

/// Adds one loaded key, or drops it if it has expired (as a master does).
fn store(
    keyspace: &mut Keyspace,
    db_index: usize,
    key: Vec<u8>,
    value: Value,
    attrs: KeyAttrs,
    opts: &LoadOptions,
    report: &mut LoadReport,
) -> Result<(), LoadErrorKind> {
    if opts.drop_expired && attrs.expire_ms.is_some_and(|w| w < opts.now_ms as i64) {
        report.keys_expired += 1;
        return Ok(());
    }
    let databases = keyspace.dbs.len();
    let Some(db) = keyspace.dbs.get_mut(db_index) else {
        // Only a keyspace without databases has no database 0.
        return Err(LoadErrorKind::DbIndex { databases });
    };
    // A duplicate replaces the first value, but fails the whole load.
    if db.set(&key, value, false).is_some() {
        return Err(LoadErrorKind::DuplicateKey { key, db: db_index });
    }
    report.keys_loaded += 1;
    if let Some(when_ms) = attrs.expire_ms {
        // A deadline before the epoch is long past.
        db.set_expire(&key, when_ms.max(0) as u64);
    }
    if let Some(meta) = access_meta(db.access(), attrs) {
        db.set_access_meta(&key, meta);
    }
    Ok(())
}

/// `objectSetLRUOrLFU(val, lfu_freq, lru_idle, lru_clock, 1000)`: under an
/// LFU policy a FREQ sets the counter; otherwise an IDLE sets the LRU clock
/// that long ago (wrapping as the 24-bit clock does).
fn access_meta(access: &crate::lru::Access, attrs: KeyAttrs) -> Option<u32> {
    if access.lfu {
        let freq = attrs.lfu_freq?;
        return Some((access.lfu_minutes << 8) | u32::from(freq));
    }
    // Redis holds the idle time in a long long: a larger one is negative,
    // and ignored.
    let idle_s = i64::try_from(attrs.lru_idle_s?).ok()?;
    let idle_ticks = idle_s.wrapping_mul(1000) / LRU_CLOCK_RESOLUTION_MS as i64;
    let mut at = i64::from(access.lru_clock).wrapping_sub(idle_ticks);
    if at < 0 {
        at = at.wrapping_add(i64::from(LRU_CLOCK_MAX));
    }
    Some(at as u32 & LRU_CLOCK_MAX)
}

fn read_aux(aux: &mut AuxFields, key: &[u8], value: &[u8]) {
    let text = || String::from_utf8_lossy(value).into_owned();
    let int = || strtoll(value);
    if key.first() == Some(&b'%') {
        aux.info
            .push((String::from_utf8_lossy(key).into_owned(), text()));
    } else if key.eq_ignore_ascii_case(b"redis-ver") {
        aux.redis_ver = Some(text());
    } else if key.eq_ignore_ascii_case(b"ctime") {
        aux.ctime_s = Some(int());
    } else if key.eq_ignore_ascii_case(b"used-mem") {
        aux.used_mem_bytes = Some(int());
    } else if key.eq_ignore_ascii_case(b"aof-base") {
        aux.aof_base = int() != 0;
    } else if key.eq_ignore_ascii_case(b"aof-preamble") {
        aux.aof_preamble = int() != 0;
    } else if key.eq_ignore_ascii_case(b"repl-stream-db") {
        aux.repl_stream_db = Some(int());
    } else if key.eq_ignore_ascii_case(b"repl-id") {
        if value.len() == crate::repl::NULL_REPLID.len() {
            aux.repl_id = Some(text());
        }
    } else if key.eq_ignore_ascii_case(b"repl-offset") {
        aux.repl_offset = Some(int());
    }
    // Anything else is skipped, as the AUX contract says.
}

/// `strtoll(s, NULL, 10)` (and `atoi`) without overflow: leading blanks,
/// a sign, then digits up to the first non-digit ("0010" is 10, "00x1" is
/// 0). What Redis makes of the version digits and of an aux number.
fn strtoll(s: &[u8]) -> i64 {
    let s = match s.iter().position(|b| !b.is_ascii_whitespace()) {
        Some(i) => &s[i..],
        None => return 0,
    };
    let (negative, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut v: i64 = 0;
    for &d in digits.iter().take_while(|b| b.is_ascii_digit()) {
        v = v.saturating_mul(10).saturating_add(i64::from(d - b'0'));
    }
    if negative {
        -v
    } else {
        v
    }
}

/// `moduleTypeNameByID`: the nine-character name in a module id's top 54
/// bits.
fn module_type_name(id: u64) -> String {
    let mut name = [0u8; 9];
    let mut bits = id >> 10;
    for c in name.iter_mut().rev() {
        *c = MODULE_NAME_CHARSET[(bits & 63) as usize];
        bits >>= 6;
    }
    String::from_utf8_lossy(&name).into_owned()
}
