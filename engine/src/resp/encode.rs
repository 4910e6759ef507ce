//! The reply writer: encodes replies straight into a connection's output
//! buffer, in the protocol version that connection speaks (RESP2 or RESP3,
//! switched by `HELLO`). Types RESP2 lacks degrade the way Redis degrades
//! them: maps and sets become flat arrays, doubles become bulk strings,
//! booleans become integers, verbatim strings become bulk strings, and the
//! RESP3 null becomes `$-1` or `*-1`.

/// The protocol version a connection speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Protocol {
    #[default]
    Resp2,
    Resp3,
}

impl Protocol {
    pub fn version(self) -> i64 {
        match self {
            Protocol::Resp2 => 2,
            Protocol::Resp3 => 3,
        }
    }
}

/// Appends encoded replies to a caller-owned buffer.
pub struct ReplyWriter<'a> {
    out: &'a mut Vec<u8>,
    proto: Protocol,
}

impl<'a> ReplyWriter<'a> {
    pub fn new(out: &'a mut Vec<u8>, proto: Protocol) -> Self {
        ReplyWriter { out, proto }
    }

    pub fn protocol(&self) -> Protocol {
        self.proto
    }

    /// Bytes in the underlying buffer (used to account encoding work).
    pub fn len_bytes(&self) -> usize {
        self.out.len()
    }

    /// `<prefix><n>\r\n`, assembled on the stack and appended in one
    /// copy: every integer reply and length header passes here, and one
    /// copy instead of three is measurable per request.
    fn header(&mut self, prefix: u8, n: i64) {
        let mut buf = [0u8; HEADER_MAX_BYTES];
        let end = HEADER_MAX_BYTES - 2;
        buf[end..].copy_from_slice(b"\r\n");
        let start = write_digits_before(&mut buf, end, n) - 1;
        buf[start] = prefix;
        self.append_header(&buf[start..]);
    }

    /// `+OK` style status reply. `s` must not contain CR or LF.
    pub fn simple(&mut self, s: &str) {
        debug_assert!(!s.contains(['\r', '\n']));
        self.out.push(b'+');
        self.out.extend_from_slice(s.as_bytes());
        self.out.extend_from_slice(b"\r\n");
    }

    pub fn ok(&mut self) {
        self.out.extend_from_slice(b"+OK\r\n");
    }

    /// An error reply. `msg` is the full message including its code, e.g.
    /// `ERR syntax error` or `WRONGTYPE Operation ...`. CR/LF become spaces,
    /// as Redis does.
    pub fn error(&mut self, msg: &str) {
        self.error_bytes(msg.as_bytes());
    }

    /// [`ReplyWriter::error`] of a message that quotes raw bytes (a user
    /// name, a pattern), which Redis sends as they are.
    pub fn error_bytes(&mut self, msg: &[u8]) {
        self.out.push(b'-');
        for &b in msg {
            self.out
                .push(if b == b'\r' || b == b'\n' { b' ' } else { b });
        }
        self.out.extend_from_slice(b"\r\n");
    }

    pub fn int(&mut self, n: i64) {
        self.header(b':', n);
    }

    /// An integer reply from `n`'s decimal digits already formatted (by
    /// [`fmt_i64`]), for a caller that stored them too (INCR).
    pub fn int_decimal(&mut self, digits: &[u8]) {
        debug_assert!(crate::resp::parse::string2ll(digits).is_some());
        let mut buf = [0u8; HEADER_MAX_BYTES];
        let end = 1 + digits.len();
        buf[0] = b':';
        buf[1..end].copy_from_slice(digits);
        buf[end..end + 2].copy_from_slice(b"\r\n");
        self.append_header(&buf[..end + 2]);
    }

    /// Appends an assembled header (`prefix`, digits, CRLF), growing the
    /// buffer exactly as the three appended one after the other would (its
    /// capacity is client memory that INFO and MEMORY STATS report).
    #[inline]
    fn append_header(&mut self, header: &[u8]) {
        let digits = header.len() - 3;
        self.out.reserve(1);
        self.out.reserve(1 + digits);
        self.out.reserve(3 + digits);
        self.out.extend_from_slice(header);
    }

    pub fn bulk(&mut self, data: &[u8]) {
        self.header(b'$', data.len() as i64);
        self.out.extend_from_slice(data);
        self.out.extend_from_slice(b"\r\n");
    }

    pub fn bulk_str(&mut self, s: &str) {
        self.bulk(s.as_bytes());
    }

    /// An integer sent as a bulk string (e.g. `INCRBYFLOAT`, `CONFIG GET`).
    pub fn bulk_i64(&mut self, n: i64) {
        let mut buf = itoa_buf();
        let s = fmt_i64(&mut buf, n);
        let s = s.to_vec();
        self.bulk(&s);
    }

