//! Which of a server's tools are offered: allow and deny lists of names and `*` patterns.

/// Which of a server's tools a client offers: lists of allowed and of denied names.
///
/// A pattern is a tool's name, or a name with `*` standing for any run of characters (none
/// included): `read_file`, `read_*`, `*_file`, `*`. Nothing else is special, and case
/// counts, as in the hosts' own filters. A name is offered when it matches a pattern of every
/// allow list (no allow list: every name) and no pattern of the deny list. An empty allow
/// list allows nothing, as an empty list does in hosts' configurations.
///
/// A tool the filter leaves out is hidden: it is not listed, and a call to it is refused
/// with [`Error::ToolHidden`](crate::Error::ToolHidden) before anything is sent. Set it on a
/// client with [`Options::with_tool_filter`](crate::Options::with_tool_filter), or on a
/// managed server with [`ServerConfig::with_tool_filter`](crate::ServerConfig::with_tool_filter);
/// configuration files set it with `allowedTools` and `excludedTools` (see
/// [`ConfigFile`](crate::ConfigFile)).
///
/// ```
/// use umcp::ToolFilter;
///
/// let filter = ToolFilter::new()
///     .with_allowed(["read_*", "list_directory"])
///     .with_denied(["read_secret*"]);
/// assert!(filter.allows("read_file") && filter.allows("list_directory"));
/// assert!(!filter.allows("read_secrets") && !filter.allows("write_file"));
/// assert!(ToolFilter::new().allows("anything"));
/// assert!(!ToolFilter::new().with_allowed(Vec::<String>::new()).allows("anything"));
///
/// // Each allow list narrows further: here only `read_file` is left.
/// let both = filter.with_allowed(["*_file"]);
/// assert!(both.allows("read_file") && !both.allows("list_directory"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolFilter {
    /// Lists of which a name must match one pattern each.
    allowed: Vec<Vec<String>>,
    denied: Vec<String>,
}

impl ToolFilter {
    /// A filter that offers every tool.
    ///
    /// See the example on [`ToolFilter`].
    pub fn new() -> ToolFilter {
        ToolFilter::default()
    }

    /// Adds an allow list: a name must match one of `patterns` (and one of every other allow
    /// list) to be offered.
    ///
    /// See the example on [`ToolFilter`].
    pub fn with_allowed<I, S>(mut self, patterns: I) -> ToolFilter
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed
            .push(patterns.into_iter().map(Into::into).collect());
        self
    }

    /// Denies the names that match one of `patterns`, whatever the allow lists say.
    ///
    /// See the example on [`ToolFilter`].
    pub fn with_denied<I, S>(mut self, patterns: I) -> ToolFilter
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.denied.extend(patterns.into_iter().map(Into::into));
        self
    }

    /// Both filters at once: a name is offered when both offer it.
    ///
    /// ```
    /// use umcp::ToolFilter;
    ///
    /// let everywhere = ToolFilter::new().with_denied(["delete_*"]);
    /// let here = ToolFilter::new().with_allowed(["*_file"]);
    /// let both = everywhere.and(here);
    /// assert!(both.allows("read_file") && !both.allows("delete_file"));
    /// ```
    pub fn and(mut self, other: ToolFilter) -> ToolFilter {
        self.allowed.extend(other.allowed);
        self.denied.extend(other.denied);
        self
    }

    /// Whether a tool named `name` is offered.
    ///
    /// See the example on [`ToolFilter`].
    pub fn allows(&self, name: &str) -> bool {
        let allowed = self
            .allowed
            .iter()
            .all(|list| list.iter().any(|pattern| matches(pattern, name)));
        allowed && !self.denied.iter().any(|pattern| matches(pattern, name))
    }

    /// Whether the filter offers every tool: no allow list and nothing denied.
    ///
    /// ```
    /// use umcp::ToolFilter;
    ///
    /// assert!(ToolFilter::new().is_open());
    /// assert!(!ToolFilter::new().with_denied(["x"]).is_open());
    /// ```
    pub fn is_open(&self) -> bool {
        self.allowed.is_empty() && self.denied.is_empty()
    }

    /// The allow lists, in the order they were added.
    ///
    /// ```
    /// use umcp::ToolFilter;
    ///
    /// let filter = ToolFilter::new().with_allowed(["a", "b*"]).with_denied(["bad"]);
    /// assert_eq!(filter.allowed(), [vec!["a".to_owned(), "b*".to_owned()]]);
    /// assert_eq!(filter.denied(), ["bad"]);
    /// ```
    pub fn allowed(&self) -> &[Vec<String>] {
        &self.allowed
    }

    /// The denied patterns.
    ///
    /// See the example on [`ToolFilter::allowed`].
    pub fn denied(&self) -> &[String] {
        &self.denied
    }
}

/// Whether `name` matches `pattern`, where `*` matches any run of characters. On a mismatch
/// after a `*`, that `*` takes one more character and matching resumes: at most
/// `pattern × name` steps, and no recursion.
fn matches(pattern: &str, name: &str) -> bool {
    let (pattern, name) = (pattern.as_bytes(), name.as_bytes());
    let (mut p, mut n) = (0, 0);
    // The position after the last `*` seen, and the name position it was tried at.
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p + 1, n));
                p += 1;
            }
            Some(&byte) if byte == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((after, tried)) => {
                    p = after;
                    n = tried + 1;
                    star = Some((after, tried + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&byte| byte == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_names_and_runs_of_characters() {
        let cases = [
            ("echo", "echo", true),
            ("echo", "echo2", false),
            ("echo", "ech", false),
            ("*", "", true),
            ("*", "anything at all", true),
            ("read_*", "read_file", true),
            ("read_*", "read_", true),
            ("read_*", "rea", false),
            ("*_file", "read_file", true),
            ("*_file", "read_files", false),
            ("a*b*c", "abc", true),
            ("a*b*c", "a-b-b-c", true),
            ("a*b*c", "a-b-b-", false),
            ("**", "x", true),
            ("Echo", "echo", false),
            ("é*", "été", true),
            ("", "", true),
            ("", "x", false),
        ];
        for (pattern, name, expected) in cases {
            assert_eq!(matches(pattern, name), expected, "{pattern:?} ~ {name:?}");
        }
    }

    #[test]
    fn a_long_name_against_many_stars_takes_bounded_steps() {
        let name = "a".repeat(4096);
        let pattern = format!("{}b", "*a".repeat(64));
        assert!(!matches(&pattern, &name));
        assert!(matches(&format!("{}a", "*a".repeat(64)), &name));
    }

    #[test]
    fn allow_lists_narrow_and_denials_win() {
        let filter = ToolFilter::new()
            .with_allowed(["get-*", "echo"])
            .with_denied(["get-env"]);
        assert!(filter.allows("echo") && filter.allows("get-sum"));
        assert!(!filter.allows("get-env") && !filter.allows("add"));
        let narrower = filter.clone().with_allowed(["echo"]);
        assert!(narrower.allows("echo") && !narrower.allows("get-sum"));
        assert!(!ToolFilter::new().with_denied(["*"]).allows("echo"));
        assert!(!filter.is_open());
    }
}
