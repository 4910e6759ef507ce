//! Commands that build one key of every type in every encoding Redis 7.0
//! has (strings int/embstr/raw, compressible and not; lists of one and of
//! many listpack nodes; hashes, sets, intsets and sorted sets small and
//! large), shared by the DUMP/RESTORE and RDB file tests against
//! redis-server. Each is run with the same thresholds on both servers
//! (`hash-max-listpack-entries` 128, `set-max-intset-entries` 512,
//! `zset-max-listpack-entries` 128).

/// Commands that build one key each, and whether both servers are expected
/// to serialize it to the very same bytes.
pub fn values() -> Vec<(Vec<Vec<u8>>, bool)> {
    let mut f: Vec<(Vec<Vec<u8>>, bool)> = Vec::new();
    let cmd = |parts: &[&str]| {
        parts
            .iter()
            .map(|p| p.as_bytes().to_vec())
            .collect::<Vec<_>>()
    };
    for (i, v) in [
        "0",
        "-1",
        "127",
        "-129",
        "40000",
        "-2147483648",
        "2147483648",
        "9223372036854775807",
        "007",
        "hello",
        "1.5",
    ]
    .iter()
    .enumerate()
    {
        f.push((cmd(&["SET", &format!("s:{i}"), v]), true));
    }
    f.push((cmd(&["SET", "s:x1000", &"x".repeat(1000)]), true));
    f.push((cmd(&["SET", "s:embstr44", &"e".repeat(44)]), true));
    let noise: String = (0..300u32)
        .map(|i| char::from(b'!' + ((i.wrapping_mul(2_654_435_761) >> 7) % 90) as u8))
        .collect();
    f.push((cmd(&["SET", "s:noise", &noise]), false));
    let mut bin = vec![b"SET".to_vec(), b"s:bin".to_vec()];
    bin.push((0..=255u8).collect());
    f.push((bin, true));
    // Lists: one node, with integers of every listpack width; many nodes.
    f.push((
        cmd(&[
            "RPUSH",
            "l:small",
            "a",
            "1",
            "-1",
            "300",
            "-5000",
            "70000",
            "-9000000",
            "3000000000",
            "9223372036854775807",
            "",
            "0",
        ]),
        true,
    ));
    let mut big = cmd(&["RPUSH", "l:big"]);
    big.extend((0..3000).map(|i| format!("element-{i}-{}", "y".repeat(i % 50)).into_bytes()));
    f.push((big, true));
    // Hashes.
    f.push((
        cmd(&[
            "HSET", "h:small", "f1", "v1", "n", "12", "neg", "-7", "empty", "",
        ]),
        true,
    ));
    let mut big = cmd(&["HSET", "h:big"]);
    for i in 0..300 {
        big.push(format!("field:{i}").into_bytes());
        big.push(format!("value:{i}").into_bytes());
    }
    f.push((big, false));
    f.push((cmd(&["HSET", "h:longvalue", "f", &"v".repeat(100)]), false));
    // Sets.
    f.push((cmd(&["SADD", "set:int16", "1", "2", "3", "-4"]), true));
    f.push((cmd(&["SADD", "set:int32", "1", "70000", "-70000"]), true));
    f.push((
        cmd(&[
            "SADD",
            "set:int64",
            "1",
            "9223372036854775807",
            "-9223372036854775808",
        ]),
        true,
    ));
    f.push((cmd(&["SADD", "set:strings", "a", "b", "c", "1"]), false));
    let mut big = cmd(&["SADD", "set:bigint"]);
    big.extend((0..600).map(|i| (i * 7).to_string().into_bytes()));
    f.push((big, false));
    // Sorted sets.
    f.push((
        cmd(&[
            "ZADD", "z:small", "1", "a", "2.5", "b", "-3", "c", "inf", "d", "-inf", "e", "0", "f",
            "1e100", "g", "0.1", "h",
        ]),
        true,
    ));
    let mut big = cmd(&["ZADD", "z:big"]);
    for i in 0..200 {
        big.push(format!("{}", f64::from(i) / 3.0).into_bytes());
        big.push(format!("member:{i}").into_bytes());
    }
    f.push((big, false));
    f.push((cmd(&["ZADD", "z:longmember", "1", &"m".repeat(100)]), false));
    f
}

/// The encoding thresholds the fixtures are built under, set on both
/// servers by CONFIG SET (they are Redis 7.0's defaults).
pub const THRESHOLDS: &[(&str, &str)] = &[
    ("hash-max-listpack-entries", "128"),
    ("set-max-intset-entries", "512"),
    ("zset-max-listpack-entries", "128"),
];
