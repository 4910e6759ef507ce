//! LCS: the longest common subsequence of two strings, by Redis's
//! dynamic-programming table and backwards walk (`lcsCommand`).

use super::{c_str, string_at, WrongType, NOT_AN_INTEGER, READ_SLOW, STRING, SYNTAX_ERROR};
use crate::cmd::{flags::*, CommandSpec, Ctx, Lookup};
use crate::util::parse_i64_strict;

/// LCS table cells per unit of work: a cell is a compare and a max, about a
/// sixteenth of the cost of visiting a key.
const LCS_CELLS_PER_WORK_UNIT: u64 = 16;

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    name: "lcs",
    arity: -3,
    // O_N: the table is quadratic in the inputs (up to proto-max-bulk-len bytes).
    flags: READONLY | O_N,
    last_key: 2,
    acl_categories: READ_SLOW,
    summary: "Find longest common substring",
    since: "7.0.0",
    complexity: "O(N*M) where N and M are the lengths of s1 and s2, respectively",
    handler: Some(lcs),
    ..STRING
}];

/// LCS options.
#[derive(Clone, Copy, Debug, Default)]
struct LcsOptions {
    idx: bool,
    len: bool,
    with_match_len: bool,
    min_match_len: u64,
}

/// One matched range: `(a_start, a_end)`, `(b_start, b_end)`, inclusive.
type LcsMatch = ((u32, u32), (u32, u32));

fn lcs(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    // Both keys are looked up (each miss raising `keymiss`) before the
    // type check, which comes before the options, as in Redis.
    let mut strings: [Result<Vec<u8>, WrongType>; 2] = [Ok(Vec::new()), Ok(Vec::new())];
    for (slot, key) in strings.iter_mut().zip(&args[1..3]) {
        *slot = string_at(ctx, key, Lookup::Read)
            .map(|s| s.map(|s| s.as_bytes().to_vec()).unwrap_or_default());
    }
    let [Ok(a), Ok(b)] = strings else {
        return ctx.error("ERR The specified keys must contain string values");
    };
    let mut opts = LcsOptions::default();
    let mut j = 3;
    while j < args.len() {
        let opt = c_str(&args[j]);
        let more = j + 1 < args.len();
        if opt.eq_ignore_ascii_case(b"idx") {
            opts.idx = true;
        } else if opt.eq_ignore_ascii_case(b"len") {
            opts.len = true;
        } else if opt.eq_ignore_ascii_case(b"withmatchlen") {
            opts.with_match_len = true;
        } else if opt.eq_ignore_ascii_case(b"minmatchlen") && more {
            let Some(v) = parse_i64_strict(&args[j + 1]) else {
                return ctx.error(NOT_AN_INTEGER);
            };
            opts.min_match_len = v.max(0) as u64;
            j += 1;
        } else {
            return ctx.error(SYNTAX_ERROR);
        }
        j += 1;
    }
    if opts.idx && opts.len {
        return ctx.error("ERR If you want both the length and indexes, please just use IDX.");
    }
    if a.len() as u64 >= u32::MAX as u64 - 1 || b.len() as u64 >= u32::MAX as u64 - 1 {
        return ctx.error("ERR String too long for LCS");
    }
    let cells = (a.len() as u64 + 1) * (b.len() as u64 + 1);
    if cells * 4 > ctx.server.config.proto_max_bulk_len_bytes as u64 {
        return ctx
            .error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
    }
    ctx.work(cells / LCS_CELLS_PER_WORK_UNIT);
    let table = LcsTable::build(&a, &b);
    let (common, matches) = table.walk(&a, &b, opts);
    let mut w = ctx.w();
    if opts.idx {
        w.map_len(2);
        w.bulk_str("matches");
        w.array_len(matches.len());
        for ((a_start, a_end), (b_start, b_end)) in matches {
            w.array_len(2 + opts.with_match_len as usize);
            w.array_len(2);
            w.int(a_start as i64);
            w.int(a_end as i64);
            w.array_len(2);
            w.int(b_start as i64);
            w.int(b_end as i64);
            if opts.with_match_len {
                w.int((a_end - a_start + 1) as i64);
            }
        }
        w.bulk_str("len");
        w.int(table.at(a.len(), b.len()) as i64);
    } else if opts.len {
        w.int(table.at(a.len(), b.len()) as i64);
    } else {
        w.bulk(&common);
    }
}

/// The dynamic-programming table of LCS lengths: cell (i, j) holds the LCS
/// length of `a[..i]` and `b[..j]`.
struct LcsTable {
    cells: Vec<u32>,
    width: usize,
}

impl LcsTable {
    fn build(a: &[u8], b: &[u8]) -> LcsTable {
        let width = b.len() + 1;
        let mut cells = vec![0u32; (a.len() + 1) * width];
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                cells[i * width + j] = if a[i - 1] == b[j - 1] {
                    cells[(i - 1) * width + j - 1] + 1
                } else {
                    cells[(i - 1) * width + j].max(cells[i * width + j - 1])
                };
            }
        }
        LcsTable { cells, width }
    }

    fn at(&self, i: usize, j: usize) -> u32 {
        self.cells[i * self.width + j]
    }

    /// Walks back from the end as Redis does, producing the common
    /// subsequence and the matched ranges (last ones first) that are at
    /// least `min_match_len` long.
    fn walk(&self, a: &[u8], b: &[u8], opts: LcsOptions) -> (Vec<u8>, Vec<LcsMatch>) {
        let total = self.at(a.len(), b.len()) as usize;
        let mut common = vec![0u8; total];
        let mut matches = Vec::new();
        let compute = opts.idx || !opts.len;
        let (mut i, mut j, mut idx) = (a.len(), b.len(), total);
        // The range being grown backwards: (a_start, a_end, b_start, b_end).
        let mut range: Option<(usize, usize, usize, usize)> = None;
        while compute && i > 0 && j > 0 {
            let mut emit = false;
            if a[i - 1] == b[j - 1] {
                common[idx - 1] = a[i - 1];
                match &mut range {
                    None => range = Some((i - 1, i - 1, j - 1, j - 1)),
                    Some((a_start, _, b_start, _)) if *a_start == i && *b_start == j => {
                        *a_start -= 1;
                        *b_start -= 1;
                    }
                    Some(_) => emit = true,
                }
                if range.is_some_and(|(a_start, _, b_start, _)| a_start == 0 || b_start == 0) {
                    emit = true;
                }
                idx -= 1;
                i -= 1;
                j -= 1;
            } else {
                if self.at(i - 1, j) > self.at(i, j - 1) {
                    i -= 1;
                } else {
                    j -= 1;
                }
                emit = range.is_some();
            }
            if emit {
                if let Some((a_start, a_end, b_start, b_end)) = range.take() {
                    let len = (a_end - a_start + 1) as u64;
                    if opts.idx && (opts.min_match_len == 0 || len >= opts.min_match_len) {
                        matches.push((
                            (a_start as u32, a_end as u32),
                            (b_start as u32, b_end as u32),
                        ));
                    }
                }
            }
        }
        (common, matches)
    }
}
