//! How the process stops: SHUTDOWN, SIGTERM or SIGINT.
//!
//! SHUTDOWN itself is the engine's command (the server turns it on with
//! `Config::shutdown_command`): the engine checks its arguments, answers
//! the refusals with Redis's errors, and hands an accepted one to the host
//! as an [`Event::Shutdown`] carrying the save choice (Redis's log lines
//! come as `Event::Log`). seedkv keeps nothing on disk, so the host saves
//! nothing: it stops accepting, closes every connection and exits (see
//! [`crate::serve`]).
//!
//! [`Event::Shutdown`]: seedkv_engine::Event::Shutdown

/// Why the server is stopping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShutdownCause {
    /// A client sent SHUTDOWN (none of its forms saves).
    Command,
    /// SIGTERM.
    Terminate,
    /// SIGINT (Ctrl-C).
    Interrupt,
}
