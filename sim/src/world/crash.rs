//! The server process dies: a crash (the world's fault: the process and
//! the page cache are gone, the disk keeps what crash semantics keep, and
//! a new server starts over the same disk) or an exit the engine asked
//! for. Either way every connection is lost with whatever was in flight:
//! requests whose reply no client saw are indeterminate. The run's
//! clients stop there (they do not reconnect to the restarted server);
//! the harness reads the restarted dataset for the persistence checkers.

use seedkv_engine::{Engine, Event};

use super::inspect::{self, Inspector};
use super::{World, UNIX_ORIGIN_US};
use crate::net::Pipe;
use crate::persistence::record::CrashRecord;

/// Engine events a restart may produce at most while loading.
pub const RESTART_EVENTS_MAX: u64 = 10_000_000;

impl World {
    /// Every connection is lost and every client stops.
    fn lose_server(&mut self, reason: &str) {
        for slot in 0..self.conns.len() {
            let cs = &mut self.conns[slot];
            let was_open = cs.server_open || cs.client_open;
            cs.up = Pipe::default();
            cs.down = Pipe::default();
            cs.server_open = false;
            cs.client_open = false;
            cs.in_ready = false;
            if was_open {
                self.history.conns[slot]
                    .closed
                    .get_or_insert((self.now_ns, reason.to_string()));
                let id = cs.id;
                self.record_server_disconnect(id);
            }
        }
        for client in 0..self.clients.len() as u32 {
            self.forget_outstanding(client);
            self.mark_done(client);
        }
        self.ready.clear();
        self.pending_flush.clear();
        self.pending_close.clear();
        self.history.faults_end_ns = self.history.faults_end_ns.min(self.now_ns);
        self.faults_active = false;
    }

    /// The engine asked to exit ([`Event::Exit`]): the process stops.
    pub(super) fn server_exited(&mut self, status: i32) {
        let now_ns = self.now_ns;
        let host = self
            .persist
            .as_mut()
            .expect("exit needs a host with storage");
        host.dead = true;
        let legit = host.disk.stats.faults_count > 0;
        let why = host.last_warning.clone();
        host.record.exit = Some((now_ns, status, legit, why.clone()));
        host.forget_in_flight();
        self.trace.line(
            now_ns,
            format_args!("  server exits with status {status}: {why}"),
        );
        self.lose_server("server exited");
    }

    /// The crash fault: lose everything in flight, apply crash semantics
    /// to the disk, start a new engine over it and read its dataset.
    pub(super) fn crash(&mut self) {
        if self.server_dead() {
            return;
        }
        self.stats.faults_count += 1;
        let now_ns = self.now_ns;
        self.trace.word(0xc4a54);
        self.trace
            .line(now_ns, format_args!("  fault: the server crashes"));
        let executions_count = self.history.executions.len();
        self.lose_server("crash");
        let host = self
            .persist
            .as_mut()
            .expect("crashes need a host with storage");
        host.forget_in_flight();
        let disk_faults_count = host.disk.stats.faults_count;
        let torn_before = host.disk.stats.torn_count;
        host.advance_disk(now_ns);
        host.disk.crash();
        // Redis 7.0 too refuses an AOF whose tail holds a torn sector's
        // garbage or zeros (aof-load-truncated covers a short tail only).
        let torn = host.disk.stats.torn_count > torn_before;
        let mut record = CrashRecord {
            at_ns: now_ns,
            executions_count,
            disk_faults_count,
            restart_unix_ms: self.now().unix_ms(),
            ..CrashRecord::default()
        };
        let faults_before = self
            .persist
            .as_ref()
            .map_or(0, |h| h.disk.stats.faults_count);
        let restarted = self.restart();
        let faults_after = self
            .persist
            .as_ref()
            .map_or(0, |h| h.disk.stats.faults_count);
        record.restart_fault_injected = faults_after > faults_before || torn;
        match restarted {
            Ok(()) => {
                let now = self.now();
                let host = self.persist.as_mut().expect("still there");
                let mut inspector = Inspector::new(&mut self.engine, &mut host.disk, now);
                match inspect::read_dataset(&mut inspector, record.restart_unix_ms) {
                    Ok(observed) => record.observed = observed,
                    Err(e) => record.inspect_error = Some(e),
                }
            }
            Err(e) => record.restart_error = Some(e),
        }
        self.trace.line(
            now_ns,
            format_args!(
                "  restarted: {} keys read back{}",
                record.observed.len(),
                record
                    .restart_error
                    .as_ref()
                    .or(record.inspect_error.as_ref())
                    .map_or(String::new(), |e| format!(", error: {e}"))
            ),
        );
        let host = self.persist.as_mut().expect("still there");
        // The restarted server serves no client in this run.
        host.dead = true;
        host.record.crash = Some(record);
    }

    /// A new engine over the same disk, with the same configuration; its
    /// loading reads are performed (inline) before anything else.
    fn restart(&mut self) -> Result<(), String> {
        let now = self.now();
        debug_assert!(now.unix_us >= UNIX_ORIGIN_US);
        let host = self.persist.as_mut().expect("restart needs a host");
        self.engine = Engine::new(host.config.clone(), now);
        let mut events_count = 0u64;
        loop {
            let Some(event) = self.engine.poll_event() else {
                if self.engine.is_loading() {
                    return Err("still loading with no request in flight".into());
                }
                return Ok(());
            };
            events_count += 1;
            if events_count > RESTART_EVENTS_MAX {
                return Err("loading never ends".into());
            }
            let host = self.persist.as_mut().expect("restart needs a host");
            match event {
                Event::Storage(request) => {
                    let result = host.disk.perform(&request.op);
                    self.engine.storage_done(now, request.id, result);
                }
                Event::Exit { status } => {
                    return Err(format!(
                        "the restarted server exited with status {status} while loading: {}",
                        host.last_warning
                    ));
                }
                Event::Log { text, level } => {
                    if matches!(level, seedkv_engine::LogLevel::Warning) {
                        host.last_warning = text;
                    }
                }
                Event::Fork(fork) => self.engine.child_exited(now, fork.id, false),
                _ => {}
            }
        }
    }
}
