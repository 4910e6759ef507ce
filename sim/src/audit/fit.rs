//! Growth exponents: the declared one (from the command table's complexity
//! text) and the measured one (a least-squares fit of log(cost) against
//! log(size)).

/// The exponent of the least-squares line through (ln x, ln y); `None`
/// with fewer than two distinct sizes. Values below 1 are taken as 1 (a
/// zero would have no logarithm).
pub fn growth_exponent(points: &[(f64, f64)]) -> Option<f64> {
    let logs: Vec<(f64, f64)> = points
        .iter()
        .map(|&(x, y)| (x.max(1.0).ln(), y.max(1.0).ln()))
        .collect();
    let count = logs.len() as f64;
    if logs.len() < 2 {
        return None;
    }
    let mean_x = logs.iter().map(|p| p.0).sum::<f64>() / count;
    let mean_y = logs.iter().map(|p| p.1).sum::<f64>() / count;
    let sxx: f64 = logs.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = logs.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// The polynomial degree a complexity text declares: the largest over its
/// `O(...)` terms, where a logarithm counts 0 and each other factor of a
/// product 1 (`O(1)` 0, `O(log(N))` 0, `O(N)` and `O(N+M)` and
/// `O(log(N)+M)` 1, `O(N*M)` 2, `O(log(N)*M)` 1). `None` when the text has
/// no `O(...)` ("Depends on subcommand.").
///
/// This is the degree in *all* of the complexity's variables at once; an
/// audit input that grows only one of them (N of `O(N*K)`, K fixed)
/// declares its own exponent instead and says why.
pub fn declared_exponent(complexity: &str) -> Option<f64> {
    let mut degree: Option<f64> = None;
    let mut rest = complexity;
    while let Some(start) = rest.find("O(") {
        let body = &rest[start + 2..];
        let end = matching_paren(body).unwrap_or(body.len());
        let term = term_degree(&body[..end]);
        degree = Some(degree.map_or(term, |d: f64| d.max(term)));
        rest = &body[end..];
    }
    degree
}

/// Index of the `)` closing an already opened parenthesis.
fn matching_paren(text: &str) -> Option<usize> {
    let mut depth = 1usize;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Degree of one term's body: the largest over its `+` summands of the
/// number of non-logarithmic factors.
fn term_degree(body: &str) -> f64 {
    split_top(body, '+')
        .iter()
        .map(|summand| {
            split_top(summand, '*')
                .iter()
                .filter(|factor| {
                    let f = factor.trim();
                    !(f.is_empty() || f == "1" || f.starts_with("log"))
                })
                .map(|factor| {
                    // `(N-K)log(N)` is N times a logarithm.
                    let f = factor.trim();
                    if f.starts_with('(') {
                        1.0
                    } else {
                        f.split_whitespace().count().min(1) as f64
                    }
                })
                .sum::<f64>()
        })
        .fold(0.0, f64::max)
}

/// Splits on `sep` outside parentheses.
fn split_top(text: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut from) = (0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            c if c == sep && depth == 0 => {
                parts.push(&text[from..i]);
                from = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&text[from..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_exponents_of_the_table_forms() {
        let cases = [
            ("O(1)", Some(0.0)),
            ("O(log(N)) with N being the number of elements", Some(0.0)),
            (
                "O(log N) where N is the number of client connections",
                Some(0.0),
            ),
            ("O(N) where N is the number of keys", Some(1.0)),
            ("O(N+M) where N is the length of the list", Some(1.0)),
            ("O(log(N)+M) with N being the number", Some(1.0)),
            ("O(log(N)*M) with N being the number", Some(1.0)),
            (
                "O(N*M) where N and M are the lengths of s1 and s2",
                Some(2.0),
            ),
            ("O(S+N) where S is the distance", Some(1.0)),
            ("O(L + (N-K)log(N)) worst case", Some(1.0)),
            ("O(K) + O(M*log(N)) where K is", Some(1.0)),
            ("O(N*K)+O(M*log(M)) worst case", Some(2.0)),
            ("Without the count argument O(1), otherwise O(N)", Some(1.0)),
            ("Depends on subcommand.", None),
        ];
        for (text, want) in cases {
            assert_eq!(declared_exponent(text), want, "{text}");
        }
    }

    #[test]
    fn fits_the_exponent_of_a_power_law() {
        let linear: Vec<(f64, f64)> = [10.0, 100.0, 1000.0]
            .iter()
            .map(|&x| (x, 3.0 * x))
            .collect();
        assert!((growth_exponent(&linear).unwrap() - 1.0).abs() < 1e-9);
        let square: Vec<(f64, f64)> = [10.0, 100.0].iter().map(|&x| (x, x * x)).collect();
        assert!((growth_exponent(&square).unwrap() - 2.0).abs() < 1e-9);
        assert_eq!(growth_exponent(&[(10.0, 5.0)]), None);
    }
}
