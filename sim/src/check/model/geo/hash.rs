//! Redis 7.0's geohash arithmetic (`geohash.c`, `geohash_helper.c`),
//! written for the model: the 52-bit interleaved hash a GEOADD stores as
//! the score, its decoding to a cell centre, the haversine distance, and
//! the nine cells a search walks.
//!
//! # The hash
//!
//! A position is two fixed-point numbers of `step` bits: the latitude's
//! offset in `LAT_MIN..LAT_MAX` and the longitude's in `LON_MIN..LON_MAX`,
//! each scaled to `0..2^step` and truncated. The hash interleaves them,
//! latitude bits at even positions and longitude bits at odd ones, so that
//! a prefix of the hash is a coarser cell containing the finer ones. At
//! step 26 the hash has 52 bits and is stored (exactly) as a double score;
//! a cell of step `s` holds exactly the scores in
//! `bits << (52 - 2s) .. (bits + 1) << (52 - 2s)`.
//!
//! Decoding a score gives its cell's centre (clamped to the limits), not
//! the position that was added: that centre is what GEOPOS replies and
//! what every distance is measured from.
//!
//! # The search walk
//!
//! A search does not scan the set: it estimates a cell size from the
//! radius, takes the cell of the centre and its eight neighbours (dropping
//! those its bounding box does not reach) and tests the members whose
//! scores fall in those cells. [`search_ranges`] lists the score ranges in
//! the order Redis reads them; a member outside all of them is never
//! tested, whatever its distance.

/// Redis's `GEO_LONG_MIN` .. `GEO_LONG_MAX`.
pub(super) const LON_MIN: f64 = -180.0;
pub(super) const LON_MAX: f64 = 180.0;
/// Redis's `GEO_LAT_MIN` .. `GEO_LAT_MAX` (EPSG:900913's limits).
pub(super) const LAT_MIN: f64 = -85.05112878;
pub(super) const LAT_MAX: f64 = 85.05112878;

/// Bits per coordinate of a stored hash (`GEO_STEP_MAX`).
pub(super) const STEP_MAX: u8 = 26;

/// Earth's quadratic mean radius (`EARTH_RADIUS_IN_METERS`).
const EARTH_RADIUS_M: f64 = 6372797.560856;
/// Half the equator in Mercator metres (`MERCATOR_MAX`).
const MERCATOR_MAX_M: f64 = 20037726.37;
/// Degrees to radians (`D_R`).
const DEG_TO_RAD: f64 = std::f64::consts::PI / 180.0;

/// Scores decoded by the model: below 2^64, where C's conversion to
/// `uint64_t` truncates. A hash of a corner of the grid overflows 52 bits
/// (an offset of exactly 2^26), and ZADD can store anything; C's
/// conversion of a negative double is undefined, so the model declines
/// those.
pub(super) const SCORE_DECODED_MAX: f64 = 18_446_744_073_709_551_616.0; // 2^64

/// A coordinate range.
#[derive(Clone, Copy, Debug)]
pub(super) struct Range {
    pub min: f64,
    pub max: f64,
}

/// The ranges of stored hashes.
pub(super) const WGS84: (Range, Range) = (
    Range {
        min: LON_MIN,
        max: LON_MAX,
    },
    Range {
        min: LAT_MIN,
        max: LAT_MAX,
    },
);

/// The standard geohash ranges (GEOHASH's strings).
pub(super) const STANDARD: (Range, Range) = (
    Range {
        min: -180.0,
        max: 180.0,
    },
    Range {
        min: -90.0,
        max: 90.0,
    },
);

/// A cell: `step` bits per coordinate. Step 0 is Redis's zeroed neighbour
/// (`GZERO`), which a search skips.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Cell {
    pub bits: u64,
    pub step: u8,
}

/// A cell's extent.
#[derive(Clone, Copy, Debug)]
pub(super) struct Area {
    pub lon: Range,
    pub lat: Range,
}

