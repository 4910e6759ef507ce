//! Geo sets: GEOADD (NX, XX, CH), GEOPOS, GEODIST (every unit), GEOHASH,
//! GEOSEARCH and GEOSEARCHSTORE (FROMMEMBER, FROMLONLAT, BYRADIUS, BYBOX,
//! ASC/DESC, COUNT [ANY], WITH*, STOREDIST), GEORADIUS and
//! GEORADIUSBYMEMBER (and `_RO`, STORE, STOREDIST) on a few shared `geo:`
//! keys of up to a few hundred points around Sicily, with the odd point
//! elsewhere on the globe (near the poles, the antimeridian). The sorted
//! set commands read the same keys and the shared store destinations;
//! keys are deleted and expire; now and then a coordinate is out of range,
//! an option is refused, or the key is a string (WRONGTYPE).

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{Request, Workload, WorkloadKind};

/// Source keys `geo:0 ..`.
pub const GEO_KEYS_COUNT: u32 = 3;
/// Store destinations `geo:d0 ..`.
pub const GEO_DESTINATIONS_COUNT: u32 = 2;
/// Members are `p0 .. p<this>`.
pub const GEO_MEMBERS_MAX: u32 = 300;
/// Members `p0 .. p<this>` are drawn more often.
pub const GEO_MEMBERS_HOT_COUNT: u32 = 30;
/// Points per GEOADD at most.
pub const GEO_ADD_POINTS_MAX: u32 = 8;
/// Requests per batch at most.
pub const GEO_BATCH_MAX: u32 = 4;
/// Longest pause between batches.
pub const GEO_THINK_NS_MAX: u64 = 400_000;

/// The region most points fall in, in micro-degrees: a degree square.
const REGION_LON_MIN_UDEG: i64 = 13_000_000;
const REGION_LAT_MIN_UDEG: i64 = 37_500_000;
const REGION_SIDE_UDEG: i64 = 1_000_000;

/// The string key that makes geo commands reply WRONGTYPE.
const STRING_KEY: &[u8] = b"geo:str";

pub struct Geo {
    growing: bool,
}

fn key(rng: &mut ChaCha8Rng) -> Vec<u8> {
    if rng.gen_ratio(1, 60) {
        return STRING_KEY.to_vec();
    }
    format!("geo:{}", rng.gen_range(0..GEO_KEYS_COUNT)).into_bytes()
}

fn destination(rng: &mut ChaCha8Rng) -> Vec<u8> {
    format!("geo:d{}", rng.gen_range(0..GEO_DESTINATIONS_COUNT)).into_bytes()
}

/// Members are drawn from a hot few half the time, so that lookups and
/// FROMMEMBER mostly find one.
fn member(rng: &mut ChaCha8Rng) -> Vec<u8> {
    let max = match rng.gen_bool(0.6) {
        true => GEO_MEMBERS_HOT_COUNT,
        false => GEO_MEMBERS_MAX,
    };
    format!("p{}", rng.gen_range(0..max)).into_bytes()
}

/// Micro-degrees as decimal degrees text.
fn degrees(udeg: i64) -> Vec<u8> {
    let sign = if udeg < 0 { "-" } else { "" };
    let a = udeg.unsigned_abs();
    format!("{sign}{}.{:06}", a / 1_000_000, a % 1_000_000).into_bytes()
}

/// A position `(lon, lat)`: mostly in the region (sometimes on a coarse
/// grid, so that points coincide), sometimes anywhere, rarely out of range.
fn position(rng: &mut ChaCha8Rng) -> (Vec<u8>, Vec<u8>) {
    let (lon, lat) = match rng.gen_range(0..100) {
        0..=69 => (
            REGION_LON_MIN_UDEG + rng.gen_range(0..REGION_SIDE_UDEG),
            REGION_LAT_MIN_UDEG + rng.gen_range(0..REGION_SIDE_UDEG),
        ),
        70..=84 => (
            REGION_LON_MIN_UDEG + rng.gen_range(0..10) * 100_000,
            REGION_LAT_MIN_UDEG + rng.gen_range(0..10) * 100_000,
        ),
        85..=91 => (
            rng.gen_range(-180_000_000..=180_000_000),
            rng.gen_range(-85_051_128..=85_051_128),
        ),
        92..=97 => (
            // Near a pole and the antimeridian.
            rng.gen_range(170_000_000..=180_000_000) * if rng.gen_bool(0.5) { 1 } else { -1 },
            rng.gen_range(75_000_000..=85_051_128) * if rng.gen_bool(0.5) { 1 } else { -1 },
        ),
        _ => (
            // Out of range: a longitude past 180 or a latitude past 85.05.
            rng.gen_range(179_000_000..=181_000_000),
            rng.gen_range(84_000_000..=86_000_000),
        ),
    };
    (degrees(lon), degrees(lat))
}

