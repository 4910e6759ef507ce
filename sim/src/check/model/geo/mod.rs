//! The reference model's geo commands, written from Redis 7.0's `geo.c`,
//! `geohash.c` and `geohash_helper.c`: GEOADD (NX XX CH) GEOPOS GEODIST
//! GEOHASH here, the searches (GEOSEARCH GEOSEARCHSTORE GEORADIUS
//! GEORADIUSBYMEMBER and the `_RO` forms) in `search.rs`, the geohash
//! arithmetic in `hash.rs`.
//!
//! A geo set is a sorted set ([`ZSet`]) whose scores are 52-bit geohashes,
//! so ZRANGE, ZSCORE and ZREM read and change it through the sorted-set
//! model, and a GEO*STORE destination is an ordinary sorted set.
//!
//! What the model does not judge (it declines): a score it does not decode
//! (negative, or from 2^64: only ZADD makes those), a distance that comes
//! out NaN (nearly antipodal points, where C prints "nan"), and the
//! searches where Redis's cell walk does not test exactly the members
//! inside the shape (see `search.rs`).

use seedkv_engine::resp::Frame;

use super::commands::Call;
use super::redis_c::{parse_f64_strict, FloatError, NOT_A_FLOAT, SYNTAX_ERROR, WRONGTYPE};
use super::{Expected, KeyspaceModel, Typed, Value, ZSet};

mod hash;
mod search;
#[cfg(test)]
mod tests;

/// Redis 7.0 arities of the geo commands.
pub(crate) fn arity(name: &str) -> Option<i64> {
    Some(match name {
        "geoadd" => -5,
        "geodist" => -4,
        "geohash" | "geopos" => -2,
        "georadius" | "georadius_ro" => -6,
        "georadiusbymember" | "georadiusbymember_ro" => -5,
        "geosearch" => -7,
        "geosearchstore" => -8,
        _ => return None,
    })
}

/// The keys a geo command names, and whether it may write them. GEORADIUS
/// names every argument after a STORE or STOREDIST word (a superset of its
/// destination, which is enough to know what may change).
pub(crate) fn keys<'a>(name: &str, args: &'a [Vec<u8>]) -> Option<(Vec<&'a [u8]>, bool)> {
    let first: Vec<&[u8]> = args.get(1).map(Vec::as_slice).into_iter().collect();
    Some(match name {
        "geoadd" => (first, true),
        "georadius" | "georadiusbymember" => {
            let mut keys = first;
            keys.extend(store_destinations(args));
            (keys, true)
        }
        "geosearchstore" => (
            args.iter().skip(1).take(2).map(Vec::as_slice).collect(),
            true,
        ),
        _ if arity(name).is_some() => (first, false),
        _ => return None,
    })
}

/// Every argument that follows a STORE or STOREDIST word.
fn store_destinations(args: &[Vec<u8>]) -> impl Iterator<Item = &[u8]> {
    args.windows(2)
        .filter(|w| w[0].eq_ignore_ascii_case(b"store") || w[0].eq_ignore_ascii_case(b"storedist"))
        .map(|w| w[1].as_slice())
}

/// A unit's factor to metres (`extractUnitOrReply`, case-insensitive).
fn unit_m(text: &[u8]) -> Result<f64, Expected> {
    match text.to_ascii_lowercase().as_slice() {
        b"m" => Ok(1.0),
        b"km" => Ok(1000.0),
        b"ft" => Ok(0.3048),
        b"mi" => Ok(1609.34),
        _ => Err(Expected::error(
            "ERR unsupported unit provided. please use M, KM, FT, MI",
        )),
    }
}

/// `getDoubleFromObjectOrReply` with its message (`None`: Redis's default).
fn parse_double(text: &[u8], message: Option<&str>) -> Result<f64, Expected> {
    match parse_f64_strict(text) {
        Ok(v) => Ok(v),
        Err(FloatError::Invalid) => Err(Expected::error(&format!(
            "ERR {}",
            message.unwrap_or(&NOT_A_FLOAT[4..])
        ))),
        Err(FloatError::Unsure) => Err(Expected::Unpredictable),
    }
}

