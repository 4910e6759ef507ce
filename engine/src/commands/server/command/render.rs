//! COMMAND INFO and COMMAND DOCS entries in Redis 7.0's layouts
//! (`addReplyCommandInfo` and `addReplyCommandDocs` in src/server.c),
//! rendered from the generated metadata ([`crate::meta`]). A command that
//! redis-server 7.0.15 lacks (none today) is rendered from its hand-written
//! spec, with one key spec synthesized from its key range.

use crate::cmd::{flags, CommandSpec};
use crate::meta::{self, Arg, BeginSearch, CommandMeta, Docs, FindKeys, KeySpec};
use crate::resp::ReplyWriter;

/// The name COMMAND shows: `client|list` for subcommands.
pub(super) fn full_name(parent: Option<&CommandSpec>, spec: &CommandSpec) -> String {
    match parent {
        Some(p) if !spec.name.contains('|') => format!("{}|{}", p.name, spec.name),
        _ => spec.name.to_string(),
    }
}

/// The metadata of a seedkv command, found by its full name.
pub(super) fn meta_of(
    parent: Option<&CommandSpec>,
    spec: &CommandSpec,
) -> Option<&'static CommandMeta> {
    meta::find(&full_name(parent, spec))
}

/// A reply writer that counts the entries it renders (commands, key specs,
/// arguments), which the command charges as work.
pub(super) struct Render<'w, 'a> {
    pub w: &'w mut ReplyWriter<'a>,
    pub entries: u64,
}

impl Render<'_, '_> {
    fn simple_set(&mut self, items: &[&str]) {
        self.w.set_len(items.len());
        for item in items {
            self.w.simple(item);
        }
    }

    fn bulk_set(&mut self, items: &[&str]) {
        self.w.set_len(items.len());
        for item in items {
            self.w.bulk_str(item);
        }
    }

    /// One COMMAND INFO entry: the ten-element array of Redis 7.0.
    pub(super) fn info(&mut self, parent: Option<&CommandSpec>, spec: &'static CommandSpec) {
        self.entries += 1;
        let Some(meta) = meta_of(parent, spec) else {
            return self.info_from_spec(parent, spec);
        };
        let w = &mut *self.w;
        w.array_len(10);
        w.bulk_str(meta.name);
        w.int(i64::from(meta.arity));
        self.simple_set(meta.flags);
        self.w.int(i64::from(meta.first_key));
        self.w.int(i64::from(meta.last_key));
        self.w.int(i64::from(meta.key_step));
        self.simple_set(meta.acl_categories);
        self.bulk_set(meta.tips);
        self.w.set_len(meta.key_specs.len());
        for key_spec in meta.key_specs {
            self.key_spec(key_spec);
        }
        self.info_subcommands(spec);
    }

    /// Subcommands: an array of entries, or an empty set for a command
    /// without any, as Redis's `addReplyCommandSubCommands` writes them.
    fn info_subcommands(&mut self, spec: &'static CommandSpec) {
        if spec.subcommands.is_empty() {
            self.w.set_len(0);
            return;
        }
        self.w.array_len(spec.subcommands.len());
        for sub in sorted_subcommands(spec) {
            self.info(Some(spec), sub);
        }
    }