fn unit(rng: &mut ChaCha8Rng) -> Vec<u8> {
    let units: &[&[u8]] = &[b"m", b"km", b"km", b"mi", b"ft", b"KM", b"yd"];
    let i = match rng.gen_ratio(1, 40) {
        true => units.len() - 1,
        false => rng.gen_range(0..units.len() - 1),
    };
    units[i].to_vec()
}

/// A radius in the unit: mostly region-sized, rarely zero or continental.
fn radius(rng: &mut ChaCha8Rng, unit: &[u8]) -> Vec<u8> {
    let km = match rng.gen_range(0..20) {
        0 => 0,
        1 => rng.gen_range(1_000..20_000),
        2 => rng.gen_range(100..1_000),
        _ => rng.gen_range(1..80),
    };
    let value = match unit.to_ascii_lowercase().as_slice() {
        b"m" => km * 1000,
        b"ft" => km * 3281,
        _ => km,
    };
    if rng.gen_ratio(1, 50) {
        return format!("-{value}").into_bytes();
    }
    value.to_string().into_bytes()
}

impl Geo {
    pub fn new(rng: &mut ChaCha8Rng) -> Geo {
        Geo {
            growing: rng.gen_bool(0.7),
        }
    }

    fn geoadd(&mut self, rng: &mut ChaCha8Rng) -> Request {
        let mut r = vec![b"GEOADD".to_vec(), key(rng)];
        let options: &[&[u8]] = match rng.gen_range(0..12) {
            0 => &[b"NX"],
            1 => &[b"XX"],
            2 => &[b"CH"],
            3 => &[b"XX", b"CH"],
            4 => &[b"NX", b"CH"],
            5 if rng.gen_ratio(1, 10) => &[b"NX", b"XX"],
            _ => &[],
        };
        r.extend(options.iter().map(|o| o.to_vec()));
        let points = match self.growing {
            true => rng.gen_range(1..=GEO_ADD_POINTS_MAX),
            false => 1,
        };
        for _ in 0..points {
            let (lon, lat) = position(rng);
            r.extend([lon, lat, member(rng)]);
        }
        r
    }

    /// The options every search shares, in a random order.
    fn search_options(rng: &mut ChaCha8Rng, with_allowed: bool) -> Vec<Vec<u8>> {
        let mut options: Vec<Vec<Vec<u8>>> = Vec::new();
        if with_allowed {
            for word in [&b"WITHCOORD"[..], b"WITHDIST", b"WITHHASH"] {
                if rng.gen_bool(0.3) {
                    options.push(vec![word.to_vec()]);
                }
            }
        }
        match rng.gen_range(0..4) {
            0 => options.push(vec![b"ASC".to_vec()]),
            1 => options.push(vec![b"DESC".to_vec()]),
            _ => {}
        }
        if rng.gen_bool(0.4) {
            let n = match rng.gen_ratio(1, 40) {
                true => 0,
                false => rng.gen_range(1..=12),
            };
            let mut count = vec![b"COUNT".to_vec(), n.to_string().into_bytes()];
            if rng.gen_bool(0.3) {
                count.push(b"ANY".to_vec());
            }
            options.push(count);
        } else if rng.gen_ratio(1, 40) {
            options.push(vec![b"ANY".to_vec()]);
        }
        // Shuffle the option groups (each stays whole).
        for i in (1..options.len()).rev() {
            options.swap(i, rng.gen_range(0..=i));
        }
        options.into_iter().flatten().collect()
    }

    fn geosearch(rng: &mut ChaCha8Rng) -> Request {
        let store = rng.gen_bool(0.3);
        let mut r = match store {
            true => vec![b"GEOSEARCHSTORE".to_vec(), destination(rng), key(rng)],
            false => vec![b"GEOSEARCH".to_vec(), key(rng)],
        };
        let mut groups: Vec<Vec<Vec<u8>>> = Vec::new();
        groups.push(match rng.gen_bool(0.5) {
            true => vec![b"FROMMEMBER".to_vec(), member(rng)],
            false => {
                let (lon, lat) = position(rng);
                vec![b"FROMLONLAT".to_vec(), lon, lat]
            }
        });
        let u = unit(rng);
        groups.push(match rng.gen_bool(0.5) {
            true => vec![b"BYRADIUS".to_vec(), radius(rng, &u), u],
            false => vec![b"BYBOX".to_vec(), radius(rng, &u), radius(rng, &u), u],
        });
        if rng.gen_ratio(1, 30) {
            // FROM or BY missing (the arity still holds).
            groups.remove(rng.gen_range(0..groups.len()));
            groups.push(vec![b"ASC".to_vec(), b"WITHDIST".to_vec()]);
        }
        if rng.gen_bool(0.5) {
            groups.reverse();
        }
        r.extend(groups.into_iter().flatten());
        let with_allowed = !store || rng.gen_ratio(1, 20);
        r.extend(Geo::search_options(rng, with_allowed));
        if store && rng.gen_bool(0.4) {
            r.push(b"STOREDIST".to_vec());
        }
        r
    }

