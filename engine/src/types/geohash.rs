//! Redis's 52-bit geohash (`geohash.c`, `geohash_helper.c`), operation for
//! operation, so that GEOADD stores the same scores and the searches
//! examine the same boxes and compute the same distances as Redis 7.0.
//!
//! # The score
//!
//! A point is stored in a sorted set with an integer score of 52 bits: the
//! longitude in [-180, 180] and the latitude in [-85.05112878, 85.05112878]
//! (the Web Mercator limits) are each scaled to a 26-bit cell number, and
//! the two are interleaved, latitude bits at even positions, longitude
//! bits at odd ones:
//!
//! ```text
//! bit  51 50 49 48 ...  1  0
//!      lo la lo la ... lo la      (lo = longitude, la = latitude)
//! ```
//!
//! So a prefix of `2 × step` bits is a cell of a coarser grid, and all the
//! points of a cell are one contiguous score range: `[prefix << (52 - 2 ×
//! step), (prefix + 1) << (52 - 2 × step))`. A point decodes to the centre
//! of its 26-bit cell, which is why GEOPOS answers slightly differ from
//! what was added.
//!
//! # A search
//!
//! For a radius or a box around a centre, Redis picks the step whose cells
//! are about as large as the search radius ([`estimate_steps_by_radius`]),
//! takes the centre's cell and its eight neighbours, drops the neighbours
//! that the search's bounding box cannot reach, and scans the nine score
//! ranges, keeping the points whose exact (haversine) distance is inside
//! ([`areas_by_shape`]).
//!
//! GEOHASH prints the standard geohash (latitude range [-90, 90]) of the
//! decoded point: it re-encodes it, 5 bits per base-32 character.

/// Latitude and longitude limits of the encoding (EPSG:900913).
pub const LAT_MIN: f64 = -85.051_128_78;
pub const LAT_MAX: f64 = 85.051_128_78;
pub const LONG_MIN: f64 = -180.0;
pub const LONG_MAX: f64 = 180.0;
/// Bits per coordinate of a stored score.
pub const STEP_MAX: u8 = 26;

const D_R: f64 = std::f64::consts::PI / 180.0;
/// Earth's quadratic mean radius for WGS-84, as Redis uses it.
pub const EARTH_RADIUS_M: f64 = 6_372_797.560_856;
const MERCATOR_MAX: f64 = 20_037_726.37;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    pub min: f64,
    pub max: f64,
}

const LONG_RANGE: Range = Range {
    min: LONG_MIN,
    max: LONG_MAX,
};
const LAT_RANGE: Range = Range {
    min: LAT_MIN,
    max: LAT_MAX,
};

/// A cell: `step` bits per coordinate, interleaved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Bits {
    pub bits: u64,
    pub step: u8,
}

