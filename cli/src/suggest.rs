//! The closest known word to a mistyped command or option, for a `did you mean` hint.

/// The candidate `word` most likely stands for: the only one it begins, else the nearest
/// within two edits (fewer for short words, where two edits reach anything) when no other
/// is as near.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let candidates: Vec<&str> = candidates.into_iter().collect();
    let mut begun = candidates.iter().filter(|c| c.starts_with(word));
    if let (Some(only), None, false) = (begun.next(), begun.next(), word.is_empty()) {
        return Some(only);
    }
    let most = (word.chars().count() / 2).min(2);
    let mut scored: Vec<(usize, &str)> = candidates
        .iter()
        .map(|c| (distance(word, c), *c))
        .filter(|(d, _)| *d <= most)
        .collect();
    scored.sort_unstable();
    match scored.as_slice() {
        [(d, best), rest @ ..] if rest.first().is_none_or(|(next, _)| next > d) => Some(best),
        _ => None,
    }
}

/// The edits (insert, delete, replace, or swap two neighbours) that turn `a` into `b`: a
/// swap counts once, since `pign` for `ping` is one slip of the fingers.
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // Three rows of the table: two back (for swaps), the last, and the one being filled.
    let mut before: Vec<usize> = Vec::new();
    let mut last: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut row = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (last[j] + 1).min(row[j - 1] + 1).min(last[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(before[j - 2] + 1);
            }
        }
        before = std::mem::replace(&mut last, row);
    }
    last[b.len()]
}

#[cfg(test)]
mod tests {
    use super::{closest, distance};

    const COMMANDS: [&str; 6] = ["tools", "templates", "prompt", "prompts", "ping", "call"];

    #[test]
    fn distance_counts_edits_and_swaps() {
        assert_eq!(distance("tols", "tools"), 1);
        assert_eq!(distance("pign", "ping"), 1);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("same", "same"), 0);
    }

    #[test]
    fn the_closest_command_when_one_stands_out() {
        assert_eq!(closest("tols", COMMANDS), Some("tools"));
        assert_eq!(closest("pign", COMMANDS), Some("ping"));
        assert_eq!(closest("tem", COMMANDS), Some("templates"));
        assert_eq!(closest("promtps", COMMANDS), Some("prompts"));
        // `prom` begins two, but is nearer one; `p` begins three and is near none.
        assert_eq!(closest("prom", COMMANDS), Some("prompt"));
        assert_eq!(closest("p", COMMANDS), None);
        // Two edits reach any two-letter word: nothing is offered for `ls`.
        assert_eq!(closest("ls", COMMANDS), None);
        assert_eq!(closest("frobnicate", COMMANDS), None);
        assert_eq!(closest("", COMMANDS), None);
    }
}
