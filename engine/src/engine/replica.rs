//! The engine's side of the link to a primary (see [`crate::repl::replica`]
//! for the sans-IO contract): the handshake fed with the primary's bytes,
//! the RDB of a full resync loaded, the stream applied as the master
//! client, the replication cron (reconnect, `repl-timeout`, ACK).

use super::Engine;
use crate::client::ClientId;
use crate::event::{Event, LogLevel};
use crate::repl::replica::handshake::{self, Bulk, Header, PsyncReply, Transfer};
use crate::repl::replica::{self, LinkState, MasterLink, MasterState, Parts, CRON_PERIOD_NS};
use crate::repl::{failover, ClientRole};
use crate::time::Now;

/// What reading one piece of the primary's bytes led to.
enum Step {
    /// Go on reading from this position.
    Next,
    /// The rest of the input is stream.
    Stream,
    /// Stop: the link closed, or the bytes ran out.
    Stop,
}

impl Engine {
    /// The host connected the link `client` that
    /// [`Event::ConnectPrimary`] asked for: the handshake starts (PING).
    pub fn primary_link_up(&mut self, now: Now, client: ClientId) {
        let Some(link) = self.link_of(client) else {
            return;
        };
        if !matches!(link.state, LinkState::Connecting) {
            return;
        }
        link.state = LinkState::ReceivePing;
        link.last_io_mono_ns = now.mono_ns;
        self.log(LogLevel::Notice, "MASTER <-> REPLICA sync started".into());
        self.send_to_link(client, &handshake::command(&[b"PING" as &[u8]]));
    }

    /// The link whose connection is `client`.
    fn link_of(&mut self, client: ClientId) -> Option<&mut MasterLink> {
        self.server
            .repl
            .master
            .as_deref_mut()
            .filter(|l| l.client == Some(client))
    }

