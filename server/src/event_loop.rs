//! The event loop: drives the engine from sockets and the OS clock.
//!
//! One task per connection owns its stream and does both directions with
//! `poll_read`/`poll_write` inside a single `poll_fn`, so a connection keeps
//! reading while its replies wait for the peer to read (Redis does the same:
//! a slow reader backs output up in the server, where the engine's output
//! buffer limits apply). The engine is borrowed only inside those polls.
//! A turn's replies are written at its end ([`run_end_of_turn`]), after
//! every ready connection was read, as Redis's `beforeSleep` writes them.
//!
//! After every engine input the caller drains the engine as its contract
//! says ([`Host::drain`]): close requests and write wakeups go to the other
//! connections' tasks through their [`Slot`]s, garbage goes to a background
//! thread, and the next deadline goes to the timer task. Storage requests
//! are performed inline on this thread or handed to the background I/O
//! thread ([`crate::storage`]); forks make child processes
//! ([`crate::fork`]), reaped by the reaper task.

use std::cell::{Cell, RefCell};
use std::future::{poll_fn, Future};
use std::path::PathBuf;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::mpsc;
use std::task::{Context, Poll, Waker};

use rustc_hash::FxHashMap;
use seedkv_engine::persist::{ForkRequest, IoMode, StorageRequest};
use seedkv_engine::{ClientId, CloseReason, Config, ConnectInfo, Engine, Event, Garbage, LogLevel};
use tokio::io::{AsyncWrite, ReadBuf};

use crate::clock::Clock;
use crate::fork::Children;
use crate::net::{Listener, Stream};
use crate::shutdown::ShutdownCause;
use crate::storage::{Background, Completion, Disk};

/// How often the reaper looks for exited children besides SIGCHLD (Redis
/// checks in its cron, ten times a second).
pub const REAP_INTERVAL: std::time::Duration = std::time::Duration::from_millis(100);

/// Size of the read buffer: Redis reads 16 KB per call; bigger reads make
/// deep pipelines and large values cheaper. One buffer serves every
/// connection, because reads happen one at a time on this thread and the
/// engine copies the bytes out before the next read.
pub const READ_BUFFER_BYTES: usize = 64 * 1024;

/// Reads a connection may do in one turn before it yields to the others, so
/// that one client streaming a deep pipeline cannot starve the rest.
pub const READS_PER_TURN_MAX: usize = 16;

/// Bytes a connection writes per turn (Redis's `NET_MAX_WRITES_PER_EVENT`,
/// 64 KiB): a big reply (a snapshot read's tens of megabytes) goes out a
/// slice per turn, the other connections served between slices. On
/// loopback one `write` of megabytes runs the peer's receive path in this
/// thread too, for milliseconds.
pub const WRITE_BYTES_PER_TURN_MAX: usize = 64 * 1024;

/// How long a closing connection may take to flush its last reply (QUIT's
/// `+OK`, a protocol error) to a peer that does not read, before it is cut.
pub const CLOSE_FLUSH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Per-connection mailbox between the engine's drain and the connection's task.
#[derive(Default)]
struct Slot {
    waker: RefCell<Option<Waker>>,
    /// Set when the engine asked to close this connection.
    close: Cell<Option<CloseReason>>,
}

impl Slot {
    fn register(&self, waker: &Waker) {
        let mut slot = self.waker.borrow_mut();
        match slot.as_ref() {
            Some(w) if w.will_wake(waker) => {}
            _ => *slot = Some(waker.clone()),
        }
    }

    fn wake(&self) {
        if let Some(w) = self.waker.borrow().as_ref() {
            w.wake_by_ref();
        }
    }
}

