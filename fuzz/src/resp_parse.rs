//! resp_parse: arbitrary bytes never panic the request parser or the reply
//! decoder; both give the same result however the bytes are split; and
//! every request that parses re-encodes (as a RESP multibulk) and re-parses
//! to the same request.

use seedkv_engine::resp::encode::encode_request;
use seedkv_engine::resp::{FrameDecoder, ParserLimits, RequestParser};

/// Requests parsed, and the error that stopped the parser (if any).
type Parsed = (Vec<Vec<Vec<u8>>>, Option<String>);

/// Input layout: the first byte chooses a split point, the rest is the
/// byte stream.
pub fn run(data: &[u8]) {
    let Some((&split_choice, body)) = data.split_first() else {
        return;
    };
    let split = split_choice as usize % (body.len() + 1);

    // The request parser, whole, in two pieces, and byte by byte.
    let whole = parse_requests(&[body]);
    let halves = parse_requests(&[&body[..split], &body[split..]]);
    assert_eq!(whole, halves, "request parse depends on a split at {split}");
    let bytes: Vec<&[u8]> = body.chunks(1).collect();
    let single = parse_requests(&bytes);
    assert_eq!(whole, single, "request parse depends on byte-wise feeding");

    // Re-encoding what parsed gives back the same requests, and no error:
    // one request at a time, and all of them as one pipeline.
    let (requests, _) = &whole;
    let mut pipeline = Vec::new();
    for request in requests {
        assert!(!request.is_empty(), "the parser yielded an empty request");
        let args: Vec<&[u8]> = request.iter().map(Vec::as_slice).collect();
        let encoded = encode_request(&args);
        assert_eq!(
            parse_requests(&[&encoded]),
            (vec![request.clone()], None),
            "{request:?} does not survive encode then parse"
        );
        pipeline.extend_from_slice(&encoded);
    }
    assert_eq!(parse_requests(&[&pipeline]), (requests.clone(), None));

    // The reply decoder is split-invariant too. Frames are compared by
    // their debug text, since a NaN double is not equal to itself.
    let whole = decode_frames(&[body]);
    let halves = decode_frames(&[&body[..split], &body[split..]]);
    assert_eq!(whole, halves, "frame decode depends on a split at {split}");
    let single = decode_frames(&bytes);
    assert_eq!(whole, single, "frame decode depends on byte-wise feeding");
}

/// Feeds `pieces` in order to one parser, draining requests after each.
pub fn parse_requests(pieces: &[&[u8]]) -> Parsed {
    let limits = ParserLimits::default();
    let mut parser = RequestParser::new();
    let mut out = Vec::new();
    for piece in pieces {
        parser.feed(piece);
        loop {
            match parser.next_request(&limits, true) {
                Ok(Some(request)) => out.push(request),
                Ok(None) => break,
                Err(e) => return (out, Some(e.message())),
            }
        }
    }
    (out, None)
}

/// Feeds `pieces` in order to one reply decoder; frames as debug text.
fn decode_frames(pieces: &[&[u8]]) -> (Vec<String>, Option<String>) {
    let mut decoder = FrameDecoder::new();
    let mut out = Vec::new();
    for piece in pieces {
        decoder.feed(piece);
        loop {
            match decoder.next_frame() {
                Ok(Some(frame)) => out.push(format!("{frame:?}")),
                Ok(None) => break,
                Err(e) => return (out, Some(e)),
            }
        }
    }
    (out, None)
}
