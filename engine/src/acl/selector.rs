//! A selector: which commands, keys and channels it allows. A user has a
//! root selector (the rules written outside parentheses) and any number of
//! further ones (`(~k* +get)`); a command runs when one selector allows it.
//!
//! Commands are a bitmap over the [`CommandIndex`] ids, as in Redis:
//! `+@all` sets every bit and remembers that it did (`future`: such a user
//! would also run commands added later), `-@all` clears them, a category
//! sets the bits of its commands, and `+cmd|arg` on a command without
//! subcommands allows one first argument of an otherwise denied command.

use super::{category_bit, CommandIndex, CATEGORIES};

/// Read and write access of a key pattern (`%R~`, `%W~`, `%RW~`, `~`).
pub const KEY_READ: u8 = 1;
pub const KEY_WRITE: u8 = 2;
pub const KEY_ALL: u8 = KEY_READ | KEY_WRITE;

/// A key pattern with the access it grants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyPattern {
    pub pattern: Vec<u8>,
    /// [`KEY_READ`] and/or [`KEY_WRITE`].
    pub access: u8,
}

/// Why a rule was refused; [`RuleError::message`] is Redis's text for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleError {
    /// EINVAL: an unknown rule or a pattern with spaces.
    Syntax,
    /// ENOENT: `+nosuch` or `+@nosuch`.
    UnknownCommand,
    /// EEXIST: a key pattern after `allkeys`.
    KeyAfterAll,
    /// EISDIR: a channel pattern after `allchannels`.
    ChannelAfterAll,
    /// ENODEV: `<pass` or `!hash` of a password the user does not have.
    NoSuchPassword,
    /// EBADMSG: `#hash` that is not 64 lowercase hex digits.
    BadHash,
    /// ECHILD: `+config|get|x`, a first argument of a subcommand.
    FirstArgOfSubcommand,
}

impl RuleError {
    /// Redis's `ACLSetUserStringError`.
    pub fn message(self) -> &'static str {
        match self {
            RuleError::Syntax => "Syntax error",
            RuleError::UnknownCommand => "Unknown command or category name in ACL",
            RuleError::KeyAfterAll => "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns",
            RuleError::ChannelAfterAll => "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels",
            RuleError::NoSuchPassword => "The password you are trying to remove from the user does not exist",
            RuleError::BadHash => "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters",
            RuleError::FirstArgOfSubcommand => "Allowing first-arg of a subcommand is not supported",
        }
    }
}

/// One selector's permissions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector {
    /// One bit per command id.
    allowed: Vec<u64>,
    /// Redis's SELECTOR_FLAG_ALLCOMMANDS: set by `+@all`, cleared by any
    /// denial; while set, commands are not looked up in the bitmap.
    pub all_commands: bool,
    /// The bit `+@all` reserves for commands added later: it decides
    /// whether a description starts with `+@all` or `-@all`.
    future: bool,
    /// First arguments allowed per denied command id (`+select|0`).
    pub first_args: Vec<(usize, Vec<Vec<u8>>)>,
    pub all_keys: bool,
    pub keys: Vec<KeyPattern>,
    pub all_channels: bool,
    pub channels: Vec<Vec<u8>>,
}

const BITS_PER_WORD: usize = 64;

impl Selector {
    /// A selector allowing nothing (a new user's root, or `(...)` before
    /// its rules); with `all_channels` per `acl-pubsub-default`.
    pub fn new(index: &CommandIndex, all_channels: bool) -> Selector {
        Selector {
            allowed: vec![0; index.len().div_ceil(BITS_PER_WORD)],
            all_commands: false,
            future: false,
            first_args: Vec::new(),
            all_keys: false,
            keys: Vec::new(),
            all_channels,
            channels: Vec::new(),
        }
    }

    pub fn allows_id(&self, id: usize) -> bool {
        self.allowed
            .get(id / BITS_PER_WORD)
            .is_some_and(|w| w & (1 << (id % BITS_PER_WORD)) != 0)
    }

    fn set_bit(&mut self, id: usize, allow: bool) {
        let Some(word) = self.allowed.get_mut(id / BITS_PER_WORD) else {
            return;
        };
        let bit = 1 << (id % BITS_PER_WORD);
        if allow {
            *word |= bit;
        } else {
            *word &= !bit;
            self.all_commands = false;
        }
    }

