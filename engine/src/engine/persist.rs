//! The engine's persistence inputs: storage completions, forked children
//! and their exits, and loading at start (see [`crate::persist`]).

use super::Engine;
use crate::event::{Event, LogLevel};
use crate::persist::rdb::{AfterSave, Saved};
use crate::persist::state::Purpose;
use crate::persist::{ChildId, ChildJob, ChildProcess, ForkRequest, StorageId, StorageResult};
use crate::time::Now;

impl Engine {
    /// Loading at start: with a host that has storage, the AOF when
    /// `appendonly yes`, else `dbfilename`. The host drains the requests
    /// (inline) before it accepts a connection.
    pub(super) fn start_persistence(&mut self, now: Now) {
        self.server.persist.rdb.lastsave_unix_s = now.unix_us / 1_000_000;
        self.start_acl_file();
        if !self.server.config.storage {
            return;
        }
        if crate::persist::PersistConfig::of(&self.server.config).appendonly {
            self.start_aof_load();
        } else {
            crate::persist::rdb::start_load(&mut self.server, &mut self.events);
        }
    }

    /// Whether loading at start is still going on (the host has not yet
    /// completed its reads).
    pub fn is_loading(&self) -> bool {
        let acl_at_start = self.server.persist.acl_file.as_ref().map(|op| op.caller)
            == Some(crate::persist::aclfile::Caller::Startup);
        self.server.persist.load.is_some() || self.server.persist.aof_load.is_some() || acl_at_start
    }

    /// The outcome of the storage request `id` (see
    /// [`crate::persist::storage`]). Unknown ids are ignored.
    pub fn storage_done(&mut self, now: Now, id: StorageId, result: StorageResult) {
        let Some(purpose) = self.server.persist.requests.in_flight.remove(&id) else {
            return;
        };
        match purpose {
            Purpose::Save => {
                let finished = crate::persist::rdb::save_step_done(
                    &mut self.server,
                    &mut self.events,
                    now,
                    result,
                );
                if let Some((after, saved)) = finished {
                    self.save_finished(now, after, saved);
                }
            }
            Purpose::Load => {
                let loaded = crate::persist::rdb::load_step_done(
                    &mut self.server,
                    &mut self.events,
                    now,
                    result,
                );
                if let Err(line) = loaded {
                    self.fatal(line);
                }
            }
            Purpose::Aof(op) => {
                let r =
                    crate::persist::aof::done(&mut self.server, &mut self.events, now, op, result);
                if let Err(line) = r {
                    self.fatal(line);
                }
            }
            Purpose::AofLoad => self.aof_load_done(now, result),
            Purpose::AclFile => self.acl_file_done(now, result),
            Purpose::Cleanup => {}
        }
        self.after_input_persist(now);
        self.release_replies();
    }

    /// Redis logs and exits: the host stops with status 1.
    pub(super) fn fatal(&mut self, line: String) {
        self.events.push_back(Event::Log {
            level: LogLevel::Warning,
            text: line,
        });
        self.events.push_back(Event::Exit { status: 1 });
    }

    /// A foreground save ended: its client gets its reply and goes on, or
    /// the shutdown that asked for it proceeds.
    fn save_finished(&mut self, now: Now, after: AfterSave, saved: Saved) {
        match after {
            AfterSave::Reply(client) => {
                let Some(c) = self.clients.get_mut(&client) else {
                    return;
                };
                c.waiting_save = false;
                // Shared replies, the same in RESP2 and RESP3.
                c.output.extend_from_slice(match saved {
                    Saved::Ok => b"+OK\r\n",
                    Saved::Failed => b"-ERR\r\n",
                });
                self.server.blocking.push_unblocked(client);
                let mut args = std::mem::take(&mut self.args);
                self.process_unblocked(now, &mut args);
                self.args = args;
            }
            AfterSave::Shutdown(client, shutdown) => {
                let failed = matches!(saved, Saved::Failed);
                if failed && !shutdown.force {
                    self.events.push_back(Event::Log {
                        level: LogLevel::Warning,
                        text: "Error trying to save the DB, can't exit.".to_string(),
                    });
                    if let Some(c) = client.and_then(|id| self.clients.get_mut(&id)) {
                        c.waiting_save = false;
                        c.output
                            .extend_from_slice(b"-ERR Errors trying to SHUTDOWN. Check logs.\r\n");
                        let id = c.id;
                        self.server.blocking.push_unblocked(id);
                        let mut args = std::mem::take(&mut self.args);
                        self.process_unblocked(now, &mut args);
                        self.args = args;
                    }
                    return;
                }
                self.events.push_back(Event::Shutdown(shutdown));
            }
        }
    }

    /// In a forked child (or at the instant of the fork, for a host that
    /// freezes the state instead): the child that performs `fork`'s job on
    /// the dataset as it is now. The serialization happens here.
    pub fn start_child(&self, now: Now, fork: &ForkRequest) -> ChildProcess {
        let (bytes, work_units) = match &fork.job {
            ChildJob::RdbSave { .. } => crate::persist::rdb::snapshot(&self.server, now, false),
            ChildJob::AofRewrite { rdb_preamble, .. } => {
                crate::persist::aof::rewrite_bytes(&self.server, now, *rdb_preamble)
            }
        };
        ChildProcess::new(fork.clone(), bytes, work_units)
    }

    /// The child `id` exited, `ok` if with status 0 (a host that could not
    /// fork reports it failed at once).
    pub fn child_exited(&mut self, now: Now, id: ChildId, ok: bool) {
        if crate::persist::rdb::bgsave_exited(&mut self.server, &mut self.events, now, id, ok) {
            return;
        }
        crate::persist::aof::rewrite_exited(&mut self.server, &mut self.events, now, id, ok);
        self.after_input_persist(now);
    }
}

impl Engine {
    /// A shutdown the host was asked for (SIGTERM, SIGINT), as Redis's
    /// `prepareForShutdown`: the AOF flushed and fsynced, and the final
    /// save when save points are configured. The host keeps draining: an
    /// [`Event::Shutdown`] comes when it may stop. Returns false when the
    /// final save cannot be done (Redis then refuses to exit: "SIGTERM
    /// received but errors trying to shut down the server").
    pub fn prepare_shutdown(&mut self, now: Now) -> bool {
        let shutdown = crate::event::Shutdown {
            save: crate::event::ShutdownSave::Configured,
            force: false,
        };
        match crate::persist::shutdown(&mut self.server, &mut self.events, now, None, shutdown) {
            Ok(_) => true,
            Err(()) => {
                self.events.push_back(Event::Log {
                    level: LogLevel::Warning,
                    text: "Error trying to save the DB, can't exit.".to_string(),
                });
                false
            }
        }
    }
}
