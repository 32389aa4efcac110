//! Pinned MCP servers written by others, installed under `target/peers` on first use.
//!
//! The interop tests run umcp against two real servers: the TypeScript reference server
//! `@modelcontextprotocol/server-everything` (npm, installed with `npm ci` from the committed
//! `tests/peers/package-lock.json`) and a small server on the Python SDK `mcp` (a venv with the
//! pins of `tests/peers/requirements.txt`). Each is installed at most once per test process, and
//! safely when several test binaries race: the install happens in a private temporary folder
//! that is renamed into place only when complete, so a reader sees either nothing or a finished
//! install. A stamp file holding a copy of the lockfile (or requirements file) marks a finished
//! install; when the committed file changes, the next run reinstalls. `tests/peers/install.sh`
//! follows the same contract, so an install made by `.ci/run` is reused here.
//!
//! If an install fails, the test fails with what to install and how. Setting
//! `UMCP_SKIP_INTEROP=1` skips the interop tests with a line on stderr; under `CI` that
//! variable is refused, so CI never passes without running them.

use std::env;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::thread;
use std::time::Duration;

mod hosts;
mod http;
mod install;
pub mod network;
mod rmcp;

use install::{
    ensure_installed, install_net, install_npm, install_py, install_py_auth, network_help,
    npm_help, python_auth_help, python_help,
};

pub use hosts::{hosts_dir, inspector, mcp_remote, py_host, ts_host};
pub use http::{
    oauth_authorization_server, oauth_mcp_server, python_http, server_everything_http,
    server_everything_http_on, ts_v2_http, ts_v2_skills_http, HttpPeer,
};
pub use rmcp::rmcp_modern;

/// The pinned version of `@modelcontextprotocol/server-everything` (see `tests/peers/package.json`).
pub const SERVER_EVERYTHING_VERSION: &str = "2026.8.31";

/// The pinned version of the Python SDK `mcp` (see `tests/peers/requirements.txt`).
pub const PYTHON_MCP_VERSION: &str = "2.3.0";

/// The oldest Node.js major version server-everything runs on.
const MIN_NODE_MAJOR: u32 = 20;

/// How long one install step (npm ci, venv creation, pip install) may take.
const INSTALL_DEADLINE: Duration = Duration::from_secs(600);

/// The file inside an install folder whose content must equal the committed lock or
/// requirements file for the install to count as current.
const STAMP: &str = ".umcp-stamp";

const SKIP_VAR: &str = "UMCP_SKIP_INTEROP";

/// Returns true, after printing `SKIPPED interop: UMCP_SKIP_INTEROP=1` to stderr, when the
/// caller should skip its interop test.
///
/// Call this first in every interop test: `if peers::skip_interop() { return; }`.
///
/// # Panics
///
/// When `UMCP_SKIP_INTEROP` is set while `CI` is set (CI must run the interop tests), or is
/// set to anything but `1`, `0` or the empty string.
pub fn skip_interop() -> bool {
    let Some(value) = env::var_os(SKIP_VAR) else {
        return false;
    };
    if value.is_empty() || value == "0" {
        return false;
    }
    if env::var_os("CI").is_some() {
        panic!(
            "{SKIP_VAR}={value:?} is set, but so is CI: the interop tests are never skipped in CI. \
             Unset {SKIP_VAR}."
        );
    }
    if value != "1" {
        panic!("{SKIP_VAR} must be 1 (skip the interop tests), 0 or unset, not {value:?}");
    }
    let test = thread::current()
        .name()
        .unwrap_or("interop test")
        .to_string();
    // Written to the process's stderr directly rather than with eprintln!, which the test
    // harness captures and hides for passing tests: a skip must be visible. One write, starting
    // on a fresh line, so that it does not land inside the harness's `test … ok` line.
    let line = format!("\nSKIPPED interop: {SKIP_VAR}=1 ({test})\n");
    let _ = io::stderr().write_all(line.as_bytes());
    true
}

/// The Node.js program that runs server-everything.
pub fn node() -> PathBuf {
    PathBuf::from("node")
}

/// The path of server-everything's `dist/index.js`, installing the server on first use.
///
/// Run it as `node <path> stdio` (or `streamableHttp` / `sse` with `PORT` in the environment).
///
/// # Panics
///
/// When Node.js or npm is missing or the install fails; the message says what to install.
pub fn server_everything() -> PathBuf {
    static INSTALL: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let result = INSTALL.get_or_init(|| {
        let dir = ensure_installed(
            "npm",
            &repo_path("tests/peers/package-lock.json"),
            install_npm,
        )?;
        Ok(server_everything_entry(&dir))
    });
    match result {
        Ok(path) => path.clone(),
        Err(detail) => panic!("{}", npm_help(detail)),
    }
}