impl Bits {
    /// Redis's HASHISZERO: an excluded neighbour.
    fn is_zero(self) -> bool {
        self.bits == 0 && self.step == 0
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Area {
    pub longitude: Range,
    pub latitude: Range,
}

fn deg_rad(ang: f64) -> f64 {
    ang * D_R
}
fn rad_deg(ang: f64) -> f64 {
    ang / D_R
}

/// Interleaves the low 32 bits of `x` (even positions) and `y` (odd).
fn interleave64(x: u32, y: u32) -> u64 {
    const B: [u64; 5] = [
        0x5555_5555_5555_5555,
        0x3333_3333_3333_3333,
        0x0F0F_0F0F_0F0F_0F0F,
        0x00FF_00FF_00FF_00FF,
        0x0000_FFFF_0000_FFFF,
    ];
    const S: [u32; 5] = [1, 2, 4, 8, 16];
    let (mut x, mut y) = (u64::from(x), u64::from(y));
    for i in (0..5).rev() {
        x = (x | (x << S[i])) & B[i];
        y = (y | (y << S[i])) & B[i];
    }
    x | (y << 1)
}

/// The inverse: even bits in the low half, odd bits in the high half.
fn deinterleave64(interleaved: u64) -> u64 {
    const B: [u64; 6] = [
        0x5555_5555_5555_5555,
        0x3333_3333_3333_3333,
        0x0F0F_0F0F_0F0F_0F0F,
        0x00FF_00FF_00FF_00FF,
        0x0000_FFFF_0000_FFFF,
        0x0000_0000_FFFF_FFFF,
    ];
    const S: [u32; 6] = [0, 1, 2, 4, 8, 16];
    let (mut x, mut y) = (interleaved, interleaved >> 1);
    for i in 0..6 {
        x = (x | (x >> S[i])) & B[i];
        y = (y | (y >> S[i])) & B[i];
    }
    x | (y << 32)
}

/// `geohashEncode`: the cell of `step` bits holding the point, or `None`
/// outside the ranges (or the encoding's limits).
pub fn encode(
    long_range: Range,
    lat_range: Range,
    longitude: f64,
    latitude: f64,
    step: u8,
) -> Option<Bits> {
    if step > 32 || step == 0 {
        return None;
    }
    if !(LONG_MIN..=LONG_MAX).contains(&longitude) || !(LAT_MIN..=LAT_MAX).contains(&latitude) {
        return None;
    }
    if latitude < lat_range.min
        || latitude > lat_range.max
        || longitude < long_range.min
        || longitude > long_range.max
    {
        return None;
    }
    let mut lat_offset = (latitude - lat_range.min) / (lat_range.max - lat_range.min);
    let mut long_offset = (longitude - long_range.min) / (long_range.max - long_range.min);
    lat_offset *= (1u64 << step) as f64;
    long_offset *= (1u64 << step) as f64;
    // C converts the offsets to uint32_t, truncating.
    Some(Bits {
        bits: interleave64(lat_offset as u32, long_offset as u32),
        step,
    })
}

/// The 52-bit score of a point (GEOADD), `None` outside the limits.
pub fn score_of(longitude: f64, latitude: f64) -> Option<u64> {
    encode(LONG_RANGE, LAT_RANGE, longitude, latitude, STEP_MAX).map(align52)
}

/// The cell's prefix shifted to a 52-bit score.
pub fn align52(hash: Bits) -> u64 {
    hash.bits << (52 - u32::from(hash.step) * 2)
}

/// `geohashDecode`: the cell's bounds.
fn decode(long_range: Range, lat_range: Range, hash: Bits) -> Area {
    let step = hash.step;
    let sep = deinterleave64(hash.bits);
    let lat_scale = lat_range.max - lat_range.min;
    let long_scale = long_range.max - long_range.min;
    let ilato = sep as u32;
    let ilono = (sep >> 32) as u32;
    let div = (1u64 << step) as f64;
    Area {
        latitude: Range {
            min: lat_range.min + (f64::from(ilato) / div) * lat_scale,
            // `ilato + 1` is 32-bit unsigned arithmetic in C.
            max: lat_range.min + (f64::from(ilato.wrapping_add(1)) / div) * lat_scale,
        },
        longitude: Range {
            min: long_range.min + (f64::from(ilono) / div) * long_scale,
            max: long_range.min + (f64::from(ilono.wrapping_add(1)) / div) * long_scale,
        },
    }
}

/// C's `(uint64_t)` of a double as GCC compiles it on x86-64: truncation,
/// negative values through the signed conversion, out of range the
/// "integer indefinite" value.
fn c_double_to_u64(d: f64) -> u64 {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    const INDEFINITE: u64 = 1 << 63;
    let signed = |v: f64| -> u64 {
        if !(-TWO_63..TWO_63).contains(&v) {
            INDEFINITE
        } else {
            v as i64 as u64
        }
    };
    if d >= TWO_63 {
        signed(d - TWO_63) ^ (1 << 63)
    } else {
        signed(d)
    }
}

/// `decodeGeohash`: the centre of the 26-bit cell a score names, clamped
/// to the limits (any score decodes, even one GEOADD never wrote).
pub fn decode_score(score: f64) -> (f64, f64) {
    let hash = Bits {
        bits: c_double_to_u64(score),
        step: STEP_MAX,
    };
    let area = decode(LONG_RANGE, LAT_RANGE, hash);
    let lon = ((area.longitude.min + area.longitude.max) / 2.0).clamp(LONG_MIN, LONG_MAX);
    let lat = ((area.latitude.min + area.latitude.max) / 2.0).clamp(LAT_MIN, LAT_MAX);
    (lon, lat)
}

/// GEOHASH's 11 characters for a score: the decoded point re-encoded with
/// the standard latitude range, the 11th character always `0`.
pub fn geohash_string(score: f64) -> [u8; 11] {
    const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";
    let (lon, lat) = decode_score(score);
    let standard_lat = Range {
        min: -90.0,
        max: 90.0,
    };
    let bits = encode(LONG_RANGE, standard_lat, lon, lat, STEP_MAX).map_or(0, |h| h.bits);
    let mut out = [b'0'; 11];
    for (i, c) in out.iter_mut().enumerate().take(10) {
        *c = ALPHABET[((bits >> (52 - (i + 1) * 5)) & 0x1f) as usize];
    }
    out
}

fn move_x(hash: &mut Bits, d: i8) {
    if d == 0 {
        return;
    }
    let mut x = hash.bits & 0xaaaa_aaaa_aaaa_aaaa;
    let y = hash.bits & 0x5555_5555_5555_5555;
    let shift = 64 - u32::from(hash.step) * 2;
    let zz = 0x5555_5555_5555_5555u64 >> shift;
    if d > 0 {
        x = x.wrapping_add(zz + 1);
    } else {
        x |= zz;
        x = x.wrapping_sub(zz + 1);
    }
    x &= 0xaaaa_aaaa_aaaa_aaaau64 >> shift;
    hash.bits = x | y;
}

fn move_y(hash: &mut Bits, d: i8) {
    if d == 0 {
        return;
    }
    let x = hash.bits & 0xaaaa_aaaa_aaaa_aaaa;
    let mut y = hash.bits & 0x5555_5555_5555_5555;
    let shift = 64 - u32::from(hash.step) * 2;
    let zz = 0xaaaa_aaaa_aaaa_aaaau64 >> shift;
    if d > 0 {
        y = y.wrapping_add(zz + 1);
    } else {
        y |= zz;
        y = y.wrapping_sub(zz + 1);
    }
    y &= 0x5555_5555_5555_5555u64 >> shift;
    hash.bits = x | y;
}

fn moved(hash: Bits, dx: i8, dy: i8) -> Bits {
    let mut h = hash;
    move_x(&mut h, dx);
    move_y(&mut h, dy);
    h
}

/// The shape of a search, in meters once multiplied by `conversion`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    Radius(f64),
    Box { width: f64, height: f64 },
}

/// A search: its centre, shape and unit (meters per unit).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Search {
    pub longitude: f64,
    pub latitude: f64,
    pub shape: Shape,
    pub conversion: f64,
}