    fn georadius(rng: &mut ChaCha8Rng) -> Request {
        let by_member = rng.gen_bool(0.5);
        let read_only = rng.gen_bool(0.2);
        let name: &[u8] = match (by_member, read_only) {
            (false, false) => b"GEORADIUS",
            (false, true) => b"GEORADIUS_RO",
            (true, false) => b"GEORADIUSBYMEMBER",
            (true, true) => b"GEORADIUSBYMEMBER_RO",
        };
        let mut r = vec![name.to_vec(), key(rng)];
        if by_member {
            r.push(member(rng));
        } else {
            let (lon, lat) = position(rng);
            r.extend([lon, lat]);
        }
        let u = unit(rng);
        r.push(radius(rng, &u));
        r.push(u);
        let store = rng.gen_bool(0.3);
        let with_allowed = !store || rng.gen_ratio(1, 20);
        r.extend(Geo::search_options(rng, with_allowed));
        if store {
            let word: &[u8] = if rng.gen_bool(0.5) {
                b"STORE"
            } else {
                b"STOREDIST"
            };
            r.extend([word.to_vec(), destination(rng)]);
        }
        r
    }

    fn one(&mut self, rng: &mut ChaCha8Rng) -> Request {
        match rng.gen_range(0..100) {
            0..=24 => self.geoadd(rng),
            25..=30 => {
                let mut r = vec![b"GEOPOS".to_vec(), key(rng)];
                r.extend((0..rng.gen_range(1..=4)).map(|_| member(rng)));
                r
            }
            31..=35 => {
                let mut r = vec![b"GEODIST".to_vec(), key(rng), member(rng), member(rng)];
                if rng.gen_bool(0.6) {
                    r.push(unit(rng));
                }
                r
            }
            36..=39 => {
                let mut r = vec![b"GEOHASH".to_vec(), key(rng)];
                r.extend((0..rng.gen_range(1..=4)).map(|_| member(rng)));
                r
            }
            40..=59 => Geo::geosearch(rng),
            60..=74 => Geo::georadius(rng),
            75..=79 => {
                let mut r = vec![b"ZREM".to_vec(), key(rng)];
                let n = if self.growing { 1 } else { 10 };
                r.extend((0..rng.gen_range(1..=n)).map(|_| member(rng)));
                r
            }
            80..=83 => vec![b"ZSCORE".to_vec(), key(rng), member(rng)],
            84..=88 => vec![
                b"ZRANGE".to_vec(),
                destination(rng),
                b"0".to_vec(),
                b"-1".to_vec(),
                b"WITHSCORES".to_vec(),
            ],
            89..=90 => vec![b"ZCARD".to_vec(), key(rng)],
            // Sources live long enough to grow to a few hundred points.
            91 if rng.gen_ratio(1, 4) => vec![b"DEL".to_vec(), key(rng)],
            91 => vec![b"ZCARD".to_vec(), key(rng)],
            92 => vec![b"DEL".to_vec(), destination(rng)],
            93 if rng.gen_ratio(1, 4) => vec![
                b"PEXPIRE".to_vec(),
                key(rng),
                rng.gen_range(1..=3000u32).to_string().into_bytes(),
            ],
            93 => vec![b"GEOHASH".to_vec(), key(rng), member(rng)],
            94 => vec![
                b"GEOADD".to_vec(),
                key(rng),
                b"XX".to_vec(),
                b"200".to_vec(),
                b"0".to_vec(),
                member(rng),
            ],
            95 => vec![b"SET".to_vec(), STRING_KEY.to_vec(), b"x".to_vec()],
            96 => vec![b"SET".to_vec(), destination(rng), b"x".to_vec()],
            _ => vec![
                b"ZRANGE".to_vec(),
                key(rng),
                b"0".to_vec(),
                b"4".to_vec(),
                b"WITHSCORES".to_vec(),
            ],
        }
    }
}

impl Workload for Geo {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::Geo
    }

    fn next_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        if rng.gen_bool(0.02) {
            self.growing = !self.growing;
        }
        for _ in 0..rng.gen_range(1..=GEO_BATCH_MAX) {
            batch.push(self.one(rng));
        }
    }

    fn think_ns(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        rng.gen_range(0..=GEO_THINK_NS_MAX)
    }
}