/// Latitude bits at even positions, longitude bits at odd ones.
fn interleave(lat: u32, lon: u32) -> u64 {
    let mut out = 0u64;
    for i in 0..32 {
        out |= u64::from((lat >> i) & 1) << (2 * i);
        out |= u64::from((lon >> i) & 1) << (2 * i + 1);
    }
    out
}

/// The inverse of [`interleave`]: `(lat, lon)`.
fn deinterleave(bits: u64) -> (u32, u32) {
    let (mut lat, mut lon) = (0u32, 0u32);
    for i in 0..32 {
        lat |= (((bits >> (2 * i)) & 1) as u32) << i;
        lon |= (((bits >> (2 * i + 1)) & 1) as u32) << i;
    }
    (lat, lon)
}

/// `geohashEncode`: `None` outside the WGS84 limits or the ranges.
pub(super) fn encode(ranges: (Range, Range), lon: f64, lat: f64, step: u8) -> Option<Cell> {
    debug_assert!((1..=32).contains(&step));
    let (lon_range, lat_range) = ranges;
    if !(LON_MIN..=LON_MAX).contains(&lon) || !(LAT_MIN..=LAT_MAX).contains(&lat) {
        return None;
    }
    if lat < lat_range.min || lat > lat_range.max || lon < lon_range.min || lon > lon_range.max {
        return None;
    }
    let scale = (1u64 << step) as f64;
    let lat_offset = (lat - lat_range.min) / (lat_range.max - lat_range.min) * scale;
    let lon_offset = (lon - lon_range.min) / (lon_range.max - lon_range.min) * scale;
    // C converts the offsets to uint32_t: truncation (both are in
    // 0..=2^step here).
    Some(Cell {
        bits: interleave(lat_offset as u32, lon_offset as u32),
        step,
    })
}

/// `geohashDecode`: the cell's extent (`None` for a zeroed cell).
pub(super) fn decode(ranges: (Range, Range), cell: Cell) -> Option<Area> {
    if cell.bits == 0 && cell.step == 0 {
        return None;
    }
    let (lon_range, lat_range) = ranges;
    let (lat_i, lon_i) = deinterleave(cell.bits);
    let cells = (1u64 << cell.step) as f64;
    let lat_scale = lat_range.max - lat_range.min;
    let lon_scale = lon_range.max - lon_range.min;
    let edge = |range: Range, scale: f64, i: u32| range.min + (f64::from(i) / cells) * scale;
    Some(Area {
        lat: Range {
            min: edge(lat_range, lat_scale, lat_i),
            max: edge(lat_range, lat_scale, lat_i.wrapping_add(1)),
        },
        lon: Range {
            min: edge(lon_range, lon_scale, lon_i),
            max: edge(lon_range, lon_scale, lon_i.wrapping_add(1)),
        },
    })
}

/// `decodeGeohash` of a score: the centre of its step-26 cell, clamped to
/// the limits, as `(lon, lat)`. `None` for scores the model does not
/// decode (negative, or from 2^64).
pub(super) fn decode_score(score: f64) -> Option<(f64, f64)> {
    if !(0.0..SCORE_DECODED_MAX).contains(&score) {
        return None;
    }
    let cell = Cell {
        bits: score as u64,
        step: STEP_MAX,
    };
    let area = decode(WGS84, cell)?;
    let lon = ((area.lon.min + area.lon.max) / 2.0).clamp(LON_MIN, LON_MAX);
    let lat = ((area.lat.min + area.lat.max) / 2.0).clamp(LAT_MIN, LAT_MAX);
    Some((lon, lat))
}

/// The score GEOADD stores for a position within the limits.
pub(super) fn score_of(lon: f64, lat: f64) -> Option<f64> {
    encode(WGS84, lon, lat, STEP_MAX).map(|cell| cell.bits as f64)
}

