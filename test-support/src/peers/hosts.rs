//! The hosts `umcp bridge` is tested with, and the relay it is measured against: the
//! TypeScript SDK's clients (v1 `@modelcontextprotocol/sdk` and v2 `@modelcontextprotocol/client`),
//! the MCP Inspector's CLI and `mcp-remote`, pinned by `cli/tests/peers/package-lock.json` and
//! installed with `npm ci` into `<target dir>/peers/hosts` on first use, under the same
//! contract as the other peers (a stamp, a private staging folder renamed into place). The
//! Python SDK's client is the `mcp` of the `py` peer.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::thread;

use super::install::{check_node, ensure_installed, run};
use super::{python_mcp, repo_path, SKIP_VAR};

/// Where the pins and the host scripts are, in the repository.
const DIR: &str = "cli/tests/peers";

/// The install folder (holding `node_modules`), installing it on first use.
///
/// # Panics
///
/// When Node.js or npm is missing or the install fails; the message says what to install.
pub fn hosts_dir() -> PathBuf {
    static INSTALL: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let lock = repo_path(DIR).join("package-lock.json");
    match INSTALL.get_or_init(|| ensure_installed("hosts", &lock, install_hosts)) {
        Ok(dir) => dir.clone(),
        Err(detail) => panic!(
            "the bridge's interop hosts (cli/tests/peers/package.json) could not be installed: \
             {detail}\n\nThey need Node.js 20 or newer with npm on PATH and access to the npm \
             registry; to install them by hand, run `bash tests/peers/install.sh hosts`. To skip \
             the interop tests on a machine without them (never in CI), set {SKIP_VAR}=1."
        ),
    }
}

fn install_hosts(dir: &Path) -> Result<(), String> {
    check_node()?;
    for file in ["package.json", "package-lock.json"] {
        let from = repo_path(DIR).join(file);
        fs::copy(&from, dir.join(file))
            .map_err(|e| format!("cannot copy {}: {e}", from.display()))?;
    }
    let mut npm = Command::new(if cfg!(windows) { "npm.cmd" } else { "npm" });
    npm.arg("ci")
        .arg("--prefix")
        .arg(dir)
        .args(["--no-audit", "--no-fund", "--ignore-scripts"]);
    run(&mut npm, &dir.join("install.log"))?;
    for needed in [
        MCP_REMOTE,
        INSPECTOR,
        "node_modules/@modelcontextprotocol/client/package.json",
    ] {
        if !dir.join(needed).is_file() {
            return Err(format!("npm ci finished but {needed} is missing"));
        }
    }
    Ok(())
}

/// `mcp-remote`'s proxy, inside the install.
const MCP_REMOTE: &str = "node_modules/mcp-remote/dist/proxy.js";

/// The MCP Inspector's launcher, inside the install: run it with `--cli`.
const INSPECTOR: &str =
    "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js";

/// The host script on the TypeScript SDK (`cli/tests/peers/ts_host.mjs`), copied next to the
/// install's `node_modules`, where Node resolves its imports: `node <path> '<plan>'`.
pub fn ts_host() -> PathBuf {
    let dir = hosts_dir();
    let script = dir.join("ts_host.mjs");
    // Copied under a unique name and renamed into place: parallel tests never see half a file.
    let staging = dir.join(format!(
        ".ts_host.{}.{:?}.tmp",
        std::process::id(),
        thread::current().id()
    ));
    fs::copy(repo_path(DIR).join("ts_host.mjs"), &staging)
        .and_then(|_| fs::rename(&staging, &script))
        .unwrap_or_else(|e| panic!("cannot copy ts_host.mjs into {}: {e}", dir.display()));
    script
}

/// The host script on the Python SDK, and the interpreter that runs it:
/// `<python> <script> '<plan>'`.
pub fn py_host() -> (PathBuf, PathBuf) {
    (python_mcp(), repo_path(DIR).join("py_host.py"))
}

/// The MCP Inspector's launcher: `node <path> --cli <server...> --method tools/list`.
pub fn inspector() -> PathBuf {
    hosts_dir().join(INSPECTOR)
}

/// `mcp-remote`'s proxy: `node <path> <url>`.
pub fn mcp_remote() -> PathBuf {
    hosts_dir().join(MCP_REMOTE)
}