    /// Redis's `ACLChangeSelectorPerm`: a command and, for a container,
    /// all its subcommands; its allowed first arguments are forgotten.
    fn change_perm(&mut self, index: &CommandIndex, id: usize, allow: bool) {
        self.set_bit(id, allow);
        self.first_args.retain(|(c, _)| *c != id);
        for sub in index.commands[id].subcommands.clone() {
            self.set_bit(sub, allow);
        }
    }

    /// Every command of the category `bit`, subcommands included.
    fn change_category(&mut self, index: &CommandIndex, bit: u32, allow: bool, steps: &mut u64) {
        *steps += index.len() as u64;
        for id in 0..index.len() {
            if index.commands[id].categories & bit != 0 {
                self.change_perm(index, id, allow);
            }
        }
    }

    fn set_all_commands(&mut self, allow: bool) {
        let fill = if allow { u64::MAX } else { 0 };
        self.allowed.iter_mut().for_each(|w| *w = fill);
        self.all_commands = allow;
        self.future = allow;
        self.first_args.clear();
    }

    /// Redis's `ACLSetSelector`: applies one selector rule. `steps` counts
    /// the commands and patterns it went through, for the caller to charge.
    pub fn set_rule(
        &mut self,
        op: &[u8],
        index: &CommandIndex,
        steps: &mut u64,
    ) -> Result<(), RuleError> {
        *steps += 1;
        // Redis compares keywords and looks commands up (`strcasecmp`,
        // `zstrdup`, `strlen`) in the rule as a C string, which ends at its
        // first NUL; patterns and channels it takes whole, with their length.
        let word = &op[..op.iter().position(|&b| b == 0).unwrap_or(op.len())];
        // An empty rule inside a selector (`(~a '')` splits into one) is
        // Redis's syntax error: its `first` is the C string's NUL.
        let Some(&first) = op.first() else {
            return Err(RuleError::Syntax);
        };
        let is = |w: &str| word.eq_ignore_ascii_case(w.as_bytes());
        if is("allkeys") || op == b"~*" {
            self.all_keys = true;
            self.keys.clear();
        } else if is("resetkeys") {
            self.all_keys = false;
            self.keys.clear();
        } else if is("allchannels") || op == b"&*" {
            self.all_channels = true;
            self.channels.clear();
        } else if is("resetchannels") {
            self.all_channels = false;
            self.channels.clear();
        } else if is("allcommands") || is("+@all") {
            self.set_all_commands(true);
        } else if is("nocommands") || is("-@all") {
            self.set_all_commands(false);
        } else if first == b'~' || first == b'%' {
            self.add_key_pattern(op, steps)?;
        } else if first == b'&' {
            self.add_channel(op, steps)?;
        } else if word.len() >= 2 && (first == b'+' || first == b'-') && word[1] == b'@' {
            let bit = category_bit(&word[2..]).ok_or(RuleError::UnknownCommand)?;
            self.change_category(index, bit, first == b'+', steps);
        } else if first == b'+' {
            self.allow_command(&word[1..], index)?;
        } else if first == b'-' {
            let id = lookup(index, &word[1..]).ok_or(RuleError::UnknownCommand)?;
            self.change_perm(index, id, false);
        } else {
            return Err(RuleError::Syntax);
        }
        Ok(())
    }

    /// `~pat`, `%R~pat`, `%W~pat`, `%RW~pat`: a pattern is added once, and
    /// adding it again widens its access.
    fn add_key_pattern(&mut self, op: &[u8], steps: &mut u64) -> Result<(), RuleError> {
        if self.all_keys {
            return Err(RuleError::KeyAfterAll);
        }
        let mut access = 0;
        let mut offset = 1;
        if op[0] == b'%' {
            loop {
                match op.get(offset).map(u8::to_ascii_uppercase) {
                    Some(b'R') if access & KEY_READ == 0 => access |= KEY_READ,
                    Some(b'W') if access & KEY_WRITE == 0 => access |= KEY_WRITE,
                    Some(b'~') => {
                        offset += 1;
                        break;
                    }
                    // Redis stops at the end of the rule without a `~` and
                    // takes the (empty) rest as the pattern.
                    None => break,
                    Some(_) => return Err(RuleError::Syntax),
                }
                offset += 1;
            }
        } else {
            access = KEY_ALL;
        }
        let pattern = &op[offset.min(op.len())..];
        if has_spaces(pattern) {
            return Err(RuleError::Syntax);
        }
        *steps += self.keys.len() as u64;
        match self.keys.iter_mut().find(|k| k.pattern == pattern) {
            Some(existing) => existing.access |= access,
            None => self.keys.push(KeyPattern {
                pattern: pattern.to_vec(),
                access,
            }),
        }
        self.all_keys = false;
        Ok(())
    }

