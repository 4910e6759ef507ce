use super::*;
use crate::config::MaxmemoryPolicy;
use crate::db::Keyspace;
use crate::rdb::codec::{put_len, put_string, CRC64};
use crate::rdb::object::Build;
use crate::testing::{bulk, int, TestEngine};
use crate::types::Limits;
use crate::value::{RString, Value};
use crate::{Config, Now};

/// A SAVE of redis-server 7.0.15 (`rdbcompression no`): `foo`=`bar` in db
/// 0, `x`=`y` expiring at 4102444800000 in db 3, and the list `l` = a 1 300
/// in db 15.
const REDIS_FILE_HEX: &str = "524544495330303130fa0972656469732d76657206372e302e3135fa0a72656469732d62697473c040fa056374696d65c262d40f6bfa08757365642d6d656dc2c0d70f00fa08616f662d62617365c000fe00fb01000003666f6f03626172fe03fb0101fc00d8c32cbb0300000001780179fe0ffb010012016c01020f0f00000003008161020101c12c02ffff7bec281367878af6";

const NOW_MS: u64 = 1_700_000_000_000;

fn redis_file() -> Vec<u8> {
    (0..REDIS_FILE_HEX.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&REDIS_FILE_HEX[i..i + 2], 16).unwrap())
        .collect()
}

fn load_opts() -> LoadOptions {
    LoadOptions {
        now_ms: NOW_MS,
        checksum: true,
        drop_expired: true,
        build: Build {
            limits: Limits::default(),
            seed: 7,
        },
    }
}

fn save_opts() -> SaveOptions {
    SaveOptions {
        now_ms: NOW_MS,
        compress: true,
        checksum: true,
        aof_base: false,
        used_mem_bytes: 1_000_000,
        maxmemory_policy: MaxmemoryPolicy::NoEviction,
        lfu_decay_time_min: 1,
        repl: None,
    }
}

fn load(bytes: &[u8]) -> Result<(LoadReport, Keyspace), LoadError> {
    let mut ks = Keyspace::new(1);
    load_file(bytes, &load_opts(), &mut ks).map(|r| (r, ks))
}

fn write(ks: &Keyspace, opts: &SaveOptions) -> Vec<u8> {
    let mut out = Vec::new();
    let report = write_file(ks, &[], opts, &mut |c| out.extend_from_slice(c));
    assert_eq!(report.bytes_written, out.len() as u64);
    out
}

/// A file from its body (what follows the magic, up to EOF included),
/// with a correct checksum.
fn file_of(body: &[u8]) -> Vec<u8> {
    let mut f = MAGIC.to_vec();
    f.extend_from_slice(body);
    let crc = CRC64.checksum(&f);
    f.extend_from_slice(&crc.to_le_bytes());
    f
}

fn string_key(key: &[u8], value: &[u8]) -> Vec<u8> {
    let mut out = vec![crate::rdb::kind::STRING];
    put_string(&mut out, key, false);
    put_string(&mut out, value, false);
    out
}

fn kind_of(result: Result<(LoadReport, Keyspace), LoadError>) -> LoadErrorKind {
    result.map(|(r, _)| r).expect_err("refused").kind
}

#[test]
fn a_redis_file_loads_and_writes_back_byte_for_byte() {
    let file = redis_file();
    let (report, ks) = load(&file).expect("loads");
    assert_eq!(report.keys_loaded, 3);
    assert_eq!(report.consumed_bytes, file.len());
    assert_eq!(report.aux.redis_ver.as_deref(), Some("7.0.15"));
    assert!(!report.aux.aof_base);
    assert_eq!(ks.dbs[3].get_expire(b"x"), Some(4_102_444_800_000));
    assert_eq!(
        ks.dbs[0].get(b"foo"),
        Some(&Value::Str(RString::new(b"bar".to_vec())))
    );
    // Written back with Redis's clock and memory figure: the same bytes,
    // checksum included.
    let opts = SaveOptions {
        now_ms: report.aux.ctime_s.unwrap() as u64 * 1000,
        used_mem_bytes: report.aux.used_mem_bytes.unwrap() as u64,
        compress: false,
        ..save_opts()
    };
    assert_eq!(write(&ks, &opts), file);
}