/// Everything the tasks share. Lives on the one command thread.
pub struct Host {
    engine: RefCell<Engine>,
    clock: Box<dyn Clock>,
    slots: RefCell<FxHashMap<ClientId, Rc<Slot>>>,
    read_buffer: RefCell<Box<[u8]>>,
    garbage: mpsc::Sender<Garbage>,
    /// The engine's next deadline as last reported by `poll_timeout`.
    timer_deadline_ns: Cell<u64>,
    timer: Slot,
    /// Set once a shutdown was asked for (SHUTDOWN, a signal); `serve`
    /// waits on it through `shutdown_waiter`.
    shutdown: Cell<Option<ShutdownCause>>,
    shutdown_waiter: Slot,
    /// The signal whose shutdown the engine is preparing (its final save).
    signalled: Cell<Option<ShutdownCause>>,
    /// Inline storage requests are performed here, on this thread.
    disk: RefCell<Disk>,
    /// Background storage requests go to this thread; their completions
    /// come back through `completions`, which `serve` drains.
    background: Background,
    completions: RefCell<Option<tokio::sync::mpsc::UnboundedReceiver<Completion>>>,
    children: RefCell<Children>,
    /// The end-of-turn task ([`run_end_of_turn`]): woken when the engine
    /// holds replies for a group commit, or when a connection has replies
    /// to write.
    before_sleep: Slot,
    /// Connections whose replies wait for the end of the turn
    /// ([`run_end_of_turn`] wakes them to write).
    /// Their slots, not ids: waking them needs no table lookup.
    write_queue: RefCell<Vec<Rc<Slot>>>,
    /// Links to a primary the engine asked for ([`Event::ConnectPrimary`]),
    /// waiting for [`run_connector`] to open them; it is woken through
    /// `connector`.
    connects: RefCell<Vec<(ClientId, String, u16)>>,
    connector: Slot,
}

impl Host {
    /// A host for a new engine, with its background free thread started,
    /// and files (when `config.storage`) under the current directory.
    pub fn new(config: Config, clock: impl Clock) -> Rc<Host> {
        Host::with_dir(config, clock, PathBuf::from("."))
    }

    /// A host whose storage requests (when `config.storage`) are performed
    /// on files under `dir`. Loading at start happens here: the engine's
    /// first requests are drained before this returns (a file it cannot
    /// load exits the process, as in Redis).
    pub fn with_dir(config: Config, clock: impl Clock, dir: PathBuf) -> Rc<Host> {
        // This host can stop, so its engine knows SHUTDOWN.
        let config = Config {
            shutdown_command: true,
            ..config
        };
        let mut engine = Engine::new(config, clock.now());
        engine.set_stopwatch(Box::new(crate::stopwatch::MonotonicStopwatch::default()));
        let (garbage, rx) = mpsc::channel::<Garbage>();
        std::thread::Builder::new()
            .name("seedkv-lazyfree".into())
            .spawn(move || {
                // Dropping here is the whole job: large values are freed off
                // the command thread, as Redis's lazyfree thread does.
                for g in rx {
                    drop(g);
                }
            })
            .expect("spawn the lazy free thread");
        let (done_tx, done_rx) = tokio::sync::mpsc::unbounded_channel::<Completion>();
        let background = Background::start(dir.clone(), move |c| {
            // The receiver is gone only when the host is.
            let _ = done_tx.send(c);
        })
        .expect("spawn the background I/O thread");
        let deadline = engine.poll_timeout();
        let host = Rc::new(Host {
            engine: RefCell::new(engine),
            clock: Box::new(clock),
            slots: RefCell::new(FxHashMap::default()),
            read_buffer: RefCell::new(vec![0u8; READ_BUFFER_BYTES].into_boxed_slice()),
            garbage,
            timer_deadline_ns: Cell::new(deadline),
            timer: Slot::default(),
            shutdown: Cell::new(None),
            shutdown_waiter: Slot::default(),
            signalled: Cell::new(None),
            disk: RefCell::new(Disk::new(dir)),
            background,
            completions: RefCell::new(Some(done_rx)),
            children: RefCell::new(Children::default()),
            before_sleep: Slot::default(),
            write_queue: RefCell::new(Vec::new()),
            connects: RefCell::new(Vec::new()),
            connector: Slot::default(),
        });
        {
            let mut engine = host.engine.borrow_mut();
            host.drain(&mut engine, None);
        }
        host
    }

