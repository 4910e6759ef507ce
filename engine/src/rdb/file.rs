//! A whole RDB file (`rdbSaveRio` / `rdbLoadRio`): the `REDIS0010` header,
//! aux fields, each database's keys with their expiries, `EOF` and the
//! CRC64 of everything before it.
//!
//! Interim version, enough for the storage flows; the full format (IDLE,
//! FREQ, every opcode, Redis's log lines) replaces it.

use super::codec::{put_len, put_string, Reader, CRC64};
use super::object::{self, Build};
use super::{Corrupt, RDB_VERSION};
use crate::config::MaxmemoryPolicy;
use crate::db::Keyspace;
use crate::types::Limits;

const OP_AUX: u8 = 250;
const OP_RESIZEDB: u8 = 251;
const OP_EXPIRETIME_MS: u8 = 252;
const OP_SELECTDB: u8 = 254;
const OP_EOF: u8 = 255;

/// What a save needs besides the dataset.
#[derive(Clone, Debug)]
pub struct SaveOptions {
    pub now_ms: u64,
    pub compress: bool,
    pub checksum: bool,
    pub aof_base: bool,
    pub used_mem_bytes: u64,
    pub policy: MaxmemoryPolicy,
}

/// What a save did.
#[derive(Clone, Debug, Default)]
pub struct SaveReport {
    pub keys_written: u64,
    pub bytes_written: u64,
    pub work_units: u64,
}

/// Streams a whole RDB file of `keyspace` through `sink`.
pub fn write_file(
    keyspace: &Keyspace,
    opts: &SaveOptions,
    sink: &mut dyn FnMut(&[u8]),
) -> SaveReport {
    let mut report = SaveReport::default();
    let mut crc = CRC64.digest();
    let mut out = Vec::with_capacity(64 * 1024);
    out.extend_from_slice(format!("REDIS{RDB_VERSION:04}").as_bytes());
    let aux = |out: &mut Vec<u8>, k: &str, v: &str| {
        out.push(OP_AUX);
        put_string(out, k.as_bytes(), false);
        put_string(out, v.as_bytes(), false);
    };
    aux(&mut out, "redis-ver", "7.0.15");
    aux(&mut out, "redis-bits", "64");
    aux(&mut out, "ctime", &(opts.now_ms / 1000).to_string());
    aux(&mut out, "used-mem", &opts.used_mem_bytes.to_string());
    aux(&mut out, "aof-base", if opts.aof_base { "1" } else { "0" });
    for db in &keyspace.dbs {
        if db.keys.is_empty() {
            continue;
        }
        out.push(OP_SELECTDB);
        put_len(&mut out, db.id as u64);
        out.push(OP_RESIZEDB);
        put_len(&mut out, db.keys.len() as u64);
        put_len(&mut out, db.expires.len() as u64);
        for (key, value) in db.keys.iter() {
            if let Some(&when) = db.expires.get(key) {
                out.push(OP_EXPIRETIME_MS);
                out.extend_from_slice(&when.to_le_bytes());
            }
            let mut obj = Vec::new();
            report.work_units += object::save(&mut obj, value, opts.compress);
            out.push(obj[0]);
            put_string(&mut out, key, opts.compress);
            out.extend_from_slice(&obj[1..]);
            report.keys_written += 1;
            if out.len() >= 64 * 1024 {
                crc.update(&out);
                report.bytes_written += out.len() as u64;
                sink(&out);
                out.clear();
            }
        }
    }
    out.push(OP_EOF);
    crc.update(&out);
    let sum = if opts.checksum { crc.finalize() } else { 0 };
    out.extend_from_slice(&sum.to_le_bytes());
    report.bytes_written += out.len() as u64;
    report.work_units += report.bytes_written / 64;
    sink(&out);
    report
}

/// What loading needs.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    pub now_ms: u64,
    pub limits: Limits,
}

/// What a load did.
#[derive(Clone, Debug, Default)]
pub struct LoadReport {
    pub keys_loaded: u64,
    pub keys_expired: u64,
    pub consumed_bytes: usize,
    pub work_units: u64,
}

/// Why a file could not be loaded: Redis's log line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError(pub String);

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn corrupt(c: Corrupt) -> LoadError {
    LoadError(format!("Internal error in RDB reading: {c}"))
}

/// Loads a whole RDB file into `keyspace`.
pub fn load_file(
    bytes: &[u8],
    opts: &LoadOptions,
    keyspace: &mut Keyspace,
) -> Result<LoadReport, LoadError> {
    let mut report = LoadReport::default();
    if bytes.len() < 9 || &bytes[..5] != b"REDIS" {
        return Err(LoadError("Wrong signature trying to load DB from file".into()));
    }
    let version: u32 = std::str::from_utf8(&bytes[5..9])
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    if !(1..=RDB_VERSION as u32).contains(&version) {
        return Err(LoadError(format!("Can't handle RDB format version {version}")));
    }
    let mut r = Reader::new(&bytes[9..]);
    let mut db = 0usize;
    let mut expire: Option<u64> = None;
    let build = Build {
        limits: opts.limits,
        seed: 0,
    };
    loop {
        let op = r.byte().map_err(corrupt)?;
        match op {
            OP_AUX => {
                r.string().map_err(corrupt)?;
                r.string().map_err(corrupt)?;
            }
            OP_RESIZEDB => {
                r.length().map_err(corrupt)?;
                r.length().map_err(corrupt)?;
            }
            OP_SELECTDB => {
                let id = r.length().map_err(corrupt)?;
                if id >= keyspace.dbs.len() as u64 {
                    return Err(LoadError(format!(
                        "FATAL: Data file was created with a Redis server configured to handle more than {} databases. Exiting\n",
                        keyspace.dbs.len()
                    )));
                }
                db = id as usize;
            }
            OP_EXPIRETIME_MS => {
                let t = r.take(8).map_err(corrupt)?;
                expire = Some(u64::from_le_bytes(t.try_into().expect("8 bytes")));
            }
            OP_EOF => {
                let body_len = bytes.len() - r.remaining();
                if version >= 5 {
                    let stored = r.take(8).map_err(corrupt)?;
                    let stored = u64::from_le_bytes(stored.try_into().expect("8 bytes"));
                    let expected = CRC64.checksum(&bytes[..body_len]);
                    if stored != 0 && stored != expected {
                        return Err(LoadError(format!(
                            "Wrong RDB checksum expected: ({expected:x}) got: ({stored:x}). Aborting now."
                        )));
                    }
                }
                report.consumed_bytes = bytes.len() - r.remaining();
                return Ok(report);
            }
            kind => {
                let key = r.string().map_err(corrupt)?;
                let value = object::load(&mut r, kind, build).map_err(corrupt)?;
                report.work_units += 1;
                let when = expire.take();
                if when.is_some_and(|t| t <= opts.now_ms) {
                    report.keys_expired += 1;
                    continue;
                }
                let d = &mut keyspace.dbs[db];
                if d.contains(&key) {
                    return Err(LoadError(format!(
                        "RDB has duplicated key '{}' in DB {db}",
                        String::from_utf8_lossy(&key)
                    )));
                }
                d.set(&key, value, false);
                if let Some(t) = when {
                    d.set_expire(&key, t);
                }
                report.keys_loaded += 1;
            }
        }
    }
}
