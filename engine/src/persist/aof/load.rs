//! Loading the AOF at start (Redis 7.0's `loadAppendOnlyFiles`): the
//! manifest, then the base file (an RDB preamble or commands) and every
//! incremental file in order, each read whole and its commands replayed.
//! A truncated tail of the *last* file is cut (`aof-load-truncated yes`,
//! the default) at the last complete command, with Redis's log lines; an
//! unfinished MULTI at the end is cut too; anything else malformed stops
//! the server, as Redis exits.

/// Arguments a command in the AOF may have: Redis bounds nothing but
/// memory; this bounds a corrupt count before anything is allocated.
pub const AOF_ARGS_MAX: usize = 1024 * 1024;
/// A bulk in the AOF: Redis's `proto-max-bulk-len` default.
pub const AOF_BULK_MAX_BYTES: usize = 512 * 1024 * 1024;

/// Where a file's commands end.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Parsed {
    /// A command and the offset after it.
    Command(Vec<Vec<u8>>, usize),
    /// Clean end of the file.
    End,
    /// The file ends inside a command (a torn tail).
    Truncated,
    /// Not a command: Redis's "Bad file format".
    BadFormat,
}

/// Reads the command at `pos` (`*<argc>\r\n` then `$<len>\r\n<bytes>\r\n`
/// per argument), as `loadSingleAppendOnlyFile` does.
pub(crate) fn next_command(bytes: &[u8], pos: usize) -> Parsed {
    if pos >= bytes.len() {
        return Parsed::End;
    }
    let mut at = pos;
    if bytes[at] != b'*' {
        return Parsed::BadFormat;
    }
    let Some((argc, next)) = number_line(bytes, at + 1) else {
        return truncated_or_bad(bytes, at + 1);
    };
    at = next;
    if argc < 1 || argc as usize > AOF_ARGS_MAX {
        return Parsed::BadFormat;
    }
    let mut args = Vec::with_capacity((argc as usize).min(64));
    for _ in 0..argc {
        if at >= bytes.len() {
            return Parsed::Truncated;
        }
        if bytes[at] != b'$' {
            return Parsed::BadFormat;
        }
        let Some((len, next)) = number_line(bytes, at + 1) else {
            return truncated_or_bad(bytes, at + 1);
        };
        if len < 0 || len as usize > AOF_BULK_MAX_BYTES {
            return Parsed::BadFormat;
        }
        let len = len as usize;
        let end = next + len;
        if end + 2 > bytes.len() {
            return Parsed::Truncated;
        }
        if &bytes[end..end + 2] != b"\r\n" {
            return Parsed::BadFormat;
        }
        args.push(bytes[next..end].to_vec());
        at = end + 2;
    }
    Parsed::Command(args, at)
}

/// A decimal number ended by `\r\n` at `pos`, and the offset after it.
fn number_line(bytes: &[u8], pos: usize) -> Option<(i64, usize)> {
    let rest = bytes.get(pos..)?;
    let nl = rest.iter().take(32).position(|&b| b == b'\n')?;
    let line = rest[..nl].strip_suffix(b"\r")?;
    let n = std::str::from_utf8(line).ok()?.parse::<i64>().ok()?;
    Some((n, pos + nl + 1))
}

/// A header line that did not parse: torn if the file ends within it.
fn truncated_or_bad(bytes: &[u8], pos: usize) -> Parsed {
    let rest = &bytes[pos.min(bytes.len())..];
    if rest.len() < 32 && !rest.contains(&b'\n') {
        Parsed::Truncated
    } else {
        Parsed::BadFormat
    }
}

/// Where loading is.
#[derive(Debug)]
pub(crate) struct AofLoad {
    /// Files still to load, in order (names in `appenddirname`).
    pub(crate) files: Vec<String>,
    /// The file being read, and what was read so far.
    pub(crate) current: usize,
    pub(crate) bytes: Vec<u8>,
    /// The manifest has not been read yet.
    pub(crate) reading_manifest: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_commands_and_finds_torn_tails() {
        let file = b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n";
        let Parsed::Command(a, p) = next_command(file, 0) else {
            panic!()
        };
        assert_eq!(a, [b"SELECT".to_vec(), b"0".to_vec()]);
        let Parsed::Command(b, q) = next_command(file, p) else {
            panic!()
        };
        assert_eq!(b.len(), 3);
        assert_eq!(next_command(file, q), Parsed::End);
        for cut in p + 1..file.len() {
            assert_eq!(
                next_command(&file[..cut], p),
                Parsed::Truncated,
                "cut {cut}"
            );
        }
        assert_eq!(next_command(b"hello", 0), Parsed::BadFormat);
        assert_eq!(next_command(b"*x\r\n", 0), Parsed::BadFormat);
        assert_eq!(next_command(b"*1\r\n$3\r\nabcXY", 0), Parsed::BadFormat);
        assert_eq!(next_command(b"*1\r\n+3\r\n", 0), Parsed::BadFormat);
    }
}