    /// Asks [`serve`] to stop (the first cause wins).
    pub fn request_shutdown(&self, cause: ShutdownCause) {
        if self.shutdown.get().is_none() {
            self.shutdown.set(Some(cause));
            self.shutdown_waiter.wake();
        }
    }

    /// SIGTERM or SIGINT: as Redis's `prepareForShutdown`, the engine
    /// flushes and fsyncs the AOF and makes the final save when save points
    /// are configured; the server stops once it says so
    /// ([`Event::Shutdown`]). If the save cannot be done, the server keeps
    /// running, as Redis does. A second signal while a shutdown is being
    /// prepared stops at once.
    pub fn signal_shutdown(&self, cause: ShutdownCause) {
        if self.signalled.get().is_some() {
            crate::logging::warn("You insist... exiting now.");
            self.request_shutdown(cause);
            return;
        }
        let mut engine = self.engine.borrow_mut();
        self.signalled.set(Some(cause));
        if !engine.prepare_shutdown(self.clock.now()) {
            self.signalled.set(None);
            let name = match cause {
                ShutdownCause::Interrupt => "SIGINT",
                _ => "SIGTERM",
            };
            crate::logging::warn(&format!(
                "{name} received but errors trying to shut down the server, check the logs for \
                 more information"
            ));
        }
        self.drain(&mut engine, None);
    }

    /// Why the server is stopping, once it is.
    pub fn shutdown_cause(&self) -> Option<ShutdownCause> {
        self.shutdown.get()
    }

    /// Connections open right now.
    pub fn connections_count(&self) -> usize {
        self.slots.borrow().len()
    }

    /// Runs `f` with the engine borrowed (for tests and diagnostics). Do not
    /// feed it inputs here: inputs must be followed by a drain.
    pub fn with_engine<R>(&self, f: impl FnOnce(&Engine) -> R) -> R {
        f(&self.engine.borrow())
    }

    /// Drains the engine's outputs after an input, per the engine contract.
    /// `current` is the connection whose task is calling: it writes its own
    /// output when the drain returns, so it needs no wakeup.
    fn drain(&self, engine: &mut Engine, current: Option<ClientId>) {
        while let Some(event) = engine.poll_event() {
            match event {
                Event::Close { client, reason } => {
                    if let Some(slot) = self.slots.borrow().get(&client) {
                        slot.close.set(Some(reason));
                        if Some(client) != current {
                            slot.wake();
                        }
                    }
                }
                Event::Free(garbage) => {
                    // The thread only stops when the host is dropped; if it
                    // is gone anyway, freeing inline is the safe fallback.
                    if let Err(mpsc::SendError(g)) = self.garbage.send(garbage) {
                        drop(g);
                    }
                }
                // The host resumes a suspended script through the
                // deadline (`poll_timeout` is then due at once).
                Event::Executed(_)
                | Event::KeyRemoved(_)
                | Event::ScriptSlice { .. }
                | Event::ReplySlice { .. } => {}
                Event::Stall { duration_ns } => {
                    // DEBUG SLEEP: like Redis, the one command thread serves
                    // nobody for that long; this input's replies go out after.
                    std::thread::sleep(std::time::Duration::from_nanos(duration_ns));
                }
                Event::Shutdown(_) => {
                    // The engine has saved already when the client (or the
                    // save points) asked for it: only stopping is left.
                    let cause = self.signalled.get().unwrap_or(ShutdownCause::Command);
                    self.request_shutdown(cause);
                }
                Event::Log { level, text } => match level {
                    LogLevel::Notice => crate::logging::notice(&text),
                    LogLevel::Warning => crate::logging::warn(&text),
                },
                Event::Storage(request) => self.storage(engine, request),
                Event::Fork(fork) => self.fork(engine, &fork),
                Event::ConnectPrimary { client, host, port } => {
                    self.slots
                        .borrow_mut()
                        .insert(client, Rc::new(Slot::default()));
                    self.connects.borrow_mut().push((client, host, port));
                    self.connector.wake();
                }
                // The real server's CPU time is its own.
                Event::SyncLoaded { .. } => {}
                Event::Exit { status } => {
                    // The engine logged why (Redis's "Fatal error loading
                    // the DB ... Exiting."); stop where Redis calls exit().
                    self.kill_children();
                    std::process::exit(status);
                }
            }
        }
        while let Some(client) = engine.poll_transmit() {
            if Some(client) != current {
                if let Some(slot) = self.slots.borrow().get(&client) {
                    slot.wake();
                }
            }
        }
        if engine.wants_before_sleep() {
            self.before_sleep.wake();
        }
        let deadline = engine.poll_timeout();
        if deadline < self.timer_deadline_ns.get() {
            self.timer_deadline_ns.set(deadline);
            self.timer.wake();
        }
    }
}

