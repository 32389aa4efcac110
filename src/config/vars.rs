//! `${VAR}` expansion in configuration strings.
//!
//! `${NAME}` and `${env:NAME}` are replaced by the variable's value; `${NAME:-default}` uses
//! `default` when the variable is unset. A missing variable is an error rather than an empty
//! string, so a forgotten API key is reported instead of sent as an empty header. A `$` that
//! does not start `${` is kept as is, and `$${` writes a literal `${`. What the variables
//! add to one string is bounded by [`EXPANSION_MAX`]: a file of a few kilobytes that repeats a
//! large variable cannot make gigabytes.

use std::cell::Cell;

use crate::redact::clip;

/// Why a string could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum VarError {
    /// The variable is not set and has no default.
    Missing(String),
    /// `${` without a closing `}`.
    Unterminated,
    /// A variable of a kind this loader does not resolve, such as VS Code's `${input:…}`.
    Unsupported(String),
    /// The variables' values would add more than [`EXPANSION_MAX`] bytes to the string.
    TooLong,
    /// One of the variables VS Code itself defines (`${workspaceFolder}`, `${userHome}`…),
    /// unset here: only the editor knows its value.
    Editor(String),
}

/// VS Code's predefined variables that may appear in its `mcp.json`: in the environment they
/// are almost never set, and "not set" alone would read like the user's own mistake.
const EDITOR_VARIABLES: &[&str] = &[
    "workspaceFolder",
    "workspaceFolderBasename",
    "userHome",
    "cwd",
    "pathSeparator",
    "/",
    "file",
    "fileDirname",
    "fileBasename",
    "relativeFile",
    "execPath",
];

impl std::fmt::Display for VarError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A name can be as long as the file; a message quotes only its start.
        match self {
            VarError::Missing(name) if EDITOR_HINTED.contains(&name.as_str()) => write!(
                f,
                "environment variable `{name}` is not set (`${{env:{name}}}` reads only the \
                 environment; `${{{name}}}` is the VS Code variable)"
            ),
            VarError::Missing(name) => {
                write!(f, "environment variable `{}` is not set", clip(name))
            }
            VarError::Unterminated => f.write_str("`${` without a closing `}`"),
            VarError::TooLong => write!(
                f,
                "the variables' values make the string more than {EXPANSION_MAX} bytes longer \
                 than written"
            ),
            VarError::Unsupported(var) => write!(f, "unsupported variable `${{{}}}`", clip(var)),
            VarError::Editor(var) if var.starts_with("workspaceFolder") => write!(
                f,
                "`${{{var}}}` is a VS Code variable, known here only in a file of a \
                 workspace's `.vscode` folder (`<folder>/.vscode/mcp.json`); write the path \
                 itself here"
            ),
            VarError::Editor(var) => write!(
                f,
                "`${{{var}}}` is a VS Code variable that only the editor resolves; \
                 write the value itself here"
            ),
        }
    }
}

/// The editor variables umcp resolves itself when written `${name}`: `${env:name}` of one of
/// them reads only the environment, and a message saying just "not set" would hide why.
const EDITOR_HINTED: &[&str] = &["userHome", "workspaceFolder", "workspaceFolderBasename"];

thread_local! {
    /// Set while [`as_written`] runs on this thread: nothing is expanded.
    static AS_WRITTEN: Cell<bool> = const { Cell::new(false) };
}

/// Runs `read` with every string left as written: no variable is looked up, and each
/// `${…}`, its default included, stays as it is.
pub(crate) fn as_written<T>(read: impl FnOnce() -> T) -> T {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            AS_WRITTEN.with(|flag| flag.set(self.0));
        }
    }
    let _reset = Reset(AS_WRITTEN.with(|flag| flag.replace(true)));
    read()
}

/// Whether [`as_written`] runs on this thread: then nothing is read beyond the file itself
/// (an `envFile` is not).
pub(crate) fn is_as_written() -> bool {
    AS_WRITTEN.with(Cell::get)
}

/// At most this many bytes more than written, per string, once its variables are expanded
/// (1 MiB); beyond that the string is refused with [`VarError::TooLong`].
pub(crate) const EXPANSION_MAX: usize = 1 << 20;

