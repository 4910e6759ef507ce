//! The geo searches, one generic command as Redis's `georadiusGeneric`:
//! GEORADIUS and GEORADIUSBYMEMBER (with STORE/STOREDIST), their `_RO`
//! forms, GEOSEARCH and GEOSEARCHSTORE. Arguments are parsed and checked in
//! Redis's order, then the cells of [`geohash::areas_by_shape`] are
//! scanned, the points inside kept, sorted by distance if asked (a stable
//! sort, as glibc's merge-sort `qsort`) and replied or stored.

use super::{parse_lon_lat, parse_unit, reply_coordinate, reply_distance, zset_at, SYNTAX_ERROR};
use crate::cmd::Ctx;
use crate::commands::zsets::parse_double;
use crate::notify::{class, notify};
use crate::types::geohash::{self, Search, Shape};
use crate::types::zset::{ScoreRange, ZSet};
use crate::util::parse_i64_strict;
use crate::value::Value;

/// Which command runs (Redis's flags).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// GEORADIUS: centre and radius are positional.
    Coords { store: bool },
    /// GEORADIUSBYMEMBER: centre member and radius are positional.
    Member { store: bool },
    /// GEOSEARCH and GEOSEARCHSTORE: FROM... and BY... options.
    Search { store: bool },
}

impl Mode {
    fn is_search(self) -> bool {
        matches!(self, Mode::Search { .. })
    }
    /// STORE and STOREDIST with a key (GEORADIUS without `_RO`).
    fn takes_store_key(self) -> bool {
        matches!(
            self,
            Mode::Coords { store: true } | Mode::Member { store: true }
        )
    }
}