    fn key_spec(&mut self, key_spec: &KeySpec) {
        self.entries += 1;
        let w = &mut *self.w;
        w.map_len(if key_spec.notes.is_some() { 4 } else { 3 });
        if let Some(notes) = key_spec.notes {
            w.bulk_str("notes");
            w.bulk_str(notes);
        }
        w.bulk_str("flags");
        self.simple_set(key_spec.flags);
        let w = &mut *self.w;
        w.bulk_str("begin_search");
        w.map_len(2);
        w.bulk_str("type");
        match key_spec.begin_search {
            BeginSearch::Index { index } => {
                w.bulk_str("index");
                w.bulk_str("spec");
                w.map_len(1);
                w.bulk_str("index");
                w.int(i64::from(index));
            }
            BeginSearch::Keyword { keyword, startfrom } => {
                w.bulk_str("keyword");
                w.bulk_str("spec");
                w.map_len(2);
                w.bulk_str("keyword");
                w.bulk_str(keyword);
                w.bulk_str("startfrom");
                w.int(i64::from(startfrom));
            }
            BeginSearch::Unknown => {
                w.bulk_str("unknown");
                w.bulk_str("spec");
                w.map_len(0);
            }
        }
        w.bulk_str("find_keys");
        w.map_len(2);
        w.bulk_str("type");
        let (kind, fields) = match key_spec.find_keys {
            FindKeys::Range {
                lastkey,
                keystep,
                limit,
            } => (
                "range",
                [("lastkey", lastkey), ("keystep", keystep), ("limit", limit)],
            ),
            FindKeys::Keynum {
                keynumidx,
                firstkey,
                keystep,
            } => (
                "keynum",
                [
                    ("keynumidx", keynumidx),
                    ("firstkey", firstkey),
                    ("keystep", keystep),
                ],
            ),
            FindKeys::Unknown => {
                w.bulk_str("unknown");
                w.bulk_str("spec");
                w.map_len(0);
                return;
            }
        };
        w.bulk_str(kind);
        w.bulk_str("spec");
        w.map_len(fields.len());
        for (name, value) in fields {
            w.bulk_str(name);
            w.int(i64::from(value));
        }
    }

    /// COMMAND INFO for a command without generated metadata: its spec's
    /// flags and categories, and one key spec from its key range.
    fn info_from_spec(&mut self, parent: Option<&CommandSpec>, spec: &'static CommandSpec) {
        let w = &mut *self.w;
        w.array_len(10);
        w.bulk_str(&full_name(parent, spec));
        w.int(i64::from(spec.arity));
        let names: Vec<&str> = flags::NAMES
            .iter()
            .filter(|(bit, name)| spec.has(*bit) && !HIDDEN_FLAGS.contains(name))
            .map(|(_, name)| *name)
            .collect();
        self.simple_set(&names);
        let has_keys = spec.first_key > 0;
        let w = &mut *self.w;
        w.int(i64::from(spec.first_key));
        w.int(i64::from(spec.last_key));
        w.int(if has_keys {
            i64::from(spec.key_step)
        } else {
            0
        });
        let categories: Vec<String> = spec
            .acl_categories
            .iter()
            .map(|c| format!("@{c}"))
            .collect();
        let categories: Vec<&str> = categories.iter().map(String::as_str).collect();
        self.simple_set(&categories);
        self.bulk_set(spec.tips);
        if has_keys {
            let lastkey = if spec.last_key < 0 {
                spec.last_key
            } else {
                spec.last_key - spec.first_key
            };
            let flags: &[&str] = if !spec.key_spec_flags.is_empty() {
                spec.key_spec_flags
            } else if spec.has(flags::READONLY) {
                &["RO", "access"]
            } else {
                &["RW", "update"]
            };
            self.w.set_len(1);
            self.key_spec(&KeySpec {
                notes: None,
                flags,
                begin_search: BeginSearch::Index {
                    index: spec.first_key,
                },
                find_keys: FindKeys::Range {
                    lastkey,
                    keystep: spec.key_step.max(1),
                    limit: 0,
                },
            });
        } else {
            self.w.set_len(0);
        }
        self.info_subcommands(spec);
    }

