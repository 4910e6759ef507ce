//! Geo commands (Redis 7.0's `geo.c`) over sorted sets whose scores are
//! 52-bit geohashes ([`crate::types::geohash`]): GEOADD GEODIST GEOHASH
//! GEOPOS here, the searches (GEOSEARCH GEOSEARCHSTORE GEORADIUS
//! GEORADIUSBYMEMBER and the `_RO` forms) in `geo/search.rs`.
//!
//! Replies as Redis writes them: distances with four decimals (`%.4f`),
//! coordinates as `long double` with seventeen decimals, trailing zeros
//! trimmed (a bulk string in RESP2, a RESP3 double).
//!
//! Work: one unit per member looked up or point examined, one per cell
//! range sought.

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::commands::strings::long_double::format_f64_human;
use crate::commands::zsets::parse_double;
use crate::resp::{Protocol, ReplyWriter};
use crate::types::geohash;
use crate::types::zset::ZSet;
use crate::value::{Value, WRONGTYPE};

mod search;
#[cfg(test)]
mod tests;

const SYNTAX_ERROR: &str = "ERR syntax error";
const NOT_A_FLOAT: &str = "ERR value is not a valid float";

const GEO: CommandSpec = CommandSpec {
    group: "geo",
    since: "3.2.0",
    first_key: 1,
    last_key: 1,
    key_step: 1,
    ..CommandSpec::DEFAULT
};

const READ: &[&str] = &["read", "geo", "slow"];
const WRITE_ACL: &[&str] = &["write", "geo", "slow"];
const SEARCH_COMPLEXITY: &str = "O(N+log(M)) where N is the number of elements inside the bounding box of the circular area delimited by center and radius and M is the number of items inside the index.";

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "geoadd",
        arity: -5,
        flags: WRITE | DENYOOM,
        acl_categories: WRITE_ACL,
        key_spec_flags: &["RW", "update"],
        summary: "Add one or more geospatial items in the geospatial index represented using a sorted set",
        complexity: "O(log(N)) for each item added, where N is the number of elements in the sorted set.",
        handler: Some(geoadd),
        ..GEO
    },
    CommandSpec {
        name: "geodist",
        arity: -4,
        flags: READONLY,
        acl_categories: READ,
        key_spec_flags: &["RO", "access"],
        summary: "Returns the distance between two members of a geospatial index",
        complexity: "O(log(N))",
        handler: Some(geodist),
        ..GEO
    },
    CommandSpec {
        name: "geohash",
        arity: -2,
        flags: READONLY,
        acl_categories: READ,
        key_spec_flags: &["RO", "access"],
        summary: "Returns members of a geospatial index as standard geohash strings",
        complexity: "O(log(N)) for each member requested, where N is the number of elements in the sorted set.",
        handler: Some(geohash_cmd),
        ..GEO
    },
    CommandSpec {
        name: "geopos",
        arity: -2,
        flags: READONLY,
        acl_categories: READ,
        key_spec_flags: &["RO", "access"],
        summary: "Returns longitude and latitude of members of a geospatial index",
        complexity: "O(N) where N is the number of members requested.",
        handler: Some(geopos),
        ..GEO
    },
    CommandSpec {
        name: "georadius",
        arity: -6,
        flags: WRITE | DENYOOM | O_N,
        acl_categories: WRITE_ACL,
        key_spec_flags: &["RO", "access"],
        summary: "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a point",
        complexity: SEARCH_COMPLEXITY,
        handler: Some(search::georadius),
        ..GEO
    },
    CommandSpec {
        name: "georadius_ro",
        arity: -6,
        flags: READONLY | O_N,
        acl_categories: READ,
        key_spec_flags: &["RO", "access"],
        summary: "A read-only variant for GEORADIUS",
        since: "3.2.10",
        complexity: SEARCH_COMPLEXITY,
        handler: Some(search::georadius_ro),
        ..GEO
    },
    CommandSpec {
        name: "georadiusbymember",
        arity: -5,
        flags: WRITE | DENYOOM | O_N,
        acl_categories: WRITE_ACL,
        key_spec_flags: &["RO", "access"],
        summary: "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a member",
        complexity: SEARCH_COMPLEXITY,
        handler: Some(search::georadiusbymember),
        ..GEO
    },
    CommandSpec {
        name: "georadiusbymember_ro",
        arity: -5,
        flags: READONLY | O_N,
        acl_categories: READ,
        key_spec_flags: &["RO", "access"],
        summary: "A read-only variant for GEORADIUSBYMEMBER",
        since: "3.2.10",
        complexity: SEARCH_COMPLEXITY,
        handler: Some(search::georadiusbymember_ro),
        ..GEO
    },
    CommandSpec {
        name: "geosearch",
        arity: -7,
        flags: READONLY | O_N,
        acl_categories: READ,
        key_spec_flags: &["RO", "access"],
        summary: "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle.",
        since: "6.2.0",
        complexity: "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area around the shape provided as the filter and M is the number of items inside the shape",
        handler: Some(search::geosearch),
        ..GEO
    },
    CommandSpec {
        name: "geosearchstore",
        arity: -8,
        flags: WRITE | DENYOOM | O_N,
        last_key: 2,
        acl_categories: WRITE_ACL,
        key_spec_flags: &["OW", "update"],
        summary: "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle, and store the result in another key.",
        since: "6.2.0",
        complexity: "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area around the shape provided as the filter and M is the number of items inside the shape",
        handler: Some(search::geosearchstore),
        ..GEO
    },
];

