//! CLIENT REPLY ON|OFF|SKIP: whether a client's replies are sent.
//!
//! Redis keeps three client flags (src/networking.c): `CLIENT_REPLY_OFF`
//! until CLIENT REPLY ON, `CLIENT_REPLY_SKIP_NEXT` set by CLIENT REPLY SKIP,
//! and `CLIENT_REPLY_SKIP`, which `resetClient` makes of SKIP_NEXT once the
//! SKIP command is done, so that the command after it is the one skipped.
//! A command that blocks is reset only when it is unblocked, so a skipped
//! BLPOP loses the reply it gets later. Redis drops a reply in
//! `prepareClientToWrite`, which lets pushes through (`CLIENT_PUSHING`):
//! (un)subscribe confirmations and messages reach a client whose replies
//! are off. seedkv drops a command's reply as a whole when it finishes (see
//! `Pipeline::finish`), and pushes that a suppressed command writes to its
//! own client wait in [`Client::held_pushes`](crate::client::Client) until
//! then.

use crate::client::Client;

/// A client's CLIENT REPLY state: the three flags of Redis, independent as
/// there (SKIP and SKIP_NEXT are both set by `CLIENT REPLY SKIP` twice).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplyMode {
    /// CLIENT REPLY OFF: every reply is dropped until CLIENT REPLY ON.
    pub off: bool,
    /// The reply of the command now running is dropped.
    pub skip: bool,
    /// CLIENT REPLY SKIP ran: the next command's reply is dropped.
    pub skip_next: bool,
}

impl ReplyMode {
    /// Whether the reply of the command now finishing is dropped.
    pub fn suppressed(self) -> bool {
        self.off || self.skip
    }

    /// CLIENT REPLY ON.
    pub fn on(&mut self) {
        *self = ReplyMode::default();
    }

    /// CLIENT REPLY SKIP: ignored while replies are off, as in Redis.
    pub fn skip_next_command(&mut self) {
        if !self.off {
            self.skip_next = true;
        }
    }

    /// RESET (`clearClientConnectionState`): clears OFF and SKIP_NEXT but
    /// not SKIP, so that a RESET that was itself skipped stays silent.
    pub fn reset(&mut self) {
        self.off = false;
        self.skip_next = false;
    }

    /// Redis's `resetClient` after a command completes (not while it is
    /// blocked): SKIP is spent, and SKIP_NEXT becomes SKIP.
    pub fn command_done(&mut self) {
        self.skip = std::mem::take(&mut self.skip_next);
    }
}

/// The end of a request, or of a blocked command when it is unblocked:
/// drops `reply[reply_start..]` if CLIENT REPLY says so, keeping the
/// pushes the command wrote to its own client, and spends a SKIP.
pub fn command_finished(c: &mut Client, reply: &mut Vec<u8>, reply_start: usize) {
    debug_assert!(reply_start <= reply.len());
    if c.reply_mode.suppressed() {
        reply.truncate(reply_start);
        reply.append(&mut c.held_pushes);
    }
    debug_assert!(c.held_pushes.is_empty(), "held only while suppressed");
    c.reply_mode.command_done();
}

#[cfg(test)]
mod tests {
    use super::ReplyMode;

    #[test]
    fn skip_drops_only_the_next_command() {
        let mut mode = ReplyMode::default();
        mode.skip_next_command();
        assert!(!mode.suppressed(), "the SKIP command's own (empty) reply");
        mode.command_done();
        assert!(mode.suppressed(), "the command after SKIP");
        mode.command_done();
        assert!(!mode.suppressed());
    }

    #[test]
    fn skip_twice_drops_the_second_skip_and_the_command_after() {
        let mut mode = ReplyMode::default();
        mode.skip_next_command();
        mode.command_done();
        mode.skip_next_command();
        assert!(mode.suppressed());
        mode.command_done();
        assert!(mode.suppressed());
        mode.command_done();
        assert!(!mode.suppressed());
    }

    #[test]
    fn skip_is_ignored_while_off_and_reset_keeps_a_pending_skip() {
        let mut mode = ReplyMode {
            off: true,
            ..ReplyMode::default()
        };
        mode.skip_next_command();
        assert!(!mode.skip_next);
        mode.reset();
        assert!(!mode.suppressed());
        mode.skip = true;
        mode.reset();
        assert!(mode.suppressed(), "a skipped RESET is not answered");
    }
}