/// The Python interpreter of a venv holding the pinned `mcp` SDK, installing it on first use.
///
/// # Panics
///
/// When Python 3 with `venv` is missing or the install fails; the message says what to install.
pub fn python_mcp() -> PathBuf {
    static INSTALL: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let result = INSTALL.get_or_init(|| {
        let dir = ensure_installed("py", &repo_path("tests/peers/requirements.txt"), install_py)?;
        Ok(venv_python(&dir))
    });
    match result {
        Ok(path) => path.clone(),
        Err(detail) => panic!("{}", python_help(detail)),
    }
}

/// The Python interpreter of a venv holding the sign-in peers (Authlib, Flask and the `mcp` SDK,
/// pinned in `tests/peers/requirements-auth.txt`), installing it on first use.
///
/// # Panics
///
/// When Python 3 with `venv` is missing or the install fails; the message says what to install.
pub fn python_oauth() -> PathBuf {
    static INSTALL: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let result = INSTALL.get_or_init(|| {
        let pins = repo_path("tests/peers/requirements-auth.txt");
        let dir = ensure_installed("auth", &pins, install_py_auth)?;
        Ok(venv_python(&dir))
    });
    match result {
        Ok(path) => path.clone(),
        Err(detail) => panic!("{}", python_auth_help(detail)),
    }
}

/// The Python interpreter of a venv holding the pinned mitmproxy and trustme (the network
/// tests' proxy and certificate authority), installing it on first use.
///
/// # Panics
///
/// When Python 3 with `venv` is missing or the install fails; the message says what to install.
pub fn network_python() -> PathBuf {
    static INSTALL: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let result = INSTALL.get_or_init(|| {
        let dir = ensure_installed(
            "net",
            &repo_path("tests/peers/requirements-network.txt"),
            install_net,
        )?;
        Ok(venv_python(&dir))
    });
    match result {
        Ok(path) => path.clone(),
        Err(detail) => panic!("{}", network_help(detail)),
    }
}

/// The TypeScript SDK v2 test server (`tests/peers/ts_v2_server.mjs`), installing the npm
/// peers on first use. The script is copied next to their `node_modules`, where Node resolves
/// its imports; run it as `PORT=<port> node <path>`.
///
/// # Panics
///
/// As [`server_everything`], or when the script cannot be copied.
pub fn ts_v2_server() -> PathBuf {
    npm_script("ts_v2_server.mjs")
}

/// The TypeScript SDK v2 skills server (`tests/peers/ts_v2_skills_server.mjs`: the SDK's
/// Skills extension with `resources/directory/read`), installed as [`ts_v2_server`] is. Run it
/// as `node <path> [dynamic]` over stdio, or with `PORT=<port>` over Streamable HTTP.
///
/// # Panics
///
/// As [`ts_v2_server`].
pub fn ts_v2_skills_server() -> PathBuf {
    npm_script("ts_v2_skills_server.mjs")
}

/// `tests/peers/<name>` copied next to the npm peers' `node_modules`, where Node resolves
/// its imports, installing them on first use.
fn npm_script(name: &str) -> PathBuf {
    let entry = server_everything();
    // <dir>/node_modules/@modelcontextprotocol/server-everything/dist/index.js -> <dir>
    let dir = entry
        .ancestors()
        .nth(5)
        .expect("the npm install folder")
        .to_path_buf();
    let script = dir.join(name);
    // Copied under a unique name and renamed into place: parallel tests never see half a file.
    let staging = dir.join(format!(
        ".{name}.{}.{:?}.tmp",
        std::process::id(),
        thread::current().id()
    ));
    fs::copy(repo_path(&format!("tests/peers/{name}")), &staging)
        .and_then(|_| fs::rename(&staging, &script))
        .unwrap_or_else(|e| panic!("cannot copy {name} into {}: {e}", dir.display()));
    script
}

/// The Python SDK test server script, to run with [`python_mcp`]: `<python> <script> stdio`.
pub fn python_server_script() -> PathBuf {
    repo_path("tests/peers/python_server.py")
}

/// The folder under which the peers are installed: `<target dir>/peers`.
pub fn peers_dir() -> PathBuf {
    let root = crate::workspace_root();
    let target = match env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => root.join(dir),
        _ => root.join("target"),
    };
    target.join("peers")
}

fn repo_path(relative: &str) -> PathBuf {
    crate::workspace_root().join(relative)
}

fn server_everything_entry(dir: &Path) -> PathBuf {
    dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

fn venv_python(dir: &Path) -> PathBuf {
    if cfg!(windows) {
        dir.join("Scripts").join("python.exe")
    } else {
        dir.join("bin").join("python")
    }
}
