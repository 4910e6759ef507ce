//! The engine's side of the AOF: loading the files at start (replaying
//! their commands through the one command pipeline, on a fake client as
//! Redis's `CLIENT_ID_AOF`), opening the incr file, and appending after
//! every input.

use super::Engine;
use crate::client::{Client, ClientId, ConnectInfo};
use crate::event::{Event, LogLevel};
use crate::persist::aof::load::{next_command, AofLoad, Parsed};
use crate::persist::aof::manifest::Manifest;
use crate::persist::aof::{self, path, persist_manifest, AofOp};
use crate::persist::state::{PersistConfig, Purpose};
use crate::persist::{IoMode, StorageDone, StorageError, StorageOp, StorageResult};
use crate::pipeline::Caller;
use crate::time::Now;

const READ_CHUNK_BYTES: u64 = crate::persist::rdb::LOAD_READ_CHUNK_BYTES;

impl Engine {
    /// Starts loading the AOF: the directory, then the manifest.
    pub(super) fn start_aof_load(&mut self) {
        let pc = PersistConfig::of(&self.server.config);
        let persist = &mut self.server.persist;
        persist.requests.issue(
            &mut self.events,
            IoMode::Inline,
            StorageOp::MakeDir {
                dir: pc.appenddirname.clone(),
            },
            Purpose::Aof(AofOp::Files),
        );
        persist.aof_load = Some(AofLoad {
            files: Vec::new(),
            current: 0,
            bytes: Vec::new(),
            reading_manifest: true,
        });
        let file = aof::rewrite::manifest_path(&pc);
        self.read_chunk(file, 0);
    }

    fn read_chunk(&mut self, file: String, offset_bytes: u64) {
        self.server.persist.requests.issue(
            &mut self.events,
            IoMode::Inline,
            StorageOp::Read {
                file,
                offset_bytes,
                len_bytes: READ_CHUNK_BYTES,
            },
            Purpose::AofLoad,
        );
    }

    /// A read of the AOF load completed.
    pub(super) fn aof_load_done(&mut self, now: Now, result: StorageResult) {
        if let Err(line) = self.aof_load_step(now, result) {
            self.server.persist.aof_load = None;
            self.fatal(line);
        }
    }

    fn aof_load_step(&mut self, now: Now, result: StorageResult) -> Result<(), String> {
        let pc = PersistConfig::of(&self.server.config);
        let Some(load) = self.server.persist.aof_load.as_mut() else {
            return Ok(());
        };
        let name = match load.reading_manifest {
            true => Manifest::file_name(&pc.appendfilename),
            false => load.files[load.current].clone(),
        };
        match result {
            Ok(StorageDone::Read(chunk)) => {
                let full = chunk.len() as u64 == READ_CHUNK_BYTES;
                load.bytes.extend_from_slice(&chunk);
                if full {
                    let offset = load.bytes.len() as u64;
                    self.read_chunk(path(&pc, &name), offset);
                    return Ok(());
                }
            }
            Err(StorageError::NotFound) if load.reading_manifest => {}
            Err(StorageError::NotFound) => {
                self.events.push_back(Event::Log {
                    level: LogLevel::Warning,
                    text: format!("The AOF file {name} doesn't exist"),
                });
            }
            Err(e) => {
                return Err(format!(
                    "Fatal error: can't open the append log file {name} for reading: {}",
                    e.text()
                ))
            }
            Ok(other) => return Err(format!("Unexpected completion {other:?} loading {name}")),
        }
        let bytes = std::mem::take(&mut load.bytes);
        if load.reading_manifest {
            load.reading_manifest = false;
            if !bytes.is_empty() {
                let manifest = Manifest::parse(&bytes)?;
                load.files = manifest.load_order();
                self.server.persist.aof.manifest = manifest;
            }
        } else {
            let last = load.current + 1 == load.files.len();
            let is_base = load.current == 0 && self.server.persist.aof.manifest.base.is_some();
            load.current += 1;
            let size = self.replay_file(now, &pc, &name, &bytes, last)?;
            match is_base {
                true => self.server.persist.aof.base_size_bytes = size,
                false => self.server.persist.aof.incr_size_bytes = size,
            }
        }
        let load = self.server.persist.aof_load.as_mut().expect("load");
        if load.current < load.files.len() {
            let file = path(&pc, &load.files[load.current]);
            self.read_chunk(file, 0);
            return Ok(());
        }
        self.server.persist.aof_load = None;
        if !self.server.persist.aof.manifest.load_order().is_empty() {
            self.log(
                LogLevel::Notice,
                "DB loaded from append only file: 0.000 seconds".to_string(),
            );
        }
        self.open_aof_on_start(now, &pc);
        Ok(())
    }

