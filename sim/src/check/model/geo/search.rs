//! GEOSEARCH, GEOSEARCHSTORE, GEORADIUS, GEORADIUSBYMEMBER and the `_RO`
//! forms (Redis 7.0's `georadiusGeneric`).
//!
//! # What is predicted
//!
//! The members a search finds are those whose decoded position passes
//! Redis's test (haversine distance within the radius; for a box, the
//! east-west distance along the point's parallel and the north-south
//! distance along its meridian within the half sides). Redis tests only
//! the members in the cells of its walk ([`hash::search_ranges`]), which
//! can miss members inside the shape (a radius that the estimated cells do
//! not cover: near the poles, across the antimeridian, huge radii) or test
//! one twice (a huge radius makes neighbouring cells repeat). The model
//! computes the same cells, and declines a search where the walk and the
//! plain test disagree: so every prediction is of the plain test.
//!
//! The order of the reply is judged as Redis leaves it:
//!
//! - no ASC/DESC and no COUNT: any order;
//! - ASC/DESC (COUNT without ANY implies ASC): by distance, members at an
//!   equal distance in any order; COUNT keeps the nearest (or farthest),
//!   any of those tied at the boundary;
//! - COUNT ANY: any `min(count, found)` of the members found (Redis stops
//!   at the first ones its walk meets), sorted if ASC/DESC was given.
//!
//! A STORE whose members are not determined that way (COUNT with a tie at
//! the boundary, COUNT ANY cutting the result) makes the destination
//! unknown; otherwise the destination is the sorted set of the members,
//! scored by geohash (STORE) or by distance in the unit (STOREDIST), and
//! is deleted when nothing was found.

use std::collections::BTreeMap;

use seedkv_engine::resp::Frame;

use super::super::commands::Call;
use super::super::redis_c::{parse_i64_strict, NOT_AN_INTEGER, SYNTAX_ERROR, WRONGTYPE};
use super::super::{Entry, Expected, KeyspaceModel, Typed, Value, ZSet};
use super::hash::{self, Shape};
use super::{
    distance_text, parse_double, parse_lon_lat, position_frame, store_destinations, unit_m,
};

/// Which command, as `georadiusGeneric`'s flags.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Variant {
    /// GEORADIUS key lon lat radius unit ...
    Coords { store_allowed: bool },
    /// GEORADIUSBYMEMBER key member radius unit ...
    Member { store_allowed: bool },
    /// GEOSEARCH key FROM... BY... ...
    Search,
    /// GEOSEARCHSTORE dst key FROM... BY... ...
    SearchStore,
}

impl Variant {
    fn of(name: &str) -> Variant {
        match name {
            "georadius" => Variant::Coords {
                store_allowed: true,
            },
            "georadius_ro" => Variant::Coords {
                store_allowed: false,
            },
            "georadiusbymember" => Variant::Member {
                store_allowed: true,
            },
            "georadiusbymember_ro" => Variant::Member {
                store_allowed: false,
            },
            "geosearch" => Variant::Search,
            _ => Variant::SearchStore,
        }
    }

