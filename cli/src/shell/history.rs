//! The shell's history: what of a line is kept (never the value of an argument its name or
//! its tool's schema marks secret), and the file it is kept in, written owner-only by umcp's
//! private-file writer in the line editor's own format.

use std::path::Path;

use serde_json::Value;
use umcp::{Redacted, StdioConfig};

use crate::secret_words::secret_name;

/// `line` as the history keeps it: as typed, or, when it gives a secret argument
/// (`password=…`, a key the tool's schema marks secret, such a member of a JSON object), with
/// each such value replaced by `<redacted>` and the words quoted as a shell reads them.
/// `secret` says whether the schema of a tool marks an argument secret.
pub fn kept(line: &str, secret: &dyn Fn(&str, &str) -> bool) -> String {
    let Ok(split) = StdioConfig::from_command_line(line.trim()) else {
        return line.to_owned();
    };
    let mut words = vec![split.get_command().to_owned()];
    words.extend(split.get_args().iter().cloned());
    // Only a tool has a schema to mark its arguments.
    let tool = words
        .iter()
        .position(|w| w == "call")
        .and_then(|at| words.get(at + 1))
        .cloned();
    let marked = |key: &str| tool.as_deref().is_some_and(|tool| secret(tool, key));
    let mut changed = false;
    for word in &mut words {
        if let Some(hidden) = hidden(word, &|key| secret_name(key) || marked(key)) {
            *word = hidden;
            changed = true;
        }
    }
    match changed {
        true => words
            .iter()
            .map(|w| quoted(w))
            .collect::<Vec<_>>()
            .join(" "),
        false => line.to_owned(),
    }
}

/// `word` with its secret value hidden, when it gives one: `KEY=value` for a secret `KEY`,
/// or a JSON object with secret members.
fn hidden(word: &str, secret: &dyn Fn(&str) -> bool) -> Option<String> {
    if let Ok(Value::Object(mut members)) = serde_json::from_str::<Value>(word) {
        let mut changed = false;
        for (key, value) in members.iter_mut() {
            if secret(key) && !value.is_null() {
                *value = Value::String(Redacted::MARK.to_owned());
                changed = true;
            }
        }
        return changed.then(|| Value::Object(members).to_string());
    }
    let (key, _) = word.split_once('=')?;
    let plain = !key.is_empty() && !key.starts_with('-') && !key.contains(char::is_whitespace);
    (plain && secret(key)).then(|| format!("{key}={}", Redacted::MARK))
}

/// `word` as a POSIX shell (and the shell's own line splitter) reads it back as itself.
fn quoted(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "@%+=:,./_-<>".contains(c));
    match plain {
        true => word.to_owned(),
        false => format!("'{}'", word.replace('\'', r"'\''")),
    }
}

/// Writes `entries`, oldest first, to `path` in the line editor's format (`#V2`, then a line
/// each with `\` and line breaks escaped), owner-only, replacing the file whole.
pub fn save<'a>(path: &Path, entries: impl Iterator<Item = &'a str>) -> std::io::Result<()> {
    let mut text = String::from("#V2\n");
    for entry in entries {
        text.push_str(&entry.replace('\\', "\\\\").replace('\n', "\\n"));
        text.push('\n');
    }
    umcp::private_file::replace(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema_marks(tool: &str, key: &str) -> bool {
        tool == "login" && key == "pin"
    }

    #[test]
    fn secret_arguments_are_not_kept() {
        let kept = |line: &str| kept(line, &schema_marks);
        assert_eq!(
            kept("call login user=ada password=hunter2"),
            "call login user=ada password=<redacted>"
        );
        assert_eq!(
            kept("call login pin=1234 user=ada"),
            "call login pin=<redacted> user=ada"
        );
        assert_eq!(kept("call other pin=1234"), "call other pin=1234");
        assert_eq!(
            kept(r#"--json call login '{"api_key": "sk-1", "n": 2}'"#),
            r#"--json call login '{"api_key":"<redacted>","n":2}'"#
        );
        // Lines with nothing secret are kept as typed.
        assert_eq!(kept("call add  a=2 'b=3'"), "call add  a=2 'b=3'");
        assert_eq!(kept("tools --json"), "tools --json");
    }

    #[test]
    fn the_history_file_is_owner_only_and_in_the_editors_format() {
        let dir = std::env::temp_dir().join(format!("umcp-history-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("shell_history");
        save(&path, ["tools", r"call echo message='a\b'"].into_iter()).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "#V2\ntools\ncall echo message='a\\\\b'\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