/// Redis's `extractLongLatOrReply`: two floats, within the limits.
fn parse_lon_lat(args: &[Vec<u8>]) -> Result<(f64, f64), String> {
    let lon = parse_double(&args[0]).ok_or(NOT_A_FLOAT)?;
    let lat = parse_double(&args[1]).ok_or(NOT_A_FLOAT)?;
    if !(geohash::LONG_MIN..=geohash::LONG_MAX).contains(&lon)
        || !(geohash::LAT_MIN..=geohash::LAT_MAX).contains(&lat)
    {
        return Err(format!(
            "ERR invalid longitude,latitude pair {lon:.6},{lat:.6}"
        ));
    }
    Ok((lon, lat))
}

/// Redis's `extractUnitOrReply`: meters per unit.
fn parse_unit(arg: &[u8]) -> Result<f64, &'static str> {
    match arg.to_ascii_lowercase().as_slice() {
        b"m" => Ok(1.0),
        b"km" => Ok(1000.0),
        b"ft" => Ok(0.3048),
        b"mi" => Ok(1609.34),
        _ => Err("ERR unsupported unit provided. please use M, KM, FT, MI"),
    }
}

/// `addReplyDoubleDistance`: `%.4f`, as a bulk string in both protocols.
fn reply_distance(w: &mut ReplyWriter, d: f64) {
    w.bulk(format!("{d:.4}").as_bytes());
}

/// `addReplyHumanLongDouble` of a coordinate.
fn reply_coordinate(w: &mut ReplyWriter, d: f64) {
    let text = format_f64_human(d);
    match w.protocol() {
        Protocol::Resp2 => w.bulk(text.as_bytes()),
        Protocol::Resp3 => {
            w.raw(b",");
            w.raw(text.as_bytes());
            w.raw(b"\r\n");
        }
    }
}

/// The sorted set at `key` after lazy expiry: `Ok(None)` when missing.
/// Every geo command reads its source (a miss raises `keymiss`), the
/// STORE forms too.
fn zset_at<'c>(ctx: &'c mut Ctx, key: &[u8]) -> Result<Option<&'c ZSet>, &'static str> {
    match ctx.lookup_read(key) {
        None => Ok(None),
        Some(Value::ZSet(z)) => Ok(Some(z)),
        Some(_) => Err(WRONGTYPE),
    }
}