/// `geohashEstimateStepsByRadius`: cells about as large as the radius,
/// larger towards the poles.
fn estimate_steps_by_radius(mut range_m: f64, lat: f64) -> u8 {
    if range_m == 0.0 {
        return 26;
    }
    let mut step: i32 = 1;
    // Each doubling halves the cell: at most ~1100 doublings from the
    // smallest positive double to the Mercator width.
    while range_m < MERCATOR_MAX {
        range_m *= 2.0;
        step += 1;
    }
    step -= 2;
    if !(-66.0..=66.0).contains(&lat) {
        step -= 1;
        if !(-80.0..=80.0).contains(&lat) {
            step -= 1;
        }
    }
    step.clamp(1, 26) as u8
}

/// `geohashBoundingBox`: [min lon, min lat, max lon, max lat].
fn bounding_box(search: &Search) -> [f64; 4] {
    let (lon, lat) = (search.longitude, search.latitude);
    let (height, width) = match search.shape {
        Shape::Radius(r) => (search.conversion * r, search.conversion * r),
        Shape::Box { width, height } => (
            search.conversion * (height / 2.0),
            search.conversion * (width / 2.0),
        ),
    };
    let lat_delta = rad_deg(height / EARTH_RADIUS_M);
    let long_delta_top = rad_deg(width / EARTH_RADIUS_M / deg_rad(lat + lat_delta).cos());
    let long_delta_bottom = rad_deg(width / EARTH_RADIUS_M / deg_rad(lat - lat_delta).cos());
    let southern = lat < 0.0;
    let long_delta = if southern {
        long_delta_bottom
    } else {
        long_delta_top
    };
    [
        lon - long_delta,
        lat - lat_delta,
        lon + long_delta,
        lat + lat_delta,
    ]
}

