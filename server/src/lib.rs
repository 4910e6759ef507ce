//! seedkv-server: the thin real server around the sans-IO engine.
//!
//! Everything the engine refuses to do lives here: sockets, the OS clocks,
//! and the background thread that frees large values. The engine stays the
//! only place commands execute, and it executes them on one thread: a tokio
//! current-thread runtime whose tasks (one per connection, one per listener,
//! one timer) share the engine through `Rc<RefCell<_>>` and never hold the
//! borrow across an `.await`.
//!
//! The network code is generic over [`net::Listener`] and [`net::Stream`],
//! so the same event loop can run over tokio's sockets (the binary) or a
//! simulated network (turmoil) in tests.

pub mod access;
pub mod alloc;
pub mod clock;
pub mod event_loop;
pub mod fork;
pub mod logging;
pub mod net;
pub mod options;
pub mod shutdown;
pub mod stopwatch;
pub mod storage;

pub use clock::{Clock, OsClock, VirtualClock};
pub use event_loop::{serve, Host};
pub use options::{Args, Options, OptionsError};
pub use shutdown::ShutdownCause;

use std::io;

/// The binary's `main` once its counting allocator is installed: parses
/// the command line, runs, and exits with 1 on a bad option or a startup
/// failure. Both `seedkv-server` and the test harness's copy of it
/// (`seedkv-test-server`, built with the tests' own engine so that a test
/// run never compiles the engine twice) call it.
pub fn main_from_args() {
    alloc::mark_installed();
    logging::RedisStyleLog::install(tracing::Level::INFO);
    let args = <Args as clap::Parser>::parse();
    let options = match Options::from_args(&args) {
        Ok(options) => options,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = run(options) {
        logging::warn(&format!("Server stopped: {e}"));
        std::process::exit(1);
    }
}

/// Binds the configured addresses, prints the ready line and serves on a
/// current-thread runtime until SHUTDOWN, SIGTERM or SIGINT; then closes
/// every connection and returns `Ok` (the process exits with 0, as Redis
/// does). Returns an error only on a startup failure.
pub fn run(options: Options) -> io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async move {
        let mut listeners = Vec::new();
        // With `--port 0` the first address gets a port from the OS and the
        // others reuse it, so that every address serves the same port.
        let mut bind_port = options.port;
        for addr in &options.bind {
            match tokio::net::TcpListener::bind((addr.host.as_str(), bind_port)).await {
                Ok(l) => {
                    bind_port = l.local_addr()?.port();
                    listeners.push(l);
                }
                Err(e) if addr.optional => {
                    logging::warn(&format!(
                        "Could not bind optional address {}: {e}",
                        addr.host
                    ));
                }
                Err(e) => {
                    logging::warn(&format!(
                        "Failed listening on port {} (tcp), aborting: {e}",
                        options.port
                    ));
                    return Err(e);
                }
            }
        }
        if listeners.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "no address to bind",
            ));
        }
        // With `--port 0` the OS picks the port; report the real one
        // everywhere (INFO tcp_port, CONFIG GET port, the ready line).
        let port = listeners[0].local_addr()?.port();
        let mut config = options.config;
        config.port = port;
        config.process_id = std::process::id();
        logging::notice(&format!(
            "seedkv {} (Redis 7.0 compatible) running mode=standalone, port={port}, seed={}.",
            env!("CARGO_PKG_VERSION"),
            config.seed
        ));
        logging::notice("Server initialized");
        let dir = storage_dir(&mut config)?;
        config.storage = true;
        // The event loop calls `before_sleep` (see `event_loop::run_end_of_turn`).
        config.group_commit = true;
        let host = Host::with_dir(config, OsClock::new(), dir);
        watch_signals(&host)?;
        logging::notice(&format!("Ready to accept connections tcp port={port}"));
        let cause = serve(host.clone(), listeners).await;
        logging::notice(&format!(
            "Closed every connection after {cause:?}; {} left.",
            host.connections_count()
        ));
        host.kill_children();
        logging::warn("seedkv is now ready to exit, bye bye...");
        Ok(())
    })
}

/// The configured `dir` as an absolute path, also written back into the
/// configuration (CONFIG GET dir reports it absolute, as Redis's getcwd
/// does). A missing directory stops the start, as Redis's failed chdir.
fn storage_dir(config: &mut seedkv_engine::Config) -> io::Result<std::path::PathBuf> {
    let named = seedkv_engine::commands::config::config_get(config, "dir")
        .unwrap_or_else(|| ".".to_string());
    let dir = std::fs::canonicalize(&named).map_err(|e| {
        logging::warn(&format!("Can't chdir to '{named}': {e}"));
        e
    })?;
    if !dir.is_dir() {
        logging::warn(&format!("Can't chdir to '{named}': Not a directory"));
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "dir is not a directory",
        ));
    }
    let _ =
        seedkv_engine::commands::config::apply_config_line(config, "dir", &dir.to_string_lossy());
    Ok(dir)
}

/// Turns SIGTERM and SIGINT into a shutdown request, logged as Redis logs
/// them ("Received SIGTERM scheduling shutdown...").
fn watch_signals(host: &std::rc::Rc<Host>) -> io::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let host = host.clone();
    tokio::task::spawn_local(async move {
        // Every signal counts: a shutdown whose final save failed leaves
        // the server up, and a second signal during a save stops it.
        loop {
            let cause = std::future::poll_fn(|cx| {
                if term.poll_recv(cx).is_ready() {
                    std::task::Poll::Ready(ShutdownCause::Terminate)
                } else if int.poll_recv(cx).is_ready() {
                    std::task::Poll::Ready(ShutdownCause::Interrupt)
                } else {
                    std::task::Poll::Pending
                }
            })
            .await;
            let name = match cause {
                ShutdownCause::Interrupt => "SIGINT",
                _ => "SIGTERM",
            };
            logging::warn(&format!("Received {name} scheduling shutdown..."));
            host.signal_shutdown(cause);
        }
    });
    Ok(())
}
