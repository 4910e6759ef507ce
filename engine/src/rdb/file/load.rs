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

/// The reason [`Reader`] gives when the bytes run out.
const SHORT_READ: Corrupt = Corrupt("unexpected end of payload");
/// `loading_process_events_interval_bytes`: Redis's loading progress
/// (the offset its error lines print) moves in steps of this size.
const PROGRESS_STEP_BYTES: usize = 2 * 1024 * 1024;
/// Lines of 7.0.15's rdb.c that its error lines name.
const EOFERR_LINE: u32 = 3249;
const CRC_ERROR_LINE: u32 = 3225;
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

/// Why a file was refused, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError {
    pub kind: LoadErrorKind,
    /// Bytes read when the error was found.
    pub offset_bytes: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoadErrorKind {
    /// Not "REDIS" at the start.
    Signature,
    /// A version this build cannot read (0, garbage, or newer than 10).
    Version(i64),
    /// The bytes ended before the file did.
    ShortRead,
    /// Malformed contents; the reason is ours (Redis reports most of these
    /// as a short read, which is what [`LoadError::log_lines`] says).
    Corrupt(Corrupt),
    /// SELECTDB beyond the databases this server has.
    DbIndex {
        databases: usize,
    },
    /// The same key twice in one database.
    DuplicateKey {
        key: Vec<u8>,
        db: usize,
    },
    /// The CRC64 after EOF disagrees (`expected` is computed, `got` stored,
    /// as Redis names them).
    Checksum {
        expected: u64,
        got: u64,
    },
    /// Module data: seedkv has no modules.
    ModuleAux {
        name: String,
    },
    ModuleValue {
        name: String,
    },
    /// A function library: seedkv has no functions.
    Function,
}

impl LoadError {
    fn at(kind: LoadErrorKind, r: &Reader<'_>, file_bytes: usize) -> LoadError {
        LoadError {
            kind,
            offset_bytes: file_bytes - r.remaining(),
        }
    }

    /// The warning lines redis-server 7.0.15 logs for this failure, in
    /// order (after which it runs redis-check-rdb, or exits).
    pub fn log_lines(&self) -> Vec<String> {
        // Redis prints its loading progress, which advances in 2 MiB steps.
        let progress = self.offset_bytes / PROGRESS_STEP_BYTES * PROGRESS_STEP_BYTES;
        let internal = |line: u32, reason: &str| {
            format!("Internal error in RDB reading offset {progress}, function at rdb.c:{line} -> {reason}")
        };
        let eoferr = || {
            vec![
                "Short read or OOM loading DB. Unrecoverable error, aborting now.".to_string(),
                internal(EOFERR_LINE, "Unexpected EOF reading RDB file"),
            ]
        };
        match &self.kind {
            LoadErrorKind::Signature => vec!["Wrong signature trying to load DB from file".into()],
            LoadErrorKind::Version(v) => vec![format!("Can't handle RDB format version {v}")],
            LoadErrorKind::ShortRead | LoadErrorKind::Corrupt(_) => eoferr(),
            LoadErrorKind::DbIndex { databases } => vec![format!(
                "FATAL: Data file was created with a Redis server configured to handle \
                 more than {databases} databases. Exiting"
            )],
            LoadErrorKind::DuplicateKey { key, db } => vec![
                format!(
                    "RDB has duplicated key '{}' in DB {db}",
                    String::from_utf8_lossy(key)
                ),
                "Duplicated key found in RDB file".into(),
            ],
            LoadErrorKind::Checksum { expected, got } => vec![
                format!(
                    "Wrong RDB checksum expected: ({expected:x}) but got ({got:x}). Aborting now."
                ),
                internal(CRC_ERROR_LINE, "RDB CRC error"),
            ],
            LoadErrorKind::ModuleAux { name } => vec![format!(
                "The RDB file contains AUX module data I can't load: no matching module '{name}'"
            )],
            LoadErrorKind::ModuleValue { name } => vec![format!(
                "The RDB file contains module data I can't load: no matching module type '{name}'"
            )],
            LoadErrorKind::Function => {
                let mut lines = vec!["Failed loading library, functions are not supported".into()];
                lines.extend(eoferr());
                lines
            }
        }
    }
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.log_lines().join(" / "))?;
        if let LoadErrorKind::Corrupt(reason) = &self.kind {
            write!(f, " ({reason} at byte {})", self.offset_bytes)?;
        }
        Ok(())
    }
}

impl std::error::Error for LoadError {}

