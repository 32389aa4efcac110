//! The words a caller sends a session, made to mean there what they mean here: what `call`
//! and `prompt` read from stdin and files (`-`, `@FILE`, `KEY=@FILE`) is read in, by the
//! caller, whose stdin and working directory they are, and `--save DIR` is made absolute.

use std::path::Path;

use crate::arguments::{self, Stdin};
use crate::exit::{usage, Exit};
use crate::spec;

/// `words` (the command line, without the program's name) as the session is to get them;
/// `-` reads `stdin`.
pub fn for_session(words: Vec<String>, stdin: Stdin<'_>) -> Result<Vec<String>, Exit> {
    let mut out = Vec::with_capacity(words.len());
    let mut positional = Vec::new();
    let mut words = words.into_iter();
    while let Some(word) = words.next() {
        if word == "--" {
            positional.extend(words.by_ref());
            break;
        }
        let Some(long) = word.strip_prefix("--") else {
            match word.starts_with('-') && word != "-" {
                true => out.push(word),
                false => positional.push(word),
            }
            continue;
        };
        let (name, inline) = match long.split_once('=') {
            Some((name, value)) => (name.to_owned(), Some(value.to_owned())),
            None => (long.to_owned(), None),
        };
        let takes_value = spec::flag_named(&name).is_some_and(|f| f.value.is_some());
        let value = match (takes_value, inline) {
            (true, Some(value)) => Some(value),
            (true, None) => words.next(),
            (false, _) => {
                out.push(word);
                continue;
            }
        };
        let value = match (name.as_str(), value) {
            ("save", Some(dir)) => Some(absolute(&dir)?),
            (_, value) => value,
        };
        out.push(format!("--{name}"));
        out.extend(value);
    }
    let reads = matches!(
        positional.first().map(String::as_str),
        Some("call" | "prompt")
    );
    if reads && positional.len() > 2 {
        let given: Vec<&str> = positional[2..].iter().map(String::as_str).collect();
        let read = arguments::resolve(&given, stdin).map_err(usage)?;
        positional.truncate(2);
        positional.extend(read);
    }
    out.push("--".to_owned());
    out.extend(positional);
    Ok(out)
}

/// `dir` as an absolute path, from the caller's working directory.
fn absolute(dir: &str) -> Result<String, Exit> {
    std::path::absolute(Path::new(dir))
        .map(|p| p.to_string_lossy().into_owned())
        .map_err(|e| usage(format!("--save {dir}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &[&str]) -> Vec<String> {
        line.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn files_are_read_in_and_options_kept() {
        let file = std::env::temp_dir().join(format!("umcp-words-{}.txt", std::process::id()));
        std::fs::write(&file, "from a file").unwrap();
        let note = format!("note=@{}", file.display());
        let line = [
            "--session",
            "s",
            "--json",
            "call",
            "echo",
            &note,
            "--timeout=5",
            "n:=2",
        ];
        let sent = for_session(words(&line), Stdin::Refused("no")).unwrap();
        assert_eq!(
            sent,
            words(&[
                "--session",
                "s",
                "--json",
                "--timeout",
                "5",
                "--",
                "call",
                "echo",
                "note=from a file",
                "n:=2"
            ])
        );
        std::fs::remove_file(file).unwrap();
        let line = ["--save", "out", "-v", "call", "t"];
        let saved = for_session(words(&line), Stdin::Refused("no")).unwrap();
        assert!(Path::new(&saved[1]).is_absolute(), "{saved:?}");
        assert_eq!(saved[2], "-v");
        // Only call's and prompt's arguments are read.
        let kept = for_session(words(&["read", "@x"]), Stdin::Refused("no")).unwrap();
        assert_eq!(kept, words(&["--", "read", "@x"]));
    }
}
