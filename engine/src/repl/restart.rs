//! Replication state across a restart: what an RDB save records of it and
//! what loading that file at start brings back (Redis 7.0.15's
//! `rdbPopulateSaveInfo` and the end of `loadDataFromDisk`).
//!
//! A replica restarted from its own dump offers its primary the history it
//! had (`PSYNC <replid> <offset + 1>`) and resumes with a partial resync
//! when the primary's backlog still covers the gap. A primary restarted
//! from its dump keeps its old history as `replid2`, valid up to the saved
//! offset, so that replicas of the old run resync partially too. Only the
//! dump at start carries this: an AOF (its preamble included) does not, as
//! in Redis.

use crate::event::LogLevel;
use crate::rdb::file::{AuxFields, ReplSaveInfo};
use crate::server::Server;

use super::replica::MasterState;
use super::Replication;

impl Replication {
    /// The replication fields a save writes now, if any (Redis's
    /// `rdbPopulateSaveInfo`): a primary with a backlog records its
    /// stream's last database (`selected_db`, 0 when none was written
    /// since the stream began); a replica records its primary's, from the
    /// link or the cached master; a server outside any chain records none.
    pub fn save_info(&self, selected_db: Option<usize>) -> Option<ReplSaveInfo> {
        let stream_db = match &self.master {
            None => {
                self.backlog.as_ref()?;
                selected_db.unwrap_or(0)
            }
            Some(link) => link.master.as_ref().or(link.cached.as_ref())?.db,
        };
        let replid: [u8; 40] = self.replid.as_bytes().try_into().ok()?;
        Some(ReplSaveInfo {
            stream_db: stream_db as u64,
            replid,
            offset: self.master_repl_offset,
        })
    }
}

/// The saved replication state in a loaded dump, when it is whole: an id
/// of 40 characters, an offset and a stream database (Redis's
/// `rsi.repl_id_is_set && repl_offset != -1 && repl_stream_db != -1`).
fn saved(aux: &AuxFields) -> Option<(String, u64, i64)> {
    let replid = aux.repl_id.clone()?;
    let offset = aux.repl_offset.filter(|&o| o != -1)?;
    let db = aux.repl_stream_db.filter(|&d| d != -1)?;
    // An offset below -1 would make Redis's counters negative; no Redis
    // writes one, and none is trusted here.
    let offset = u64::try_from(offset).ok()?;
    Some((replid, offset, db))
}

/// After the dump at start loaded: brings its replication state back.
/// Returns the log lines to write.
pub(crate) fn restore(server: &mut Server, aux: &AuxFields) -> Vec<(LogLevel, String)> {
    let Some((replid, offset, db)) = saved(aux) else {
        return Vec::new();
    };
    let repl = &mut server.repl;
    match repl.master.as_deref_mut() {
        Some(link) => {
            // `replicationCacheMasterUsingMyself`, then `selectDb` of the
            // saved database (out of range: the client's default, 0).
            let db = usize::try_from(db)
                .ok()
                .filter(|&d| d < server.keyspace.dbs.len())
                .unwrap_or(0);
            link.cached = Some(MasterState {
                replid: replid.clone(),
                reploff: offset,
                read_reploff: offset,
                db,
            });
            link.master = None;
            repl.replid = replid;
            repl.master_repl_offset = offset;
            vec![(
                LogLevel::Notice,
                "Before turning into a replica, using my own master parameters to synthesize \
                 a cached master: I may be able to synchronize with the new master with just \
                 a partial transfer."
                    .to_string(),
            )]
        }
        None => {
            // The old history stays valid up to the saved offset; the
            // backlog starts empty right after it, and the first write
            // selects its database again.
            // The file's values as they are (a null id included, as Redis
            // copies it); the offset was checked to fit an i64.
            repl.replid2 = replid;
            repl.second_replid_offset = (offset as i64).saturating_add(1);
            repl.master_repl_offset = offset;
            let size = super::primary::config_u64(&server.config, "repl-backlog-size");
            repl.backlog = None;
            repl.ensure_backlog(size as usize);
            server.propagation.reset_selected_db();
            Vec::new()
        }
    }
}
