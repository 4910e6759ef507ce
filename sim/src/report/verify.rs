//! Reads the operator's history back, checks every reply, and finds the
//! measured operations in it.
//!
//! Seed 004's lesson: a benchmark that ignores errors measures the speed of
//! failure. So no figure is printed unless every request was answered
//! without an error, the fill produced exactly the promised data (DBSIZE,
//! HLEN, the HSET counts), and the heavy operations returned what they
//! must (KEYS and SCAN every key, DEL and UNLINK one key).

use std::collections::HashSet;

use seedkv_engine::resp::Frame;

use super::script::{string_key, GAP_NS, WINDOW_NS_MIN};
use crate::history::{History, Op, TimeNs};

/// What the run was checked against, printed under the table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Checked {
    pub replies_count: u64,
    pub errors_count: u64,
    pub dbsize_filled: i64,
    pub hlen_filled: i64,
    pub hlen_refilled: i64,
    pub keys_all_count: usize,
    pub keys_prefix_count: usize,
    pub scan_calls: usize,
    pub scan_distinct_keys: usize,
    pub dbsize_end: i64,
}

/// One measured operation as it ran: `None` for the idle window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    pub operation: String,
    pub duration_ns: Option<TimeNs>,
    pub window_start_ns: TimeNs,
    pub window_end_ns: TimeNs,
}

impl Span {
    /// An operation from its first request to its last reply, watched for
    /// at least [`WINDOW_NS_MIN`].
    pub fn of(operation: String, start_ns: TimeNs, end_ns: TimeNs) -> Span {
        debug_assert!(start_ns <= end_ns);
        Span {
            operation,
            duration_ns: Some(end_ns - start_ns),
            window_start_ns: start_ns,
            window_end_ns: end_ns.max(start_ns + WINDOW_NS_MIN),
        }
    }
}

/// The operator's requests in order, consumed step by step.
struct Script<'a> {
    ops: Vec<&'a Op>,
    next: usize,
}

impl<'a> Script<'a> {
    /// The next request, which must be a `name`.
    fn take(&mut self, name: &str) -> Result<&'a Op, String> {
        let op = self
            .ops
            .get(self.next)
            .ok_or_else(|| format!("the script ended before {name}"))?;
        if !op.args[0].eq_ignore_ascii_case(name.as_bytes()) {
            return Err(format!(
                "expected {name}, found {}",
                String::from_utf8_lossy(&op.args[0])
            ));
        }
        self.next += 1;
        Ok(op)
    }

    /// Every consecutive `name` request from here (at least one).
    fn take_run(&mut self, name: &str) -> Result<Vec<&'a Op>, String> {
        let mut run = vec![self.take(name)?];
        while let Ok(op) = self.take(name) {
            run.push(op);
        }
        Ok(run)
    }
}

fn reply(op: &Op) -> &Frame {
    // Every op has a reply: `count_errors` refused the run otherwise.
    &op.complete.as_ref().expect("checked by count_errors").1
}

fn complete_ns(op: &Op) -> TimeNs {
    op.complete.as_ref().map_or(op.invoke_ns, |c| c.0)
}

fn integer(op: &Op) -> Result<i64, String> {
    match reply(op) {
        Frame::Integer(n) => Ok(*n),
        other => Err(format!(
            "{} replied {}, not an integer",
            String::from_utf8_lossy(&op.args[0]),
            crate::world::frame_summary(other)
        )),
    }
}

fn expect_integer(op: &Op, what: &str, want: i64) -> Result<i64, String> {
    let n = integer(op)?;
    if n != want {
        return Err(format!("{what} is {n}, expected {want}"));
    }
    Ok(n)
}

fn array_len(op: &Op) -> Result<&[Frame], String> {
    match reply(op) {
        Frame::Array(items) => Ok(items),
        other => Err(format!(
            "KEYS replied {}",
            crate::world::frame_summary(other)
        )),
    }
}

