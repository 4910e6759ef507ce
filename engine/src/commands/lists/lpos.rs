//! LPOS: the index of matching elements, with RANK, COUNT and MAXLEN as
//! Redis 7.0 parses and applies them (`lposCommand`), including its
//! wrapping arithmetic on a LONG_MIN rank.

use super::{as_list, c_str, NOT_AN_INTEGER, SYNTAX_ERROR};
use crate::cmd::{Ctx, WrongType};
use crate::types::list::Direction;
use crate::util::parse_i64_strict;
use crate::value::WRONGTYPE;

const RANK_ZERO: &str = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list";
const COUNT_NEGATIVE: &str = "ERR COUNT can't be negative";
const MAXLEN_NEGATIVE: &str = "ERR MAXLEN can't be negative";

/// LPOS options, as Redis parses them (`lposCommand`).
struct LposOptions {
    rank: i64,
    /// None when COUNT was not given (a single index reply).
    count: Option<i64>,
    /// 0: unlimited.
    maxlen: i64,
}

fn parse_lpos_options(args: &[Vec<u8>]) -> Result<LposOptions, &'static str> {
    let mut o = LposOptions {
        rank: 1,
        count: None,
        maxlen: 0,
    };
    let mut j = 3;
    while j < args.len() {
        let opt = c_str(&args[j]);
        let Some(arg) = args.get(j + 1) else {
            return Err(SYNTAX_ERROR);
        };
        if opt.eq_ignore_ascii_case(b"rank") {
            // Redis 7.0 accepts LONG_MIN here; see `lpos` for what follows.
            o.rank = parse_i64_strict(arg).ok_or(NOT_AN_INTEGER)?;
            if o.rank == 0 {
                return Err(RANK_ZERO);
            }
        } else if opt.eq_ignore_ascii_case(b"count") {
            let n = parse_i64_strict(arg).filter(|&n| n >= 0);
            o.count = Some(n.ok_or(COUNT_NEGATIVE)?);
        } else if opt.eq_ignore_ascii_case(b"maxlen") {
            let n = parse_i64_strict(arg).filter(|&n| n >= 0);
            o.maxlen = n.ok_or(MAXLEN_NEGATIVE)?;
        } else {
            return Err(SYNTAX_ERROR);
        }
        j += 2;
    }
    Ok(o)
}

pub(super) fn lpos(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let o = match parse_lpos_options(args) {
        Ok(o) => o,
        Err(e) => return ctx.error(e),
    };
    // A negative rank searches from the tail. Like Redis (C `long`), the
    // negation of LONG_MIN wraps and stays negative: every match then
    // counts as reaching the rank.
    let (rank, direction) = if o.rank < 0 {
        (o.rank.wrapping_neg(), Direction::Backward)
    } else {
        (o.rank, Direction::Forward)
    };
    let (value, mut w) = ctx.lookup_read_and_writer(&args[1]);
    let list = match as_list(value) {
        Err(WrongType) => return w.error(WRONGTYPE),
        Ok(None) if o.count.is_some() => return w.array_len(0),
        Ok(None) => return w.null(),
        Ok(Some(list)) => list,
    };
    let len = list.len();
    let start = match direction {
        Direction::Forward => 0,
        Direction::Backward => len.saturating_sub(1),
    };
    let mut found = Vec::new();
    let mut matches: i64 = 0;
    let mut visited: usize = 0;
    for (index, entry) in list.iter_from(start, direction).enumerate() {
        if o.maxlen != 0 && index as i64 >= o.maxlen {
            break;
        }
        visited += 1;
        if entry != args[2].as_slice() {
            continue;
        }
        matches += 1;
        if matches < rank {
            continue;
        }
        found.push(match direction {
            Direction::Forward => index,
            Direction::Backward => len - index - 1,
        });
        match o.count {
            None => break,
            Some(count) => {
                if count != 0 && matches.wrapping_sub(rank).wrapping_add(1) >= count {
                    break;
                }
            }
        }
    }
    match o.count {
        Some(_) => {
            w.array_len(found.len());
            for &i in &found {
                w.int(i as i64);
            }
        }
        None => match found.first() {
            Some(&i) => w.int(i as i64),
            None => w.null(),
        },
    }
    ctx.work(visited as u64);
}
