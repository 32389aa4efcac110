//! [`StdioConfig::from_command_line`]: a command line split into words the POSIX shell way,
//! without running a shell.

use crate::error::{Error, Result};

use super::StdioConfig;

impl StdioConfig {
    /// A server described by one command line, as written in a README or a terminal:
    /// `npx -y @modelcontextprotocol/server-filesystem '/home/me/My Documents'`.
    ///
    /// The line is split into words as a POSIX shell splits them, and nothing else: spaces,
    /// tabs and newlines separate words; `'…'` keeps everything literally; `"…"` keeps
    /// everything except that a backslash escapes `"`, `\`, `$` and `` ` ``; a backslash
    /// outside quotes takes the next character literally, and a backslash before a newline
    /// joins lines. No shell is run and nothing is expanded: `$VAR`, `~`, `*` and `|` are
    /// passed on as written. Leading `NAME=value` words set variables for the server, as a
    /// shell does (`GITHUB_TOKEN=… npx -y server`; see [`StdioConfig::env`]). The first word
    /// after them is the command, found as [`StdioConfig::new`] finds it.
    ///
    /// ```
    /// use umcp::StdioConfig;
    ///
    /// let config = StdioConfig::from_command_line(r#"npx -y server --flag 'a b' "c \"d\"" $HOME"#)?;
    /// assert_eq!(config.get_command(), "npx");
    /// assert_eq!(config.get_args(), ["-y", "server", "--flag", "a b", "c \"d\"", "$HOME"]);
    ///
    /// let config = StdioConfig::from_command_line("API_KEY='a b' node server.js")?;
    /// assert_eq!(config.get_command(), "node");
    /// assert_eq!(config.get_envs(), [("API_KEY".to_owned(), "a b".to_owned())]);
    /// # Ok::<(), umcp::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for an empty line (or one of variables only), an unterminated quote
    /// or a trailing backslash.
    pub fn from_command_line(line: &str) -> Result<StdioConfig> {
        let words = split_marked(line).map_err(|e| Error::Config(format!("{e} in `{line}`")))?;
        let at = words.iter().position(|w| w.assignment.is_none());
        let Some(at) = at else {
            return Err(Error::Config(format!("no command in `{line}`")));
        };
        let mut config = StdioConfig::new(words[at].text.clone())
            .args(words[at + 1..].iter().map(|w| w.text.clone()));
        for word in &words[..at] {
            if let Some(eq) = word.assignment {
                config = config.env(&word.text[..eq], &word.text[eq + 1..]);
            }
        }
        Ok(config)
    }
}

/// A word of a command line, and where its `=` is when it reads as a shell assignment.
pub(crate) struct Word {
    pub(crate) text: String,
    /// The byte offset of the `=` of `NAME=value`, when `NAME` is a valid variable name
    /// written without quotes or escapes (as the shell requires of an assignment).
    pub(crate) assignment: Option<usize>,
}

/// Splits `line` into words by the POSIX shell's quoting rules (see
/// [`StdioConfig::from_command_line`]).
#[cfg(test)]
pub(crate) fn split(line: &str) -> std::result::Result<Vec<String>, &'static str> {
    Ok(split_marked(line)?.into_iter().map(|w| w.text).collect())
}