impl Host {
    /// Performs an inline request now (its completion is the engine's next
    /// input, before any output leaves) or queues a background one.
    fn storage(&self, engine: &mut Engine, request: StorageRequest) {
        let StorageRequest { id, mode, op } = request;
        match mode {
            IoMode::Inline => {
                let result = self.disk.borrow_mut().perform(&op);
                engine.storage_done(self.clock.now(), id, result);
            }
            IoMode::Background => {
                if !self.background.submit(id, op.clone()) {
                    // The thread is gone: perform it here rather than never.
                    let result = self.disk.borrow_mut().perform(&op);
                    engine.storage_done(self.clock.now(), id, result);
                }
            }
        }
    }

    /// Forks a child for BGSAVE or BGREWRITEAOF; a failed fork is a failed
    /// child, reported at once.
    fn fork(&self, engine: &mut Engine, fork: &ForkRequest) {
        let now = self.clock.now();
        let dir = self.disk.borrow().base().to_path_buf();
        let spawned = self.children.borrow_mut().spawn(engine, now, fork, dir);
        match spawned {
            Ok(_) => {}
            Err(e) => {
                crate::logging::warn(&format!("Can't fork a background child: {e}"));
                engine.child_exited(now, fork.id, false);
            }
        }
    }

    /// Reports the children that exited to the engine.
    fn reap_children(&self) {
        if self.children.borrow().count() == 0 {
            return;
        }
        let exited = self.children.borrow_mut().reap();
        if exited.is_empty() {
            return;
        }
        let mut engine = self.engine.borrow_mut();
        for (id, ok) in exited {
            engine.child_exited(self.clock.now(), id, ok);
        }
        self.drain(&mut engine, None);
    }

    /// Stops the children still running (a shutdown does not wait for a
    /// BGSAVE, as in Redis).
    pub fn kill_children(&self) {
        self.children.borrow_mut().kill_all();
    }
}

/// Feeds background completions to the engine as they arrive.
async fn run_completions(host: Rc<Host>) {
    let Some(mut rx) = host.completions.borrow_mut().take() else {
        return;
    };
    while let Some((id, result)) = rx.recv().await {
        let mut engine = host.engine.borrow_mut();
        engine.storage_done(host.clock.now(), id, result);
        host.drain(&mut engine, None);
    }
}

/// Reaps exited children on SIGCHLD, and every [`REAP_INTERVAL`] in case a
/// signal was coalesced or missed.
async fn run_reaper(host: Rc<Host>) {
    use tokio::signal::unix::{signal, SignalKind};
    let mut sigchld = signal(SignalKind::child()).ok();
    let mut tick = tokio::time::interval(REAP_INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        poll_fn(|cx| {
            if let Some(s) = sigchld.as_mut() {
                if s.poll_recv(cx).is_ready() {
                    return Poll::Ready(());
                }
            }
            tick.poll_tick(cx).map(|_| ())
        })
        .await;
        host.reap_children();
    }
}