/// Replies that are errors (or never came), over every client; the first
/// one described.
pub fn count_errors(history: &History) -> (u64, u64, Option<String>) {
    let mut replies_count = 0;
    let mut errors_count = 0;
    let mut first = None;
    for op in &history.ops {
        let bad = match &op.complete {
            None => Some("no reply".to_string()),
            Some((_, Frame::Error(e))) => Some(String::from_utf8_lossy(e).into_owned()),
            Some(_) => None,
        };
        replies_count += u64::from(op.complete.is_some());
        if let Some(bad) = bad {
            errors_count += 1;
            first.get_or_insert_with(|| {
                format!("{}: {bad}", crate::check::pipeline::render_args(&op.args))
            });
        }
    }
    (replies_count, errors_count, first)
}

/// How many of `k:0` .. `k:<n-1>` match `k:1*`: the numbers whose decimal
/// form starts with 1, [10^d, 2·10^d) for every d.
pub fn prefix_one_count(n: u64) -> u64 {
    let mut count = 0;
    let mut low: u64 = 1;
    while low < n {
        count += n.min(2 * low) - low;
        low = match low.checked_mul(10) {
            Some(l) => l,
            None => break,
        };
    }
    count
}

/// Checks the operator's history (client `operator`) and returns the
/// measured spans, idle window first.
pub fn verify(
    history: &History,
    operator: u32,
    keys_count: u64,
    hash_fields_count: u64,
) -> Result<(Vec<Span>, Checked), String> {
    let (replies_count, errors_count, first_error) = count_errors(history);
    if errors_count > 0 {
        return Err(format!(
            "{errors_count} error replies (first: {})",
            first_error.unwrap_or_default()
        ));
    }
    let n = keys_count as i64;
    let m = hash_fields_count as i64;
    let mut script = Script {
        ops: history
            .ops
            .iter()
            .filter(|o| o.client == operator)
            .collect(),
        next: 0,
    };
    let mut checked = Checked {
        replies_count,
        ..Checked::default()
    };
    let mut spans = Vec::new();

    let msets = script.take_run("MSET")?;
    let keys_sent: usize = msets.iter().map(|o| (o.args.len() - 1) / 2).sum();
    if keys_sent as u64 != keys_count {
        return Err(format!("MSET sent {keys_sent} keys, expected {n}"));
    }
    if let Some(op) = msets
        .iter()
        .find(|o| !matches!(reply(o), Frame::Simple(s) if s == b"OK"))
    {
        return Err(format!(
            "MSET replied {}",
            crate::world::frame_summary(reply(op))
        ));
    }
    check_hset(&script.take_run("HSET")?, m)?;
    checked.dbsize_filled = expect_integer(script.take("DBSIZE")?, "DBSIZE after the fill", n + 1)?;
    let hlen = script.take("HLEN")?;
    checked.hlen_filled = expect_integer(hlen, "HLEN after the fill", m)?;
    let idle_start_ns = complete_ns(hlen) + GAP_NS;
    spans.push(Span {
        operation: "(nothing)".into(),
        duration_ns: None,
        window_start_ns: idle_start_ns,
        window_end_ns: idle_start_ns + WINDOW_NS_MIN,
    });

    let keys_prefix = script.take("KEYS")?;
    checked.keys_prefix_count = array_len(keys_prefix)?.len();
    let want = prefix_one_count(keys_count) as usize;
    if checked.keys_prefix_count != want {
        return Err(format!(
            "KEYS k:1* returned {} keys, expected {want}",
            checked.keys_prefix_count
        ));
    }
    spans.push(Span::of(
        "KEYS k:1*".into(),
        keys_prefix.invoke_ns,
        complete_ns(keys_prefix),
    ));

    let keys_all = script.take("KEYS")?;
    checked.keys_all_count = array_len(keys_all)?.len();
    if checked.keys_all_count as i64 != n + 1 {
        return Err(format!(
            "KEYS * returned {} keys, expected {}",
            checked.keys_all_count,
            n + 1
        ));
    }
    spans.push(Span::of(
        "KEYS *".into(),
        keys_all.invoke_ns,
        complete_ns(keys_all),
    ));

    let scans = script.take_run("SCAN")?;
    checked.scan_calls = scans.len();
    checked.scan_distinct_keys = scan_distinct_keys(&scans, keys_count)?;
    spans.push(Span::of(
        format!("SCAN COUNT 1000 ({} calls)", scans.len()),
        scans[0].invoke_ns,
        complete_ns(scans[scans.len() - 1]),
    ));

    let del = script.take("DEL")?;
    expect_integer(del, "DEL's reply", 1)?;
    spans.push(Span::of(
        format!("DEL of the {m}-field hash"),
        del.invoke_ns,
        complete_ns(del),
    ));

    check_hset(&script.take_run("HSET")?, m)?;
    expect_integer(script.take("DBSIZE")?, "DBSIZE after the refill", n + 1)?;
    checked.hlen_refilled = expect_integer(script.take("HLEN")?, "HLEN after the refill", m)?;
    let unlink = script.take("UNLINK")?;
    expect_integer(unlink, "UNLINK's reply", 1)?;
    spans.push(Span::of(
        format!("UNLINK of the {m}-field hash"),
        unlink.invoke_ns,
        complete_ns(unlink),
    ));

    checked.dbsize_end = expect_integer(script.take("DBSIZE")?, "DBSIZE at the end", n)?;
    expect_integer(script.take("EXISTS")?, "EXISTS of the unlinked hash", 0)?;
    if script.next != script.ops.len() {
        return Err("the operator sent more than its script".into());
    }
    checked.errors_count = errors_count;
    Ok((spans, checked))
}