/// GEOADD key [NX|XX] [CH] longitude latitude member [...]: ZADD of the
/// members at their geohash scores, propagated as that ZADD.
fn geoadd(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let (mut nx, mut xx) = (false, false);
    let mut first = 2;
    while first < args.len() {
        match args[first].to_ascii_lowercase().as_slice() {
            b"nx" => nx = true,
            b"xx" => xx = true,
            b"ch" => {}
            _ => break,
        }
        first += 1;
    }
    let triples = args.len() - first;
    if !triples.is_multiple_of(3) || (xx && nx) {
        return ctx.error(SYNTAX_ERROR);
    }
    let mut zadd_args: Vec<Vec<u8>> = Vec::with_capacity(first + triples / 3 * 2);
    zadd_args.push(b"zadd".to_vec());
    zadd_args.extend(args[1..first].iter().cloned());
    for triple in args[first..].chunks_exact(3) {
        let (lon, lat) = match parse_lon_lat(&triple[..2]) {
            Ok(p) => p,
            Err(e) => return ctx.error(&e),
        };
        let score = geohash::score_of(lon, lat).expect("checked limits");
        zadd_args.push(score.to_string().into_bytes());
        zadd_args.push(triple[2].clone());
    }
    ctx.work(triples as u64 / 3);
    let propagated = ctx.propagating().then(|| zadd_args.clone());
    let dirty = ctx.server.dirty;
    crate::commands::zsets::zadd(ctx, &mut zadd_args);
    if let Some(argv) = propagated {
        if ctx.server.dirty != dirty {
            ctx.propagate(&argv);
        }
    }
}

/// GEODIST key member1 member2 [unit]
fn geodist(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let to_meters = match args.len() {
        5 => match parse_unit(&args[4]) {
            Ok(u) => u,
            Err(e) => return ctx.error(e),
        },
        4 => 1.0,
        _ => return ctx.error(SYNTAX_ERROR),
    };
    let z = match zset_at(ctx, &args[1]) {
        Err(e) => return ctx.error(e),
        Ok(None) => return ctx.null(),
        Ok(Some(z)) => z,
    };
    // Two lookups, each a walk of a listpack.
    let walk_units = 2 * z.walk_units();
    let (s1, s2) = (z.score(&args[2]), z.score(&args[3]));
    ctx.work(walk_units);
    let (Some(s1), Some(s2)) = (s1, s2) else {
        return ctx.null();
    };
    let (a, b) = (geohash::decode_score(s1), geohash::decode_score(s2));
    let d = geohash::distance(a.0, a.1, b.0, b.1) / to_meters;
    ctx.work(2);
    reply_distance(&mut ctx.w(), d);
}

/// The sorted set a looked-up value is, if any; `Err` for another type.
fn as_zset(value: Option<&mut Value>) -> Result<Option<&ZSet>, ()> {
    match value {
        None => Ok(None),
        Some(Value::ZSet(z)) => Ok(Some(&**z)),
        Some(_) => Err(()),
    }
}

/// GEOHASH key [member ...]
fn geohash_cmd(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let members = &args[2..];
    ctx.work(members.len() as u64);
    let (value, mut w) = ctx.lookup_read_and_writer(&args[1]);
    let Ok(z) = as_zset(value) else {
        return w.error(WRONGTYPE);
    };
    w.array_len(members.len());
    for member in members {
        match z.and_then(|z| z.score(member)) {
            None => w.null(),
            Some(score) => w.bulk(&geohash::geohash_string(score)),
        }
    }
    let walk_units = z.map_or(0, |z| z.walk_units());
    ctx.work(members.len() as u64 * walk_units);
}

/// GEOPOS key [member ...]
fn geopos(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let members = &args[2..];
    ctx.work(members.len() as u64);
    let (value, mut w) = ctx.lookup_read_and_writer(&args[1]);
    let Ok(z) = as_zset(value) else {
        return w.error(WRONGTYPE);
    };
    let walk_units = z.map_or(0, |z| z.walk_units());
    w.array_len(members.len());
    for member in members {
        match z.and_then(|z| z.score(member)) {
            None => w.null_array(),
            Some(score) => {
                let (lon, lat) = geohash::decode_score(score);
                w.array_len(2);
                reply_coordinate(&mut w, lon);
                reply_coordinate(&mut w, lat);
            }
        }
    }
    ctx.work(members.len() as u64 * walk_units);
}