    /// The null bulk string: `$-1` in RESP2, `_` in RESP3.
    pub fn null(&mut self) {
        match self.proto {
            Protocol::Resp2 => self.out.extend_from_slice(b"$-1\r\n"),
            Protocol::Resp3 => self.out.extend_from_slice(b"_\r\n"),
        }
    }

    /// The null array: `*-1` in RESP2, `_` in RESP3.
    pub fn null_array(&mut self) {
        match self.proto {
            Protocol::Resp2 => self.out.extend_from_slice(b"*-1\r\n"),
            Protocol::Resp3 => self.out.extend_from_slice(b"_\r\n"),
        }
    }

    pub fn array_len(&mut self, n: usize) {
        self.header(b'*', n as i64);
    }

    /// A map of `n` key/value pairs; the caller then writes `2 * n` replies.
    pub fn map_len(&mut self, n: usize) {
        match self.proto {
            Protocol::Resp2 => self.header(b'*', 2 * n as i64),
            Protocol::Resp3 => self.header(b'%', n as i64),
        }
    }

    /// A set of `n` elements.
    pub fn set_len(&mut self, n: usize) {
        match self.proto {
            Protocol::Resp2 => self.header(b'*', n as i64),
            Protocol::Resp3 => self.header(b'~', n as i64),
        }
    }

    /// An out-of-band push of `n` elements (pub/sub in RESP3).
    pub fn push_len(&mut self, n: usize) {
        match self.proto {
            Protocol::Resp2 => self.header(b'*', n as i64),
            Protocol::Resp3 => self.header(b'>', n as i64),
        }
    }

    pub fn bool(&mut self, b: bool) {
        match self.proto {
            Protocol::Resp2 => self.int(b as i64),
            Protocol::Resp3 => self
                .out
                .extend_from_slice(if b { b"#t\r\n" } else { b"#f\r\n" }),
        }
    }

    /// A double: RESP3 `,` type, RESP2 bulk string, both in Redis's `%.17g`
    /// style with `inf`/`-inf`/`nan` spelled as Redis spells them.
    pub fn double(&mut self, d: f64) {
        let s = format_double(d);
        match self.proto {
            Protocol::Resp2 => self.bulk(s.as_bytes()),
            Protocol::Resp3 => {
                self.out.push(b',');
                self.out.extend_from_slice(s.as_bytes());
                self.out.extend_from_slice(b"\r\n");
            }
        }
    }

    /// A verbatim string (`=` in RESP3, e.g. `INFO`, `CLIENT INFO`); `fmt` is
    /// the three-letter format, `txt` or `mkd`.
    pub fn verbatim(&mut self, fmt: &str, data: &[u8]) {
        debug_assert_eq!(fmt.len(), 3);
        match self.proto {
            Protocol::Resp2 => self.bulk(data),
            Protocol::Resp3 => {
                self.header(b'=', (data.len() + 4) as i64);
                self.out.extend_from_slice(fmt.as_bytes());
                self.out.push(b':');
                self.out.extend_from_slice(data);
                self.out.extend_from_slice(b"\r\n");
            }
        }
    }

    /// Raw, pre-encoded bytes (used for replies cached in encoded form).
    pub fn raw(&mut self, bytes: &[u8]) {
        self.out.extend_from_slice(bytes);
    }
}

/// A stack buffer for integer formatting.
fn itoa_buf() -> [u8; 20] {
    [0u8; 20]
}

/// Two ASCII digits for each value 0..100: formatting two digits per
/// division halves the divisions of every integer reply and length header
/// (Redis's `ull2string` does the same).
const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// A header's longest form: a prefix byte, i64::MIN's 20 characters, CRLF.
const HEADER_MAX_BYTES: usize = 1 + 20 + 2;

/// Formats `n` in decimal into `buf`, returning the used tail.
pub fn fmt_i64(buf: &mut [u8; 20], n: i64) -> &[u8] {
    let start = write_digits_before(buf, 20, n);
    &buf[start..]
}