    fn parts(&mut self) -> Parts<'_> {
        Parts {
            server: &mut self.server,
            clients: &mut self.clients,
            events: &mut self.events,
        }
    }

    /// Writes `bytes` to the primary (handshake commands, ACKs).
    fn send_to_link(&mut self, client: ClientId, bytes: &[u8]) {
        let Some(c) = self.clients.get_mut(&client) else {
            return;
        };
        if c.pending_output().is_empty() && !self.transmit.contains(&client) {
            self.transmit.push_back(client);
        }
        c.output.extend_from_slice(bytes);
    }

    /// Bytes from the primary on the link `client`: handshake replies, the
    /// RDB, then the stream.
    pub(super) fn link_input(&mut self, now: Now, client: ClientId, bytes: &[u8]) {
        let Some(link) = self.link_of(client) else {
            return;
        };
        link.last_io_mono_ns = now.mono_ns;
        self.server.stats.net_input_bytes += bytes.len() as u64;
        let mut pos = 0;
        loop {
            let step = match self.link_of(client).map(|l| &l.state) {
                Some(LinkState::Connected) => Step::Stream,
                Some(LinkState::Transfer(_)) => self.transfer_input(now, client, bytes, &mut pos),
                Some(s) if s.in_handshake() => self.handshake_input(now, client, bytes, &mut pos),
                _ => Step::Stop,
            };
            match step {
                Step::Next => continue,
                Step::Stop => return,
                Step::Stream => break,
            }
        }
        if pos < bytes.len() {
            self.stream_input(now, client, &bytes[pos..]);
        }
    }

    /// The next handshake reply line.
    fn handshake_input(
        &mut self,
        now: Now,
        client: ClientId,
        bytes: &[u8],
        pos: &mut usize,
    ) -> Step {
        let link = self.link_of(client).expect("checked by the caller");
        let line: Vec<u8> = match handshake::next_line(&mut link.line, bytes, pos) {
            Ok(Some(line)) => line,
            Ok(None) => return Step::Stop,
            Err(handshake::LineTooLong) => {
                self.link_failed("Bad protocol from MASTER: a reply line too long".into());
                return Step::Stop;
            }
        };
        self.handshake_reply(now, client, &line);
        Step::Next
    }

    /// Redis's `syncWithMaster`, one reply at a time.
    fn handshake_reply(&mut self, now: Now, client: ClientId, line: &[u8]) {
        let text = String::from_utf8_lossy(line).into_owned();
        let is_err = line.first() == Some(&b'-');
        let link = self.link_of(client).expect("checked by the caller");
        match link.state {
            LinkState::ReceivePing => {
                let tolerated = line.starts_with(b"-NOAUTH")
                    || line.starts_with(b"-NOPERM")
                    || line.starts_with(b"-ERR operation not permitted");
                if is_err && !tolerated {
                    return self.link_failed(format!("Error reply to PING from master: '{text}'"));
                }
                self.log(
                    LogLevel::Notice,
                    "Master replied to PING, replication can continue...".into(),
                );
                self.send_handshake(client);
            }
            LinkState::ReceiveAuth => {
                if is_err {
                    return self.link_failed(format!("Unable to AUTH to MASTER: {text}"));
                }
                link.state = LinkState::ReceivePort;
            }
            LinkState::ReceivePort => {
                link.state = LinkState::ReceiveCapa;
                if is_err {
                    let why = format!(
                        "(Non critical) Master does not understand REPLCONF listening-port: {text}"
                    );
                    self.log(LogLevel::Notice, why);
                }
            }
            LinkState::ReceiveCapa => {
                if is_err {
                    let why =
                        format!("(Non critical) Master does not understand REPLCONF capa: {text}");
                    self.log(LogLevel::Notice, why);
                }
                self.send_psync(client);
            }
            LinkState::ReceivePsync => {
                self.psync_reply(now, client, &text, handshake::psync_reply(line))
            }
            _ => {}
        }
    }

    /// AUTH (with `masterauth`), `REPLCONF listening-port` and `REPLCONF
    /// capa eof capa psync2`, pipelined as Redis sends them.
    fn send_handshake(&mut self, client: ClientId) {
        let get = |name| crate::commands::config::config_get(&self.server.config, name);
        let auth = get("masterauth").filter(|p| !p.is_empty());
        let user = get("masteruser").filter(|u| !u.is_empty());
        let announce =
            crate::repl::primary::config_u64(&self.server.config, "replica-announce-port");
        let port = match announce {
            0 => self.server.config.port.to_string(),
            p => p.to_string(),
        };
        let mut out = Vec::new();
        if let Some(pass) = &auth {
            match &user {
                Some(user) => out.extend(handshake::command(&[
                    b"AUTH" as &[u8],
                    user.as_bytes(),
                    pass.as_bytes(),
                ])),
                None => out.extend(handshake::command(&[b"AUTH" as &[u8], pass.as_bytes()])),
            }
        }
        out.extend(handshake::command(&[
            b"REPLCONF" as &[u8],
            b"listening-port",
            port.as_bytes(),
        ]));
        out.extend(handshake::command(&[
            b"REPLCONF" as &[u8],
            b"capa",
            b"eof",
            b"capa",
            b"psync2",
        ]));
        let link = self.link_of(client).expect("checked by the caller");
        link.state = match auth {
            Some(_) => LinkState::ReceiveAuth,
            None => LinkState::ReceivePort,
        };
        self.send_to_link(client, &out);
    }

    /// `PSYNC <cached replid> <cached offset + 1>`, or `PSYNC ? -1`.
    fn send_psync(&mut self, client: ClientId) {
        let link = self.link_of(client).expect("checked by the caller");
        link.state = LinkState::ReceivePsync;
        let (id, offset) = match &link.cached {
            Some(m) => (m.replid.clone(), (m.reploff + 1).to_string()),
            None => ("?".to_string(), "-1".to_string()),
        };
        let line = match &link.cached {
            Some(_) => format!("Trying a partial resynchronization (request {id}:{offset})."),
            None => "Partial resynchronization not possible (no cached master)".to_string(),
        };
        self.log(LogLevel::Notice, line);
        let mut psync = vec![b"PSYNC".to_vec(), id.into_bytes(), offset.into_bytes()];
        if self.server.repl.failover.is_some() {
            // We are handing our role over: the target promotes itself.
            psync.push(b"FAILOVER".to_vec());
        }
        let psync: Vec<&[u8]> = psync.iter().map(Vec::as_slice).collect();
        self.send_to_link(client, &handshake::command(&psync));
    }

    /// Acts on the primary's answer to PSYNC.
    fn psync_reply(&mut self, now: Now, client: ClientId, text: &str, reply: PsyncReply) {
        if self.server.repl.failover.is_some() && reply != PsyncReply::Wait {
            // The target took the role (it answered as a primary), or
            // refused it: either way the failover ends here.
            let accepted = matches!(reply, PsyncReply::Continue { .. } | PsyncReply::Full { .. });
            if !accepted {
                let mut parts = self.parts();
                return failover::abort(&mut parts, "Failover target rejected psync request");
            }
            failover::clear(&mut self.parts());
        }
        let link = self.link_of(client).expect("checked by the caller");
        match reply {
            PsyncReply::Wait => {}
            PsyncReply::Full { replid, offset } => {
                let line = format!("Full resync from master: {replid}:{offset}");
                link.full_replid = replid;
                link.full_offset = offset;
                link.cached = None;
                link.state = LinkState::Transfer(Box::default());
                self.log(LogLevel::Notice, line);
            }
            PsyncReply::Continue { replid } => self.resurrect_master(now, client, replid),
            PsyncReply::TryLater => {
                self.link_failed(format!(
                    "Master is currently unable to PSYNC but should be in the future: {text}"
                ));
            }
            PsyncReply::NotSupported => {
                // A primary without PSYNC: plain SYNC, and a full resync.
                let line = format!("Unexpected reply to PSYNC from master: {text}");
                link.full_replid = crate::repl::NULL_REPLID.to_string();
                link.full_offset = -1;
                link.cached = None;
                link.state = LinkState::Transfer(Box::default());
                self.log(LogLevel::Warning, line);
                self.log(LogLevel::Notice, "Retrying with SYNC...".into());
                self.send_to_link(client, &handshake::command(&[b"SYNC" as &[u8]]));
            }
        }
    }

    /// `+CONTINUE`: the cached master comes back (Redis's
    /// `replicationResurrectCachedMaster`), under the primary's new id if
    /// it changed (a failover: ours becomes `replid2`).
    fn resurrect_master(&mut self, now: Now, client: ClientId, new_replid: Option<String>) {
        let link = self.link_of(client).expect("checked by the caller");
        let Some(mut master) = link.cached.take() else {
            return self.link_failed("+CONTINUE without a cached master".into());
        };
        let db = master.db;
        link.state = LinkState::Connected;
        link.down_since_unix_s = None;
        link.last_io_mono_ns = now.mono_ns;
        link.unapplied.clear();
        let changed = new_replid.filter(|id| *id != master.replid);
        if let Some(id) = &changed {
            master.replid = id.clone();
        }
        master.read_reploff = master.reploff;
        link.master = Some(master);
        if let Some(c) = self.clients.get_mut(&client) {
            c.db = db;
        }
        if let Some(id) = changed {
            let repl = &mut self.server.repl;
            repl.replid2 = std::mem::replace(&mut repl.replid, id);
            repl.second_replid_offset = repl.master_repl_offset as i64 + 1;
            replica::disconnect_replicas(&mut self.parts());
        }
        let size = crate::repl::primary::config_u64(&self.server.config, "repl-backlog-size");
        self.server.repl.ensure_backlog(size as usize);
        self.log(
            LogLevel::Notice,
            "MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.".into(),
        );
    }

    /// The RDB's header line, then its bytes.
    fn transfer_input(
        &mut self,
        now: Now,
        client: ClientId,
        bytes: &[u8],
        pos: &mut usize,
    ) -> Step {
        let link = self.link_of(client).expect("checked by the caller");
        let LinkState::Transfer(t) = &mut link.state else {
            return Step::Stop;
        };
        if t.bulk == Bulk::Header {
            let line: Vec<u8> = match handshake::next_line(&mut t.line, bytes, pos) {
                Ok(Some(line)) => line,
                Ok(None) => return Step::Stop,
                Err(handshake::LineTooLong) => {
                    self.link_failed(
                        "Bad protocol from MASTER: the bulk header is too long".into(),
                    );
                    return Step::Stop;
                }
            };
            match handshake::header(&line) {
                Header::Keepalive => {}
                Header::Bulk(bulk) => {
                    let line = match &bulk {
                        Bulk::Len(n) => format!("MASTER <-> REPLICA sync: receiving {n} bytes from master to disk"),
                        _ => "MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF to disk".into(),
                    };
                    t.bulk = bulk;
                    self.log(LogLevel::Notice, line);
                }
                Header::Aborted(text) => {
                    self.link_failed(format!("MASTER aborted replication with an error: {text}"));
                    return Step::Stop;
                }
                Header::Bad(text) => {
                    self.link_failed(format!(
                        "Bad protocol from MASTER, the first byte is not '$' (we received '{text}'), are you sure the host and port are right?"
                    ));
                    return Step::Stop;
                }
            }
            return Step::Next;
        }
        if !t.take_payload(bytes, pos) {
            return Step::Stop;
        }
        let LinkState::Transfer(t) = std::mem::replace(&mut link.state, LinkState::Connecting)
        else {
            unreachable!("matched above");
        };
        self.load_transfer(now, client, *t);
        match self.link_of(client).map(|l| l.is_up()) {
            Some(true) => Step::Stream,
            _ => Step::Stop,
        }
    }

    /// A full resync's RDB arrived: the old dataset goes (the sub-replicas
    /// and the backlog with it), the RDB is loaded, and the link applies
    /// the stream from the `+FULLRESYNC` offset (Redis's
    /// `readSyncBulkPayload`, last call).
    fn load_transfer(&mut self, now: Now, client: ClientId, t: Transfer) {
        let diskless = matches!(t.bulk, Bulk::Eof(_));
        self.log(
            LogLevel::Notice,
            "MASTER <-> REPLICA sync: Flushing old data".into(),
        );
        replica::disconnect_replicas(&mut self.parts());
        self.server.repl.backlog = None;
        crate::persist::around_sync_load(&mut self.server, &mut self.events, now, true);
        let mut work_units = self.flush_for_sync();
        self.log(
            LogLevel::Notice,
            "MASTER <-> REPLICA sync: Loading DB in memory".into(),
        );
        let loaded = self.load_rdb_file_with(now, &t.rdb, false);
        crate::persist::around_sync_load(&mut self.server, &mut self.events, now, false);
        match loaded {
            Ok(report) => work_units += report.work_units + t.rdb.len() as u64 / 64,
            Err(e) => {
                self.events
                    .push_back(Event::SyncLoaded { client, work_units });
                return self.link_failed(format!(
                    "Failed trying to load the MASTER synchronization DB from socket: {e}"
                ));
            }
        }
        self.events
            .push_back(Event::SyncLoaded { client, work_units });
        let link = self.link_of(client).expect("checked by the caller");
        let offset = link.full_offset.max(0) as u64;
        let replid = std::mem::take(&mut link.full_replid);
        link.master = Some(MasterState {
            replid: replid.clone(),
            reploff: offset,
            read_reploff: offset,
            db: 0,
        });
        link.state = LinkState::Connected;
        link.down_since_unix_s = None;
        link.unapplied.clear();
        let repl = &mut self.server.repl;
        repl.replid = replid;
        repl.master_repl_offset = offset;
        repl.clear_replid2();
        let size = crate::repl::primary::config_u64(&self.server.config, "repl-backlog-size");
        self.server.repl.ensure_backlog(size as usize);
        self.log(
            LogLevel::Notice,
            "MASTER <-> REPLICA sync: Finished with success".into(),
        );
        if diskless {
            // The primary holds the stream until this first ACK.
            self.send_to_link(client, &replica::ack_bytes(offset));
        }
    }

    /// Empties every database before a full resync's load, as FLUSHALL
    /// does to watchers, tracking clients and blocked readers; returns the
    /// work of freeing the old values.
    fn flush_for_sync(&mut self) -> u64 {
        let mut work_units = 0;
        self.server.repl.writable_expires.clear();
        for i in 0..self.server.keyspace.dbs.len() {
            crate::multi::touch_db(
                &self.server.watches,
                &mut self.clients,
                &self.server.keyspace,
                i,
                None,
            );
            let db = &mut self.server.keyspace.dbs[i];
            if db.is_empty() {
                continue;
            }
            let (keys, expires) = db.take();
            self.server.blocking.signal_db(i);
            let garbage =
                crate::event::Garbage::Db(Box::new(crate::event::FreedDb { keys, expires }));
            work_units += garbage.work_units();
        }
        work_units +=
            crate::tracking::invalidate_on_flush(&mut self.server.tracking, &mut self.clients);
        self.server.dirty += 1;
        work_units
    }

    /// The handshake or the transfer failed: the link closes and the cron
    /// connects again (Redis's `error:` path of `syncWithMaster`).
    fn link_failed(&mut self, why: String) {
        self.log(LogLevel::Warning, why);
        replica::cancel_handshake(&mut self.parts());
    }

    /// Stream bytes: they go through the master client's parser and run as
    /// its commands; offsets are counted as each command completes
    /// ([`Engine::master_command_done`]).
    fn stream_input(&mut self, now: Now, client: ClientId, bytes: &[u8]) {
        if let Some(link) = self.link_of(client) {
            link.unapplied.extend_from_slice(bytes);
            if let Some(m) = link.master.as_mut() {
                m.read_reploff += bytes.len() as u64;
            }
        }
        self.serve_input(now, client, bytes);
    }

    /// After each command the master client ran: its reply is dropped (a
    /// primary gets none, but the ACK GETACK asked for), and unless a MULTI
    /// is open, the bytes of the stream it consumed are applied: the offset
    /// grows, and the backlog and the sub-replicas get them (Redis's
    /// `commandProcessed` and `replicationFeedStreamFromMasterStream`).
    pub(super) fn master_command_done(&mut self, client: ClientId) {
        let Some(c) = self.clients.get_mut(&client) else {
            return;
        };
        c.output.truncate(c.output_sent);
        let in_multi = c.tx.in_multi();
        // The stream's database, which a save records for a restart.
        let db = c.db;
        let buffered = c.parser.buffered_bytes();
        let Some(link) = self.server.repl.master.as_deref_mut() else {
            return;
        };
        if link.client != Some(client) || !link.is_up() {
            return;
        }
        // The ACK GETACK asked for is the offset before the GETACK (Redis
        // sends it from inside the command).
        let ack = std::mem::take(&mut link.ack_requested)
            .then(|| link.master.as_ref().map(|m| m.reploff))
            .flatten();
        if !in_multi {
            let applied = link.unapplied.len().saturating_sub(buffered);
            let bytes: Vec<u8> = link.unapplied.drain(..applied).collect();
            if let Some(m) = link.master.as_mut() {
                m.reploff += applied as u64;
                m.db = db;
            }
            let repl = &mut self.server.repl;
            crate::repl::primary::feed(repl, &mut self.clients, &bytes);
            for id in std::mem::take(&mut repl.to_transmit) {
                if !self.transmit.contains(&id) {
                    self.transmit.push_back(id);
                }
            }
        }
        if let Some(offset) = ack {
            self.send_to_link(client, &replica::ack_bytes(offset));
        }
    }

    /// `REPLCONF ACK <applied offset>` to the primary.
    fn send_ack(&mut self, client: ClientId) {
        let Some(offset) = self
            .link_of(client)
            .and_then(|l| l.master.as_ref())
            .map(|m| m.reploff)
        else {
            return;
        };
        self.send_to_link(client, &replica::ack_bytes(offset));
    }

    /// When the replication cron wants `handle_timeout`.
    pub(super) fn master_link_deadline_ns(&self) -> Option<u64> {
        self.server.repl.master.as_ref().map(|l| l.cron_due_ns)
    }

    /// Redis's `replicationCron`, replica half, once a second: a link
    /// silent for `repl-timeout` is dropped, a lost one reconnects, and a
    /// connected one acks its offset.
    pub(super) fn master_link_timers(&mut self, now: Now) {
        let timeout_ns = crate::repl::primary::config_u64(&self.server.config, "repl-timeout")
            .max(1)
            * 1_000_000_000;
        let Some(link) = self.server.repl.master.as_deref_mut() else {
            return;
        };
        if now.mono_ns < link.cron_due_ns {
            return;
        }
        link.cron_due_ns = now.mono_ns + CRON_PERIOD_NS;
        let silent = now.mono_ns.saturating_sub(link.last_io_mono_ns) > timeout_ns;
        let connecting = matches!(link.state, LinkState::Connecting) || link.state.in_handshake();
        if silent && connecting {
            self.log(
                LogLevel::Warning,
                "Timeout connecting to the MASTER...".into(),
            );
            replica::cancel_handshake(&mut self.parts());
        } else if silent && matches!(link.state, LinkState::Transfer(_)) {
            self.log(
                LogLevel::Warning,
                "Timeout receiving bulk data from MASTER... If the problem persists try to set the 'repl-timeout' parameter in redis.conf to a larger value.".into(),
            );
            replica::cancel_handshake(&mut self.parts());
        } else if silent && link.is_up() {
            self.log(
                LogLevel::Warning,
                "MASTER timeout: no data nor PING received...".into(),
            );
            replica::cache_master(&mut self.parts());
        }
        let Some(link) = self.server.repl.master.as_deref_mut() else {
            return;
        };
        if matches!(link.state, LinkState::Connect) {
            let line = format!("Connecting to MASTER {}:{}", link.host, link.port);
            self.log(LogLevel::Notice, line);
            replica::connect(&mut self.parts(), now);
        } else if let (true, Some(client)) = (link.is_up(), link.client) {
            self.send_ack(client);
        }
    }

    /// The connection `client` is gone: if it was the link to our primary,
    /// the link is down (a connected master is cached for a partial
    /// resync), and the cron connects again.
    pub(super) fn master_link_gone(&mut self, _now: Now, client: ClientId) {
        let Some(link) = self.link_of(client) else {
            return;
        };
        if link.is_up() {
            return replica::cache_master(&mut self.parts());
        }
        link.state = LinkState::Connect;
        link.client = None;
        link.line.clear();
        self.log(
            LogLevel::Notice,
            "Error condition on socket for SYNC: Connection lost".into(),
        );
    }

    /// `replicaof` from the configuration: a replica from the start.
    pub(super) fn start_replication(&mut self, now: Now) {
        if let Some((host, port)) = self.server.config.replicaof.clone() {
            replica::set_master_from(&mut self.parts(), now, (host, port), false);
        }
    }

    /// Whether `client` is our link to our primary.
    pub(super) fn is_master_link(&self, client: ClientId) -> bool {
        self.clients
            .get(&client)
            .is_some_and(|c| c.repl_role == ClientRole::Master)
    }
}
