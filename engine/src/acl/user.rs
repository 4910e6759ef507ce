//! A user and Redis's `ACLSetUser`: the rules that concern the user itself
//! (on/off, passwords, `reset`, selectors) and, for any other rule, its root
//! selector's.

use sha2::{Digest, Sha256};

use super::selector::{has_spaces, RuleError, Selector};
use super::CommandIndex;

/// Rules one `ACL SETUSER` may carry: bounded by the request's size, this
/// only caps the selector merging's scratch space.
pub const RULES_MAX: usize = 1 << 20;

/// One user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    pub name: Vec<u8>,
    /// `on` / `off`; a new user is off.
    pub enabled: bool,
    /// Any password logs in (`nopass`).
    pub nopass: bool,
    /// `sanitize-payload` (Some(true)) or `skip-sanitize-payload`
    /// (Some(false)); a new user has neither flag.
    pub sanitize_payload: Option<bool>,
    /// SHA-256 hex digests, in the order they were added.
    pub passwords: Vec<String>,
    /// The root selector first, then the `(...)` ones in order.
    pub selectors: Vec<Selector>,
}

impl User {
    /// Redis's `ACLCreateUser`: off, no passwords, no commands, no keys,
    /// and channels per `acl-pubsub-default` (`pubsub_default_all`).
    pub fn new(name: Vec<u8>, index: &CommandIndex, pubsub_default_all: bool) -> User {
        User {
            name,
            enabled: false,
            nopass: false,
            sanitize_payload: None,
            passwords: Vec::new(),
            selectors: vec![Selector::new(index, pubsub_default_all)],
        }
    }

    pub fn root(&self) -> &Selector {
        &self.selectors[0]
    }

    /// Whether `password` hashes to one of the user's passwords.
    pub fn has_password(&self, password: &[u8]) -> bool {
        let hashed = hash_password(password);
        self.passwords.contains(&hashed)
    }

    /// Redis's `ACLSetUser`: applies one rule (a merged selector counts as
    /// one). `pubsub_default_all` is `acl-pubsub-default`, which `reset`
    /// and new selectors follow.
    pub fn set_rule(
        &mut self,
        op: &[u8],
        index: &CommandIndex,
        pubsub_default_all: bool,
        steps: &mut u64,
    ) -> Result<(), RuleError> {
        *steps += 1;
        if op.is_empty() {
            return Ok(());
        }
        let is = |word: &str| op.eq_ignore_ascii_case(word.as_bytes());
        if is("on") {
            self.enabled = true;
        } else if is("off") {
            self.enabled = false;
        } else if is("skip-sanitize-payload") {
            self.sanitize_payload = Some(false);
        } else if is("sanitize-payload") {
            self.sanitize_payload = Some(true);
        } else if is("nopass") {
            self.nopass = true;
            self.passwords.clear();
        } else if is("resetpass") {
            self.nopass = false;
            self.passwords.clear();
        } else if op[0] == b'>' || op[0] == b'#' {
            let hashed = password_of(op)?;
            if !self.passwords.contains(&hashed) {
                self.passwords.push(hashed);
            }
            self.nopass = false;
        } else if op[0] == b'<' || op[0] == b'!' {
            let hashed = password_of(op)?;
            let at = self.passwords.iter().position(|p| *p == hashed);
            self.passwords.remove(at.ok_or(RuleError::NoSuchPassword)?);
        } else if op[0] == b'(' && op[op.len() - 1] == b')' {
            let selector = selector_from_opset(op, index, pubsub_default_all, steps)?;
            self.selectors.push(selector);
        } else if is("clearselectors") {
            self.selectors.truncate(1);
        } else if is("reset") {
            self.reset(index, pubsub_default_all, steps);
        } else {
            self.selectors[0].set_rule(op, index, steps)?;
        }
        Ok(())
    }

    /// `reset`: resetpass, resetkeys, resetchannels (then allchannels if
    /// that is the default), off, sanitize-payload, clearselectors, -@all.
    fn reset(&mut self, index: &CommandIndex, pubsub_default_all: bool, steps: &mut u64) {
        self.nopass = false;
        self.passwords.clear();
        self.enabled = false;
        self.sanitize_payload = Some(true);
        self.selectors.truncate(1);
        let root = &mut self.selectors[0];
        for rule in ["resetkeys", "resetchannels", "-@all"] {
            let set = root.set_rule(rule.as_bytes(), index, steps);
            debug_assert!(set.is_ok());
        }
        root.all_channels = pubsub_default_all;
    }

