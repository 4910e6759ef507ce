//! Read lookups: Redis's `lookupKeyRead`, which differs from the write
//! lookup ([`Ctx::lookup`], Redis's `lookupKeyWrite`) in one visible way:
//! a miss raises the `keymiss` keyspace event (class `m`).
//!
//! Which lookup a command uses is Redis's choice, command by command, and
//! not its flags': GETDEL, SET ... GET, COPY's source, SUNIONSTORE's and
//! BITOP's sources, PFMERGE and XACK are writes that read with
//! `lookupKeyRead`; OBJECT and MEMORY USAGE read without the event
//! (`LOOKUP_NONOTIFY`). Each handler picks [`Lookup::Read`] or
//! [`Lookup::Write`] where Redis 7.0.15 calls the one or the other
//! (`tests/tests/notify_keymiss.rs` holds them to redis-server's events).

use super::{Ctx, ReplyWriter, WrongType};
use crate::notify::class;
use crate::value::Value;

/// Which of Redis's lookups a handler performs on a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// `lookupKeyRead`: a miss raises `keymiss`.
    Read,
    /// `lookupKeyWrite` (or a read with `LOOKUP_NONOTIFY`): a miss is silent.
    Write,
}

impl<'a> Ctx<'a> {
    /// [`Ctx::lookup`] (lazy expiry, then the live value) as `mode` says:
    /// a read that finds nothing raises `keymiss` after any `expired` the
    /// expiry raised, as Redis's `lookupKey` does.
    pub fn lookup_for(&mut self, key: &[u8], mode: Lookup) -> Option<&mut Value> {
        let (i, hidden) = self.expire_lazily(key);
        if mode == Lookup::Read
            && self.raises_keymiss()
            && (hidden || !self.server.keyspace.dbs[i].contains(key))
        {
            self.key_missed(key);
            return None;
        }
        match hidden {
            true => None,
            false => self.server.keyspace.dbs[i].get_mut(key),
        }
    }

    /// [`Ctx::lookup_for`] with [`Lookup::Read`].
    pub fn lookup_read(&mut self, key: &[u8]) -> Option<&mut Value> {
        self.lookup_for(key, Lookup::Read)
    }

    /// [`Ctx::lookup_as`] as `mode` says.
    pub fn lookup_as_for<T>(
        &mut self,
        key: &[u8],
        pick: fn(&mut Value) -> Option<&mut T>,
        mode: Lookup,
    ) -> Result<Option<&mut T>, WrongType> {
        match self.lookup_for(key, mode) {
            None => Ok(None),
            Some(v) => pick(v).map(Some).ok_or(WrongType),
        }
    }

    /// [`Ctx::lookup_and_writer`] for a read: a miss raises `keymiss`
    /// (into the reply, ahead of the command's own, for a client
    /// subscribed to it).
    pub fn lookup_read_and_writer(&mut self, key: &[u8]) -> (Option<&mut Value>, ReplyWriter<'_>) {
        let (i, hidden) = self.expire_lazily(key);
        if self.raises_keymiss() && (hidden || !self.server.keyspace.dbs[i].contains(key)) {
            self.key_missed(key);
        }
        let value = match hidden {
            true => None,
            false => self.server.keyspace.dbs[i].get_mut(key),
        };
        (value, ReplyWriter::new(&mut self.reply, self.protocol))
    }

    /// Whether a read miss publishes anything: class `m` is on, and the
    /// command is not a blocked one re-run to serve a ready key (Redis
    /// serves those with `lookupKeyWrite`, so a blocked XREAD served by
    /// one stream raises nothing for the others it names).
    fn raises_keymiss(&self) -> bool {
        self.server.config.notify_keyspace_events & class::KEY_MISS != 0
            && self
                .clients
                .get(&self.client_id)
                .is_some_and(|c| c.blocked.is_none())
    }

    /// Raises `keymiss` on `key` in the client's database.
    #[cold]
    fn key_missed(&mut self, key: &[u8]) {
        crate::notify::notify(self, class::KEY_MISS, "keymiss", key);
    }
}
