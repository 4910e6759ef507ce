//! No freeze: no single execution may be charged more work than its
//! command's declared complexity allows for the sizes it touched.
//!
//! The bound of each command is the harness's own declaration
//! ([`super::complexity`]), over sizes the engine's generic execution code
//! measured around the command ([`seedkv_engine::sizes`]): arguments, the
//! values at its keys before and after, the populations it may walk. A
//! handler's own report plays no part in the bound, only in what is held
//! to it, so a loop that is super-linear where the declaration is linear
//! shows up as units beyond the bound on some seed (and one that charges
//! nothing is the cost audit's to find).
//!
//! The tail-latency checker classes commands by the engine's `O_N` flag;
//! this one ignores that flag and judges every command, fast or not,
//! against its own line of the table.
//!
//! EXEC and scripts are judged with their group: each command they ran is
//! an execution of its own (recorded right before them, with `in_exec`),
//! and the group's bound is added to theirs (a script's work includes its
//! calls'). Rejected requests (no command ran) are not judged.

use std::collections::BTreeMap;

use super::complexity::{bound_units, full_name, terms_of, Context, Term};
use crate::check::{Checker, RunFacts, Violation};
use crate::fxhash::FxHashMap;
use crate::history::{ConnId, Execution, History};

/// The checker.
pub struct NoFreeze;

impl Checker for NoFreeze {
    fn name(&self) -> &'static str {
        "no-freeze"
    }

    fn check(&self, history: &History, _facts: &RunFacts) -> Result<(), Violation> {
        check_no_freeze(history).map_err(|message| Violation {
            checker: self.name(),
            message,
        })
    }
}

/// One judged execution: its work and its bound.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judged<'n> {
    /// Index in `History::executions`.
    pub index: usize,
    /// Full command name (`slowlog|get`).
    pub name: &'n str,
    pub work_units: u64,
    /// `None`: the table declares nothing for this command.
    pub bound_units: Option<u64>,
}

/// The longest argument of any request: bounds every key's length.
fn arg_bytes_max(history: &History) -> u64 {
    history
        .ops
        .iter()
        .flat_map(|op| op.args.iter())
        .map(|a| a.len() as u64)
        .max()
        .unwrap_or(0)
}