#[test]
fn engines_round_trip_every_type_with_ttls_and_databases() {
    let mut a = TestEngine::new();
    let c = a.connect();
    let big: Vec<String> = (0..2000).map(|i| format!("element-{i}")).collect();
    let mut rpush = vec!["RPUSH", "l:big"];
    rpush.extend(big.iter().map(String::as_str));
    a.cmd(c, &rpush);
    let mut sadd = vec!["SADD", "s:big"];
    sadd.extend(big.iter().map(String::as_str));
    a.cmd(c, &sadd);
    for cmd in [
        &["SET", "s:int", "12345"][..],
        &["SET", "s:long", &"x".repeat(500)],
        &["RPUSH", "l:small", "a", "1", "-70000"],
        &["SADD", "set:int", "1", "2", "-3"],
        &["SADD", "set:str", "a", "b"],
        &["HSET", "h", "f", "v", "n", "1"],
        &["ZADD", "z", "1.5", "a", "-inf", "b"],
        &["SET", "ttl", "v", "PX", "100000"],
        &["SELECT", "15"],
        &["SET", "in15", "v"],
    ] {
        assert!(!matches!(a.cmd(c, cmd), crate::resp::Frame::Error(_)));
    }
    let bytes = a.engine.rdb_file_bytes(a.now);
    let mut b = TestEngine::new();
    let report = b.engine.load_rdb_file(b.now, &bytes).expect("loads");
    assert_eq!(report.keys_loaded, 11);
    let d = b.connect();
    for (key, want) in [("s:int", bulk("12345")), ("s:long", bulk(&"x".repeat(500)))] {
        assert_eq!(b.cmd(d, &["GET", key]), want);
    }
    assert_eq!(b.cmd(d, &["LLEN", "l:big"]), int(2000));
    assert_eq!(b.cmd(d, &["LINDEX", "l:big", "1999"]), bulk("element-1999"));
    assert_eq!(b.cmd(d, &["SCARD", "s:big"]), int(2000));
    assert_eq!(b.cmd(d, &["OBJECT", "ENCODING", "set:int"]), bulk("intset"));
    assert_eq!(b.cmd(d, &["ZSCORE", "z", "b"]), bulk("-inf"));
    assert_eq!(b.cmd(d, &["HGET", "h", "n"]), bulk("1"));
    assert_eq!(b.cmd(d, &["PTTL", "ttl"]), int(100000));
    b.cmd(d, &["SELECT", "15"]);
    assert_eq!(b.cmd(d, &["GET", "in15"]), bulk("v"));
    // Written again, the same size: the same values in the same layouts,
    // though not in the same order (a dict filled in another order chains
    // its keys otherwise).
    assert_eq!(b.engine.rdb_file_bytes(b.now).len(), bytes.len());
}

#[test]
fn chunks_are_full_but_the_last() {
    let mut ks = Keyspace::new(3);
    for i in 0..3000 {
        let v = Value::Str(RString::new(
            format!("value-{i}-{}", "v".repeat(i % 90)).into(),
        ));
        ks.dbs[i % 4].set(format!("key:{i}").as_bytes(), v, false);
    }
    let mut chunks = Vec::new();
    let opts = SaveOptions {
        compress: false,
        ..save_opts()
    };
    let report = write_file(&ks, &[], &opts, &mut |c| chunks.push(c.to_vec()));
    assert!(chunks.len() > 2);
    let (last, full) = chunks.split_last().unwrap();
    assert!(full.iter().all(|c| c.len() == save::CHUNK_BYTES));
    assert!(!last.is_empty() && last.len() <= save::CHUNK_BYTES);
    assert_eq!(report.keys_written, 3000);
    let all: Vec<u8> = chunks.concat();
    assert_eq!(
        report.crc64,
        CRC64.checksum(&all[..all.len() - 8]),
        "the CRC covers every byte up to EOF"
    );
    let (loaded, back) = load(&all).expect("loads");
    assert_eq!(loaded.keys_loaded, 3000);
    assert_eq!(back.dbs[2].get(b"key:2"), ks.dbs[2].get(b"key:2"));
}

#[test]
fn truncation_at_every_byte_is_an_error() {
    for file in [redis_file(), file_of(&[opcode::EOF])] {
        for len in 0..file.len() {
            let kind = kind_of(load(&file[..len]));
            // A count the rest cannot hold is refused as corrupt before
            // the bytes run out; Redis logs both the same way.
            assert!(
                matches!(kind, LoadErrorKind::ShortRead | LoadErrorKind::Corrupt(_)),
                "{len}: {kind:?}"
            );
        }
    }
}