/// Attributes that opcodes set for the key that follows them.
#[derive(Clone, Copy, Default)]
struct KeyAttrs {
    expire_ms: Option<i64>,
    lru_idle_s: Option<u64>,
    lfu_freq: Option<u8>,
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
    let mut r = Reader::new(bytes);
    let fail = |kind: LoadErrorKind, r: &Reader<'_>| LoadError::at(kind, r, bytes.len());
    let corrupt = |e: Corrupt, r: &Reader<'_>| match e {
        SHORT_READ => fail(LoadErrorKind::ShortRead, r),
        e => fail(LoadErrorKind::Corrupt(e), r),
    };
    let header = r.take(MAGIC.len()).map_err(|e| corrupt(e, &r))?;
    if &header[..5] != b"REDIS" {
        return Err(fail(LoadErrorKind::Signature, &r));
    }
    let version = atoi(&header[5..]);
    if !(1..=i64::from(RDB_VERSION)).contains(&version) {
        return Err(fail(LoadErrorKind::Version(version), &r));
    }
    let mut report = LoadReport {
        version: version as u32,
        ..LoadReport::default()
    };
    let mut attrs = KeyAttrs::default();
    let mut db_index = 0usize;
    // Each pass reads at least one byte, so the loop ends within the file.
    loop {
        r.work_units += 1;
        let op = r.byte().map_err(|e| corrupt(e, &r))?;
        match op {
            opcode::EOF => break,
            opcode::EXPIRETIME => {
                let b: [u8; 4] = take_array(&mut r).map_err(|e| corrupt(e, &r))?;
                attrs.expire_ms = Some(i64::from(i32::from_le_bytes(b)) * 1000);
            }
            opcode::EXPIRETIME_MS => {
                let b: [u8; 8] = take_array(&mut r).map_err(|e| corrupt(e, &r))?;
                attrs.expire_ms = Some(i64::from_le_bytes(b));
            }
            opcode::FREQ => attrs.lfu_freq = Some(r.byte().map_err(|e| corrupt(e, &r))?),
            opcode::IDLE => attrs.lru_idle_s = Some(r.length().map_err(|e| corrupt(e, &r))?),
            opcode::SELECTDB => {
                let id = r.length().map_err(|e| corrupt(e, &r))?;
                let databases = keyspace.dbs.len();
                db_index = match usize::try_from(id) {
                    Ok(i) if i < databases => i,
                    _ => return Err(fail(LoadErrorKind::DbIndex { databases }, &r)),
                };
            }
            // Only a sizing hint: nothing is reserved on a file's word.
            opcode::RESIZEDB => {
                r.length().map_err(|e| corrupt(e, &r))?;
                r.length().map_err(|e| corrupt(e, &r))?;
            }
            opcode::AUX => {
                let key = r.string().map_err(|e| corrupt(e, &r))?;
                let value = r.string().map_err(|e| corrupt(e, &r))?;
                read_aux(&mut report.aux, &key, &value);
            }
            opcode::MODULE_AUX => {
                let id = r.length().map_err(|e| corrupt(e, &r))?;
                let when_opcode = r.length().map_err(|e| corrupt(e, &r))?;
                r.length().map_err(|e| corrupt(e, &r))?;
                if when_opcode != MODULE_OPCODE_UINT {
                    return Err(fail(LoadErrorKind::Corrupt(Corrupt("bad when_opcode")), &r));
                }
                let name = module_type_name(id);
                return Err(fail(LoadErrorKind::ModuleAux { name }, &r));
            }
            opcode::FUNCTION | opcode::FUNCTION2 => {
                return Err(fail(LoadErrorKind::Function, &r));
            }
            value_kind => {
                let key = r.string().map_err(|e| corrupt(e, &r))?;
                if matches!(value_kind, kind::MODULE | kind::MODULE_2) {
                    let id = r.length().map_err(|e| corrupt(e, &r))?;
                    let name = module_type_name(id);
                    return Err(fail(LoadErrorKind::ModuleValue { name }, &r));
                }
                match object::load(&mut r, value_kind, opts.build) {
                    Ok(value) => {
                        store(keyspace, db_index, key, value, attrs, opts, &mut report)
                            .map_err(|kind| fail(kind, &r))?;
                    }
                    Err(object::EMPTY) => report.empty_keys_skipped += 1,
                    Err(e) => return Err(corrupt(e, &r)),
                }
                attrs = KeyAttrs::default();
            }
        }
    }
    let body_end = bytes.len() - r.remaining();
    if version >= 5 {
        let b: [u8; 8] = take_array(&mut r).map_err(|e| corrupt(e, &r))?;
        let got = u64::from_le_bytes(b);
        if opts.checksum {
            if got == 0 {
                report.checksum_skipped = true;
            } else {
                let expected = CRC64.checksum(&bytes[..body_end]);
                r.work_units += body_end as u64 / 64;
                if expected != got {
                    return Err(fail(LoadErrorKind::Checksum { expected, got }, &r));
                }
            }
        }
    }
    report.consumed_bytes = bytes.len() - r.remaining();
    report.work_units += r.work_units;
    Ok(report)
}

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
    let db = &mut keyspace.dbs[db_index];
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
    }
    // Anything else is skipped, as the AUX contract says.
}

/// C's `atoi` on the version digits: leading blanks, a sign, then digits
/// up to the first non-digit ("0010" is 10, "00x1" is 0).
fn atoi(s: &[u8]) -> i64 {
    strtoll(s)
}

/// `strtoll(s, NULL, 10)` without overflow: what Redis makes of an aux
/// number.
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