/// Serves connections from every listener until a shutdown is requested
/// ([`Host::request_shutdown`], or a SHUTDOWN command), then stops
/// accepting, closes every connection and returns why it stopped. Must run
/// inside a `tokio::task::LocalSet` on a current-thread runtime with time
/// enabled.
pub async fn serve<L: Listener>(host: Rc<Host>, listeners: Vec<L>) -> ShutdownCause {
    let timer = tokio::task::spawn_local(run_timer(host.clone()));
    let before_sleep = tokio::task::spawn_local(run_end_of_turn(host.clone()));
    let completions = tokio::task::spawn_local(run_completions(host.clone()));
    let reaper = tokio::task::spawn_local(run_reaper(host.clone()));
    let connector = tokio::task::spawn_local(run_connector(host.clone()));
    let mut accepting = Vec::new();
    for listener in listeners {
        accepting.push(tokio::task::spawn_local(accept_loop(
            host.clone(),
            listener,
        )));
    }
    let cause = poll_fn(|cx| {
        host.shutdown_waiter.register(cx.waker());
        match host.shutdown.get() {
            Some(cause) => Poll::Ready(cause),
            None => Poll::Pending,
        }
    })
    .await;
    for task in accepting {
        task.abort();
    }
    timer.abort();
    before_sleep.abort();
    completions.abort();
    reaper.abort();
    connector.abort();
    // Each connection's task shuts its socket down and disconnects from the
    // engine; wait for them (bounded: a task stuck writing is cut short by
    // CLOSE_FLUSH_TIMEOUT only for flush-first reasons, and Killed is not).
    for slot in host.slots.borrow().values() {
        slot.close.set(Some(CloseReason::Killed));
        slot.wake();
    }
    for _ in 0..SHUTDOWN_YIELDS_MAX {
        if host.slots.borrow().is_empty() {
            break;
        }
        tokio::task::yield_now().await;
    }
    cause
}

/// How long opening the link to a primary may take (the engine's own
/// `repl-timeout` closes a link that stays silent after).
const PRIMARY_CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Opens the links to a primary the engine asks for, each in its own task.
async fn run_connector(host: Rc<Host>) {
    loop {
        poll_fn(|cx| {
            host.connector.register(cx.waker());
            match host.connects.borrow().is_empty() {
                true => Poll::Pending,
                false => Poll::Ready(()),
            }
        })
        .await;
        for (id, name, port) in std::mem::take(&mut *host.connects.borrow_mut()) {
            tokio::task::spawn_local(run_primary_link(host.clone(), id, name, port));
        }
    }
}

/// Connects the link `id` to `name:port` (the name resolved here, not in
/// the engine) and runs it as any connection; a failure is reported as
/// the link's disconnect, and the engine retries.
async fn run_primary_link(host: Rc<Host>, id: ClientId, name: String, port: u16) {
    let Some(slot) = host.slots.borrow().get(&id).cloned() else {
        return;
    };
    let connect = tokio::net::TcpStream::connect((name.as_str(), port));
    let stream = match tokio::time::timeout(PRIMARY_CONNECT_TIMEOUT, connect).await {
        Ok(Ok(stream)) => Some(stream),
        Ok(Err(e)) => {
            crate::logging::warn(&format!("Unable to connect to MASTER: {e}"));
            None
        }
        Err(_) => {
            crate::logging::warn("Unable to connect to MASTER: connection timed out");
            None
        }
    };
    let Some(stream) = stream.filter(|_| slot.close.get().is_none()) else {
        host.slots.borrow_mut().remove(&id);
        let mut engine = host.engine.borrow_mut();
        engine.disconnect(host.clock.now(), id);
        host.drain(&mut engine, None);
        return;
    };
    let _ = stream.set_nodelay(true);
    {
        let mut engine = host.engine.borrow_mut();
        engine.primary_link_up(host.clock.now(), id);
        host.drain(&mut engine, Some(id));
    }
    run_connection(host, id, slot, stream).await;
}