pub(super) fn georadius(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    generic(ctx, args, Mode::Coords { store: true });
}
pub(super) fn georadius_ro(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    generic(ctx, args, Mode::Coords { store: false });
}
pub(super) fn georadiusbymember(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    generic(ctx, args, Mode::Member { store: true });
}
pub(super) fn georadiusbymember_ro(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    generic(ctx, args, Mode::Member { store: false });
}
pub(super) fn geosearch(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    generic(ctx, args, Mode::Search { store: false });
}
pub(super) fn geosearchstore(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    generic(ctx, args, Mode::Search { store: true });
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Sort {
    None,
    Asc,
    Desc,
}

/// A parsed request.
struct Request {
    /// None when the source key is missing and the centre was never
    /// computed (GEORADIUSBYMEMBER, FROMMEMBER).
    search: Option<Search>,
    withdist: bool,
    withhash: bool,
    withcoords: bool,
    sort: Sort,
    any: bool,
    count: u64,
    /// The destination and whether it stores distances.
    store: Option<(Vec<u8>, bool)>,
}

/// A point found inside the search.
struct Point {
    member: Box<[u8]>,
    longitude: f64,
    latitude: f64,
    /// Meters from the centre.
    dist_m: f64,
    score: f64,
}

/// The centre and shape being parsed.
#[derive(Default)]
struct Partial {
    center: Option<(f64, f64)>,
    shape: Option<Shape>,
    conversion: f64,
}

fn member_center(z: Option<&ZSet>, member: &[u8]) -> Result<Option<(f64, f64)>, String> {
    let Some(z) = z else {
        return Ok(None);
    };
    match z.score(member) {
        Some(score) => Ok(Some(geohash::decode_score(score))),
        None => Err("ERR could not decode requested zset member".into()),
    }
}

/// Redis's `extractDistanceOrReply`: a radius and its unit.
fn parse_radius(args: &[Vec<u8>]) -> Result<(f64, f64), String> {
    let r = parse_double(&args[0]).ok_or("ERR need numeric radius")?;
    if r < 0.0 {
        return Err("ERR radius cannot be negative".into());
    }
    Ok((r, parse_unit(&args[1])?))
}

/// Redis's `extractBoxOrReply`: width, height and unit.
fn parse_box(args: &[Vec<u8>]) -> Result<(Shape, f64), String> {
    let width = parse_double(&args[0]).ok_or("ERR need numeric width")?;
    let height = parse_double(&args[1]).ok_or("ERR need numeric height")?;
    if height < 0.0 || width < 0.0 {
        return Err("ERR height or width cannot be negative".into());
    }
    Ok((Shape::Box { width, height }, parse_unit(&args[2])?))
}

/// Parses everything after the key(s), as `georadiusGeneric` does.
fn parse(args: &[Vec<u8>], z: Option<&ZSet>, mode: Mode) -> Result<Request, String> {
    let mut p = Partial::default();
    let mut store = None;
    let base = match mode {
        Mode::Coords { .. } => {
            p.center = Some(parse_lon_lat(&args[2..4])?);
            let (r, conversion) = parse_radius(&args[4..6])?;
            (p.shape, p.conversion) = (Some(Shape::Radius(r)), conversion);
            6
        }
        Mode::Member { .. } => {
            if z.is_some() {
                p.center = member_center(z, &args[2])?;
                let (r, conversion) = parse_radius(&args[3..5])?;
                (p.shape, p.conversion) = (Some(Shape::Radius(r)), conversion);
            }
            5
        }
        Mode::Search { store: true } => {
            store = Some((args[1].clone(), false));
            3
        }
        Mode::Search { store: false } => 2,
    };
    let mut req = Request {
        search: None,
        withdist: false,
        withhash: false,
        withcoords: false,
        sort: Sort::None,
        any: false,
        count: 0,
        store,
    };
    let (mut frommember, mut fromloc, mut byradius, mut bybox) = (false, false, false, false);
    let opts = &args[base..];
    let remaining = opts.len();
    let mut i = 0;
    while i < remaining {
        let arg = opts[i].to_ascii_lowercase();
        match arg.as_slice() {
            b"withdist" => req.withdist = true,
            b"withhash" => req.withhash = true,
            b"withcoord" => req.withcoords = true,
            b"any" => req.any = true,
            b"asc" => req.sort = Sort::Asc,
            b"desc" => req.sort = Sort::Desc,
            b"count" if i + 1 < remaining => {
                let count = parse_i64_strict(&opts[i + 1])
                    .ok_or("ERR value is not an integer or out of range")?;
                if count <= 0 {
                    return Err("ERR COUNT must be > 0".into());
                }
                req.count = count as u64;
                i += 1;
            }
            b"store" | b"storedist" if i + 1 < remaining && mode.takes_store_key() => {
                req.store = Some((opts[i + 1].clone(), arg == b"storedist"));
                i += 1;
            }
            b"storedist" if mode == (Mode::Search { store: true }) => {
                if let Some((_, dist)) = &mut req.store {
                    *dist = true;
                }
            }
            b"frommember" if i + 1 < remaining && mode.is_search() && !fromloc => {
                p.center = member_center(z, &opts[i + 1])?;
                frommember = true;
                i += 1;
            }
            b"fromlonlat" if i + 2 < remaining && mode.is_search() && !frommember => {
                p.center = Some(parse_lon_lat(&opts[i + 1..i + 3])?);
                fromloc = true;
                i += 2;
            }
            b"byradius" if i + 2 < remaining && mode.is_search() && !bybox => {
                let (r, conversion) = parse_radius(&opts[i + 1..i + 3])?;
                (p.shape, p.conversion) = (Some(Shape::Radius(r)), conversion);
                byradius = true;
                i += 2;
            }
            b"bybox" if i + 3 < remaining && mode.is_search() && !byradius => {
                let (shape, conversion) = parse_box(&opts[i + 1..i + 4])?;
                (p.shape, p.conversion) = (Some(shape), conversion);
                bybox = true;
                i += 3;
            }
            _ => return Err(SYNTAX_ERROR.into()),
        }
        i += 1;
    }
    if req.store.is_some() && (req.withdist || req.withhash || req.withcoords) {
        let what = match mode {
            Mode::Search { .. } => "GEOSEARCHSTORE",
            _ => "STORE option in GEORADIUS",
        };
        return Err(format!(
            "ERR {what} is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
        ));
    }
    let name = String::from_utf8_lossy(&args[0]);
    if mode.is_search() && !(frommember || fromloc) {
        return Err(format!(
            "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for {name}"
        ));
    }
    if mode.is_search() && !(byradius || bybox) {
        return Err(format!(
            "ERR exactly one of BYRADIUS and BYBOX can be specified for {name}"
        ));
    }
    if req.any && req.count == 0 {
        return Err("ERR the ANY argument requires COUNT argument".into());
    }
    if let (Some((longitude, latitude)), Some(shape)) = (p.center, p.shape) {
        req.search = Some(Search {
            longitude,
            latitude,
            shape,
            conversion: p.conversion,
        });
    }
    Ok(req)
}

/// Scans the cells of the search (stopping once `limit` points are found,
/// for ANY); the points inside, and the work (points examined, cells).
fn find(z: &ZSet, search: &Search, limit: u64) -> (Vec<Point>, u64) {
    let mut points = Vec::new();
    let mut work = 0u64;
    let full = |points: &Vec<Point>| limit > 0 && points.len() as u64 >= limit;
    let cells = geohash::cells_to_scan(&geohash::areas_by_shape(search));
    for cell in cells {
        if full(&points) {
            break;
        }
        // A listpack is walked for the cell's interval, then to its start.
        work += 1 + 2 * z.walk_units();
        let (min, max) = geohash::score_range(cell);
        let range = ScoreRange {
            min,
            max,
            min_exclusive: false,
            max_exclusive: true,
        };
        let Some((lo, hi)) = z.range_ranks(&range, false) else {
            continue;
        };
        for (member, score) in z.iter_ranks(lo, hi, false) {
            work += 1;
            let (longitude, latitude) = geohash::decode_score(score);
            if let Some(dist_m) = geohash::within(search, longitude, latitude) {
                points.push(Point {
                    member: member.into(),
                    longitude,
                    latitude,
                    dist_m,
                    score,
                });
            }
            if full(&points) {
                break;
            }
        }
    }
    (points, work)
}

/// What the lookup and the scan produced, before any reply.
enum Outcome {
    /// The source key is missing.
    Missing(Request),
    Found(Request, Vec<Point>),
}

fn run(ctx: &mut Ctx, args: &[Vec<u8>], src: usize, mode: Mode) -> Result<(Outcome, u64), String> {
    let z = zset_at(ctx, &args[src])?;
    let req = parse(args, z, mode)?;
    let (Some(z), Some(search)) = (z, req.search) else {
        return Ok((Outcome::Missing(req), 0));
    };
    let limit = if req.any { req.count } else { 0 };
    let (points, work) = find(z, &search, limit);
    // BYMEMBER's lookup walked a listpack once (charged to every search).
    Ok((Outcome::Found(req, points), work + z.walk_units()))
}

fn generic(ctx: &mut Ctx, args: &mut [Vec<u8>], mode: Mode) {
    let src = if mode == (Mode::Search { store: true }) {
        2
    } else {
        1
    };
    let (outcome, work) = match run(ctx, args, src, mode) {
        Ok(r) => r,
        Err(e) => return ctx.error(&e),
    };
    ctx.work(work);
    let (mut req, mut points) = match outcome {
        Outcome::Missing(req) => {
            match req.store {
                Some((dst, _)) => {
                    ctx.delete(&dst, false);
                    ctx.int(0);
                }
                None => ctx.w().array_len(0),
            }
            return;
        }
        Outcome::Found(req, points) => (req, points),
    };
    if req.count != 0 && req.sort == Sort::None && !req.any {
        req.sort = Sort::Asc;
    }
    if points.is_empty() && req.store.is_none() {
        return ctx.w().array_len(0);
    }
    let returned = match req.count {
        0 => points.len(),
        n => points.len().min(n as usize),
    };
    let by_dist = |a: &Point, b: &Point| {
        a.dist_m
            .partial_cmp(&b.dist_m)
            .unwrap_or(std::cmp::Ordering::Equal)
    };
    match req.sort {
        Sort::None => {}
        Sort::Asc => points.sort_by(by_dist),
        Sort::Desc => points.sort_by(|a, b| by_dist(b, a)),
    }
    points.truncate(returned);
    ctx.work(returned as u64 * (1 + u64::from(usize::BITS - returned.leading_zeros())));
    let conversion = req.search.map_or(1.0, |s| s.conversion);
    match req.store.take() {
        None => reply_points(ctx, &req, &points, conversion),
        Some((dst, storedist)) => store_points(ctx, &dst, points, storedist, conversion),
    }
}

fn reply_points(ctx: &mut Ctx, req: &Request, points: &[Point], conversion: f64) {
    let options =
        usize::from(req.withdist) + usize::from(req.withhash) + usize::from(req.withcoords);
    let mut w = ctx.w();
    w.array_len(points.len());
    for p in points {
        if options > 0 {
            w.array_len(options + 1);
        }
        w.bulk(&p.member);
        if req.withdist {
            reply_distance(&mut w, p.dist_m / conversion);
        }
        if req.withhash {
            // C's (long long) of the score: out of range, x86's indefinite.
            let hash = match p.score.is_finite() && p.score.abs() < 9.2e18 {
                true => p.score as i64,
                false => i64::MIN,
            };
            w.int(hash);
        }
        if req.withcoords {
            w.array_len(2);
            reply_coordinate(&mut w, p.longitude);
            reply_coordinate(&mut w, p.latitude);
        }
    }
}

fn store_points(ctx: &mut Ctx, dst: &[u8], points: Vec<Point>, storedist: bool, conversion: f64) {
    if points.is_empty() {
        if ctx.delete(dst, false) {
            notify(ctx, class::GENERIC, "del", dst);
        }
        return ctx.int(0);
    }
    let n = points.len();
    let mut sorted: Vec<(Box<[u8]>, f64)> = points
        .into_iter()
        .map(|p| {
            let score = if storedist {
                p.dist_m / conversion
            } else {
                p.score
            };
            (p.member, score)
        })
        .collect();
    sorted.sort_by(|a, b| crate::types::zset::cmp_elements(a.1, &a.0, b.1, &b.0));
    // A member found twice (coinciding cells of a huge search) is stored once.
    sorted.dedup_by(|a, b| a.0 == b.0);
    let limits = ctx.limits();
    let seed = ctx.collection_hash_seed();
    let zset = ZSet::from_sorted(sorted, &limits, seed);
    ctx.store(dst, Value::ZSet(Box::new(zset)), false);
    // GEOSEARCHSTORE and GEORADIUS[BYMEMBER] STORE name their event
    // after the family.
    let event = if ctx.spec.name == "geosearchstore" {
        "geosearchstore"
    } else {
        "georadiusstore"
    };
    notify(ctx, class::ZSET, event, dst);
    ctx.int(n as i64);
}