/// Expands every variable in `text`, looking values up with `lookup`.
pub(crate) fn expand(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, VarError> {
    if is_as_written() {
        return Ok(text.to_owned());
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(escaped) = after.strip_prefix("${") {
            out.push_str("${");
            rest = escaped;
            continue;
        }
        let Some(body) = after.strip_prefix('{') else {
            out.push('$');
            rest = after;
            continue;
        };
        let end = body.find('}').ok_or(VarError::Unterminated)?;
        out.push_str(&resolve(&body[..end], lookup)?);
        rest = &body[end + 1..];
        if out.len() + rest.len() > text.len() + EXPANSION_MAX {
            return Err(VarError::TooLong);
        }
    }
    out.push_str(rest);
    Ok(out)
}

fn resolve(var: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, VarError> {
    let editor = || VarError::Editor(var.to_owned());
    if var == "/" {
        return Err(editor());
    }
    let inner = var.strip_prefix("env:").unwrap_or(var);
    let (name, default) = match inner.split_once(":-") {
        Some((name, default)) => (name, Some(default)),
        None => (inner, None),
    };
    let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(VarError::Unsupported(var.to_owned()));
    }
    match (lookup(name), default) {
        (Some(value), _) => Ok(value),
        // VS Code's `${userHome}` is the home directory, which the environment knows.
        (None, None) if var == "userHome" => lookup("HOME")
            .or_else(|| lookup("USERPROFILE"))
            .ok_or_else(editor),
        (None, Some(default)) => Ok(default.to_owned()),
        (None, None) if EDITOR_VARIABLES.contains(&var) => Err(editor()),
        (None, None) => Err(VarError::Missing(name.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/me".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn expands_both_forms_and_defaults() {
        assert_eq!(expand("${HOME}/x", &vars).unwrap(), "/home/me/x");
        assert_eq!(expand("${env:HOME}", &vars).unwrap(), "/home/me");
        assert_eq!(expand("a${NOPE:-b}c", &vars).unwrap(), "abc");
        assert_eq!(expand("${EMPTY:-d}", &vars).unwrap(), "");
        assert_eq!(expand("${env:NOPE:-}", &vars).unwrap(), "");
    }

    #[test]
    fn as_written_nothing_is_looked_up_and_the_flag_does_not_outlive_the_call() {
        let asked = |name: &str| panic!("`{name}` was looked up");
        let text = "${A:-x} ${env:B} $${C}";
        assert_eq!(as_written(|| expand(text, &asked)).unwrap(), text);
        assert_eq!(expand("${HOME}", &vars).unwrap(), "/home/me");
        let _ = std::panic::catch_unwind(|| as_written(|| panic!("inside")));
        assert_eq!(expand("${HOME}", &vars).unwrap(), "/home/me");
    }

    #[test]
    fn what_variables_add_is_bounded() {
        let big = "x".repeat(64 * 1024);
        let lookup = |name: &str| (name == "BIG").then(|| big.clone());
        let fits = "${BIG}".repeat(EXPANSION_MAX / big.len());
        assert_eq!(expand(&fits, &lookup).unwrap().len(), EXPANSION_MAX);
        let over = format!("{fits}${{BIG}}");
        assert_eq!(expand(&over, &lookup), Err(VarError::TooLong));
        assert!(VarError::TooLong.to_string().contains("1048576 bytes"));
        // What is written counts as written, however long.
        let long = "y".repeat(2 * EXPANSION_MAX);
        assert_eq!(
            expand(&format!("{long}${{HOME}}"), &vars).unwrap().len(),
            long.len() + 8
        );
    }

    #[test]
    fn keeps_plain_dollars_and_escapes() {
        assert_eq!(expand("$5 and $HOME", &vars).unwrap(), "$5 and $HOME");
        assert_eq!(expand("$${HOME}", &vars).unwrap(), "${HOME}");
        assert_eq!(expand("end$", &vars).unwrap(), "end$");
    }

    #[test]
    fn reports_what_is_wrong() {
        assert_eq!(
            expand("${NOPE}", &vars),
            Err(VarError::Missing("NOPE".into()))
        );
        assert_eq!(expand("${HOME", &vars), Err(VarError::Unterminated));
        assert_eq!(
            expand("${input:token}", &vars),
            Err(VarError::Unsupported("input:token".into()))
        );
        assert_eq!(
            expand("${}", &vars),
            Err(VarError::Unsupported(String::new()))
        );
        let editor = expand("${workspaceFolder}/server.js", &vars).unwrap_err();
        assert_eq!(editor, VarError::Editor("workspaceFolder".into()));
        assert!(editor.to_string().contains("VS Code"), "{editor}");
        assert_eq!(expand("${/}", &vars), Err(VarError::Editor("/".into())));
        // Set in the environment, it is an environment variable like any other.
        let set = |name: &str| (name == "userHome").then(|| "/u".to_owned());
        assert_eq!(expand("${userHome}", &set).unwrap(), "/u");
        let folder = expand("${workspaceFolder}", &vars).unwrap_err().to_string();
        assert!(folder.contains(".vscode/mcp.json"), "{folder}");
    }

    #[test]
    fn user_home_is_the_home_directory() {
        assert_eq!(expand("${userHome}/bin", &vars).unwrap(), "/home/me/bin");
        let windows = |name: &str| (name == "USERPROFILE").then(|| r"C:\Users\me".to_owned());
        assert_eq!(expand("${userHome}", &windows).unwrap(), r"C:\Users\me");
        let none = |_: &str| None;
        assert_eq!(
            expand("${userHome}", &none),
            Err(VarError::Editor("userHome".into()))
        );
    }
}
