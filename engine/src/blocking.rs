//! Blocking commands (BLPOP, BLMOVE, BZPOPMIN...): clients parked on keys
//! until a write makes one of them ready or their timeout passes.
//!
//! A handler that finds nothing to serve and [`crate::cmd::Ctx::may_block`]
//! calls [`crate::cmd::Ctx::block_on_keys`] instead of replying. Writes that
//! can serve a blocked client call [`crate::cmd::Ctx::signal_key_ready`]
//! ([`crate::cmd::Ctx::store`] does it for every stored value). After the
//! command, the engine re-runs the blocked clients' commands on the ready
//! keys in FIFO order with blocking disallowed; a re-run that replies
//! unblocks its client.

/// What a blocked command replies when its timeout passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutReply {
    /// `*-1` in RESP2, `_` in RESP3 (BLPOP, BZPOPMIN, BLMPOP...).
    NullArray,
    /// `$-1` in RESP2, `_` in RESP3 (BLMOVE, BRPOPLPUSH).
    NullBulk,
}

/// A handler's request to park its client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockRequest {
    pub keys: Vec<Vec<u8>>,
    /// Relative timeout in milliseconds; 0 blocks forever.
    pub timeout_ms: u64,
    pub on_timeout: TimeoutReply,
}

/// The blocked clients and the keys signalled ready since the last serve.
#[derive(Debug, Default)]
pub struct Blocking {
    /// Keys (database, key) written since the last serve that some client
    /// is blocked on.
    pub ready: Vec<(usize, Vec<u8>)>,
}

impl Blocking {
    /// Notes that `key` in database `db` may now serve blocked clients.
    pub fn signal(&mut self, db: usize, key: &[u8]) {
        let _ = (db, key);
    }
}