/// `extractLongLatOrReply`: two doubles within the limits.
fn parse_lon_lat(lon: &[u8], lat: &[u8]) -> Result<(f64, f64), Expected> {
    let lon = parse_double(lon, None)?;
    let lat = parse_double(lat, None)?;
    let outside = !(hash::LON_MIN..=hash::LON_MAX).contains(&lon)
        || !(hash::LAT_MIN..=hash::LAT_MAX).contains(&lat);
    if outside {
        return Err(Expected::error(&format!(
            "ERR invalid longitude,latitude pair {lon:.6},{lat:.6}"
        )));
    }
    Ok((lon, lat))
}

/// A distance as Redis replies it: `%.4f` (`None` for NaN, which C prints
/// as "nan" or "-nan").
fn distance_text(d: f64) -> Option<Frame> {
    (!d.is_nan()).then(|| Frame::Bulk(format!("{d:.4}").into_bytes()))
}

/// A coordinate as `addReplyHumanLongDouble` replies it: `%.17Lf` of the
/// (exactly widened) double with trailing zeros trimmed, as a bulk string
/// in RESP2 and a double in RESP3. `None` when the protocol is unknown.
fn coordinate(value: f64, resp: Option<u8>) -> Option<Frame> {
    let mut text = format!("{value:.17}");
    if text.contains('.') {
        let kept = text.trim_end_matches('0').trim_end_matches('.').len();
        text.truncate(kept);
    }
    if text == "-0" {
        text = "0".into();
    }
    match resp? {
        3 => text.parse().ok().map(Frame::Double),
        _ => Some(Frame::Bulk(text.into_bytes())),
    }
}

/// A position as GEOPOS and WITHCOORD reply it.
fn position_frame((lon, lat): (f64, f64), resp: Option<u8>) -> Option<Frame> {
    Some(Frame::Array(vec![
        coordinate(lon, resp)?,
        coordinate(lat, resp)?,
    ]))
}

impl KeyspaceModel {
    pub(crate) fn geo_command(&mut self, c: &Call) -> Expected {
        match c.name {
            "geoadd" => self.geoadd(c),
            "geopos" | "geohash" => self.geo_lookup(c),
            "geodist" => self.geodist(c),
            _ => self.geo_search(c),
        }
    }

    /// GEOADD key [NX|XX] [CH] lon lat member ...: ZADD with the hashes.
    fn geoadd(&mut self, c: &Call) -> Expected {
        let (mut nx, mut xx, mut ch) = (false, false, false);
        let mut j = 2;
        while let Some(arg) = c.args.get(j) {
            match arg.to_ascii_lowercase().as_slice() {
                b"nx" => nx = true,
                b"xx" => xx = true,
                b"ch" => ch = true,
                _ => break,
            }
            j += 1;
        }
        let triples = &c.args[j..];
        if !triples.len().is_multiple_of(3) || (nx && xx) {
            return Expected::error(SYNTAX_ERROR);
        }
        if triples.is_empty() {
            // ZADD without elements.
            return Expected::error(SYNTAX_ERROR);
        }
        let mut pairs = Vec::with_capacity(triples.len() / 3);
        for t in triples.chunks(3) {
            let (lon, lat) = match parse_lon_lat(&t[0], &t[1]) {
                Ok(position) => position,
                Err(error) => return self.geo_declined(c, error),
            };
            let Some(score) = hash::score_of(lon, lat) else {
                return self.geo_declined(c, Expected::Unpredictable);
            };
            pairs.push((score, &t[2]));
        }
        let z = match (xx, self.read_as(c.db, c.key(), c.now, Value::as_zset)) {
            (_, Typed::Unknown) => return Expected::Unpredictable,
            (_, Typed::WrongType) => return Expected::error(WRONGTYPE),
            (true, Typed::Absent) => return Expected::integer(0),
            (false, Typed::Absent) => {
                match self.upsert_as(c.db, c.key(), c.now, Value::empty_zset, Value::as_zset_mut) {
                    Typed::Found(z) => z,
                    _ => return Expected::Unpredictable,
                }
            }
            (_, Typed::Found(_)) => match self.write_as(c.db, c.key(), c.now, Value::as_zset_mut) {
                Typed::Found(z) => z,
                _ => return Expected::Unpredictable,
            },
        };
        let (mut added, mut changed) = (0, 0);
        for (score, member) in pairs {
            match z.score(member) {
                Some(_) if nx => {}
                Some(old) => {
                    if old != score {
                        z.insert(member, score);
                        changed += 1;
                    }
                }
                None if xx => {}
                None => {
                    z.insert(member, score);
                    added += 1;
                }
            }
        }
        self.drop_if_empty(c.db, c.key());
        Expected::integer(added + if ch { changed } else { 0 })
    }