    fn add_channel(&mut self, op: &[u8], steps: &mut u64) -> Result<(), RuleError> {
        if self.all_channels {
            return Err(RuleError::ChannelAfterAll);
        }
        let pattern = &op[1..];
        if has_spaces(pattern) {
            return Err(RuleError::Syntax);
        }
        *steps += self.channels.len() as u64;
        if !self.channels.iter().any(|c| c == pattern) {
            self.channels.push(pattern.to_vec());
        }
        self.all_channels = false;
        Ok(())
    }

    /// `+cmd`, `+container|sub`, or `+cmd|first-arg` for a command without
    /// subcommands.
    fn allow_command(&mut self, name: &[u8], index: &CommandIndex) -> Result<(), RuleError> {
        let Some(bar) = name.iter().rposition(|&b| b == b'|') else {
            let id = lookup(index, name).ok_or(RuleError::UnknownCommand)?;
            self.change_perm(index, id, true);
            return Ok(());
        };
        let (command, first_arg) = (&name[..bar], &name[bar + 1..]);
        let id = lookup(index, command).ok_or(RuleError::UnknownCommand)?;
        if index.commands[id].parent.is_some() {
            return Err(RuleError::FirstArgOfSubcommand);
        }
        if first_arg.is_empty() {
            return Err(RuleError::Syntax);
        }
        if !index.commands[id].subcommands.is_empty() {
            let sub = lookup(index, name).ok_or(RuleError::UnknownCommand)?;
            self.change_perm(index, sub, true);
            return Ok(());
        }
        let allowed = match self.first_args.iter_mut().find(|(c, _)| *c == id) {
            Some((_, allowed)) => allowed,
            None => {
                self.first_args.push((id, Vec::new()));
                &mut self.first_args.last_mut().expect("pushed").1
            }
        };
        if !allowed.iter().any(|a| a.eq_ignore_ascii_case(first_arg)) {
            allowed.push(first_arg.to_vec());
        }
        Ok(())
    }

    /// The first arguments allowed for the denied command `id`.
    pub fn first_args_of(&self, id: usize) -> &[Vec<u8>] {
        self.first_args
            .iter()
            .find(|(c, _)| *c == id)
            .map_or(&[], |(_, a)| a.as_slice())
    }

    /// Redis's `ACLDescribeSelector`: keys, channels, then commands, as
    /// `ACL LIST` shows a selector. Bytes, as Redis prints patterns raw.
    pub fn describe(&self, index: &CommandIndex, steps: &mut u64) -> Vec<u8> {
        let mut out = Vec::new();
        if self.all_keys {
            out.extend_from_slice(b"~* ");
        } else {
            for k in &self.keys {
                out.extend_from_slice(&key_pattern_text(k));
                out.push(b' ');
            }
        }
        if self.all_channels {
            out.extend_from_slice(b"&* ");
        } else {
            out.extend_from_slice(b"resetchannels ");
            for c in &self.channels {
                out.push(b'&');
                out.extend_from_slice(c);
                out.push(b' ');
            }
        }
        out.extend_from_slice(&self.describe_commands(index, steps));
        out
    }

    /// The key patterns as `ACL GETUSER` shows them, space-separated.
    pub fn keys_text(&self) -> Vec<u8> {
        if self.all_keys {
            return b"~*".to_vec();
        }
        let texts: Vec<Vec<u8>> = self.keys.iter().map(key_pattern_text).collect();
        texts.join(&b' ')
    }

    /// The channel patterns as `ACL GETUSER` shows them.
    pub fn channels_text(&self) -> Vec<u8> {
        if self.all_channels {
            return b"&*".to_vec();
        }
        let texts: Vec<Vec<u8>> = self
            .channels
            .iter()
            .map(|c| [b"&".as_slice(), c].concat())
            .collect();
        texts.join(&b' ')
    }