/// Scheduler turns `serve` gives connection tasks to close at shutdown.
const SHUTDOWN_YIELDS_MAX: usize = 1_000;

async fn accept_loop<L: Listener>(host: Rc<Host>, mut listener: L) {
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors and the like: back off briefly
                // instead of spinning, and keep the server up.
                crate::logging::warn(&format!("Accepting client connection: {e}"));
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                continue;
            }
        };
        if host.shutdown.get().is_some() {
            return;
        }
        let (refuse, keepalive) = {
            let engine = host.engine.borrow();
            let config = engine.config();
            (
                crate::access::protected_mode_refuses(config, &peer),
                crate::access::keepalive(config),
            )
        };
        if refuse {
            tokio::task::spawn_local(deny(stream));
            continue;
        }
        // Without NODELAY a reply may wait for a delayed ACK (40 ms on Linux).
        let _ = stream.set_nodelay();
        if let Some(keepalive) = keepalive {
            let _ = stream.set_keepalive(&keepalive);
        }
        let info = ConnectInfo {
            addr: peer.to_string(),
            laddr: stream
                .local_addr()
                .map(|a| a.to_string())
                .unwrap_or_default(),
            fd: stream.fd(),
        };
        let slot = Rc::new(Slot::default());
        let id = {
            let mut engine = host.engine.borrow_mut();
            let id = engine.connect(host.clock.now(), info);
            host.slots.borrow_mut().insert(id, slot.clone());
            host.drain(&mut engine, Some(id));
            id
        };
        tokio::task::spawn_local(run_connection(host.clone(), id, slot, stream));
    }
}

/// The most a refused peer may send while its -DENIED error drains.
const DENY_DRAIN_MAX_BYTES: usize = 64 * 1024;

/// Writes protected mode's -DENIED error to a refused peer and closes it,
/// without involving the engine (Redis writes it from the accept handler,
/// before the connection becomes a client). The socket is closed only after
/// the peer's own close, or after [`DENY_DRAIN_MAX_BYTES`] or
/// [`CLOSE_FLUSH_TIMEOUT`]: closing a socket with unread input sends a reset
/// that may destroy the error before the peer reads it, and a peer that
/// pipelined a command right after connecting would see a bare reset.
async fn deny<S: Stream>(mut stream: S) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let write_then_drain = async {
        stream
            .write_all(crate::access::DENIED_PROTECTED_MODE.as_bytes())
            .await?;
        stream.shutdown().await?;
        let mut scratch = [0u8; 4096];
        let mut drained_bytes = 0;
        while drained_bytes < DENY_DRAIN_MAX_BYTES {
            match stream.read(&mut scratch).await? {
                0 => break,
                n => drained_bytes += n,
            }
        }
        std::io::Result::Ok(())
    };
    let _ = tokio::time::timeout(CLOSE_FLUSH_TIMEOUT, write_then_drain).await;
}

/// Why a connection's task stops.
enum Exit {
    /// The engine asked to close it.
    Close(CloseReason),
    /// The peer closed it, or the socket failed.
    Gone,
}

async fn run_connection<S: Stream>(host: Rc<Host>, id: ClientId, slot: Rc<Slot>, mut stream: S) {
    let exit = poll_fn(|cx| poll_connection(&host, id, &slot, &mut stream, cx)).await;
    if let Exit::Close(reason) = exit {
        if reason.flush_first() {
            // The reply explaining the close (QUIT's +OK, a protocol error)
            // goes out before the socket shuts; a dead peer ends it early.
            let flush = poll_fn(|cx| poll_flush_all(&host, id, &mut stream, cx));
            let _ = tokio::time::timeout(CLOSE_FLUSH_TIMEOUT, flush).await;
        }
        let _ = poll_fn(|cx| Pin::new(&mut stream).poll_shutdown(cx)).await;
    }
    drop(stream);
    host.slots.borrow_mut().remove(&id);
    let mut engine = host.engine.borrow_mut();
    engine.disconnect(host.clock.now(), id);
    host.drain(&mut engine, None);
}

