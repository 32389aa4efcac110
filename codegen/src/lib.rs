//! Typed Rust bindings for the tools of an `mcp.lock`, written by a build script.
//!
//! [umcp](https://docs.rs/umcp) locks the tools of a configuration's servers in `mcp.lock`
//! (`umcp lock`): each tool's definition, with the SHA-256 of its canonical form. This crate
//! reads that file, offline, and writes Rust: for each server a module with a small type
//! over a `&umcp::Client` or a `&umcp::Manager` and one blocking method per tool, a struct of
//! arguments from each tool's input schema, and a typed result where the tool has an output
//! schema. Connecting the type checks that the server lists every tool as it was locked, so a
//! server that drifted is refused before the first call. The same lock always gives the same
//! bytes, documented from the tools' descriptions and laid out as rustfmt would.
//!
//! ```no_run
//! // In build.rs, `main`:
//! umcp_codegen::Builder::new("mcp.lock")
//!     .write_to_out_dir("tools.rs")
//!     .expect("bindings for the tools of mcp.lock");
//! ```
//!
//! Then, in the crate, with a server `everything` in the lock whose tool `get-sum` takes two
//! required numbers (the example crate `umcp-typed-tools-example` does this against the real
//! server):
//!
//! ```text
//! include!(concat!(env!("OUT_DIR"), "/tools.rs"));
//!
//! let tools = everything::Everything::connect(&client)?;
//! let sum = tools.get_sum(&everything::GetSumArgs { a: 2.0, b: 3.0 })?;
//! ```
//!
//! The program needs `umcp`, `serde` (with its `derive` feature) and `serde_json` among its
//! dependencies. How schemas become types (required fields plain, optional ones `Option`,
//! string enums as enums, nested objects as structs, anything else `serde_json::Value`) is
//! in the README.

use std::fmt;
use std::path::{Path, PathBuf};

mod emit;
mod lock;
mod names;
mod schema;

/// Bindings for the servers of one lockfile.
///
/// See the example in the [crate documentation](crate).
#[derive(Debug, Clone)]
pub struct Builder {
    lock: PathBuf,
    servers: Vec<String>,
    /// The tools to bind of some servers (the others: every tool).
    tools: Vec<(String, Vec<String>)>,
}

/// Why the bindings could not be written.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// The lockfile is not one this crate reads, or is malformed.
    Lock(String),
    /// A server asked for is not in the lock.
    NoServer(String),
    /// A tool asked for is not in the lock: the server, and the tool.
    NoTool(String, String),
    /// `OUT_DIR` is not set: not run from a build script.
    NoOutDir,
}

impl Builder {
    /// Bindings for the lockfile at `lock` (relative paths are from the current directory,
    /// a build script's being its package's).
    ///
    /// See the example in the [crate documentation](crate).
    pub fn new(lock: impl Into<PathBuf>) -> Builder {
        Builder {
            lock: lock.into(),
            servers: Vec::new(),
            tools: Vec::new(),
        }
    }

    /// Writes bindings only for the server `name` (and the others named so); by default,
    /// for every server of the lock.
    ///
    /// ```no_run
    /// umcp_codegen::Builder::new("mcp.lock")
    ///     .server("everything")
    ///     .write_to_out_dir("everything.rs")
    ///     .expect("bindings");
    /// ```
    pub fn server(mut self, name: impl Into<String>) -> Builder {
        self.servers.push(name.into());
        self
    }