    /// Redis 7.0's `ACLDescribeSelectorCommandRules`: `+@all` or `-@all`,
    /// then greedily the category that best fits the commands still to
    /// explain (more commands in common than different, fewest
    /// differences), then single commands for what remains. The rules are
    /// replayed on a scratch selector as they are chosen, so what is
    /// described is exactly the bitmap. Single commands come in the
    /// index's order (Redis walks its command dict, in hash order).
    pub fn describe_commands(&self, index: &CommandIndex, steps: &mut u64) -> Vec<u8> {
        let additive = !self.future;
        let mut rules = if additive {
            b"-@all ".to_vec()
        } else {
            b"+@all ".to_vec()
        };
        let mut fake = Selector::new(index, false);
        fake.set_all_commands(!additive);
        // What is left to explain: categories applied are inverted here.
        let mut temp = self.clone();
        let mut applied = [false; CATEGORIES.len()];
        loop {
            let mut best = None;
            let (mut diff_min, mut same_max) = (u64::MAX, 0);
            for (j, name) in CATEGORIES.iter().enumerate() {
                if applied[j] {
                    continue;
                }
                let (on, off) = temp.count_category(index, 1 << j, steps);
                let (diff, same) = if additive { (off, on) } else { (on, off) };
                if same > diff && (diff < diff_min || (diff == diff_min && same > same_max)) {
                    best = Some((j, *name));
                    diff_min = diff;
                    same_max = same;
                }
            }
            let Some((j, name)) = best else { break };
            fake.change_category(index, 1 << j, additive, steps);
            temp.change_category(index, 1 << j, !additive, steps);
            rules.extend_from_slice(if additive { b"+@" } else { b"-@" });
            rules.extend_from_slice(name.as_bytes());
            rules.push(b' ');
            applied[j] = true;
        }
        *steps += index.len() as u64;
        for id in 0..index.len() {
            let user_bit = self.allows_id(id);
            if user_bit != fake.allows_id(id) {
                rules.push(if user_bit { b'+' } else { b'-' });
                rules.extend_from_slice(index.commands[id].full_name.as_bytes());
                rules.push(b' ');
                fake.change_perm(index, id, user_bit);
            }
            if !user_bit {
                for arg in self.first_args_of(id) {
                    rules.push(b'+');
                    rules.extend_from_slice(index.commands[id].full_name.as_bytes());
                    rules.push(b'|');
                    rules.extend_from_slice(arg);
                    rules.push(b' ');
                }
            }
        }
        rules.pop();
        debug_assert_eq!(
            fake.allowed, self.allowed,
            "the description replays the bitmap"
        );
        rules
    }

    /// How many commands of the category are allowed and denied.
    fn count_category(&self, index: &CommandIndex, bit: u32, steps: &mut u64) -> (u64, u64) {
        *steps += index.len() as u64;
        let (mut on, mut off) = (0, 0);
        for (id, c) in index.commands.iter().enumerate() {
            if c.categories & bit != 0 {
                if self.allows_id(id) {
                    on += 1;
                } else {
                    off += 1;
                }
            }
        }
        (on, off)
    }
}

/// A command by name (`get`, `config|get`), as Redis's `ACLLookupCommand`:
/// case-insensitive, and `parent|sub` only for a container's subcommand.
pub fn lookup(index: &CommandIndex, name: &[u8]) -> Option<usize> {
    let lower = name.to_ascii_lowercase();
    let lower = std::str::from_utf8(&lower).ok()?;
    // Commands are few (a few hundred) and rules are rare: a scan keeps the
    // index one vector.
    index.commands.iter().position(|c| c.full_name == lower)
}

/// `~pat`, `%R~pat`, `%W~pat`; a pattern with both accesses is `~pat`.
fn key_pattern_text(k: &KeyPattern) -> Vec<u8> {
    let prefix: &[u8] = match k.access {
        KEY_ALL => b"~",
        KEY_READ => b"%R~",
        KEY_WRITE => b"%W~",
        _ => b"%~",
    };
    [prefix, &k.pattern].concat()
}

/// Redis's `ACLStringHasSpaces`: whitespace (C's `isspace`: space, `\t`,
/// `\n`, `\v`, `\f`, `\r`) and NUL bytes are not allowed in patterns and
/// user names, so that a rule always splits back into itself.
pub fn has_spaces(s: &[u8]) -> bool {
    s.iter()
        .any(|&b| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | 0))
}