    /// Replays one file's commands; returns the file's size as kept (a
    /// truncated tail cut).
    fn replay_file(
        &mut self,
        now: Now,
        pc: &PersistConfig,
        name: &str,
        bytes: &[u8],
        last: bool,
    ) -> Result<u64, String> {
        let mut pos = 0usize;
        if bytes.starts_with(b"REDIS") {
            self.log(
                LogLevel::Notice,
                "Reading RDB base file on AOF loading...".into(),
            );
            // The preamble keeps expired keys: the tail was written
            // against that exact keyspace (RDBFLAGS_AOF_PREAMBLE).
            let opts = self.server.rdb_load_options(now, false);
            let access = crate::lru::Access::at(now, &self.server.config, true);
            self.server.keyspace.set_access(access);
            let report = crate::rdb::file::load_file(bytes, &opts, &mut self.server.keyspace)
                .map_err(|e| format!("{e} Bad file format reading the append only file {name}"))?;
            self.server
                .functions
                .load_from_rdb(report.functions.clone())
                .map_err(|e| format!("{e} Bad file format reading the append only file {name}"))?;
            pos = report.consumed_bytes;
            self.log(LogLevel::Notice, "Reading the remaining AOF tail...".into());
        }
        // The fake client's commands are not the server's traffic (Redis
        // calls their handlers directly): the statistics are put back.
        let stats = std::mem::take(&mut self.server.stats);
        // Redis's fake client (`CLIENT_ID_AOF`); ids only grow here, so it
        // takes the next one, gone before any connection arrives.
        let aof_client = ClientId(self.server.next_client_id);
        self.server.next_client_id += 1;
        let mut client = Client::new(aof_client, ConnectInfo::default(), now, true);
        client.deny_blocking = true;
        client.replaying_aof = true;
        self.clients.insert(aof_client, client);
        let mut valid_up_to = pos;
        let mut in_multi = false;
        let outcome = loop {
            match next_command(bytes, pos) {
                Parsed::Command(mut args, end) => {
                    if crate::pipeline::lookup(&self.server.commands, &args).is_none() {
                        break Err(format!(
                            "Unknown command '{}' reading the append only file {name}",
                            String::from_utf8_lossy(&args[0])
                        ));
                    }
                    let is_exec = args[0].eq_ignore_ascii_case(b"exec");
                    if args[0].eq_ignore_ascii_case(b"multi") {
                        in_multi = true;
                    }
                    // Nothing expires while loading (Redis's `server.loading`
                    // check in expireIfNeeded and checkAlreadyExpired): the
                    // replay runs at unix time 0, before every absolute
                    // expiry in the file; what has expired since goes after
                    // the load, through the usual expiry.
                    let loading = Now { unix_us: 0, ..now };
                    self.pipeline()
                        .run(loading, aof_client, &mut args, Caller::Request);
                    if is_exec {
                        in_multi = false;
                    }
                    if let Some(c) = self.clients.get_mut(&aof_client) {
                        c.output.clear();
                        c.output_sent = 0;
                    }
                    pos = end;
                    if !in_multi {
                        valid_up_to = pos;
                    }
                }
                Parsed::End if in_multi => {
                    self.log(
                        LogLevel::Warning,
                        format!("Revert incomplete MULTI/EXEC transaction in AOF file {name}"),
                    );
                    break Ok(Some(valid_up_to));
                }
                Parsed::End => break Ok(None),
                Parsed::Truncated => {
                    if let Some(mut args) = self.server.planted.torn_tail_command(bytes, pos) {
                        let loading = Now { unix_us: 0, ..now };
                        self.pipeline()
                            .run(loading, aof_client, &mut args, Caller::Request);
                    }
                    break Ok(Some(valid_up_to));
                }
                Parsed::BadFormat => {
                    break Err(format!(
                        "Bad file format reading the append only file {name}: make a backup of \
                         your AOF file, then use ./redis-check-aof --fix <filename.manifest>"
                    ))
                }
            }
        };
        if let Some(mut c) = self.clients.remove(&aof_client) {
            crate::multi::client_gone(&mut self.server, &mut c);
        }
        self.server.stats = stats;
        let Some(valid_up_to) = outcome? else {
            return Ok(bytes.len() as u64);
        };
        if !pc.aof_load_truncated {
            return Err(format!(
                "Unexpected end of file reading the append only file {name}. You can: 1) Make a \
                 backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. \
                 2) Alternatively you can set the 'aof-load-truncated' configuration option to \
                 yes and restart the server."
            ));
        }
        if !last {
            return Err("Fatal error: the truncated file is not the last file".to_string());
        }
        self.log(
            LogLevel::Warning,
            format!("!!! Warning: short read while loading the AOF file {name}!!!"),
        );
        self.log(
            LogLevel::Warning,
            format!("!!! Truncating the AOF {name} at offset {valid_up_to} !!!"),
        );
        let truncate = StorageOp::Truncate {
            file: path(pc, name),
            len_bytes: valid_up_to as u64,
        };
        aof::issue_files(&mut self.server, &mut self.events, [truncate]);
        self.log(
            LogLevel::Warning,
            format!("AOF {name} loaded anyway because aof-load-truncated is enabled"),
        );
        Ok(valid_up_to as u64)
    }