    /// One COMMAND DOCS value: the map of Redis 7.0's
    /// `addReplyCommandDocs`, fields in its order, absent ones omitted.
    pub(super) fn docs(&mut self, parent: Option<&CommandSpec>, spec: &'static CommandSpec) {
        self.entries += 1;
        let fallback;
        let docs = match meta_of(parent, spec) {
            Some(meta) => &meta.docs,
            None => {
                fallback = docs_from_spec(spec);
                &fallback
            }
        };
        let has_subcommands = !spec.subcommands.is_empty();
        let fields = 1
            + [docs.summary, docs.since, docs.complexity]
                .iter()
                .filter(|f| f.is_some())
                .count()
            + usize::from(!docs.doc_flags.is_empty())
            + usize::from(docs.deprecated_since.is_some())
            + usize::from(docs.replaced_by.is_some())
            + usize::from(!docs.history.is_empty())
            + usize::from(!docs.arguments.is_empty())
            + usize::from(has_subcommands);
        let w = &mut *self.w;
        w.map_len(fields);
        optional_field(w, "summary", docs.summary);
        optional_field(w, "since", docs.since);
        w.bulk_str("group");
        w.bulk_str(docs.group);
        optional_field(w, "complexity", docs.complexity);
        if !docs.doc_flags.is_empty() {
            w.bulk_str("doc_flags");
            self.simple_set(docs.doc_flags);
        }
        let w = &mut *self.w;
        optional_field(w, "deprecated_since", docs.deprecated_since);
        optional_field(w, "replaced_by", docs.replaced_by);
        if !docs.history.is_empty() {
            w.bulk_str("history");
            w.set_len(docs.history.len());
            for (version, change) in docs.history {
                w.array_len(2);
                w.bulk_str(version);
                w.bulk_str(change);
            }
        }
        if !docs.arguments.is_empty() {
            w.bulk_str("arguments");
            self.arguments(docs.arguments);
        }
        if has_subcommands {
            self.w.bulk_str("subcommands");
            self.w.map_len(spec.subcommands.len());
            for sub in sorted_subcommands(spec) {
                self.w.bulk_str(&full_name(Some(spec), sub));
                self.docs(Some(spec), sub);
            }
        }
    }

    /// Redis's `addReplyCommandArgList`.
    fn arguments(&mut self, args: &[Arg]) {
        self.w.array_len(args.len());
        for arg in args {
            self.entries += 1;
            let fields = 2
                + [arg.token, arg.summary, arg.since, arg.deprecated_since]
                    .iter()
                    .filter(|f| f.is_some())
                    .count()
                + usize::from(arg.key_spec_index.is_some())
                + usize::from(!arg.flags.is_empty())
                + usize::from(arg.nests());
            let w = &mut *self.w;
            w.map_len(fields);
            w.bulk_str("name");
            w.bulk_str(arg.name);
            w.bulk_str("type");
            w.bulk_str(arg.kind);
            if let Some(index) = arg.key_spec_index {
                w.bulk_str("key_spec_index");
                w.int(i64::from(index));
            }
            optional_field(w, "token", arg.token);
            optional_field(w, "summary", arg.summary);
            optional_field(w, "since", arg.since);
            optional_field(w, "deprecated_since", arg.deprecated_since);
            if !arg.flags.is_empty() {
                w.bulk_str("flags");
                self.simple_set(arg.flags);
            }
            if arg.nests() {
                self.w.bulk_str("arguments");
                self.arguments(arg.arguments);
            }
        }
    }
}

/// Flags Redis keeps out of COMMAND INFO (`addReplyFlagsForCommand` hides
/// them on purpose).
const HIDDEN_FLAGS: &[&str] = &["may_replicate", "sentinel"];

fn optional_field(w: &mut ReplyWriter, name: &str, value: Option<&str>) {
    if let Some(value) = value {
        w.bulk_str(name);
        w.bulk_str(value);
    }
}

/// A container's subcommands in name order, as the generated metadata
/// keeps them (Redis's own order is that of a dict seeded per process).
pub(super) fn sorted_subcommands(spec: &'static CommandSpec) -> Vec<&'static CommandSpec> {
    let mut subs: Vec<&'static CommandSpec> = spec.subcommands.iter().collect();
    subs.sort_by_key(|sub| full_name(Some(spec), sub));
    subs
}

/// COMMAND DOCS for a command without generated metadata.
fn docs_from_spec(spec: &CommandSpec) -> Docs {
    Docs {
        summary: Some(spec.summary),
        since: Some(spec.since),
        group: spec.group,
        complexity: Some(spec.complexity),
        ..Docs::DEFAULT
    }
}
