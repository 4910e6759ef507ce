//! FUNCTION DUMP's payload and the RDB's function records.
//!
//! A library is saved as `RDB_OPCODE_FUNCTION2` (245) followed by its code
//! as an RDB string (LZF-compressed under `rdbcompression`, as any RDB
//! string); DUMP's payload is those records back to back, then the RDB
//! version (2 bytes LE) and a CRC64 of everything before (8 bytes LE), the
//! footer of DUMP's key payloads. redis-server 7.0.15 writes the same
//! bytes for the same library.

use crate::rdb::codec::{put_string, Reader, CRC64};
use crate::rdb::file::opcode;
use crate::rdb::RDB_VERSION;

use super::Library;

/// Version and checksum after the records.
const FOOTER_BYTES: usize = 10;

/// Appends `library`'s record to `out` (rdbSaveFunctions).
pub fn put_library(out: &mut Vec<u8>, library: &Library, compress: bool) {
    out.push(opcode::FUNCTION2);
    put_string(out, &library.code, compress);
}

/// FUNCTION DUMP's payload for `libraries`.
pub fn dump<'a>(libraries: impl Iterator<Item = &'a Library>, compress: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for library in libraries {
        put_library(&mut out, library, compress);
    }
    out.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = CRC64.checksum(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Why a payload was refused, in FUNCTION RESTORE's words.
pub const BAD_FOOTER: &str = "ERR DUMP payload version or checksum are wrong";
pub const NOT_A_FUNCTION: &str = "ERR given type is not a function";
pub const BAD_PAYLOAD: &str = "ERR Failed loading library payload";

/// The library codes in a FUNCTION RESTORE payload, after its footer is
/// checked (verifyDumpPayload).
pub fn parse(payload: &[u8]) -> Result<Vec<Vec<u8>>, &'static str> {
    let Some(body_len) = payload.len().checked_sub(FOOTER_BYTES) else {
        return Err(BAD_FOOTER);
    };
    let footer = &payload[body_len..];
    let version = u16::from_le_bytes([footer[0], footer[1]]);
    let crc = u64::from_le_bytes(footer[2..].try_into().expect("8 bytes"));
    if version > RDB_VERSION || CRC64.checksum(&payload[..body_len + 2]) != crc {
        return Err(BAD_FOOTER);
    }
    let mut r = Reader::new(&payload[..body_len]);
    let mut codes = Vec::new();
    while r.remaining() > 0 {
        if r.byte().map_err(|_| BAD_PAYLOAD)? != opcode::FUNCTION2 {
            return Err(NOT_A_FUNCTION);
        }
        codes.push(read_code(&mut r)?);
    }
    Ok(codes)
}

/// One FUNCTION2 record's code, the opcode already read (rdbFunctionLoad).
pub fn read_code(r: &mut Reader<'_>) -> Result<Vec<u8>, &'static str> {
    r.string().map_err(|_| BAD_PAYLOAD)
}