/// The words of `line` (see [`StdioConfig::from_command_line`]), telling which read as
/// `NAME=value` assignments.
fn split_marked(line: &str) -> std::result::Result<Vec<Word>, &'static str> {
    let mut words = Vec::new();
    let mut word = String::new();
    // A word exists once anything was written, even an empty pair of quotes.
    let mut in_word = false;
    // Whether the word so far is plain text (no quote or escape), and its assignment's `=`.
    let mut plain = true;
    let mut assignment = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if !(matches!(c, ' ' | '\t' | '\n' | '=' | '_') || c.is_ascii_alphanumeric()) {
            plain = false;
        }
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    let text = std::mem::take(&mut word);
                    words.push(Word { text, assignment });
                    in_word = false;
                }
                (plain, assignment) = (true, None);
                continue;
            }
            '=' if plain && assignment.is_none() && is_name(&word) => {
                assignment = Some(word.len());
                word.push('=');
            }
            '\\' => match chars.next() {
                Some('\n') => continue,
                Some(next) => word.push(next),
                None => return Err("a trailing backslash"),
            },
            '\'' => loop {
                match chars.next() {
                    Some('\'') => break,
                    Some(c) => word.push(c),
                    None => return Err("an unterminated single quote"),
                }
            },
            '"' => loop {
                match chars.next() {
                    Some('"') => break,
                    Some('\\') => match chars.next() {
                        Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                        Some('\n') => {}
                        Some(c) => {
                            word.push('\\');
                            word.push(c);
                        }
                        None => return Err("an unterminated double quote"),
                    },
                    Some(c) => word.push(c),
                    None => return Err("an unterminated double quote"),
                }
            },
            c => word.push(c),
        }
        in_word = true;
    }
    if in_word {
        words.push(Word {
            text: word,
            assignment,
        });
    }
    Ok(words)
}

/// Whether `name` is a shell variable's name: a letter or `_`, then letters, digits or `_`.
fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::split;

    fn words(line: &str) -> Vec<String> {
        split(line).unwrap()
    }

    #[test]
    fn splits_on_blanks_and_keeps_quoted_blanks() {
        assert_eq!(
            words("  npx\t-y   server \n x "),
            ["npx", "-y", "server", "x"]
        );
        assert_eq!(words("a 'b c' \"d e\""), ["a", "b c", "d e"]);
        assert_eq!(words("pre'fix'\"ed\" x"), ["prefixed", "x"]);
        assert!(words("").is_empty() && words(" \t\n").is_empty());
    }

    #[test]
    fn empty_quotes_make_empty_words() {
        assert_eq!(words("a '' \"\" b"), ["a", "", "", "b"]);
    }

    #[test]
    fn backslashes_follow_the_shell() {
        assert_eq!(words(r"a\ b c\\d \'x"), ["a b", r"c\d", "'x"]);
        // Inside double quotes only " \ $ ` are escaped; other backslashes stay.
        assert_eq!(words(r#""q\"r" "\$v" "C:\dir""#), ["q\"r", "$v", r"C:\dir"]);
        // Inside single quotes nothing is.
        assert_eq!(words(r"'a\b' 'it'\''s'"), [r"a\b", "it's"]);
        // A backslash-newline joins lines.
        assert_eq!(words("a\\\nb \"c\\\nd\""), ["ab", "cd"]);
    }

    #[test]
    fn nothing_is_expanded() {
        assert_eq!(
            words("echo $HOME ~ *.rs a|b ;"),
            ["echo", "$HOME", "~", "*.rs", "a|b", ";"]
        );
    }

    #[test]
    fn leading_assignments_set_variables() {
        use crate::StdioConfig;
        let line = "A=1 _b2='x y' C= node A=2 --k=v";
        let config = StdioConfig::from_command_line(line).unwrap();
        assert_eq!(config.get_command(), "node");
        assert_eq!(config.get_args(), ["A=2", "--k=v"]);
        let envs = [("A", "1"), ("_b2", "x y"), ("C", "")].map(|(k, v)| (k.into(), v.into()));
        assert_eq!(config.get_envs(), envs);
        // Quoted or escaped names, and names that are not names, are the command itself.
        for line in [
            "'A'=1 x",
            "A\\=1 x",
            "\"A=1\" x",
            "1A=1 x",
            "A-B=1 x",
            "=1 x",
        ] {
            let config = StdioConfig::from_command_line(line).unwrap();
            assert!(config.get_envs().is_empty(), "{line}");
            assert_eq!(config.get_args(), ["x"], "{line}");
        }
        assert!(StdioConfig::from_command_line("A=1 B=2").is_err());
    }

    #[test]
    fn broken_lines_are_errors() {
        assert_eq!(split("a 'b"), Err("an unterminated single quote"));
        assert_eq!(split("a \"b"), Err("an unterminated double quote"));
        assert_eq!(split("a \"b\\"), Err("an unterminated double quote"));
        assert_eq!(split("a b\\"), Err("a trailing backslash"));
    }
}