    /// Redis's `ACLDescribeUser`: flags, passwords, then the selectors,
    /// the root bare and the others in parentheses. Bytes: patterns are
    /// printed as they were given.
    pub fn describe(&self, index: &CommandIndex, steps: &mut u64) -> Vec<u8> {
        let mut out = Vec::new();
        for flag in self.flags() {
            out.extend_from_slice(flag.as_bytes());
            out.push(b' ');
        }
        for p in &self.passwords {
            out.push(b'#');
            out.extend_from_slice(p.as_bytes());
            out.push(b' ');
        }
        for (i, s) in self.selectors.iter().enumerate() {
            let text = s.describe(index, steps);
            if i == 0 {
                out.extend_from_slice(&text);
            } else {
                out.extend_from_slice(b" (");
                out.extend_from_slice(&text);
                out.push(b')');
            }
        }
        out
    }

    /// The user's flags in Redis's `ACLUserFlags` order.
    pub fn flags(&self) -> Vec<&'static str> {
        let mut flags = vec![if self.enabled { "on" } else { "off" }];
        if self.nopass {
            flags.push("nopass");
        }
        match self.sanitize_payload {
            Some(false) => flags.push("skip-sanitize-payload"),
            Some(true) => flags.push("sanitize-payload"),
            None => {}
        }
        flags
    }
}

/// The hashed password a `>pass`/`<pass` (hashed here) or `#hash`/`!hash`
/// (checked here) rule names.
fn password_of(op: &[u8]) -> Result<String, RuleError> {
    match op[0] {
        b'>' | b'<' => Ok(hash_password(&op[1..])),
        _ => {
            let hash = &op[1..];
            let valid =
                hash.len() == 64 && hash.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
            match valid {
                // Checked to be hex digits above: ASCII.
                true => Ok(hash.iter().map(|&b| b as char).collect()),
                false => Err(RuleError::BadHash),
            }
        }
    }
}

/// SHA-256 as lowercase hex, how Redis stores a password.
pub fn hash_password(password: &[u8]) -> String {
    let digest = Sha256::digest(password);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Redis's `aclCreateSelectorFromOpSet`: the rules between the
/// parentheses, split as `sdssplitargs` splits them.
fn selector_from_opset(
    op: &[u8],
    index: &CommandIndex,
    pubsub_default_all: bool,
    steps: &mut u64,
) -> Result<Selector, RuleError> {
    let mut selector = Selector::new(index, pubsub_default_all);
    let inner = &op[1..op.len() - 1];
    // Unbalanced quotes split into nothing, which Redis takes as a
    // selector without rules.
    let rules = crate::resp::parse::split_args(inner).unwrap_or_default();
    *steps += inner.len() as u64;
    for rule in rules {
        selector.set_rule(&rule, index, steps)?;
    }
    Ok(selector)
}

/// Redis's `ACLMergeSelectorArguments`: a selector may be spread over
/// several arguments (`(~k*`, `+get)`), joined by spaces here. An opening
/// parenthesis never closed is `Err(its argument's index)`.
pub fn merge_selector_args(args: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, usize> {
    let mut merged = Vec::with_capacity(args.len().min(RULES_MAX));
    let mut open: Option<(usize, Vec<u8>)> = None;
    for (j, op) in args.iter().enumerate() {
        let ends = op.last() == Some(&b')');
        if op.first() == Some(&b'(') && !ends {
            open = Some((j, op.clone()));
            continue;
        }
        if let Some((start, mut selector)) = open.take() {
            selector.push(b' ');
            selector.extend_from_slice(op);
            match ends {
                true => merged.push(selector),
                false => open = Some((start, selector)),
            }
            continue;
        }
        merged.push(op.clone());
    }
    match open {
        Some((start, _)) => Err(start),
        None => Ok(merged),
    }
}

/// Whether `name` may name a user.
pub fn valid_user_name(name: &[u8]) -> bool {
    !has_spaces(name)
}