/// One turn of a connection: write what the engine has for it (replies of
/// the last turn, output other clients made for it), then read what the
/// peer sent and feed it to the engine until the socket would block. The
/// replies to this turn's input are written at the end of the turn
/// ([`run_end_of_turn`]), as Redis writes them in `beforeSleep`: after
/// every ready connection was read, so that replies leave in one burst
/// and the peers (redis-benchmark's 50 clients share one thread) are woken
/// once per burst rather than once per connection.
fn poll_connection<S: Stream>(
    host: &Host,
    id: ClientId,
    slot: &Rc<Slot>,
    stream: &mut S,
    cx: &mut Context<'_>,
) -> Poll<Exit> {
    slot.register(cx.waker());
    let mut write_blocked = false;
    let mut written_bytes = 0;
    loop {
        if let Some(reason) = slot.close.get() {
            return Poll::Ready(Exit::Close(reason));
        }
        if written_bytes >= WRITE_BYTES_PER_TURN_MAX {
            // The rest in a later turn, after the other tasks.
            cx.waker().wake_by_ref();
            break;
        }
        let budget = WRITE_BYTES_PER_TURN_MAX - written_bytes;
        match poll_write_pending(host, id, stream, cx, budget) {
            Poll::Ready(Ok(n)) if n > 0 => {
                written_bytes += n;
                continue;
            }
            Poll::Ready(Ok(_)) => break,
            Poll::Pending => {
                // The peer does not read: keep reading (its output buffer
                // limits apply in the engine); the socket wakes us.
                write_blocked = true;
                break;
            }
            Poll::Ready(Err(())) => return Poll::Ready(Exit::Gone),
        }
    }
    let mut reads = 0;
    loop {
        if let Some(reason) = slot.close.get() {
            return Poll::Ready(Exit::Close(reason));
        }
        if reads == READS_PER_TURN_MAX {
            host.write_at_end_of_turn(id, slot, write_blocked);
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let mut buffer = host.read_buffer.borrow_mut();
        let mut read = ReadBuf::new(&mut buffer[..]);
        match Pin::new(&mut *stream).poll_read(cx, &mut read) {
            Poll::Pending => break,
            Poll::Ready(Err(_)) => return Poll::Ready(Exit::Gone),
            Poll::Ready(Ok(())) => {
                let bytes = read.filled();
                if bytes.is_empty() {
                    // The peer closed its side: what it asked before goes
                    // out if the socket takes it now, then the client goes.
                    drop(buffer);
                    let _ = poll_flush_all(host, id, stream, cx);
                    return Poll::Ready(Exit::Gone);
                }
                reads += 1;
                let mut engine = host.engine.borrow_mut();
                engine.set_allocated_bytes(crate::alloc::allocated_bytes());
                engine.handle_input(host.clock.now(), id, bytes);
                host.drain(&mut engine, Some(id));
            }
        }
    }
    if reads > 0 {
        host.write_at_end_of_turn(id, slot, write_blocked);
    }
    Poll::Pending
}

impl Host {
    /// Queues `id`'s replies for the end of the turn, if it has any and
    /// its socket can take them (a blocked socket wakes its task itself).
    fn write_at_end_of_turn(&self, id: ClientId, slot: &Rc<Slot>, write_blocked: bool) {
        if write_blocked || self.engine.borrow().pending_output(id).is_empty() {
            return;
        }
        self.write_queue.borrow_mut().push(slot.clone());
        self.before_sleep.wake();
    }
}

/// Writes up to `bytes_max` of the engine's pending output for `id` in one
/// `poll_write`. `Ok(n)`: `n` bytes went out (there may be more), 0 when
/// nothing was pending; `Err`: the connection is dead.
fn poll_write_pending<S: AsyncWrite + Unpin>(
    host: &Host,
    id: ClientId,
    stream: &mut S,
    cx: &mut Context<'_>,
    bytes_max: usize,
) -> Poll<Result<usize, ()>> {
    let written = {
        let engine = host.engine.borrow();
        let output = engine.pending_output(id);
        if output.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let output = &output[..output.len().min(bytes_max.max(1))];
        match Pin::new(&mut *stream).poll_write(cx, output) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Ok(0)) | Poll::Ready(Err(_)) => return Poll::Ready(Err(())),
            Poll::Ready(Ok(n)) => n,
        }
    };
    host.engine.borrow_mut().consume_output(id, written);
    Poll::Ready(Ok(written))
}

