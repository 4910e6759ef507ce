use super::*;

#[test]
fn flags_read_back_in_redis_order() {
    // Pairs recorded from redis-server 7.0.15 (CONFIG SET, then GET).
    let cases = [
        ("KEA", "AKE"),
        ("AKE", "AKE"),
        ("x", "x"),
        ("", ""),
        ("Egx", "gxE"),
        ("KEn", "nKE"),
        ("KEmA", "AKEm"),
        ("Ed", "dE"),
        ("Kg$lshzxetd", "AK"),
        ("KEAn", "AnKE"),
    ];
    for (set, get) in cases {
        let flags = parse_flags(set.as_bytes()).expect(set);
        assert_eq!(render_flags(flags), get, "{set}");
    }
}

#[test]
fn an_unknown_class_character_is_refused() {
    for bad in ["Kq", "KE ", "a", "KEA1"] {
        assert_eq!(parse_flags(bad.as_bytes()), None, "{bad}");
    }
}

#[test]
fn all_leaves_out_new_and_key_miss() {
    let flags = parse_flags(b"A").unwrap();
    assert_eq!(flags & (class::NEW | class::KEY_MISS), 0);
    assert_eq!(flags & class::EXPIRED, class::EXPIRED);
}