/// Judges every execution that ran a command, in execution order, and
/// hands each to `visit` (stopping at the first `Err` it returns).
pub fn judge<E>(
    history: &History,
    mut visit: impl FnMut(&Execution, Judged<'_>) -> Result<(), E>,
) -> Result<(), E> {
    // Each (container, command) name's full name and terms, found once:
    // a name built and a table searched per execution were most of this
    // checker. Keyed by the names' addresses, which the engine's
    // `&'static` names keep (two addresses of one name just make two
    // equal entries).
    type Names = FxHashMap<(usize, usize, usize, usize), (String, Option<&'static [Term]>)>;
    let mut names = Names::default();
    let arg_bytes_max = arg_bytes_max(history);
    // Per (connection, group request): executions so far and their bounds.
    let mut groups: BTreeMap<(ConnId, u64), (u64, u64)> = BTreeMap::new();
    for (index, e) in history.executions.iter().enumerate() {
        let Some(sizes) = e.sizes.as_deref() else {
            continue;
        };
        let address = |s: &'static str| (s.as_ptr() as usize, s.len());
        let ((c_at, c_len), (n_at, n_len)) = (address(sizes.container), address(e.name));
        let (name, terms) = names.entry((c_at, c_len, n_at, n_len)).or_insert_with(|| {
            let name = full_name(sizes.container, e.name);
            let terms = terms_of(&name);
            (name, terms)
        });
        let terms = *terms;
        let groups_own =
            terms.is_some_and(|t| t.contains(&Term::Exec) || t.contains(&Term::Script));
        let (group_count, group_bound_units) = match groups_own {
            true => groups.remove(&(e.conn, e.seq_in_conn)).unwrap_or((0, 0)),
            false => (0, 0),
        };
        let cx = Context {
            arg_bytes_max,
            group_count,
            group_bound_units,
        };
        let bound = terms.map(|t| bound_units(t, sizes, &cx));
        if let Some(group) = e.in_exec {
            let g = groups.entry((e.conn, group)).or_default();
            g.0 += 1;
            g.1 = g.1.saturating_add(bound.unwrap_or(0));
        }
        visit(
            e,
            Judged {
                index,
                name,
                work_units: e.work_units,
                bound_units: bound,
            },
        )?;
    }
    Ok(())
}

/// `1234567` as `1,234,567`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The first execution charged beyond its bound, or without one.
pub fn check_no_freeze(history: &History) -> Result<(), String> {
    judge(history, |e, j| {
        let sizes = e.sizes.as_deref().expect("judged executions have sizes");
        let name = || j.name.to_uppercase();
        let Some(bound) = j.bound_units else {
            let name = name();
            return Err(format!(
                "execution #{}: {name} of conn {} request #{} has no declared complexity \
                 (add it to check::complexity::TABLE)",
                j.index, e.conn, e.seq_in_conn
            ));
        };
        if j.work_units <= bound {
            return Ok(());
        }
        let (b, a) = (&sizes.before, &sizes.after);
        let name = name();
        Err(format!(
            "execution #{}: {name} of conn {} request #{} charged {} units; bound for {} \
             args ({} bytes) over values of {} elements and {} string bytes ({} and {} \
             after), {} keys in the db, {} reply bytes{} is {}",
            j.index,
            e.conn,
            e.seq_in_conn,
            thousands(j.work_units),
            sizes.args_count,
            thousands(sizes.args_bytes),
            thousands(b.elements),
            thousands(b.string_bytes),
            thousands(a.elements),
            thousands(a.string_bytes),
            thousands(sizes.db_keys),
            thousands(sizes.reply_bytes),
            match sizes.runs {
                1 => String::new(),
                n => format!(", {n} attempts"),
            },
            thousands(bound),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use seedkv_engine::sizes::{Sizes, ValueSizes};

    fn exec(seq: u64, name: &'static str, work_units: u64, sizes: Sizes) -> Execution {
        Execution {
            conn: 3,
            seq_in_conn: seq,
            start_ns: 0,
            end_ns: 0,
            unix_ms: 0,
            name,
            flags: 0,
            work_units,
            in_exec: None,
            sizes: Some(Box::new(sizes)),
        }
    }

    fn list(elements: u64) -> ValueSizes {
        ValueSizes {
            elements,
            elements_max: elements,
            ..ValueSizes::default()
        }
    }

    fn lrem(elements: u64) -> Sizes {
        Sizes {
            runs: 1,
            args_count: 4,
            args_bytes: 16,
            keys_count: 1,
            before: list(elements),
            after: list(elements),
            ..Sizes::default()
        }
    }

    #[test]
    fn linear_work_passes_quadratic_fails() {
        let mut h = History::default();
        h.executions.push(exec(0, "lrem", 2 * 1_100, lrem(1_100)));
        assert_eq!(check_no_freeze(&h), Ok(()));
        h.executions
            .push(exec(1, "lrem", 1_100 * 1_100, lrem(1_100)));
        let err = check_no_freeze(&h).unwrap_err();
        assert!(
            err.starts_with("execution #1: LREM of conn 3 request #1 charged 1,210,000 units"),
            "{err}"
        );
    }

    #[test]
    fn constant_commands_may_not_walk_their_value() {
        let mut h = History::default();
        let sizes = Sizes {
            args_count: 2,
            args_bytes: 8,
            ..lrem(10_000)
        };
        h.executions.push(exec(0, "llen", 10_000, sizes));
        assert!(check_no_freeze(&h).unwrap_err().contains("LLEN"));
    }

    #[test]
    fn exec_is_bounded_by_its_group() {
        let mut h = History::default();
        let mut queued = exec(1, "lrange", 2_000, lrem(1_000));
        queued.in_exec = Some(2);
        h.executions.push(queued);
        let exec_sizes = Sizes {
            runs: 1,
            args_count: 1,
            args_bytes: 4,
            ..Sizes::default()
        };
        // EXEC's own work is its queue, far below the group's bound...
        h.executions.push(exec(2, "exec", 3, exec_sizes));
        assert_eq!(check_no_freeze(&h), Ok(()));
        // ...and an EXEC alone may not do the group's work.
        h.executions.push(exec(5, "exec", 2_000, exec_sizes));
        assert!(check_no_freeze(&h).unwrap_err().contains("EXEC"));
    }

    #[test]
    fn subcommands_are_named_by_their_container() {
        let mut h = History::default();
        let sizes = Sizes {
            container: "nosuch",
            ..lrem(0)
        };
        h.executions.push(exec(0, "get", 1, sizes));
        assert!(check_no_freeze(&h)
            .unwrap_err()
            .contains("NOSUCH|GET of conn 3 request #0 has no declared complexity"));
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