#[test]
fn flipped_bytes_are_refused_never_a_panic() {
    let file = redis_file();
    for at in 0..file.len() {
        for mask in [0x01u8, 0x80, 0xFF] {
            let mut bad = file.clone();
            bad[at] ^= mask;
            // CRC64 catches every single-byte error that still parses,
            // except in the version digits, which C's atoi may still read
            // as a version from 1 to 10 (of which only 5 and up carry a
            // checksum): Redis loads such a file too.
            let still_a_version = (5..9).contains(&at) && load(&bad).is_ok();
            assert!(
                load(&bad).is_err() || still_a_version,
                "byte {at} ^ {mask:#x}"
            );
        }
    }
    // Without checksums, corrupt files still never panic.
    let mut opts = load_opts();
    opts.checksum = false;
    for at in 9..file.len() {
        for v in [0u8, 1, 0x3F, 0x40, 0x80, 0x81, 0xC3, 0xFE, 0xFF] {
            let mut bad = file.clone();
            bad[at] = v;
            let _ = load_file(&bad, &opts, &mut Keyspace::new(1));
        }
    }
}

#[test]
fn header_checks_use_redis_words() {
    let mut v11 = file_of(&[opcode::EOF]);
    v11[5..9].copy_from_slice(b"0011");
    let err = load(&v11).unwrap_err();
    assert_eq!(err.log_lines(), ["Can't handle RDB format version 11"]);
    let mut v0 = v11.clone();
    v0[5..9].copy_from_slice(b"x010");
    assert_eq!(kind_of(load(&v0)), LoadErrorKind::Version(0));
    let mut sig = v11.clone();
    sig[0] = b'r';
    assert_eq!(
        load(&sig).unwrap_err().log_lines(),
        ["Wrong signature trying to load DB from file"]
    );
    let empty = load(b"").unwrap_err();
    assert_eq!(
        empty.log_lines(),
        [
            "Short read or OOM loading DB. Unrecoverable error, aborting now.",
            "Internal error in RDB reading offset 0, function at rdb.c:3249 -> Unexpected EOF reading RDB file"
        ]
    );
}

#[test]
fn a_file_of_only_eof_is_an_empty_dataset() {
    let file = file_of(&[opcode::EOF]);
    let (report, ks) = load(&file).expect("loads");
    assert_eq!(report.keys_loaded, 0);
    assert_eq!(report.consumed_bytes, 18);
    assert!(ks.dbs.iter().all(|db| db.is_empty()));
    // Saved with checksum disabled: eight zeros, not checked.
    let mut zero = file.clone();
    zero[10..].fill(0);
    assert!(load(&zero).unwrap().0.checksum_skipped);
    // And what we write for an empty keyspace is that, plus the aux fields.
    let ours = write(&Keyspace::new(1), &save_opts());
    assert_eq!(&ours[..9], MAGIC);
    assert_eq!(ours[ours.len() - 9], opcode::EOF);
    assert_eq!(load(&ours).unwrap().0.aux.ctime_s, Some(1_700_000_000));
}

#[test]
fn checksums_are_checked_unless_off_or_zero() {
    let mut file = redis_file();
    let n = file.len();
    file[n - 1] ^= 0x10;
    let err = load(&file).unwrap_err();
    let LoadErrorKind::Checksum { expected, got } = err.kind else {
        panic!("{err:?}")
    };
    assert_eq!(got ^ expected, 0x10 << 56);
    assert_eq!(
        err.log_lines()[0],
        format!("Wrong RDB checksum expected: ({expected:x}) but got ({got:x}). Aborting now.")
    );
    let mut opts = load_opts();
    opts.checksum = false;
    assert!(load_file(&file, &opts, &mut Keyspace::new(1)).is_ok());
    let unchecked = write(
        &Keyspace::new(1),
        &SaveOptions {
            checksum: false,
            ..save_opts()
        },
    );
    assert_eq!(&unchecked[unchecked.len() - 8..], &[0; 8]);
}