/// GEOHASH's string: the decoded centre re-encoded on the standard ranges,
/// five bits per character, the eleventh always '0'.
pub(super) fn geohash_string(lon: f64, lat: f64) -> Option<String> {
    const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";
    let cell = encode(STANDARD, lon, lat, STEP_MAX)?;
    let text = (0..11)
        .map(|i| match i {
            10 => '0',
            _ => ALPHABET[((cell.bits >> (52 - (i + 1) * 5)) & 0x1f) as usize] as char,
        })
        .collect();
    Some(text)
}

/// The 7.0 haversine (`geohashGetDistance`), in metres.
pub(super) fn distance_m(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> f64 {
    let (lat1r, lon1r) = (lat1 * DEG_TO_RAD, lon1 * DEG_TO_RAD);
    let (lat2r, lon2r) = (lat2 * DEG_TO_RAD, lon2 * DEG_TO_RAD);
    let u = ((lat2r - lat1r) / 2.0).sin();
    let v = ((lon2r - lon1r) / 2.0).sin();
    2.0 * EARTH_RADIUS_M * (u * u + lat1r.cos() * lat2r.cos() * v * v).sqrt().asin()
}

/// A search area, in metres (the unit's factor already applied).
#[derive(Clone, Copy, Debug)]
pub(super) enum Shape {
    Radius(f64),
    Box { width_m: f64, height_m: f64 },
}

/// The search's test: `Some(distance)` from the centre when the point is
/// inside (`geohashGetDistanceIfInRadius`, the 7.0
/// `geohashGetDistanceIfInRectangle`).
pub(super) fn within(shape: Shape, centre: (f64, f64), point: (f64, f64)) -> Option<f64> {
    let ((x1, y1), (x2, y2)) = (centre, point);
    match shape {
        Shape::Radius(radius_m) => {
            let d = distance_m(x1, y1, x2, y2);
            // NaN is "inside", as `*distance > radius` is false in C.
            (d.partial_cmp(&radius_m) != Some(std::cmp::Ordering::Greater)).then_some(d)
        }
        Shape::Box { width_m, height_m } => {
            let lon_distance = distance_m(x2, y2, x1, y2);
            let lat_distance = distance_m(x2, y2, x2, y1);
            if lon_distance > width_m / 2.0 || lat_distance > height_m / 2.0 {
                return None;
            }
            Some(distance_m(x1, y1, x2, y2))
        }
    }
}

/// `geohashEstimateStepsByRadius`.
fn estimate_steps(range_m: f64, lat: f64) -> u8 {
    if range_m == 0.0 {
        return 26;
    }
    let mut range_m = range_m;
    let mut step: i32 = 1;
    // Bounded: a positive range below MERCATOR_MAX doubles past it within
    // ~1100 rounds (from the smallest subnormal); NaN or inf never enters.
    while range_m < MERCATOR_MAX_M {
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

/// Moves a cell by `d_lon`, `d_lat` (each -1, 0 or 1), wrapping around at
/// the edges of the grid as Redis's `geohash_move_x`/`_y` do.
fn shifted(cell: Cell, d_lon: i64, d_lat: i64) -> Cell {
    let (lat, lon) = deinterleave(cell.bits);
    let size = 1i64 << cell.step;
    let wrap = |v: u32, d: i64| (i64::from(v) + d).rem_euclid(size) as u32;
    Cell {
        bits: interleave(wrap(lat, d_lat), wrap(lon, d_lon)),
        step: cell.step,
    }
}

/// `geohashBoundingBox`: `[min_lon, min_lat, max_lon, max_lat]`.
fn bounding_box(shape: Shape, lon: f64, lat: f64) -> [f64; 4] {
    let (height_m, width_m) = match shape {
        Shape::Radius(r) => (r, r),
        Shape::Box { width_m, height_m } => (height_m / 2.0, width_m / 2.0),
    };
    let lat_delta = (height_m / EARTH_RADIUS_M) / DEG_TO_RAD;
    let lon_delta_top =
        (width_m / EARTH_RADIUS_M / ((lat + lat_delta) * DEG_TO_RAD).cos()) / DEG_TO_RAD;
    let lon_delta_bottom =
        (width_m / EARTH_RADIUS_M / ((lat - lat_delta) * DEG_TO_RAD).cos()) / DEG_TO_RAD;
    let lon_delta = if lat < 0.0 {
        lon_delta_bottom
    } else {
        lon_delta_top
    };
    [
        lon - lon_delta,
        lat - lat_delta,
        lon + lon_delta,
        lat + lat_delta,
    ]
}

/// The score ranges `[min, max)` a search around `(lon, lat)` reads, in
/// Redis's order (`geohashCalculateAreasByShapeWGS84`, then
/// `membersOfAllNeighbors`: centre, N, S, E, W, NE, NW, SE, SW; zeroed
/// cells skipped; a cell equal to the last one read is skipped, others are
/// read again).
///
/// `estimate_radius_m` sizes the cells: the radius, or for a box
/// `sqrt((w/2)^2 + (h/2)^2)`, computed as Redis does (in the unit, then
/// converted), which the caller knows.
pub(super) fn search_ranges(
    shape: Shape,
    estimate_radius_m: f64,
    lon: f64,
    lat: f64,
) -> Vec<(f64, f64)> {
    let [min_lon, min_lat, max_lon, max_lat] = bounding_box(shape, lon, lat);
    let mut steps = estimate_steps(estimate_radius_m, lat);
    let around = |steps: u8| -> Option<(Cell, [Cell; 8], Area)> {
        let hash = encode(WGS84, lon, lat, steps)?;
        let neighbours = [
            shifted(hash, 0, 1),   // north
            shifted(hash, 0, -1),  // south
            shifted(hash, 1, 0),   // east
            shifted(hash, -1, 0),  // west
            shifted(hash, 1, 1),   // north-east
            shifted(hash, -1, 1),  // north-west
            shifted(hash, 1, -1),  // south-east
            shifted(hash, -1, -1), // south-west
        ];
        Some((hash, neighbours, decode(WGS84, hash)?))
    };
    let Some((mut hash, mut n, mut area)) = around(steps) else {
        return Vec::new();
    };
    let extent = |cell: Cell| decode(WGS84, cell);
    let (Some(north), Some(south), Some(east), Some(west)) =
        (extent(n[0]), extent(n[1]), extent(n[2]), extent(n[3]))
    else {
        return Vec::new();
    };
    let decrease = north.lat.max < max_lat
        || south.lat.min > min_lat
        || east.lon.max < max_lon
        || west.lon.min > min_lon;
    if steps > 1 && decrease {
        steps -= 1;
        let Some(again) = around(steps) else {
            return Vec::new();
        };
        (hash, n, area) = again;
    }
    let zero = Cell { bits: 0, step: 0 };
    if steps >= 2 {
        // Indices into `n`: N S E W NE NW SE SW.
        if area.lat.min < min_lat {
            [1, 7, 6].iter().for_each(|&i| n[i] = zero);
        }
        if area.lat.max > max_lat {
            [0, 4, 5].iter().for_each(|&i| n[i] = zero);
        }
        if area.lon.min < min_lon {
            [3, 7, 5].iter().for_each(|&i| n[i] = zero);
        }
        if area.lon.max > max_lon {
            [2, 6, 4].iter().for_each(|&i| n[i] = zero);
        }
    }
    let cells: [Cell; 9] = [hash, n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7]];
    let mut ranges = Vec::with_capacity(cells.len());
    // Redis's `last_processed` starts at 0, which also means "none": the
    // centre is never compared with, so only a neighbour equal to the
    // previous neighbour read is skipped.
    let mut last_processed = 0;
    for (i, &cell) in cells.iter().enumerate() {
        if cell == zero || (last_processed != 0 && cells[last_processed] == cell) {
            continue;
        }
        let shift = 52 - 2 * u32::from(cell.step);
        ranges.push((
            (cell.bits << shift) as f64,
            ((cell.bits + 1) << shift) as f64,
        ));
        last_processed = i;
    }
    ranges
}
