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
    /// passed on as written (set variables with [`StdioConfig::env`]). The first word is the
    /// command, found as [`StdioConfig::new`] finds it.
    ///
    /// ```
    /// use umcp::StdioConfig;
    ///
    /// let config = StdioConfig::from_command_line(r#"npx -y server --flag 'a b' "c \"d\"" $HOME"#)?;
    /// assert_eq!(config.get_command(), "npx");
    /// assert_eq!(config.get_args(), ["-y", "server", "--flag", "a b", "c \"d\"", "$HOME"]);
    /// # Ok::<(), umcp::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for an empty line, an unterminated quote or a trailing backslash.
    pub fn from_command_line(line: &str) -> Result<StdioConfig> {
        let words = split(line).map_err(|e| Error::Config(format!("{e} in `{line}`")))?;
        let (command, args) = words
            .split_first()
            .ok_or_else(|| Error::Config("an empty command line".into()))?;
        Ok(StdioConfig::new(command.clone()).args(args.iter().cloned()))
    }
}

/// Splits `line` into words by the POSIX shell's quoting rules (see
/// [`StdioConfig::from_command_line`]).
pub(crate) fn split(line: &str) -> std::result::Result<Vec<String>, &'static str> {
    let mut words = Vec::new();
    let mut word = String::new();
    // A word exists once anything was written, even an empty pair of quotes.
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
                continue;
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
        words.push(word);
    }
    Ok(words)
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
    fn broken_lines_are_errors() {
        assert_eq!(split("a 'b"), Err("an unterminated single quote"));
        assert_eq!(split("a \"b"), Err("an unterminated double quote"));
        assert_eq!(split("a \"b\\"), Err("an unterminated double quote"));
        assert_eq!(split("a b\\"), Err("a trailing backslash"));
    }
}
