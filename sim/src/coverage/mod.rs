//! Coverage: what a run really exercised, counted from its [`History`].
//!
//! Three kinds of counter, each against a fixed universe so that a zero
//! shows:
//!
//! - **commands**: every entry of the engine's command table (full names,
//!   `client|list`), counted when the engine *executed* it
//!   ([`History::executions`]), not when a client sent it: a request that
//!   died with its connection, or sat in a discarded MULTI, exercised
//!   nothing. The full name comes from the request's arguments (the
//!   execution record names a subcommand like `latency|latest` only by
//!   `latest`); a command a script ran has no request of its own and is
//!   named by its execution record.
//! - **options**: the tokens of [`options::OPTIONS`] in executed requests.
//! - **shapes**: key life cycles and contention patterns that cross
//!   features, found by the detectors of [`shapes`].
//!
//! A sweep merges the counts of its runs ([`Coverage::merge`]) and prints
//! [`Coverage::report`].

use std::borrow::Cow;
use std::collections::BTreeMap;

use seedkv_engine::cmd::{lookup_subcommand, CommandSpec, CommandTable};

use crate::fxhash::FxHashMap;
use crate::history::{History, Op, OpIndex};

pub mod options;
pub mod shapes;

/// Counts of one run, or merged over a sweep.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Executions per full command name.
    pub commands: BTreeMap<String, u64>,
    /// Executed requests per (full command name, option token).
    pub options: BTreeMap<(String, &'static str), u64>,
    /// Occurrences per shape (see [`shapes::SHAPES`]).
    pub shapes: BTreeMap<&'static str, u64>,
    /// Runs merged in.
    pub runs_count: u64,
}

/// The commands of the table a run can execute, by full name: every
/// top-level command that has a handler, and every subcommand.
pub fn table_commands(table: &CommandTable) -> Vec<String> {
    let mut names = Vec::new();
    for spec in table.iter() {
        if spec.handler.is_some() {
            names.push(spec.name.to_string());
        }
        for sub in spec.subcommands {
            names.push(crate::check::complexity::full_name(spec.name, sub.name));
        }
    }
    names
}

/// The full name of the command `args` invokes, as the table resolves it
/// (`None` for an unknown command or subcommand). Borrowed from the table
/// for a top-level command: every execution of a run asks, and only
/// subcommands need a name built.
pub fn resolve_name(table: &CommandTable, args: &[Vec<u8>]) -> Option<Cow<'static, str>> {
    resolve(table, args).map(|(_, name)| name)
}

/// [`resolve_name`] with the top-level command's spec.
fn resolve(
    table: &CommandTable,
    args: &[Vec<u8>],
) -> Option<(&'static CommandSpec, Cow<'static, str>)> {
    let spec = table.lookup(args.first()?)?;
    if spec.subcommands.is_empty() || (spec.handler.is_some() && args.len() < 2) {
        return Some((spec, Cow::Borrowed(spec.name)));
    }
    let sub = lookup_subcommand(spec, args.get(1)?)?;
    let name = crate::check::complexity::full_name(spec.name, sub.name);
    Some((spec, Cow::Owned(name)))
}

/// An execution's request as coverage reads it: the op, the top-level
/// command's spec and the full name its arguments resolve to.
pub struct Resolved<'a> {
    pub op: &'a Op,
    pub spec: &'static CommandSpec,
    pub name: Cow<'static, str>,
}

/// Each execution's [`Resolved`] request, in execution order (`None`
/// for one with no op, or an unknown name; a rejected request is
/// resolved too, the shape detectors follow its connection state): the
/// command counts and the shape detectors both walk the executions, and
/// resolving once spares one op lookup and one table lookup each.
fn resolve_executions<'a>(
    table: &CommandTable,
    history: &History,
    ops: &OpIndex<'a>,
) -> Vec<Option<Resolved<'a>>> {
    history
        .executions
        .iter()
        .enumerate()
        .map(|(index, exec)| {
            let op = ops.of_execution(index, exec)?;
            let (spec, name) = resolve(table, &op.args)?;
            Some(Resolved { op, spec, name })
        })
        .collect()
}

/// Whether the full name `name` resolved from a request is the command
/// an execution record names (`exec_name`: a subcommand's record names
/// only the subcommand, `latest` for `latency|latest`).
fn names_execution(name: &str, exec_name: &str) -> bool {
    name == exec_name
        || name
            .strip_suffix(exec_name)
            .is_some_and(|head| head.ends_with('|'))
}

