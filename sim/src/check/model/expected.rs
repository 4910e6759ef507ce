//! [`Expected`]: what the model predicts for a reply, how a reply is
//! compared with it, and how replies and commands are shown in violation
//! messages.

use seedkv_engine::resp::Frame;

/// A score as Redis replies it: a RESP3 double, or RESP2's `%.17g` text.
pub(crate) fn score_frame(score: f64, resp3: bool) -> seedkv_engine::resp::Frame {
    use seedkv_engine::resp::Frame;
    match resp3 {
        true => Frame::Double(score),
        false => Frame::Bulk(seedkv_engine::resp::encode::format_double(score).into_bytes()),
    }
}

/// Replies longer than this are cut in violation messages.
const REPLY_SHOWN_MAX_CHARS: usize = 400;

/// `reply` as text for a violation message, cut (on a character boundary)
/// to at most `max_chars` and marked with `...` when cut.
pub(crate) fn render_shown(reply: &Frame, max_chars: usize) -> String {
    let mut s = reply.render();
    if s.len() > max_chars {
        let cut = (0..=max_chars)
            .rev()
            .find(|&i| s.is_char_boundary(i))
            .unwrap_or(0);
        s.truncate(cut);
        s.push_str("...");
    }
    s
}

/// What the model predicts for a reply.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Expected {
    /// The model cannot predict this reply; it is not compared.
    Unpredictable,
    /// Exactly this frame.
    Exactly(Frame),
    /// Some error (a request the engine rejected before running it).
    AnyError,
    /// An array of bulk strings that, sorted, equals this (KEYS).
    SortedBulks(Vec<Vec<u8>>),
    /// An integer in `low..=high` (DBSIZE).
    IntegerIn(i64, i64),
    /// An aggregate of this shape holding these elements in any order
    /// (HGETALL, SMEMBERS, SINTER...). For [`Shape::Map`] and
    /// [`Shape::FlatPairs`] the elements are key, value, key, value... and
    /// pairs move as units.
    Unordered(Shape, Vec<Frame>),
    /// The model judged the recorded reply itself (random replies, and
    /// replies that choose among outcomes): `Err` says what it expected.
    Verdict(Result<(), String>),
}

/// The shape of an aggregate reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    Array,
    /// A RESP3 set.
    Set,
    /// A RESP3 map.
    Map,
    /// RESP2's flat array of key, value pairs (HGETALL).
    FlatPairs,
}

impl Expected {
    pub(crate) fn ok() -> Expected {
        Expected::Exactly(Frame::Simple(b"OK".to_vec()))
    }

    pub(crate) fn error(message: &str) -> Expected {
        Expected::Exactly(Frame::Error(message.as_bytes().to_vec()))
    }

    pub(crate) fn integer(n: i64) -> Expected {
        Expected::Exactly(Frame::Integer(n))
    }

    pub(crate) fn bulk_or_null(value: Option<&[u8]>) -> Expected {
        Expected::Exactly(match value {
            Some(v) => Frame::Bulk(v.to_vec()),
            None => Frame::Null,
        })
    }

    /// `Err` says how `reply` differs from the prediction.
    pub(crate) fn check(&self, reply: &Frame) -> Result<(), String> {
        let matches = match self {
            Expected::Unpredictable => true,
            Expected::Exactly(frame) => frame == reply,
            Expected::AnyError => matches!(reply, Frame::Error(_)),
            Expected::SortedBulks(keys) => match reply {
                Frame::Array(items) => {
                    let mut got: Vec<&[u8]> = Vec::with_capacity(items.len());
                    let mut all_bulks = true;
                    for item in items {
                        match item {
                            Frame::Bulk(b) => got.push(b),
                            _ => all_bulks = false,
                        }
                    }
                    got.sort_unstable();
                    all_bulks
                        && got.len() == keys.len()
                        && got.iter().zip(keys).all(|(a, b)| *a == b.as_slice())
                }
                _ => false,
            },
            Expected::IntegerIn(low, high) => {
                matches!(reply, Frame::Integer(n) if (*low..=*high).contains(n))
            }
            Expected::Unordered(shape, items) => unordered_matches(*shape, items, reply),
            Expected::Verdict(verdict) => verdict.is_ok(),
        };
        if matches {
            return Ok(());
        }
        let got = render_shown(reply, REPLY_SHOWN_MAX_CHARS);
        Err(format!("expected {}, got {got}", self.describe()))
    }

    fn describe(&self) -> String {
        match self {
            Expected::Unpredictable => "anything".into(),
            Expected::Exactly(frame) => frame.render(),
            Expected::AnyError => "an error".into(),
            Expected::SortedBulks(keys) => format!(
                "the {} keys {:?}",
                keys.len(),
                keys.iter()
                    .take(16)
                    .map(|k| String::from_utf8_lossy(k))
                    .collect::<Vec<_>>()
            ),
            Expected::IntegerIn(low, high) => format!("an integer in {low}..={high}"),
            Expected::Unordered(shape, items) => format!(
                "in any order ({shape:?}) {}",
                Frame::Array(items.iter().take(32).cloned().collect()).render()
            ),
            Expected::Verdict(Ok(())) => "anything".into(),
            Expected::Verdict(Err(wanted)) => wanted.clone(),
        }
    }
}

/// Whether `reply` is an aggregate of `shape` holding `items` in any order.
fn unordered_matches(shape: Shape, items: &[Frame], reply: &Frame) -> bool {
    let (got, pairs): (Vec<&Frame>, bool) = match (shape, reply) {
        (Shape::Array, Frame::Array(got)) | (Shape::Set, Frame::Set(got)) => {
            (got.iter().collect(), false)
        }
        (Shape::FlatPairs, Frame::Array(got)) => (got.iter().collect(), true),
        (Shape::Map, Frame::Map(got)) => (got.iter().flat_map(|(k, v)| [k, v]).collect(), true),
        _ => return false,
    };
    if got.len() != items.len() {
        return false;
    }
    // Elements (or pairs) are compared by their rendering, sorted: a
    // multiset comparison that needs no order on frames.
    let unit = if pairs { 2 } else { 1 };
    let keys = |frames: &mut dyn Iterator<Item = &Frame>| -> Vec<String> {
        let frames: Vec<&Frame> = frames.collect();
        let mut keys: Vec<String> = frames
            .chunks(unit)
            .map(|c| {
                c.iter()
                    .map(|f| f.render())
                    .collect::<Vec<_>>()
                    .join("\u{0}")
            })
            .collect();
        keys.sort_unstable();
        keys
    };
    keys(&mut got.into_iter()) == keys(&mut items.iter())
}

/// Renders request arguments for a violation message, shortening long ones.
pub(crate) fn render_args(args: &[Vec<u8>]) -> String {
    /// Arguments shown in full up to this length; longer ones are cut.
    const ARG_SHOWN_MAX_BYTES: usize = 40;
    /// At most this many arguments are shown.
    const ARGS_SHOWN_MAX: usize = 8;
    let mut out = String::new();
    for (i, arg) in args.iter().take(ARGS_SHOWN_MAX).enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let shown = &arg[..arg.len().min(ARG_SHOWN_MAX_BYTES)];
        out.push_str(&String::from_utf8_lossy(shown));
        if arg.len() > ARG_SHOWN_MAX_BYTES {
            out.push_str("...");
        }
    }
    if args.len() > ARGS_SHOWN_MAX {
        out.push_str(&format!(" ... ({} args)", args.len()));
    }
    out
}