    /// After loading (Redis's `aofOpenIfNeededOnServerStart` and
    /// `aofDelHistoryFiles`): a base file for an empty start, the last
    /// incr file (created if there is none), the manifest persisted, and
    /// appending on.
    fn open_aof_on_start(&mut self, now: Now, pc: &PersistConfig) {
        let had_incr = !self.server.persist.aof.manifest.incrs.is_empty();
        let no_files = self.server.persist.aof.manifest.base.is_none() && !had_incr;
        if no_files {
            let name = self
                .server
                .persist
                .aof
                .manifest
                .new_base(&pc.appendfilename, pc.aof_use_rdb_preamble);
            let (bytes, _) = aof::rewrite_bytes(&self.server, now, pc.aof_use_rdb_preamble);
            self.server.persist.aof.base_size_bytes = bytes.len() as u64;
            let file = path(pc, &name);
            let ops = [
                StorageOp::Create { file: file.clone() },
                StorageOp::Append {
                    file: file.clone(),
                    bytes,
                },
                StorageOp::Fsync { file },
            ];
            aof::issue_files(&mut self.server, &mut self.events, ops);
            self.log(
                LogLevel::Notice,
                format!("Creating AOF base file {name} on server start"),
            );
        }
        let incr = self
            .server
            .persist
            .aof
            .manifest
            .last_incr(&pc.appendfilename);
        let aof = &mut self.server.persist.aof;
        aof.incr_path = path(pc, &incr);
        if !had_incr {
            aof.incr_size_bytes = 0;
            let create = StorageOp::Create {
                file: aof.incr_path.clone(),
            };
            aof::issue_files(&mut self.server, &mut self.events, [create]);
        }
        persist_manifest(&mut self.server, &mut self.events, pc);
        let verb = if had_incr { "Opening" } else { "Creating" };
        self.log(
            LogLevel::Notice,
            format!("{verb} AOF incr file {incr} on server start"),
        );
        aof::rewrite::delete_history(&mut self.server, &mut self.events, pc);
        self.server.persist.aof.on = true;
        self.server.persist.aof.policy = aof::Policy::of(pc);
        self.server.persist.aof.last_fsync_mono_ns = now.mono_ns;
        self.server.persist.aof.rewrite.base_size_bytes =
            self.server.persist.aof.base_size_bytes + self.server.persist.aof.incr_size_bytes;
        self.set_propagation(true);
    }

