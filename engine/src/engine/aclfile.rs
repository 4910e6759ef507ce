//! The engine's side of the `aclfile`: the users at start (Redis's
//! `ACLLoadUsersAtStartup`), and the end of an ACL LOAD or ACL SAVE (see
//! [`crate::persist::aclfile`]).

use super::Engine;
use crate::acl::DEFAULT_USER;
use crate::client::{ClientId, CloseReason};
use crate::event::{Event, LogLevel};
use crate::persist::aclfile::{self, Caller, Outcome};
use crate::persist::StorageResult;
use crate::time::Now;

/// Redis's refusal of `user` directives next to an `aclfile`.
const BOTH_SOURCES: &str = "Configuring Redis with users defined in redis.conf and at the same \
setting an ACL file path is invalid. This setup is very likely to lead to configuration errors \
and security holes, please define either an ACL file or declare users directly in your \
redis.conf, but not both.";

/// ACL SAVE's error; the reason is in the log.
const SAVE_FAILED: &str = "There was an error trying to save the ACLs. Please check the \
server logs for more information";

impl Engine {
    /// At start: the configuration's `user` directives, then the `aclfile`
    /// (never both), as Redis's `ACLLoadUsersAtStartup`. Any error is
    /// fatal (logged, then [`Event::Exit`]).
    pub(super) fn start_acl_file(&mut self) {
        let file = aclfile::configured(&self.server);
        let users = std::mem::take(&mut self.server.config.acl_users);
        if !file.is_empty() && !users.is_empty() {
            return self.fatal(BOTH_SOURCES.to_string());
        }
        if let Err(line) = self.load_configured_users(&users) {
            self.events.push_back(Event::Log {
                level: LogLevel::Warning,
                text: line,
            });
            return self.fatal("Critical error while loading ACLs. Exiting.".to_string());
        }
        self.server.config.acl_users = users;
        if file.is_empty() {
            return;
        }
        if !self.server.config.storage {
            // A host without a disk has no file to read.
            return self.fatal(format!(
                "Aborting Redis startup because of ACL errors: Error loading ACLs, opening \
                 file '{file}': {}",
                crate::persist::StorageError::Io.text()
            ));
        }
        aclfile::start_load(&mut self.server, &mut self.events, Caller::Startup);
    }

    /// Redis's `ACLLoadConfiguredUsers`: each `user` directive applied to
    /// a new user (or to `default`, reset first).
    fn load_configured_users(&mut self, users: &[Vec<Vec<u8>>]) -> Result<(), String> {
        let acl = &mut self.server.acl;
        for directive in users {
            let Some((name, rules)) = directive.split_first() else {
                continue;
            };
            if !crate::acl::user::valid_user_name(name) {
                return Err("Spaces not allowed in ACL usernames".to_string());
            }
            let mut steps = 0;
            let mut user = match acl.users.get(name.as_slice()) {
                Some(existing) => {
                    let mut user = existing.clone();
                    let _ = user.set_rule(b"reset", &acl.index, acl.pubsub_default_all, &mut steps);
                    user
                }
                None => crate::acl::User::new(name.clone(), &acl.index, acl.pubsub_default_all),
            };
            let rules = crate::acl::user::merge_selector_args(rules).map_err(|_| {
                format!(
                    "Unmatched parenthesis in acl selector for the user named '{}'",
                    String::from_utf8_lossy(name)
                )
            })?;
            for rule in &rules {
                if let Err(e) = user.set_rule(rule, &acl.index, acl.pubsub_default_all, &mut steps)
                {
                    return Err(format!(
                        "Error loading ACL rule '{}' for the user named '{}': {}",
                        String::from_utf8_lossy(rule),
                        String::from_utf8_lossy(name),
                        e.message()
                    ));
                }
            }
            if !user.enabled {
                self.events.push_back(Event::Log {
                    level: LogLevel::Notice,
                    text: format!(
                        "The user '{}' is disabled (there is no 'on' modifier in the user \
                         description). Make sure this is not a configuration error.",
                        String::from_utf8_lossy(name)
                    ),
                });
            }
            acl.users.insert(name.clone(), user);
        }
        Ok(())
    }

    /// A request of an ACL LOAD or ACL SAVE completed.
    pub(super) fn acl_file_done(&mut self, now: Now, result: StorageResult) {
        let Some((caller, outcome)) =
            aclfile::step_done(&mut self.server, &mut self.events, result)
        else {
            return;
        };
        let reply: Vec<u8> = match outcome {
            Outcome::Read(bytes) => match self.load_users(caller, &bytes) {
                Ok(()) => b"+OK\r\n".to_vec(),
                Err(errors) => error_reply(&errors),
            },
            Outcome::ReadFailed(error) => error_reply(error.as_bytes()),
            Outcome::Saved => b"+OK\r\n".to_vec(),
            Outcome::SaveFailed => error_reply(SAVE_FAILED.as_bytes()),
        };
        match caller {
            Caller::Startup if reply.starts_with(b"-") => {
                let errors = String::from_utf8_lossy(&reply[5..reply.len() - 2]).into_owned();
                self.fatal(format!(
                    "Aborting Redis startup because of ACL errors: {errors}"
                ));
            }
            Caller::Startup => {}
            Caller::Client(client) => self.acl_file_reply(now, client, &reply),
        }
    }

    /// ACL LOAD's parse and, when the whole file is valid, its users take
    /// effect: the clients of every user but `default` are logged out and
    /// disconnected (Redis frees the replaced users with their clients),
    /// the caller after its reply.
    fn load_users(&mut self, caller: Caller, bytes: &[u8]) -> Result<(), Vec<u8>> {
        let acl = &self.server.acl;
        let file = aclfile::configured(&self.server);
        let mut steps = 0;
        let users =
            crate::acl::file::parse(bytes, &file, &acl.index, acl.pubsub_default_all, &mut steps)?;
        let gone = self.server.acl.replace_users(users);
        let victims: Vec<ClientId> = self
            .clients
            .values_mut()
            .filter(|c| c.user != DEFAULT_USER && gone.contains(&c.user))
            .map(|c| {
                c.user = DEFAULT_USER.to_vec();
                c.authenticated = false;
                c.id
            })
            .collect();
        for victim in victims {
            let reason = match Caller::Client(victim) == caller {
                true => CloseReason::Quit,
                false => CloseReason::Killed,
            };
            crate::clients::close_client(&mut self.clients, &mut self.events, victim, reason);
            if let Some(c) = self.clients.get_mut(&victim) {
                drop(self.server.blocking.unpark(c));
            }
        }
        Ok(())
    }

    /// The waiting client gets its reply and goes on with its requests.
    fn acl_file_reply(&mut self, now: Now, client: ClientId, reply: &[u8]) {
        let Some(c) = self.clients.get_mut(&client) else {
            return;
        };
        c.waiting_save = false;
        c.output.extend_from_slice(reply);
        self.server.blocking.push_unblocked(client);
        let mut args = std::mem::take(&mut self.args);
        self.process_unblocked(now, &mut args);
        self.args = args;
    }
}

/// `-ERR <message>\r\n`, the message's bytes as they are (CR and LF, which
/// would break the reply, as spaces).
fn error_reply(message: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(message.len() + 7);
    crate::resp::ReplyWriter::new(&mut out, crate::resp::Protocol::Resp2)
        .error_bytes(&[b"ERR ".as_slice(), message].concat());
    out
}