    /// Binds only these tools of the server `server` (by default, every tool it has in the
    /// lock): connecting checks only them, so the server's other tools may change, or be
    /// listed only to clients with some capability, without refusing the bindings.
    ///
    /// ```no_run
    /// umcp_codegen::Builder::new("mcp.lock")
    ///     .tools("everything", ["echo", "get-sum"])
    ///     .write_to_out_dir("everything.rs")
    ///     .expect("bindings");
    /// ```
    pub fn tools<I, S>(mut self, server: impl Into<String>, tools: I) -> Builder
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let tools = tools.into_iter().map(Into::into).collect();
        self.tools.push((server.into(), tools));
        self
    }

    /// The bindings' source.
    ///
    /// ```no_run
    /// let source = umcp_codegen::Builder::new("mcp.lock").generate()?;
    /// assert!(source.starts_with("// @generated"));
    /// # Ok::<(), umcp_codegen::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the lockfile cannot be read, [`Error::Lock`] when it is not a
    /// lockfile, [`Error::NoServer`] and [`Error::NoTool`] for a server or tool asked for that
    /// it does not have.
    pub fn generate(&self) -> Result<String, Error> {
        let text = std::fs::read_to_string(&self.lock).map_err(|source| Error::Io {
            path: self.lock.clone(),
            source,
        })?;
        let shown = self
            .lock
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| "mcp.lock".into());
        generate(&text, &shown, &self.servers, &self.tools)
    }

    /// Writes the bindings to `path`, leaving a file that already holds them untouched (so
    /// nothing that depends on it is built again).
    ///
    /// ```no_run
    /// umcp_codegen::Builder::new("mcp.lock").write("src/tools.rs")?;
    /// # Ok::<(), umcp_codegen::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Builder::generate`], and [`Error::Io`] when `path` cannot be written.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        let path = path.as_ref();
        let source = self.generate()?;
        if std::fs::read_to_string(path).is_ok_and(|old| old == source) {
            return Ok(());
        }
        std::fs::write(path, source).map_err(|source| Error::Io {
            path: path.to_owned(),
            source,
        })
    }

    /// From a build script: writes the bindings to `file` in `OUT_DIR`, and tells Cargo to
    /// run the script again when the lockfile changes. Returns the file's path.
    ///
    /// See the example in the [crate documentation](crate).
    ///
    /// # Errors
    ///
    /// [`Error::NoOutDir`] outside a build script, else as [`Builder::write`].
    pub fn write_to_out_dir(&self, file: impl AsRef<Path>) -> Result<PathBuf, Error> {
        let dir = std::env::var_os("OUT_DIR").ok_or(Error::NoOutDir)?;
        let path = PathBuf::from(dir).join(file);
        println!("cargo:rerun-if-changed={}", self.lock.display());
        self.write(&path)?;
        Ok(path)
    }
}

/// The bindings of the lockfile `text` (named `shown` in the header), for the servers
/// `servers` (all when empty), each with the tools `tools` names for it (all when it names
/// none).
fn generate(
    text: &str,
    shown: &str,
    servers: &[String],
    tools: &[(String, Vec<String>)],
) -> Result<String, Error> {
    let mut locked = lock::parse(text)?;
    let named = servers.iter().chain(tools.iter().map(|(server, _)| server));
    if let Some(missing) = named
        .into_iter()
        .find(|name| !locked.iter().any(|s| &&s.name == name))
    {
        return Err(Error::NoServer(missing.clone()));
    }
    for server in &mut locked {
        let chosen: Vec<&String> = tools
            .iter()
            .filter(|(name, _)| *name == server.name)
            .flat_map(|(_, tools)| tools)
            .collect();
        if chosen.is_empty() {
            continue;
        }
        if let Some(missing) = chosen
            .iter()
            .find(|t| !server.tools.iter().any(|l| &l.name == **t))
        {
            return Err(Error::NoTool(server.name.clone(), (*missing).clone()));
        }
        server.tools.retain(|tool| chosen.contains(&&tool.name));
    }
    let mut out = emit::Out::default();
    emit::header(&mut out, shown);
    for server in &locked {
        if servers.is_empty() || servers.contains(&server.name) {
            emit::server(&mut out, server);
        }
    }
    Ok(out.into_string())
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Error::Lock(what) => write!(f, "lockfile: {what}"),
            Error::NoServer(name) => write!(f, "the lock has no server `{name}`"),
            Error::NoTool(server, tool) => {
                write!(f, "the lock has no tool `{tool}` of server `{server}`")
            }
            Error::NoOutDir => f.write_str("OUT_DIR is not set: run this from a build script"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;