#[test]
fn expired_keys_are_dropped_by_a_master_and_kept_in_a_preamble() {
    let mut body = Vec::new();
    body.push(opcode::EXPIRETIME_MS);
    body.extend_from_slice(&(NOW_MS as i64 - 1).to_le_bytes());
    body.extend(string_key(b"old", b"v"));
    body.push(opcode::EXPIRETIME_MS);
    body.extend_from_slice(&(NOW_MS as i64).to_le_bytes());
    body.extend(string_key(b"now", b"v"));
    // Seconds, as files before RDB 3 wrote them.
    body.push(opcode::EXPIRETIME);
    body.extend_from_slice(&1i32.to_le_bytes());
    body.extend(string_key(b"ancient", b"v"));
    body.extend(string_key(b"plain", b"v"));
    body.push(opcode::EOF);
    let file = file_of(&body);
    let (report, ks) = load(&file).unwrap();
    assert_eq!((report.keys_loaded, report.keys_expired), (2, 2));
    assert!(ks.dbs[0].contains(b"now") && !ks.dbs[0].contains(b"old"));
    assert_eq!(
        report.done_log_line(),
        "Done loading RDB, keys loaded: 2, keys expired: 2."
    );
    let mut opts = load_opts();
    opts.drop_expired = false;
    let mut ks = Keyspace::new(1);
    let report = load_file(&file, &opts, &mut ks).unwrap();
    assert_eq!((report.keys_loaded, report.keys_expired), (4, 0));
    assert_eq!(ks.dbs[0].get_expire(b"ancient"), Some(1000));
}

#[test]
fn duplicates_db_indexes_modules_and_functions_are_refused() {
    let mut body = string_key(b"k", b"1");
    body.extend(string_key(b"k", b"2"));
    body.push(opcode::EOF);
    let err = load(&file_of(&body)).unwrap_err();
    assert_eq!(
        err.log_lines(),
        [
            "RDB has duplicated key 'k' in DB 0",
            "Duplicated key found in RDB file"
        ]
    );
    // The same key in two databases is fine.
    let mut body = string_key(b"k", b"1");
    body.extend([opcode::SELECTDB, 15]);
    body.extend(string_key(b"k", b"2"));
    body.push(opcode::EOF);
    assert_eq!(load(&file_of(&body)).unwrap().0.keys_loaded, 2);
    let err = load(&file_of(&[opcode::SELECTDB, 16, opcode::EOF])).unwrap_err();
    assert_eq!(err.log_lines(), ["FATAL: Data file was created with a Redis server configured to handle more than 16 databases. Exiting"]);
    // Module id of "mymodtype" with encoding version 1.
    let id = "mymodtype".bytes().fold(0u64, |acc, c| {
        let v = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
            .iter()
            .position(|&x| x == c)
            .unwrap() as u64;
        (acc << 6) | v
    }) << 10
        | 1;
    let mut aux = vec![opcode::MODULE_AUX];
    put_len(&mut aux, id);
    aux.extend([2, 2, opcode::EOF]);
    assert_eq!(
        load(&file_of(&aux)).unwrap_err().log_lines(),
        ["The RDB file contains AUX module data I can't load: no matching module 'mymodtype'"]
    );
    let mut value = vec![crate::rdb::kind::MODULE_2, 1, b'k'];
    put_len(&mut value, id);
    assert_eq!(
        kind_of(load(&file_of(&value))),
        LoadErrorKind::ModuleValue {
            name: "mymodtype".into()
        }
    );
    let mut function = vec![opcode::FUNCTION];
    put_string(&mut function, b"#!lua name=x\n", false);
    function.push(opcode::EOF);
    assert_eq!(kind_of(load(&file_of(&function))), LoadErrorKind::Function);
}

#[test]
fn aux_fields_empty_keys_and_trailing_bytes() {
    let mut body = Vec::new();
    for (k, v) in [
        (&b"%note"[..], &b"hello"[..]),
        (b"aof-base", b"1"),
        (b"unknown-field", b"whatever"),
    ] {
        body.push(opcode::AUX);
        put_string(&mut body, k, false);
        put_string(&mut body, v, false);
    }
    body.extend([opcode::RESIZEDB, 0x80, 0xFF, 0xFF, 0xFF, 0xFF, 0]);
    // An empty set, as a buggy old Redis could write: skipped.
    body.extend([crate::rdb::kind::SET, 1, b'e', 0]);
    body.extend(string_key(b"k", b"v"));
    body.push(opcode::EOF);
    let mut file = file_of(&body);
    let consumed = file.len();
    file.extend_from_slice(b"*1\r\n$5\r\nMULTI\r\n");
    let (report, ks) = load(&file).unwrap();
    assert_eq!(report.consumed_bytes, consumed);
    assert!(report.aux.aof_base);
    assert_eq!(
        report.aux.info,
        [("%note".to_string(), "hello".to_string())]
    );
    assert_eq!((report.keys_loaded, report.empty_keys_skipped), (1, 1));
    assert!(!ks.dbs[0].contains(b"e"));
    assert_eq!(
        report.done_log_line(),
        "Done loading RDB, keys loaded: 1, keys expired: 0, empty keys skipped: 1."
    );
}

