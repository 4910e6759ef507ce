//! The DUMP payload (`createDumpPayload` / `verifyDumpPayload`): one
//! object in RDB form, then the RDB version (2 bytes LE) and a CRC64 of
//! everything before it (8 bytes LE; all zero when `rdbchecksum no`).

use super::codec::{Reader, CRC64};
use super::object::{self, Build};
use super::{Corrupt, RDB_VERSION};
use crate::value::Value;

/// Version and checksum after the object.
const FOOTER_BYTES: usize = 10;

/// DUMP's reply for `value`, and the work it took. Redis 7.0 checksums a
/// payload whatever `rdbchecksum` says.
pub fn create(value: &Value, compress: bool) -> (u64, Vec<u8>) {
    let mut out = Vec::new();
    let work_units = object::save(&mut out, value, compress);
    out.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = CRC64.checksum(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    (work_units + out.len() as u64 / 64, out)
}

/// Why RESTORE refused a payload, as it tells the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// "DUMP payload version or checksum are wrong".
    VersionOrChecksum,
    /// "Bad data format".
    BadData(Corrupt),
}

/// Checks the footer (a newer RDB version or a wrong checksum is refused;
/// Redis 7.0 checks even a zero checksum) and loads the object; bytes after the object are ignored, as Redis ignores them.
/// Returns the value and the work the load did.
pub fn load(payload: &[u8], build: Build) -> Result<(Value, u64), Refused> {
    let Some(body_len) = payload.len().checked_sub(FOOTER_BYTES) else {
        return Err(Refused::VersionOrChecksum);
    };
    let footer = &payload[body_len..];
    let version = u16::from_le_bytes([footer[0], footer[1]]);
    if version > RDB_VERSION {
        return Err(Refused::VersionOrChecksum);
    }
    let crc = u64::from_le_bytes(footer[2..].try_into().expect("8 bytes"));
    if CRC64.checksum(&payload[..body_len + 2]) != crc {
        return Err(Refused::VersionOrChecksum);
    }
    let mut r = Reader::new(&payload[..body_len]);
    r.work_units = payload.len() as u64 / 64;
    let kind = r.byte().map_err(Refused::BadData)?;
    let value = object::load(&mut r, kind, build).map_err(Refused::BadData)?;
    Ok((value, r.work_units))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Limits;
    use crate::value::RString;

    fn build() -> Build {
        Build {
            limits: Limits::default(),
            seed: 7,
        }
    }

    #[test]
    fn a_string_payload_is_redis_bytes() {
        // redis-cli DUMP of SET k hello: "\x00\x05hello\n\x00" + CRC64.
        let (_, p) = create(&Value::Str(RString::new(b"hello".to_vec())), true);
        assert_eq!(&p[..9], b"\x00\x05hello\x0a\x00");
        assert_eq!(p.len(), 17);
        let (v, _) = load(&p, build()).unwrap();
        assert_eq!(v, Value::Str(RString::new(b"hello".to_vec())));
    }

    #[test]
    fn footer_checks() {
        let (_, mut p) = create(&Value::Str(RString::new(b"x".to_vec())), true);
        assert!(load(&p[..9], build()).is_err());
        let n = p.len();
        p[n - 1] ^= 1;
        assert_eq!(load(&p, build()), Err(Refused::VersionOrChecksum));
        let (_, mut p) = create(&Value::Str(RString::new(b"x".to_vec())), true);
        let n = p.len();
        p[n - 8..].fill(0);
        assert_eq!(
            load(&p, build()),
            Err(Refused::VersionOrChecksum),
            "zero is checked too"
        );
        p[n - 10] = 11; // version 11
        assert_eq!(load(&p, build()), Err(Refused::VersionOrChecksum));
    }

    #[test]
    fn bytes_after_the_object_are_ignored_as_by_redis() {
        // Redis loads the object and ignores what follows it; so does this.
        let mut body = vec![0u8, 1, b'a', 0xAA];
        body.extend_from_slice(&RDB_VERSION.to_le_bytes());
        let crc = CRC64.checksum(&body);
        body.extend_from_slice(&crc.to_le_bytes());
        assert!(load(&body, build()).is_ok());
    }
}
