//! VS Code's `envFile`: a dotenv file of variables for a stdio server.
//!
//! The format is the common one: `KEY=VALUE` lines, an optional `export ` before the key,
//! blank lines and `#` comments, values optionally in single or double quotes (kept as
//! written inside them; nothing is expanded). A line that is none of these is an error naming
//! its number, rather than a variable silently missing.

use std::collections::HashSet;
use std::path::Path;

/// The largest env file read: a dotenv file is small, and this is read at start-up.
const MAX_BYTES: u64 = 1 << 20;

/// Reads and parses the env file at `path`.
pub(super) fn read(path: &Path) -> Result<Vec<(String, String)>, String> {
    let shown = path.display();
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::Read::take(file, MAX_BYTES + 1), &mut text)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if text.len() as u64 > MAX_BYTES {
        return Err(format!("{shown} is larger than {} KiB", MAX_BYTES >> 10));
    }
    parse(&text).map_err(|e| format!("{shown}: {e}"))
}

/// Parses dotenv text.
pub(super) fn parse(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut vars: Vec<(String, String)> = Vec::new();
    // A line ends at `\n`, `\r\n` or a lone `\r` (as dotenv reads them): a file saved with
    // old Mac line endings is lines, not one line whose first variable swallows the rest.
    let lines = text.split("\r\n").flat_map(|part| part.split(['\r', '\n']));
    for (number, line) in lines.enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let bad = || format!("line {}: expected KEY=VALUE", number + 1);
        let (key, value) = line.split_once('=').ok_or_else(bad)?;
        let key = key.trim();
        let valid = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(bad());
        }
        let value = value.trim();
        let value = ['"', '\'']
            .iter()
            .find_map(|&q| value.strip_prefix(q).and_then(|v| v.strip_suffix(q)))
            .unwrap_or(value);
        vars.push((key.to_owned(), value.to_owned()));
    }
    // A key given twice: the later line wins, as in shells.
    Ok(last_wins(vars))
}

/// `vars` with only the last of each name, in the order of those last ones: what removing
/// the earlier one at each repeat gives, in linear rather than quadratic time.
pub(super) fn last_wins(vars: Vec<(String, String)>) -> Vec<(String, String)> {
    let mut seen = HashSet::with_capacity(vars.len());
    let mut kept: Vec<(String, String)> = Vec::with_capacity(vars.len());
    for (name, value) in vars.into_iter().rev() {
        if !seen.contains(&name) {
            seen.insert(name.clone());
            kept.push((name, value));
        }
    }
    kept.reverse();
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_common_dotenv_shapes() {
        let text = concat!(
            "# tokens\nAPI_KEY=abc123\nexport REGION = eu-west-1\n\n",
            "QUOTED=\"a b # c\"\nSINGLE='x=y'\nEMPTY=\nAPI_KEY=later\n",
        );
        let vars = parse(text).unwrap();
        let get = |k: &str| {
            vars.iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("API_KEY"), Some("later"));
        assert_eq!(get("REGION"), Some("eu-west-1"));
        assert_eq!(get("QUOTED"), Some("a b # c"));
        assert_eq!(get("SINGLE"), Some("x=y"));
        assert_eq!(get("EMPTY"), Some(""));
        assert_eq!(vars.len(), 5);
        // The order is that of the last line of each name.
        assert_eq!(vars.last().map(|(k, _)| k.as_str()), Some("API_KEY"));
    }

    #[test]
    fn many_variables_parse_in_linear_time() {
        let text: String = (0..200_000).map(|i| format!("K{i}=v\n")).collect();
        let start = std::time::Instant::now();
        let vars = parse(&text).unwrap();
        let took = start.elapsed();
        assert_eq!(vars.len(), 200_000);
        // Removing each earlier definition by a scan of all of them took minutes here.
        assert!(took < std::time::Duration::from_secs(5), "{took:?}");
    }

    #[test]
    fn a_lone_carriage_return_ends_a_line() {
        let vars = parse("A=1\rB=\"two\"\r\nC=3\r").unwrap();
        let pair = |k: &str, v: &str| (k.to_owned(), v.to_owned());
        assert_eq!(vars, [pair("A", "1"), pair("B", "two"), pair("C", "3")]);
        assert_eq!(
            parse("A=1\r\n\rB C").unwrap_err(),
            "line 3: expected KEY=VALUE"
        );
    }

    #[test]
    fn a_line_that_is_not_a_variable_is_named() {
        assert_eq!(
            parse("A=1\njust words\n").unwrap_err(),
            "line 2: expected KEY=VALUE"
        );
        assert_eq!(
            parse("BAD KEY=1").unwrap_err(),
            "line 1: expected KEY=VALUE"
        );
    }
}

#[cfg(test)]
#[path = "../../tests/fuzz/internal/env_file.rs"]
mod fuzz;