/// Writes all pending output for `id`, reading nothing.
fn poll_flush_all<S: AsyncWrite + Unpin>(
    host: &Host,
    id: ClientId,
    stream: &mut S,
    cx: &mut Context<'_>,
) -> Poll<Result<(), ()>> {
    loop {
        match poll_write_pending(host, id, stream, cx, usize::MAX) {
            Poll::Ready(Ok(0)) => return Poll::Ready(Ok(())),
            Poll::Ready(Ok(_)) => continue,
            Poll::Ready(Err(())) => return Poll::Ready(Err(())),
            Poll::Pending => return Poll::Pending,
        }
    }
}

/// Redis's `beforeSleep`: woken by the first input of a turn that leaves
/// replies waiting, this task runs after the other tasks that turn made
/// ready (the scheduler queues it behind them). Group commit: one AOF
/// append and, under `appendfsync always`, one fsync serve every
/// connection of the turn (the drain then wakes them to write). Then the
/// connections with replies are woken to write them, one burst per turn
/// (see [`poll_connection`]).
async fn run_end_of_turn(host: Rc<Host>) {
    let mut writers: Vec<Rc<Slot>> = Vec::new();
    loop {
        poll_fn(|cx| {
            host.before_sleep.register(cx.waker());
            let engine_waits = host.engine.borrow().wants_before_sleep();
            match engine_waits || !host.write_queue.borrow().is_empty() {
                true => Poll::Ready(()),
                false => Poll::Pending,
            }
        })
        .await;
        {
            let mut engine = host.engine.borrow_mut();
            if engine.wants_before_sleep() {
                engine.before_sleep(host.clock.now());
                host.drain(&mut engine, None);
            }
        }
        // Moved out first: a woken task may queue itself again.
        writers.extend(host.write_queue.borrow_mut().drain(..));
        for slot in writers.drain(..) {
            slot.wake();
        }
    }
}

/// Calls `handle_timeout` at each deadline the engine reports.
async fn run_timer(host: Rc<Host>) {
    let mut armed_ns = host.timer_deadline_ns.get();
    let sleep = tokio::time::sleep_until(host.clock.instant_at(armed_ns));
    tokio::pin!(sleep);
    loop {
        poll_fn(|cx| {
            host.timer.register(cx.waker());
            let wanted_ns = host.timer_deadline_ns.get();
            if wanted_ns != armed_ns {
                // The engine wants an earlier deadline than the one we sleep to.
                armed_ns = wanted_ns;
                sleep.as_mut().reset(host.clock.instant_at(armed_ns));
            }
            sleep.as_mut().poll(cx)
        })
        .await;
        let script_running = {
            let mut engine = host.engine.borrow_mut();
            engine.handle_timeout(host.clock.now());
            host.timer_deadline_ns.set(engine.poll_timeout());
            host.drain(&mut engine, None);
            engine.script_running() || engine.snapshot_read_running()
        };
        armed_ns = host.timer_deadline_ns.get();
        sleep.as_mut().reset(host.clock.instant_at(armed_ns));
        if script_running {
            // The script's (or the snapshot read's) next slice is due at
            // once; the connection tasks
            // run first, so that other clients are read (and answered
            // -BUSY past the threshold) between slices, as Redis's
            // processEventsWhileBlocked reads them.
            tokio::task::yield_now().await;
        }
    }
}