/// The cells a search scans, in Redis's order (centre, N, S, E, W, NE, NW,
/// SE, SW), with excluded neighbours removed.
pub fn areas_by_shape(search: &Search) -> Vec<Bits> {
    let [min_lon, min_lat, max_lon, max_lat] = bounding_box(search);
    let radius_m = match search.shape {
        Shape::Radius(r) => r,
        Shape::Box { width, height } => {
            ((width / 2.0) * (width / 2.0) + (height / 2.0) * (height / 2.0)).sqrt()
        }
    } * search.conversion;
    let mut steps = estimate_steps_by_radius(radius_m, search.latitude);
    let (lon, lat) = (search.longitude, search.latitude);
    let cell = |steps| encode(LONG_RANGE, LAT_RANGE, lon, lat, steps).unwrap_or_default();
    let mut hash = cell(steps);
    let mut area = decode(LONG_RANGE, LAT_RANGE, hash);
    // Near the cell's edge the estimated step can be too fine for one
    // neighbour to cover the search: then take the next coarser one.
    let north = decode(LONG_RANGE, LAT_RANGE, moved(hash, 0, 1));
    let south = decode(LONG_RANGE, LAT_RANGE, moved(hash, 0, -1));
    let east = decode(LONG_RANGE, LAT_RANGE, moved(hash, 1, 0));
    let west = decode(LONG_RANGE, LAT_RANGE, moved(hash, -1, 0));
    let decrease = north.latitude.max < max_lat
        || south.latitude.min > min_lat
        || east.longitude.max < max_lon
        || west.longitude.min > min_lon;
    if steps > 1 && decrease {
        steps -= 1;
        hash = cell(steps);
        area = decode(LONG_RANGE, LAT_RANGE, hash);
    }
    // [N, S, E, W, NE, NW, SE, SW] as (dx, dy).
    let moves: [(i8, i8); 8] = [
        (0, 1),
        (0, -1),
        (1, 0),
        (-1, 0),
        (1, 1),
        (-1, 1),
        (1, -1),
        (-1, -1),
    ];
    let mut cells = vec![hash];
    for (dx, dy) in moves {
        let excluded = steps >= 2
            && ((dy < 0 && area.latitude.min < min_lat)
                || (dy > 0 && area.latitude.max > max_lat)
                || (dx < 0 && area.longitude.min < min_lon)
                || (dx > 0 && area.longitude.max > max_lon));
        cells.push(if excluded {
            Bits::default()
        } else {
            moved(hash, dx, dy)
        });
    }
    cells
}

/// The score range `[min, max)` of a cell's points.
pub fn score_range(hash: Bits) -> (f64, f64) {
    let min = align52(hash);
    let max = align52(Bits {
        bits: hash.bits + 1,
        step: hash.step,
    });
    (min as f64, max as f64)
}

/// The cells to scan, as Redis's `membersOfAllNeighbors` walks them:
/// excluded ones skipped, and one equal to the last scanned one skipped
/// (huge radii make neighbours coincide).
pub fn cells_to_scan(cells: &[Bits]) -> Vec<Bits> {
    let mut out: Vec<Bits> = Vec::with_capacity(cells.len());
    let mut last: Option<Bits> = None;
    for (i, &c) in cells.iter().enumerate() {
        if c.is_zero() {
            continue;
        }
        // Redis compares with the last processed index, but only when it
        // is not 0 (the centre): a neighbour equal to the centre right
        // after it is scanned again.
        if let Some(l) = last {
            if l == c {
                continue;
            }
        }
        out.push(c);
        last = (i > 0).then_some(c);
    }
    out
}

fn lat_distance(lat1: f64, lat2: f64) -> f64 {
    EARTH_RADIUS_M * (deg_rad(lat2) - deg_rad(lat1)).abs()
}

/// `geohashGetDistance`: the haversine distance in meters.
pub fn distance(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> f64 {
    let lon1r = deg_rad(lon1);
    let lon2r = deg_rad(lon2);
    let v = ((lon2r - lon1r) / 2.0).sin();
    if v == 0.0 {
        return lat_distance(lat1, lat2);
    }
    let lat1r = deg_rad(lat1);
    let lat2r = deg_rad(lat2);
    let u = ((lat2r - lat1r) / 2.0).sin();
    let a = u * u + lat1r.cos() * lat2r.cos() * v * v;
    2.0 * EARTH_RADIUS_M * a.sqrt().asin()
}

/// Redis's `geoWithinShape`: the point's distance from the centre (in
/// meters) if it is inside the search.
pub fn within(search: &Search, lon: f64, lat: f64) -> Option<f64> {
    match search.shape {
        Shape::Radius(r) => {
            let d = distance(search.longitude, search.latitude, lon, lat);
            (d <= r * search.conversion).then_some(d)
        }
        Shape::Box { width, height } => {
            let (width_m, height_m) = (width * search.conversion, height * search.conversion);
            if lat_distance(lat, search.latitude) > height_m / 2.0 {
                return None;
            }
            if distance(lon, lat, search.longitude, lat) > width_m / 2.0 {
                return None;
            }
            Some(distance(search.longitude, search.latitude, lon, lat))
        }
    }
}

#[cfg(test)]
mod tests;
