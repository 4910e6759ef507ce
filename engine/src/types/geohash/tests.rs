use super::*;

#[test]
fn palermo_encodes_to_redis_score_and_geohash() {
    // Values read from redis-server 7.0.15 (GEOADD, ZSCORE, GEOHASH, GEOPOS).
    let score = score_of(13.361389, 38.115556).unwrap();
    assert_eq!(score, 3_479_099_956_230_698);
    assert_eq!(&geohash_string(score as f64), b"sqc8b49rny0");
    let (lon, lat) = decode_score(score as f64);
    assert_eq!(lon, 13.361_389_338_970_184);
    assert_eq!(lat, 38.115_556_395_496_3);
}

#[test]
fn scores_geoadd_never_writes_still_decode_clamped() {
    // GEOPOS of these scores on redis-server 7.0.15.
    assert_eq!(
        decode_score(9_007_199_254_740_991.0),
        (179.999_997_317_790_99, LAT_MAX)
    );
    assert_eq!(decode_score(-5.0), (180.0, LAT_MAX));
    assert_eq!(decode_score(f64::INFINITY), decode_score(0.0));
}

#[test]
fn out_of_range_points_have_no_score() {
    assert_eq!(score_of(180.1, 0.0), None);
    assert_eq!(score_of(0.0, 85.06), None);
    assert!(score_of(180.0, LAT_MAX).is_some());
}

#[test]
fn a_search_scans_the_centre_cell_first() {
    let search = Search {
        longitude: 15.0,
        latitude: 37.0,
        shape: Shape::Radius(200.0),
        conversion: 1000.0,
    };
    let cells = areas_by_shape(&search);
    assert_eq!(cells.len(), 9);
    assert_eq!(
        cells[0],
        encode(LONG_RANGE, LAT_RANGE, 15.0, 37.0, cells[0].step).unwrap()
    );
    assert!(!cells_to_scan(&cells).is_empty());
}

#[test]
fn distances_match_redis() {
    // GEODIST Palermo Catania from redis-server 7.0.15: 166274.1516 m.
    let (a, b) = (
        decode_score(3_479_099_956_230_698.0),
        decode_score(3_479_447_370_796_909.0),
    );
    assert_eq!(
        format!("{:.4}", distance(a.0, a.1, b.0, b.1)),
        "166274.1516"
    );
}