/// Writes `n` in decimal into `buf` so that it ends at `end` (which must
/// leave 20 bytes before it), returning where it starts.
#[inline]
fn write_digits_before(buf: &mut [u8], end: usize, n: i64) -> usize {
    debug_assert!(end >= 20);
    let mut i = end;
    let neg = n < 0;
    let mut v = n.unsigned_abs();
    while v >= 100 {
        let pair = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if v >= 10 {
        let pair = v as usize * 2;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        i -= 1;
        buf[i] = b'0' + v as u8;
    }
    if neg {
        // i64::MIN has 19 digits, so there is always room for the sign.
        i -= 1;
        buf[i] = b'-';
    }
    i
}

/// Formats a double the way Redis 7.0 replies with one (`%.17g`, shortest
/// round-trip form; `inf`, `-inf`, `nan`).
pub fn format_double(d: f64) -> String {
    if d.is_nan() {
        return "nan".to_string();
    }
    if d.is_infinite() {
        return if d > 0.0 { "inf".into() } else { "-inf".into() };
    }
    format_g17(d)
}

/// C's `%.17g`.
pub fn format_g17(d: f64) -> String {
    if d == 0.0 {
        return if d.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    // An integral value below 10^15 has at most 16 digits, so %.17g prints
    // it exactly, as an integer: skip the two exact-decimal formattings
    // below (≈0.5 µs, the cost audit's ZMSCORE/ZPOPMIN finding).
    if d.fract() == 0.0 && d.abs() < 1e15 {
        return (d as i64).to_string();
    }
    // `{:.16e}` rounds to 17 significant digits, as %g does, and tells the
    // exponent after rounding; %g picks exponential form when it is < -4 or
    // >= the precision.
    let sci = format!("{:.16e}", d);
    let (mant, e) = sci.split_once('e').expect("exponent");
    let e: i32 = e.parse().expect("exponent digits");
    if !(-4..17).contains(&e) {
        let mant = trim_zeros(mant);
        let sign = if e < 0 { '-' } else { '+' };
        format!("{}e{}{:02}", mant, sign, e.abs())
    } else {
        let decimals = (16 - e).max(0) as usize;
        trim_zeros(&format!("{:.*}", decimals, d)).to_string()
    }
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// Encodes a request as a RESP multibulk, as clients send it.
pub fn encode_request(args: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + args.iter().map(|a| a.len() + 16).sum::<usize>());
    let mut buf = itoa_buf();
    out.push(b'*');
    out.extend_from_slice(fmt_i64(&mut buf, args.len() as i64));
    out.extend_from_slice(b"\r\n");
    for a in args {
        out.push(b'$');
        out.extend_from_slice(fmt_i64(&mut buf, a.len() as i64));
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(proto: Protocol, f: impl FnOnce(&mut ReplyWriter)) -> Vec<u8> {
        let mut out = Vec::new();
        f(&mut ReplyWriter::new(&mut out, proto));
        out
    }

    #[test]
    fn integral_doubles_take_the_fast_path_with_printf_output() {
        // What C's printf("%.17g") prints for these.
        for (d, want) in [
            (5.0, "5"),
            (-3.0, "-3"),
            (123456789012345.0, "123456789012345"),
            (999999999999999.0, "999999999999999"),
            (1e15, "1000000000000000"),
            (1e16, "10000000000000000"),
            (1e17, "1e+17"),
            (0.5, "0.5"),
            (0.1, "0.10000000000000001"),
        ] {
            assert_eq!(format_g17(d), want, "{d}");
        }
    }

    #[test]
    fn integers_format_like_redis() {
        assert_eq!(
            enc(Protocol::Resp2, |w| w.int(i64::MIN)),
            b":-9223372036854775808\r\n"
        );
        assert_eq!(enc(Protocol::Resp2, |w| w.int(0)), b":0\r\n");
    }

    #[test]
    fn nulls_follow_protocol() {
        assert_eq!(enc(Protocol::Resp2, |w| w.null()), b"$-1\r\n");
        assert_eq!(enc(Protocol::Resp2, |w| w.null_array()), b"*-1\r\n");
        assert_eq!(enc(Protocol::Resp3, |w| w.null()), b"_\r\n");
    }

    #[test]
    fn maps_flatten_in_resp2() {
        assert_eq!(enc(Protocol::Resp2, |w| w.map_len(2)), b"*4\r\n");
        assert_eq!(enc(Protocol::Resp3, |w| w.map_len(2)), b"%2\r\n");
    }

    #[test]
    fn doubles_match_percent_17g() {
        assert_eq!(format_double(3.0), "3");
        assert_eq!(format_double(10.5), "10.5");
        assert_eq!(format_double(0.1), "0.10000000000000001");
        assert_eq!(format_double(1e20), "1e+20");
        assert_eq!(format_double(1.5e-5), "1.5e-05");
        assert_eq!(format_double(f64::INFINITY), "inf");
    }

    #[test]
    fn errors_strip_newlines() {
        assert_eq!(
            enc(Protocol::Resp2, |w| w.error("ERR a\r\nb")),
            b"-ERR a  b\r\n"
        );
    }
}