#[test]
fn lru_policies_write_idle_and_lfu_policies_write_freq() {
    let lru = Config {
        maxmemory_policy: MaxmemoryPolicy::AllkeysLru,
        ..Config::default()
    };
    let mut a = TestEngine::with_config(lru.clone());
    let c = a.connect();
    a.cmd(c, &["SET", "k", "v"]);
    a.advance_ms(30_000);
    let file = a.engine.rdb_file_bytes(a.now);
    let at = file
        .windows(2)
        .position(|w| w == [opcode::IDLE, 30])
        .expect("IDLE 30 s");
    assert_eq!(file[at + 2], crate::rdb::kind::STRING);
    let mut b = TestEngine::with_config(lru);
    b.now = Now {
        mono_ns: 0,
        unix_us: a.now.unix_us,
    };
    b.engine.load_rdb_file(b.now, &file).unwrap();
    let d = b.connect();
    assert_eq!(b.cmd(d, &["OBJECT", "IDLETIME", "k"]), int(30));

    let lfu = Config {
        maxmemory_policy: MaxmemoryPolicy::AllkeysLfu,
        ..Config::default()
    };
    let mut a = TestEngine::with_config(lfu.clone());
    let c = a.connect();
    a.cmd(c, &["SET", "k", "v"]);
    let file = a.engine.rdb_file_bytes(a.now);
    let at = file
        .windows(3)
        .position(|w| w == [opcode::FREQ, 5, crate::rdb::kind::STRING])
        .expect("FREQ 5 (LFU_INIT_VAL)");
    assert!(at > 9);
    let mut b = TestEngine::with_config(lfu);
    b.engine.load_rdb_file(b.now, &file).unwrap();
    let d = b.connect();
    assert_eq!(b.cmd(d, &["OBJECT", "FREQ", "k"]), int(5));
    // No policy: neither.
    let mut a = TestEngine::new();
    let c = a.connect();
    a.cmd(c, &["SET", "k", "v"]);
    let file = a.engine.rdb_file_bytes(a.now);
    let key_right_after_resizedb = [opcode::RESIZEDB, 1, 0, crate::rdb::kind::STRING, 1, b'k'];
    assert!(file.windows(6).any(|w| w == key_right_after_resizedb));
}

#[test]
fn work_is_charged_for_every_opcode_and_element() {
    let mut body = Vec::new();
    for _ in 0..1000 {
        body.extend([opcode::SELECTDB, 0]);
    }
    body.push(opcode::EOF);
    let (report, _) = load(&file_of(&body)).unwrap();
    assert!(report.work_units >= 1000, "{}", report.work_units);
}

#[test]
fn replication_fields_round_trip_between_used_mem_and_aof_base() {
    let replid = *b"0123456789abcdef0123456789abcdef01234567";
    let opts = SaveOptions {
        repl: Some(ReplSaveInfo {
            stream_db: 5,
            replid,
            offset: 12_345,
        }),
        ..save_opts()
    };
    let file = write(&Keyspace::new(1), &opts);
    let (report, _) = load(&file).unwrap();
    assert_eq!(
        report.aux.repl_id.as_deref(),
        Some("0123456789abcdef0123456789abcdef01234567")
    );
    assert_eq!(report.aux.repl_offset, Some(12_345));
    assert_eq!(report.aux.repl_stream_db, Some(5));
    // Redis's order: ... used-mem, repl-stream-db, repl-id, repl-offset,
    // aof-base.
    let at = |name: &[u8]| file.windows(name.len()).position(|w| w == name).unwrap();
    assert!(at(b"used-mem") < at(b"repl-stream-db"));
    assert!(at(b"repl-stream-db") < at(b"repl-id"));
    assert!(at(b"repl-id") < at(b"repl-offset"));
    assert!(at(b"repl-offset") < at(b"aof-base"));
    // Without them (a server in no chain, an AOF preamble) none is written.
    let plain = write(&Keyspace::new(1), &save_opts());
    assert!(!plain.windows(7).any(|w| w == b"repl-id"));
    let (report, _) = load(&plain).unwrap();
    assert_eq!(report.aux.repl_id, None);
}
