//! Engine-level tests of the geo commands. (Replies are compared with
//! redis-server by tests/scripts/geo.txt and tests/tests/hll_geo.rs.)

use crate::resp::Frame;
use crate::testing::{bulk, err, int, TestEngine};

fn sicily(t: &mut TestEngine) -> crate::client::ClientId {
    let c = t.connect();
    let added = t.cmd(
        c,
        &[
            "GEOADD",
            "Sicily",
            "13.361389",
            "38.115556",
            "Palermo",
            "15.087269",
            "37.502669",
            "Catania",
        ],
    );
    assert_eq!(added, int(2));
    c
}

#[test]
fn geoadd_stores_redis_scores_and_geopos_decodes_them() {
    let mut t = TestEngine::new();
    let c = sicily(&mut t);
    assert_eq!(
        t.cmd(c, &["ZSCORE", "Sicily", "Palermo"]),
        bulk("3479099956230698")
    );
    assert_eq!(
        t.cmd(c, &["GEOPOS", "Sicily", "Palermo", "nowhere"]),
        Frame::Array(vec![
            Frame::Array(vec![
                bulk("13.36138933897018433"),
                bulk("38.11555639549629859")
            ]),
            Frame::Null,
        ])
    );
    assert_eq!(
        t.cmd(c, &["GEODIST", "Sicily", "Palermo", "Catania"]),
        bulk("166274.1516")
    );
    assert_eq!(
        t.cmd(c, &["GEOHASH", "Sicily", "Palermo"]),
        Frame::Array(vec![bulk("sqc8b49rny0")])
    );
}

#[test]
fn geoadd_checks_ranges_and_options() {
    let mut t = TestEngine::new();
    let c = t.connect();
    assert_eq!(
        t.cmd(c, &["GEOADD", "g", "200", "10", "x"]),
        err("ERR invalid longitude,latitude pair 200.000000,10.000000")
    );
    assert_eq!(
        t.cmd(c, &["GEOADD", "g", "NX", "XX", "1", "2", "x"]),
        err("ERR syntax error")
    );
    assert_eq!(
        t.cmd(c, &["GEOADD", "g", "1", "2", "x", "3"]),
        err("ERR syntax error")
    );
}

#[test]
fn geosearch_finds_sorts_and_stores() {
    let mut t = TestEngine::new();
    let c = sicily(&mut t);
    let found = t.cmd(
        c,
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "200",
            "km",
            "ASC",
            "WITHDIST",
        ],
    );
    assert_eq!(
        found,
        Frame::Array(vec![
            Frame::Array(vec![bulk("Catania"), bulk("56.4413")]),
            Frame::Array(vec![bulk("Palermo"), bulk("190.4424")]),
        ])
    );
    assert_eq!(
        t.cmd(
            c,
            &[
                "GEOSEARCHSTORE",
                "d",
                "Sicily",
                "FROMMEMBER",
                "Palermo",
                "BYBOX",
                "400",
                "400",
                "km",
                "STOREDIST"
            ]
        ),
        int(2)
    );
    assert_eq!(t.cmd(c, &["ZSCORE", "d", "Palermo"]), bulk("0"));
    assert_eq!(
        t.cmd(
            c,
            &[
                "GEOSEARCH",
                "Sicily",
                "FROMLONLAT",
                "15",
                "37",
                "BYRADIUS",
                "200",
                "km",
                "ANY"
            ]
        ),
        err("ERR the ANY argument requires COUNT argument")
    );
}

/// Edge arguments never panic: limits, specials, huge and tiny shapes,
/// scores GEOADD never writes, every command and option in random order.
#[test]
fn adversarial_arguments_never_panic() {
    let mut t = TestEngine::new();
    let c = sicily(&mut t);
    t.cmd(
        c,
        &[
            "ZADD",
            "Sicily",
            "inf",
            "pinf",
            "-inf",
            "ninf",
            "-5",
            "neg",
            "9007199254740992",
            "big",
        ],
    );
    let nums: &[&str] = &[
        "0",
        "-0",
        "180",
        "-180",
        "85.05112878",
        "-85.05112878",
        "1e-320",
        "1e308",
        "inf",
        "-inf",
        "nan",
        "0x1p3",
        "1e400",
        "-1",
        "13.36",
        "37.5",
        "x",
        "",
    ];
    let words: &[&str] = &[
        "WITHDIST",
        "WITHHASH",
        "WITHCOORD",
        "ASC",
        "DESC",
        "ANY",
        "COUNT",
        "STORE",
        "STOREDIST",
        "FROMMEMBER",
        "FROMLONLAT",
        "BYRADIUS",
        "BYBOX",
        "m",
        "km",
        "ft",
        "mi",
        "Palermo",
        "big",
        "d",
        "NX",
        "XX",
        "CH",
    ];
    let mut state = 7u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as usize
    };
    let commands = [
        "GEOADD",
        "GEODIST",
        "GEOHASH",
        "GEOPOS",
        "GEORADIUS",
        "GEORADIUS_RO",
        "GEORADIUSBYMEMBER",
        "GEORADIUSBYMEMBER_RO",
        "GEOSEARCH",
        "GEOSEARCHSTORE",
    ];
    for _ in 0..3000 {
        let name = commands[next() % commands.len()];
        let mut args: Vec<String> = vec![name.into()];
        if name == "GEOSEARCHSTORE" {
            args.push("d".into());
        }
        args.push("Sicily".into());
        for _ in 0..(next() % 12) {
            let pool = if next() % 2 == 0 { nums } else { words };
            args.push(pool[next() % pool.len()].into());
        }
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        t.cmd(c, &refs);
    }
}
