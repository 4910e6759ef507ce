//! The request parser must yield the same requests (or the same error)
//! however its input is split.
#![no_main]

use libfuzzer_sys::fuzz_target;
use seedkv_engine::resp::{ParserLimits, RequestParser};

fn parse_all(pieces: &[&[u8]]) -> (Vec<Vec<Vec<u8>>>, Option<String>) {
    let limits = ParserLimits::default();
    let mut p = RequestParser::new();
    let mut out = Vec::new();
    for piece in pieces {
        p.feed(piece);
        loop {
            match p.next_request(&limits, true) {
                Ok(Some(r)) => out.push(r),
                Ok(None) => break,
                Err(e) => return (out, Some(e.message())),
            }
        }
    }
    (out, None)
}

fuzz_target!(|data: &[u8]| {
    if data.is_empty() {
        return;
    }
    let split = data[0] as usize % data.len();
    let body = &data[1..];
    let split = split.min(body.len());
    let whole = parse_all(&[body]);
    let halves = parse_all(&[&body[..split], &body[split..]]);
    let bytes: Vec<&[u8]> = body.chunks(1).collect();
    let single = parse_all(&bytes);
    assert_eq!(whole, halves);
    assert_eq!(whole, single);
});
