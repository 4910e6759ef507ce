//! A request's command name in one case, on the stack. Checkers match
//! every request's name against literals; a `Vec` per name (what
//! `to_ascii_lowercase` returns) was a large share of their allocations.

/// Names up to this length are converted; no longer one is a command the
/// checkers name.
const NAME_BYTES_MAX: usize = 24;

/// The buffer a converted name lives in while it is matched.
#[derive(Default)]
pub struct NameBuffer([u8; NAME_BYTES_MAX]);

impl NameBuffer {
    /// `name` in lowercase; empty (which no command is) for a name longer
    /// than any command.
    pub fn lower(&mut self, name: &[u8]) -> &[u8] {
        self.converted(name, u8::to_ascii_lowercase)
    }

    /// `name` in uppercase; empty for a name longer than any command.
    pub fn upper(&mut self, name: &[u8]) -> &[u8] {
        self.converted(name, u8::to_ascii_uppercase)
    }

    /// Copied and converted in one loop: a `memmove` call per name, then
    /// a second pass, cost more than the few bytes of a command name.
    #[inline]
    fn converted(&mut self, name: &[u8], convert: fn(&u8) -> u8) -> &[u8] {
        let Some(out) = self.0.get_mut(..name.len()) else {
            return &[];
        };
        for (o, b) in out.iter_mut().zip(name) {
            *o = convert(b);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::NameBuffer;

    #[test]
    fn names_convert_and_long_ones_are_empty() {
        let mut buffer = NameBuffer::default();
        assert_eq!(buffer.lower(b"BLMove"), b"blmove");
        assert_eq!(buffer.upper(b"exec"), b"EXEC");
        assert_eq!(buffer.lower(b""), b"");
        assert_eq!(buffer.lower(&[b'A'; 25]), b"");
        assert_eq!(buffer.lower(&[b'A'; 24]), &[b'a'; 24][..]);
    }
}