/// The HSETs of one fill created `m` fields in all.
fn check_hset(hsets: &[&Op], m: i64) -> Result<(), String> {
    let mut created = 0;
    for op in hsets {
        created += integer(op)?;
    }
    if created != m {
        return Err(format!("HSET created {created} fields, expected {m}"));
    }
    Ok(())
}

/// The iteration ended on cursor 0 and returned every key at least once
/// (nothing was written meanwhile, so every key was there throughout).
fn scan_distinct_keys(scans: &[&Op], keys_count: u64) -> Result<usize, String> {
    let mut seen: HashSet<&[u8]> = HashSet::with_capacity(keys_count as usize + 1);
    let mut last_cursor: &[u8] = b"";
    for op in scans {
        let Frame::Array(items) = reply(op) else {
            return Err(format!(
                "SCAN replied {}",
                crate::world::frame_summary(reply(op))
            ));
        };
        let (Some(Frame::Bulk(cursor)), Some(Frame::Array(keys))) = (items.first(), items.get(1))
        else {
            return Err(format!(
                "SCAN replied {}",
                crate::world::frame_summary(reply(op))
            ));
        };
        last_cursor = cursor;
        for key in keys {
            if let Frame::Bulk(k) = key {
                seen.insert(k);
            }
        }
    }
    if last_cursor != b"0" {
        return Err("SCAN stopped before its cursor came back to 0".into());
    }
    let missing = (0..keys_count)
        .map(string_key)
        .filter(|k| !seen.contains(k.as_slice()))
        .count();
    if missing > 0 || seen.len() as u64 != keys_count + 1 {
        return Err(format!(
            "SCAN returned {} distinct keys ({missing} of k:0..k:{} missing), expected {}",
            seen.len(),
            keys_count,
            keys_count + 1
        ));
    }
    Ok(seen.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_one_counts_numbers_starting_with_one() {
        let by_hand = |n: u64| (0..n).filter(|i| i.to_string().starts_with('1')).count() as u64;
        for n in [
            0, 1, 2, 10, 11, 19, 20, 99, 100, 150, 1_999, 2_000, 20_000, 123_456,
        ] {
            assert_eq!(prefix_one_count(n), by_hand(n), "n = {n}");
        }
        assert_eq!(prefix_one_count(2_000_000), 1_111_111);
    }
}
