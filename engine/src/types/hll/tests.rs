use super::*;

#[test]
fn an_empty_hll_is_one_xzero() {
    let s = new_sparse();
    assert_eq!(s.len(), HDR_BYTES + 2);
    assert_eq!(validate(&s), Ok(Encoding::Sparse));
    assert_eq!(decode_sparse(&s), "Z:16384");
    assert_eq!(count(&s), Ok(0));
}

#[test]
fn the_doc_example_encodes_as_redis_describes() {
    let mut s = new_sparse();
    for (index, count) in [(1000, 2), (1020, 3), (1021, 3)] {
        assert_eq!(raise(&mut s, index, count, 3000).map(|r| r.0), Ok(true));
    }
    assert_eq!(decode_sparse(&s), "Z:1000 v:2,1 z:19 v:3,2 Z:15362");
    // A lower value changes nothing.
    assert_eq!(raise(&mut s, 1020, 1, 3000).map(|r| r.0), Ok(false));
}

#[test]
fn dense_registers_round_trip_without_touching_neighbours() {
    let mut regs = vec![0u8; DENSE_BYTES - HDR_BYTES];
    for i in 0..REGISTERS {
        dense_set(&mut regs, i, (i % 64) as u8);
    }
    for i in 0..REGISTERS {
        assert_eq!(dense_get(&regs, i), (i % 64) as u8);
    }
}

#[test]
fn a_big_register_or_a_long_string_promotes_to_dense() {
    let mut s = new_sparse();
    raise(&mut s, 5, 33, 3000).unwrap();
    assert_eq!(validate(&s), Ok(Encoding::Dense));
    assert_eq!(dense_registers(&s).nth(5), Some(33));

    let mut s = new_sparse();
    for i in 0..200 {
        raise(&mut s, i * 80, 1, 40).unwrap();
    }
    assert_eq!(validate(&s), Ok(Encoding::Dense));
    assert_eq!(dense_registers(&s).filter(|&r| r == 1).count(), 200);
}

#[test]
fn a_sparse_body_covering_too_few_registers_is_corrupt() {
    let mut s = new_sparse();
    s.truncate(HDR_BYTES);
    s.push(0x00); // ZERO:1
    assert_eq!(count(&s), Err(Corrupt));
    assert_eq!(raise(&mut s, 100, 1, 3000), Err(Corrupt));
    let mut max = [0u8; REGISTERS];
    assert_eq!(merge_into(&mut max, &s), Err(Corrupt));
}

#[test]
fn a_run_past_the_last_register_is_corrupt_even_after_a_full_body() {
    // redis-server 7.0.15 (with the CVE-2025-32023 fix): a VAL byte
    // appended to a valid sparse HLL makes PFCOUNT of several keys,
    // PFMERGE and PFDEBUG TODENSE reply INVALIDOBJ, as a zero run does.
    for tail in [0x80u8, 0x00] {
        let mut s = new_sparse();
        raise(&mut s, 100, 1, 3000).unwrap();
        s.push(tail);
        let mut max = [0u8; REGISTERS];
        assert_eq!(merge_into(&mut max, &s), Err(Corrupt), "tail {tail:#x}");
        assert_eq!(make_dense(&mut s), Err(Corrupt), "tail {tail:#x}");
    }
}

#[test]
fn murmur64a_matches_the_reference_vectors() {
    // The second value comes from an independent Python transcription;
    // the differential tests check PFADD's registers against Redis itself.
    assert_eq!(murmur64a(b"", 0), 0);
    assert_eq!(murmur64a(b"hello", 0), 0x1e68_d17c_457b_f117);
}