    /// An argument the model does not parse makes what the command may
    /// write unknown; an error it does parse changes nothing.
    fn geo_declined(&mut self, c: &Call, error: Expected) -> Expected {
        if matches!(error, Expected::Unpredictable) {
            if let Some((keys, true)) = keys(c.name, c.args) {
                let keys: Vec<Vec<u8>> = keys.into_iter().map(<[u8]>::to_vec).collect();
                keys.iter().for_each(|k| self.forget_key(c.db, k));
            }
        }
        error
    }

    /// GEOPOS and GEOHASH: one entry per member, null when missing.
    fn geo_lookup(&mut self, c: &Call) -> Expected {
        let empty = ZSet::default();
        let z = match self.read_as(c.db, c.key(), c.now, Value::as_zset) {
            Typed::Unknown => return Expected::Unpredictable,
            Typed::WrongType => return Expected::error(WRONGTYPE),
            Typed::Absent => &empty,
            Typed::Found(z) => z,
        };
        let mut items = Vec::with_capacity(c.args.len() - 2);
        for member in &c.args[2..] {
            let Some(score) = z.score(member) else {
                items.push(Frame::Null);
                continue;
            };
            let Some(position) = hash::decode_score(score) else {
                return Expected::Unpredictable;
            };
            let item = match c.name {
                "geopos" => position_frame(position, c.resp),
                _ => hash::geohash_string(position.0, position.1)
                    .map(|s| Frame::Bulk(s.into_bytes())),
            };
            match item {
                Some(item) => items.push(item),
                None => return Expected::Unpredictable,
            }
        }
        Expected::Exactly(Frame::Array(items))
    }

    /// GEODIST key a b [unit]: the unit is checked before the key.
    fn geodist(&mut self, c: &Call) -> Expected {
        let factor = match c.args.len() {
            4 => 1.0,
            5 => match unit_m(&c.args[4]) {
                Ok(factor) => factor,
                Err(error) => return error,
            },
            _ => return Expected::error(SYNTAX_ERROR),
        };
        let z = match self.read_as(c.db, c.key(), c.now, Value::as_zset) {
            Typed::Unknown => return Expected::Unpredictable,
            Typed::WrongType => return Expected::error(WRONGTYPE),
            Typed::Absent => return Expected::Exactly(Frame::Null),
            Typed::Found(z) => z,
        };
        let (Some(a), Some(b)) = (z.score(&c.args[2]), z.score(&c.args[3])) else {
            return Expected::Exactly(Frame::Null);
        };
        let (Some(a), Some(b)) = (hash::decode_score(a), hash::decode_score(b)) else {
            return Expected::Unpredictable;
        };
        let d = hash::distance_m(a.0, a.1, b.0, b.1) / factor;
        distance_text(d).map_or(Expected::Unpredictable, Expected::Exactly)
    }
}
