//! A server's URL or command line as umcp shows it to people: secrets replaced by `<redacted>`.

use std::fmt;

use crate::redact;

/// A server's URL or command-line arguments as umcp's own messages and `Debug` output show
/// them, secrets replaced by `<redacted>`: for a program's logs, prompts and listings.
///
/// - A URL keeps its scheme, host, port, path and the names of its query; the password of
///   its user info (or a user alone, which may be a token), every query value and the
///   fragment are hidden. Text that is not a URL is shown unchanged.
/// - Arguments keep options and plain values. Hidden are the value after an option named
///   like a secret (`--token x`), the value of `NAME=value` and `--name=value` when the name
///   is (`API_KEY=…`), credentials in a header argument (`Authorization: …`), the secrets of
///   URLs as above, and values with a known token prefix (`sk-`, `ghp_`, `glpat-`, …).
///
/// Names decide, so a secret passed under an innocent name, or as a bare value without a
/// known prefix, stays visible. Nothing is escaped either: text that reaches a terminal
/// still needs its control characters made harmless.
///
/// ```
/// use umcp::Redacted;
///
/// let url = Redacted::url("https://me:hunter2@mcp.example.com/mcp?api_key=sk-1&page=2");
/// assert_eq!(
///     url.to_string(),
///     "https://me:<redacted>@mcp.example.com/mcp?api_key=<redacted>&page=<redacted>"
/// );
///
/// let args = ["-y", "server-search", "--token", "abc123", "REGION=eu"].map(String::from);
/// let shown = Redacted::args(&args);
/// assert_eq!(shown.to_string(), "-y server-search --token <redacted> REGION=eu");
/// // One word per argument, for a caller that quotes each for a shell.
/// assert_eq!(shown.words()[3], Redacted::MARK);
/// // `Debug` shows the redacted text too.
/// assert!(!format!("{shown:?}").contains("abc123"));
/// ```
#[derive(Clone, Copy)]
pub struct Redacted<'a>(Text<'a>);

/// What is shown.
#[derive(Clone, Copy)]
enum Text<'a> {
    Url(&'a str),
    Args(&'a [String]),
}

impl<'a> Redacted<'a> {
    /// What stands in for each hidden secret: `<redacted>`.
    ///
    /// See the example on [`Redacted`].
    pub const MARK: &'static str = redact::REDACTED;

    /// `url` with its credentials, query values and fragment hidden.
    ///
    /// See the example on [`Redacted`].
    pub fn url(url: &'a str) -> Redacted<'a> {
        Redacted(Text::Url(url))
    }

    /// A command line's arguments (the program's name left out) with their secrets hidden.
    ///
    /// See the example on [`Redacted`].
    pub fn args(args: &'a [String]) -> Redacted<'a> {
        Redacted(Text::Args(args))
    }

    /// The text as shown, one word per argument (a URL is one word).
    ///
    /// See the example on [`Redacted`].
    pub fn words(&self) -> Vec<String> {
        match self.0 {
            Text::Url(url) => vec![redact::url(url)],
            Text::Args(args) => redact::args(args),
        }
    }
}

impl fmt::Display for Redacted<'_> {
    /// The words joined by spaces.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.words().join(" "))
    }
}

impl fmt::Debug for Redacted<'_> {
    /// The shown text, never what it hides.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Redacted").field(&self.words()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_arguments_show_as_nothing_and_a_url_as_one_word() {
        assert_eq!(Redacted::args(&[]).to_string(), "");
        assert!(Redacted::args(&[]).words().is_empty());
        let url = Redacted::url("https://h/mcp?key=k");
        assert_eq!(url.words(), ["https://h/mcp?key=<redacted>"]);
        assert_eq!(
            format!("{url:?}"),
            r#"Redacted(["https://h/mcp?key=<redacted>"])"#
        );
    }
}
