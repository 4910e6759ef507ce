//! Why an RDB file was refused, and the lines redis-server 7.0.15 logs
//! for each refusal (checked against the real server in
//! tests/tests/rdb_file.rs).

use crate::rdb::Corrupt;

/// `loading_process_events_interval_bytes`: Redis's loading progress
/// (the offset its error lines print) moves in steps of this size.
const PROGRESS_STEP_BYTES: usize = 2 * 1024 * 1024;
/// Lines of 7.0.15's rdb.c that its error lines name.
const EOFERR_LINE: u32 = 3249;
const CRC_ERROR_LINE: u32 = 3225;

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
    /// Malformed contents; the reason is ours. [`LoadError::log_lines`]
    /// gives the short-read lines Redis logs when `rdbLoadObject` fails
    /// quietly; for some corruptions (a bad listpack, duplicate members)
    /// Redis logs its own reason instead (`rdbReportCorruptRDB`), which
    /// these lines do not reproduce.
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
    /// A function library in the pre-release format
    /// (`RDB_OPCODE_FUNCTION`), which Redis 7.0 refuses too.
    Function,
    /// A function library could not be loaded (the reason as FUNCTION
    /// LOAD would reply it).
    Library(String),
}

impl LoadError {
    /// A function library of the file did not load (its code failed, or
    /// its name or a function's was taken): `reason` is the error reply.
    pub fn function_library(offset_bytes: usize, reason: String) -> LoadError {
        LoadError {
            kind: LoadErrorKind::Library(reason),
            offset_bytes,
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
            LoadErrorKind::Library(reason) => {
                vec![format!("Failed loading library, {reason}")]
            }
            LoadErrorKind::Function => {
                let mut lines = vec!["Pre-release function format not supported.".into()];
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
