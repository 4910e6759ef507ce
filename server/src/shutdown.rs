//! How the process stops: SHUTDOWN, SIGTERM or SIGINT.
//!
//! SHUTDOWN itself is the engine's command (the server turns it on with
//! `Config::shutdown_command`): the engine checks its arguments, answers
//! the refusals with Redis's errors, and hands an accepted one to the host
//! as an [`Event::Shutdown`] once it has saved as asked (the AOF flushed
//! and fsynced, the final RDB save; Redis's log lines come as
//! `Event::Log`). SIGTERM and SIGINT go through
//! `Engine::prepare_shutdown` the same way ([`crate::Host::signal_shutdown`]).
//! Then the host stops accepting, closes every connection and exits (see
//! [`crate::serve`]).
//!
//! [`Event::Shutdown`]: seedkv_engine::Event::Shutdown

/// Why the server is stopping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShutdownCause {
    /// A client sent SHUTDOWN.
    Command,
    /// SIGTERM.
    Terminate,
    /// SIGINT (Ctrl-C).
    Interrupt,
}
