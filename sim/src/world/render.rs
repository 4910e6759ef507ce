//! Short renderings of frames for violation messages and traces.

use seedkv_engine::resp::Frame;

/// A short, readable rendering of a frame for messages and traces.
pub fn frame_summary(frame: &Frame) -> String {
    let mut out = String::new();
    render_frame(frame, &mut out);
    if out.len() > 160 {
        let mut cut = 157;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push_str("...");
    }
    out
}

fn render_frame(frame: &Frame, out: &mut String) {
    use std::fmt::Write;
    if out.len() > 200 {
        return;
    }
    let text = |b: &[u8]| String::from_utf8_lossy(&b[..b.len().min(64)]).into_owned();
    let _ = match frame {
        Frame::Simple(b) => write!(out, "+{}", text(b)),
        Frame::Error(b) => write!(out, "-{}", text(b)),
        Frame::Integer(n) => write!(out, ":{n}"),
        Frame::Bulk(b) => write!(out, "{:?}", text(b)),
        Frame::Null => write!(out, "nil"),
        Frame::Double(d) => write!(out, ",{d}"),
        Frame::Boolean(b) => write!(out, "#{b}"),
        Frame::BigNumber(b) => write!(out, "({}", text(b)),
        Frame::Verbatim { data, .. } => write!(out, "={:?}", text(data)),
        Frame::Array(items) | Frame::Set(items) | Frame::Push(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                if out.len() > 200 {
                    let _ = write!(out, "...({} items)", items.len());
                    break;
                }
                render_frame(item, out);
            }
            write!(out, "]")
        }
        Frame::Map(pairs) => {
            out.push('{');
            for (k, v) in pairs {
                if out.len() > 200 {
                    break;
                }
                render_frame(k, out);
                out.push_str(": ");
                render_frame(v, out);
                out.push_str(", ");
            }
            write!(out, "}}")
        }
    };
}