    fn is_search(self) -> bool {
        matches!(self, Variant::Search | Variant::SearchStore)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sort {
    None,
    Asc,
    Desc,
}

/// A parsed search.
struct Query {
    centre: (f64, f64),
    shape: Shape,
    /// The radius Redis sizes its cells by, in metres.
    estimate_radius_m: f64,
    /// The unit's factor to metres.
    factor: f64,
    with_dist: bool,
    with_hash: bool,
    with_coord: bool,
    sort: Sort,
    any: bool,
    /// COUNT, if given (> 0).
    count: Option<usize>,
    /// The destination and whether it stores distances.
    store: Option<(Vec<u8>, bool)>,
}

/// One member inside the shape.
struct Found {
    member: Vec<u8>,
    score: f64,
    dist_m: f64,
    position: (f64, f64),
}

/// What a search comes to, before anything is written.
enum Plan {
    /// A reply, nothing written.
    Reply(Expected),
    /// The source does not exist: an empty reply, or 0 and the destination
    /// deleted.
    NoSource(Option<Vec<u8>>),
    /// The model does not judge it: destinations become unknown.
    Declined,
    Found(Query, Vec<Found>),
}

/// `extractDistanceOrReply`: `(distance in the unit, factor)`.
fn parse_distance(value: &[u8], unit: &[u8]) -> Result<(f64, f64), Expected> {
    let d = parse_double(value, Some("need numeric radius"))?;
    if d < 0.0 {
        return Err(Expected::error("ERR radius cannot be negative"));
    }
    Ok((d, unit_m(unit)?))
}

/// `extractBoxOrReply`: `(width, height, factor)` in the unit.
fn parse_box(width: &[u8], height: &[u8], unit: &[u8]) -> Result<(f64, f64, f64), Expected> {
    let w = parse_double(width, Some("need numeric width"))?;
    let h = parse_double(height, Some("need numeric height"))?;
    if h < 0.0 || w < 0.0 {
        return Err(Expected::error("ERR height or width cannot be negative"));
    }
    Ok((w, h, unit_m(unit)?))
}

/// A member's decoded position (`longLatFromMember`).
fn member_position(z: &ZSet, member: &[u8]) -> Result<(f64, f64), Expected> {
    let Some(score) = z.score(member) else {
        return Err(Expected::error(
            "ERR could not decode requested zset member",
        ));
    };
    hash::decode_score(score).ok_or(Expected::Unpredictable)
}

fn circle(radius: f64, factor: f64) -> (Shape, f64) {
    (Shape::Radius(radius * factor), radius * factor)
}

fn rectangle(width: f64, height: f64, factor: f64) -> (Shape, f64) {
    let estimate = ((width / 2.0) * (width / 2.0) + (height / 2.0) * (height / 2.0)).sqrt();
    let shape = Shape::Box {
        width_m: width * factor,
        height_m: height * factor,
    };
    (shape, estimate * factor)
}

/// What parsing leaves: the destination (if the command stores), and the
/// query (if the source exists).
type Parsed = (Option<Vec<u8>>, Option<Query>);

/// Parses the command as `georadiusGeneric` does, in its order; `z` is the
/// source (`None` when absent). `Err` is the reply.
fn parse(c: &Call, variant: Variant, z: Option<&ZSet>) -> Result<Parsed, Expected> {
    let args = c.args;
    let mut centre = None;
    let mut shape = None;
    let mut store = None;
    let base = match variant {
        Variant::Coords { .. } => {
            centre = Some(parse_lon_lat(&args[2], &args[3])?);
            let (radius, factor) = parse_distance(&args[4], &args[5])?;
            shape = Some((circle(radius, factor), factor));
            6
        }
        Variant::Member { .. } => {
            if let Some(z) = z {
                centre = Some(member_position(z, &args[2])?);
                let (radius, factor) = parse_distance(&args[3], &args[4])?;
                shape = Some((circle(radius, factor), factor));
            }
            5
        }
        Variant::Search => 2,
        Variant::SearchStore => {
            store = Some((args[1].clone(), false));
            3
        }
    };
    let store_allowed = matches!(
        variant,
        Variant::Coords {
            store_allowed: true
        } | Variant::Member {
            store_allowed: true
        }
    );
    let search = variant.is_search();
    let (mut with_dist, mut with_hash, mut with_coord, mut any) = (false, false, false, false);
    let (mut from_member, mut from_lonlat, mut by_radius, mut by_box) =
        (false, false, false, false);
    let mut sort = Sort::None;
    let mut count: i64 = 0;
    let mut i = base;
    while i < args.len() {
        let left = args.len() - i - 1;
        match args[i].to_ascii_lowercase().as_slice() {
            b"withdist" => with_dist = true,
            b"withhash" => with_hash = true,
            b"withcoord" => with_coord = true,
            b"any" => any = true,
            b"asc" => sort = Sort::Asc,
            b"desc" => sort = Sort::Desc,
            b"count" if left >= 1 => {
                count = parse_i64_strict(&args[i + 1]).ok_or(Expected::error(NOT_AN_INTEGER))?;
                if count <= 0 {
                    return Err(Expected::error("ERR COUNT must be > 0"));
                }
                i += 1;
            }
            word @ (b"store" | b"storedist") if left >= 1 && store_allowed => {
                store = Some((args[i + 1].clone(), word == b"storedist"));
                i += 1;
            }
            b"storedist" if variant == Variant::SearchStore => {
                if let Some((_, dist)) = store.as_mut() {
                    *dist = true;
                }
            }
            b"frommember" if left >= 1 && search && !from_lonlat => {
                if let Some(z) = z {
                    centre = Some(member_position(z, &args[i + 1])?);
                }
                from_member = true;
                i += 1;
            }
            b"fromlonlat" if left >= 2 && search && !from_member => {
                centre = Some(parse_lon_lat(&args[i + 1], &args[i + 2])?);
                from_lonlat = true;
                i += 2;
            }
            b"byradius" if left >= 2 && search && !by_box => {
                let (radius, factor) = parse_distance(&args[i + 1], &args[i + 2])?;
                shape = Some((circle(radius, factor), factor));
                by_radius = true;
                i += 2;
            }
            b"bybox" if left >= 3 && search && !by_radius => {
                let (w, h, factor) = parse_box(&args[i + 1], &args[i + 2], &args[i + 3])?;
                shape = Some((rectangle(w, h, factor), factor));
                by_box = true;
                i += 3;
            }
            _ => return Err(Expected::error(SYNTAX_ERROR)),
        }
        i += 1;
    }
    if store.is_some() && (with_dist || with_hash || with_coord) {
        let who = match variant {
            Variant::SearchStore => "GEOSEARCHSTORE",
            _ => "STORE option in GEORADIUS",
        };
        return Err(Expected::error(&format!(
            "ERR {who} is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
        )));
    }
    let typed = String::from_utf8_lossy(&args[0]);
    if search && !(from_member || from_lonlat) {
        return Err(Expected::error(&format!(
            "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for {typed}"
        )));
    }
    if search && !(by_radius || by_box) {
        return Err(Expected::error(&format!(
            "ERR exactly one of BYRADIUS and BYBOX can be specified for {typed}"
        )));
    }
    if any && count == 0 {
        return Err(Expected::error(
            "ERR the ANY argument requires COUNT argument",
        ));
    }
    if z.is_none() {
        return Ok((store.map(|(dst, _)| dst), None));
    }
    let (Some(centre), Some(((shape, estimate_radius_m), factor))) = (centre, shape) else {
        // A source exists, so the centre and the shape were parsed.
        return Err(Expected::Unpredictable);
    };
    if count != 0 && sort == Sort::None && !any {
        sort = Sort::Asc;
    }
    let dst = store.as_ref().map(|(dst, _)| dst.clone());
    Ok((
        dst,
        Some(Query {
            centre,
            shape,
            estimate_radius_m,
            factor,
            with_dist,
            with_hash,
            with_coord,
            sort,
            any,
            count: (count > 0).then_some(count as usize),
            store,
        }),
    ))
}

/// The members inside the shape, or `None` when Redis's walk would not
/// find exactly them (or a score or distance the model does not judge).
fn find(z: &ZSet, q: &Query) -> Option<Vec<Found>> {
    let ranges = hash::search_ranges(q.shape, q.estimate_radius_m, q.centre.0, q.centre.1);
    let mut found = Vec::new();
    for (member, score) in z.iter() {
        let position = hash::decode_score(score)?;
        let Some(dist_m) = hash::within(q.shape, q.centre, position) else {
            continue;
        };
        if dist_m.is_nan() {
            return None;
        }
        let walked = ranges
            .iter()
            .filter(|&&(min, max)| min <= score && score < max)
            .count();
        if walked != 1 {
            // Inside the shape, but never tested (or tested twice).
            return None;
        }
        found.push(Found {
            member: member.to_vec(),
            score,
            dist_m,
            position,
        });
    }
    Some(found)
}

/// One member as the reply shows it.
fn item_frame(f: &Found, q: &Query, resp: Option<u8>) -> Option<Frame> {
    let member = Frame::Bulk(f.member.clone());
    if !(q.with_dist || q.with_hash || q.with_coord) {
        return Some(member);
    }
    let mut parts = vec![member];
    if q.with_dist {
        parts.push(distance_text(f.dist_m / q.factor)?);
    }
    if q.with_hash {
        parts.push(Frame::Integer(f.score as i64));
    }
    if q.with_coord {
        parts.push(position_frame(f.position, resp)?);
    }
    Some(Frame::Array(parts))
}

/// The distances of all members in the reply's order (`None`: unsorted).
fn sorted_distances(found: &[Found], sort: Sort) -> Option<Vec<f64>> {
    let mut dists: Vec<f64> = found.iter().map(|f| f.dist_m).collect();
    match sort {
        Sort::None => return None,
        Sort::Asc => dists.sort_by(f64::total_cmp),
        Sort::Desc => dists.sort_by(|a, b| b.total_cmp(a)),
    }
    Some(dists)
}

/// How many members the reply (or the destination) holds.
fn returned(found: &[Found], q: &Query) -> usize {
    q.count.map_or(found.len(), |n| n.min(found.len()))
}

/// Whether the returned members are determined: everything, or the
/// nearest (farthest) few without a tie at the boundary.
fn members_determined(found: &[Found], q: &Query) -> bool {
    let n = returned(found, q);
    if n == found.len() {
        return true;
    }
    if q.any {
        return false;
    }
    match sorted_distances(found, q.sort) {
        Some(d) => d[n - 1] != d[n],
        None => false,
    }
}

/// Judges a recorded search reply against the members found.
fn judge(reply: &Frame, found: &[Found], frames: &[Frame], q: &Query) -> Result<(), String> {
    let n = returned(found, q);
    let wanted = || {
        let shown: Vec<String> = found
            .iter()
            .take(16)
            .map(|f| String::from_utf8_lossy(&f.member).into_owned())
            .collect();
        format!(
            "{n} of the {} members inside the shape ({:?} sort {:?}{}): {shown:?}",
            found.len(),
            q.count,
            q.sort,
            if q.any { " any" } else { "" }
        )
    };
    let Frame::Array(items) = reply else {
        return Err(wanted());
    };
    if items.len() != n {
        return Err(wanted());
    }
    let index: BTreeMap<&[u8], usize> = found
        .iter()
        .enumerate()
        .map(|(i, f)| (f.member.as_slice(), i))
        .collect();
    let mut seen = vec![false; found.len()];
    let mut dists = Vec::with_capacity(n);
    for item in items {
        let name = match item {
            Frame::Bulk(m) => m,
            Frame::Array(parts) => match parts.first() {
                Some(Frame::Bulk(m)) => m,
                _ => return Err(wanted()),
            },
            _ => return Err(wanted()),
        };
        let Some(&i) = index.get(name.as_slice()) else {
            return Err(format!(
                "{}; {:?} is not one",
                wanted(),
                String::from_utf8_lossy(name)
            ));
        };
        if seen[i] || frames[i] != *item {
            return Err(format!("{}; as {}", wanted(), frames[i].render()));
        }
        seen[i] = true;
        dists.push(found[i].dist_m);
    }
    let ordered = match q.sort {
        Sort::None => true,
        Sort::Asc => dists.windows(2).all(|w| w[0] <= w[1]),
        Sort::Desc => dists.windows(2).all(|w| w[0] >= w[1]),
    };
    if !ordered {
        return Err(format!("{}, in distance order", wanted()));
    }
    if q.count.is_some() && !q.any {
        if let Some(all) = sorted_distances(found, q.sort) {
            if all[..n] != dists[..] {
                return Err(format!("{}, the nearest (farthest) ones", wanted()));
            }
        }
    }
    Ok(())
}

impl KeyspaceModel {
    pub(crate) fn geo_search(&mut self, c: &Call) -> Expected {
        let variant = Variant::of(c.name);
        let source = match variant {
            Variant::SearchStore => &c.args[2],
            _ => &c.args[1],
        };
        let plan = match self.read_as(c.db, source, c.now, Value::as_zset) {
            Typed::Unknown => Plan::Declined,
            Typed::WrongType => Plan::Reply(Expected::error(WRONGTYPE)),
            Typed::Absent => match parse(c, variant, None) {
                Err(Expected::Unpredictable) => Plan::Declined,
                Err(reply) => Plan::Reply(reply),
                Ok((dst, _)) => Plan::NoSource(dst),
            },
            Typed::Found(z) => match parse(c, variant, Some(z)) {
                Err(Expected::Unpredictable) => Plan::Declined,
                Err(reply) => Plan::Reply(reply),
                Ok((_, None)) => Plan::Declined,
                Ok((_, Some(q))) => match find(z, &q) {
                    None => Plan::Declined,
                    Some(found) => Plan::Found(q, found),
                },
            },
        };
        match plan {
            Plan::Reply(reply) => reply,
            Plan::Declined => {
                self.forget_destinations(c, variant);
                Expected::Unpredictable
            }
            Plan::NoSource(None) => Expected::Exactly(Frame::Array(Vec::new())),
            Plan::NoSource(Some(dst)) => {
                self.remove(c.db, &dst);
                Expected::integer(0)
            }
            Plan::Found(q, found) => self.search_outcome(c, q, found),
        }
    }

    fn forget_destinations(&mut self, c: &Call, variant: Variant) {
        let dsts: Vec<Vec<u8>> = match variant {
            Variant::SearchStore => vec![c.args[1].clone()],
            Variant::Coords {
                store_allowed: true,
            }
            | Variant::Member {
                store_allowed: true,
            } => store_destinations(c.args).map(<[u8]>::to_vec).collect(),
            _ => Vec::new(),
        };
        dsts.iter().for_each(|k| self.forget_key(c.db, k));
    }

    fn search_outcome(&mut self, c: &Call, q: Query, found: Vec<Found>) -> Expected {
        let n = returned(&found, &q);
        let Some((dst, store_dist)) = &q.store else {
            let frames: Option<Vec<Frame>> =
                found.iter().map(|f| item_frame(f, &q, c.resp)).collect();
            let Some(frames) = frames else {
                return Expected::Unpredictable;
            };
            return Expected::Verdict(match c.reply {
                Some(reply) => judge(reply, &found, &frames, &q),
                None => Ok(()),
            });
        };
        if !members_determined(&found, &q) {
            self.forget_key(c.db, dst);
            return Expected::integer(n as i64);
        }
        if n == 0 {
            self.remove(c.db, dst);
            return Expected::integer(0);
        }
        let mut z = ZSet::default();
        let kept: Vec<&Found> = match sorted_distances(&found, q.sort) {
            // Determined: the members within the boundary distance.
            Some(d) if n < found.len() => {
                let boundary = d[n - 1];
                found
                    .iter()
                    .filter(|f| match q.sort {
                        Sort::Desc => f.dist_m >= boundary,
                        _ => f.dist_m <= boundary,
                    })
                    .collect()
            }
            _ => found.iter().collect(),
        };
        debug_assert_eq!(kept.len(), n);
        for f in kept {
            let score = if *store_dist {
                f.dist_m / q.factor
            } else {
                f.score
            };
            z.insert(&f.member, score);
        }
        self.store(
            c.db,
            dst,
            Entry {
                value: Value::ZSet(z),
                expire_unix_ms: None,
            },
        );
        Expected::integer(n as i64)
    }
}