    pub(super) fn log(&mut self, level: LogLevel, text: String) {
        self.events.push_back(Event::Log { level, text });
    }

    /// After every input: the propagated commands to the AOF buffer, and
    /// the buffer to the file as `appendfsync` says.
    pub(super) fn after_input_persist(&mut self, now: Now) {
        // One stream for both: replication takes it first, the AOF gets
        // the same bytes.
        let replicated = self.replicate_stream();
        if !self.server.config.storage {
            // No AOF without storage: the stream is replication's, wanted
            // while there is a backlog (a promoted replica's too, whose
            // replicas come back with a partial resync).
            if self.server.repl.wants_stream() && !self.server.propagation.is_enabled() {
                self.set_propagation(true);
            }
            return;
        }
        let wanted = self.server.persist.aof.on || self.server.persist.aof.rewrite.turning_on;
        let repl_wants = self.server.repl.wants_stream();
        if (wanted || repl_wants) != self.server.propagation.is_enabled() {
            self.set_propagation(wanted || repl_wants);
        }
        let group = self.server.config.group_commit;
        if wanted {
            let bytes = replicated.unwrap_or_else(|| self.take_propagated());
            if !bytes.is_empty() {
                aof::feed(&mut self.server, &bytes);
                // Group commit: written at `before_sleep`, replies after.
                self.server.persist.aof.replies_wait |= group;
            }
            if !group {
                aof::flush(&mut self.server, &mut self.events, now, false);
            }
        }
        if self.server.persist.aof.rewrite.pending {
            aof::rewrite::fork_pending(&mut self.server, &mut self.events, now);
        }
    }

    /// Turns the propagation of commands on or off; a fresh start of the
    /// stream begins with a SELECT.
    pub(super) fn set_propagation(&mut self, on: bool) {
        let p = &mut self.server.propagation;
        if on && !p.is_enabled() {
            p.reset_selected_db();
        }
        p.set_enabled(on);
    }

    /// The commands propagated since the last call.
    fn take_propagated(&mut self) -> Vec<u8> {
        self.server.propagation.take()
    }

    /// Group commit: the turn's writes go to the AOF (a step of it: the
    /// host performs the inline requests this issues, and their
    /// completions release the replies).
    pub(super) fn flush_for_replies(&mut self, now: Now) {
        let aof = &mut self.server.persist.aof;
        if !aof.replies_wait {
            return;
        }
        aof.release_requested = true;
        if aof.on {
            aof::flush(&mut self.server, &mut self.events, now, false);
        }
        self.release_replies();
    }

    /// The replies held for a group commit leave once it is done: every
    /// client with output is transmitted.
    pub(super) fn release_replies(&mut self) {
        if !self.server.persist.aof.replies_wait || !aof::replies_may_leave(&self.server) {
            return;
        }
        let aof = &mut self.server.persist.aof;
        aof.replies_wait = false;
        aof.release_requested = false;
        let queued: std::collections::BTreeSet<_> = self.transmit.iter().copied().collect();
        for (&id, c) in self.clients.iter() {
            if !c.pending_output().is_empty() && !queued.contains(&id) {
                self.transmit.push_back(id);
            }
        }
        self.events.extend(self.held_closes.drain(..));
    }
}