impl Coverage {
    /// Counts what `history` exercised.
    pub fn of_run(history: &History) -> Coverage {
        let table = CommandTable::new(seedkv_engine::commands::FAMILIES);
        let ops = history.op_index();
        let mut coverage = Coverage {
            runs_count: 1,
            ..Coverage::default()
        };
        // Counted by borrowed names first, turned into the sorted owned
        // maps once per run (not one String per execution).
        // Each name's count with its listed options, looked up once per
        // name (a search of OPTIONS per execution was a tenth of the count).
        let mut commands: FxHashMap<Cow<'static, str>, (u64, &'static [&'static str])> =
            FxHashMap::default();
        let mut option_counts: FxHashMap<(Cow<'static, str>, &'static str), u64> =
            FxHashMap::default();
        let resolved = resolve_executions(&table, history, &ops);
        for (exec, request) in history.executions.iter().zip(&resolved) {
            if exec.name.is_empty() {
                continue;
            }
            // A script's calls carry the script's index: its request is the
            // EVAL, whose name does not end with the call's.
            match request
                .as_ref()
                .filter(|r| names_execution(&r.name, exec.name))
            {
                Some(r) => {
                    let (count, listed) = commands
                        .entry(r.name.clone())
                        .or_insert_with(|| (0, options::options_of(&r.name)));
                    *count += 1;
                    if listed.is_empty() {
                        continue;
                    }
                    for option in options::options_among(&r.name, listed, &r.op.args) {
                        *option_counts.entry((r.name.clone(), option)).or_default() += 1;
                    }
                }
                None => {
                    commands
                        .entry(Cow::Borrowed(exec.name))
                        .or_insert((0, &[]))
                        .0 += 1
                }
            }
        }
        coverage.commands = commands
            .into_iter()
            .map(|(name, (n, _))| (name.into_owned(), n))
            .collect();
        coverage.options = option_counts
            .into_iter()
            .map(|((name, option), n)| ((name.into_owned(), option), n))
            .collect();
        for (shape, count) in shapes::detect(history, &ops, &resolved) {
            *coverage.shapes.entry(shape).or_default() += count;
        }
        coverage
    }

    /// Adds `other`'s counts to these.
    pub fn merge(&mut self, other: &Coverage) {
        for (k, v) in &other.commands {
            *self.commands.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &other.options {
            *self.options.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &other.shapes {
            *self.shapes.entry(k).or_default() += v;
        }
        self.runs_count += other.runs_count;
    }

    /// Commands of the table never executed.
    pub fn commands_missing(&self) -> Vec<String> {
        let table = CommandTable::new(seedkv_engine::commands::FAMILIES);
        table_commands(&table)
            .into_iter()
            .filter(|name| self.commands.get(name).copied().unwrap_or(0) == 0)
            .collect()
    }

    /// Options of [`options::OPTIONS`] never executed, as `command OPTION`.
    pub fn options_missing(&self) -> Vec<String> {
        let mut missing = Vec::new();
        for (command, tokens) in options::OPTIONS {
            for token in tokens.iter() {
                let key = (command.to_string(), *token);
                if self.options.get(&key).copied().unwrap_or(0) == 0 {
                    missing.push(format!("{command} {token}"));
                }
            }
        }
        missing
    }

    /// Shapes of [`shapes::SHAPES`] never seen.
    pub fn shapes_missing(&self) -> Vec<&'static str> {
        shapes::SHAPES
            .iter()
            .copied()
            .filter(|s| self.shapes.get(s).copied().unwrap_or(0) == 0)
            .collect()
    }

    /// The report a sweep prints: one totals line, the zero rows, and with
    /// `full` every row with its count.
    pub fn report(&self, full: bool) -> String {
        let table = CommandTable::new(seedkv_engine::commands::FAMILIES);
        let commands = table_commands(&table);
        let options_count: usize = options::OPTIONS.iter().map(|(_, o)| o.len()).sum();
        let (commands_missing, options_missing, shapes_missing) = (
            self.commands_missing(),
            self.options_missing(),
            self.shapes_missing(),
        );
        let mut out = String::new();
        out.push_str(&format!(
            "coverage over {} runs\n  commands sent (executed by the engine): {} of {} in the table; \
             options: {} of {}; shapes: {} of {}\n",
            self.runs_count,
            commands.len() - commands_missing.len(),
            commands.len(),
            options_count - options_missing.len(),
            options_count,
            shapes::SHAPES.len() - shapes_missing.len(),
            shapes::SHAPES.len(),
        ));
        let zero_line = |what: &str, names: Vec<String>| -> String {
            if names.is_empty() {
                String::new()
            } else {
                format!("  {what} at zero: {}\n", names.join(", "))
            }
        };
        out.push_str(&zero_line("commands", commands_missing));
        out.push_str(&zero_line("options", options_missing));
        out.push_str(&zero_line(
            "shapes",
            shapes_missing.iter().map(|s| s.to_string()).collect(),
        ));
        if full {
            out.push_str("  command                          executions  options\n");
            for name in &commands {
                let mut line = format!(
                    "  {name:<32} {:>10}",
                    self.commands.get(name).copied().unwrap_or(0)
                );
                for token in options::options_of(name) {
                    let n = self
                        .options
                        .get(&(name.clone(), *token))
                        .copied()
                        .unwrap_or(0);
                    line.push_str(&format!("  {token}={n}"));
                }
                out.push_str(&line);
                out.push('\n');
            }
            out.push_str("  shape                                        count\n");
            for shape in shapes::SHAPES {
                out.push_str(&format!(
                    "  {shape:<44} {:>6}\n",
                    self.shapes.get(shape).copied().unwrap_or(0)
                ));
            }
        }
        out
    }
}
