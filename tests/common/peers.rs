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
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

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

/// The Python SDK test server script, to run with [`python_mcp`]: `<python> <script> stdio`.
pub fn python_server_script() -> PathBuf {
    repo_path("tests/peers/python_server.py")
}

/// The folder under which the peers are installed: `<target dir>/peers`.
pub fn peers_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = match env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => manifest.join(dir),
        _ => manifest.join("target"),
    };
    target.join("peers")
}

fn repo_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
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

fn npm_help(detail: &str) -> String {
    format!(
        "the interop peer @modelcontextprotocol/server-everything@{SERVER_EVERYTHING_VERSION} \
         could not be installed: {detail}\n\n\
         The interop tests need Node.js {MIN_NODE_MAJOR} or newer with npm on PATH (from \
         https://nodejs.org or a package manager that has it; Debian 12's own nodejs is too \
         old) and access to the npm registry. \
         They install the server themselves into {dir} with `npm ci` from \
         tests/peers/package-lock.json; to do that by hand, run `bash tests/peers/install.sh npm`. \
         To skip the interop tests on a machine without them (never in CI), set {SKIP_VAR}=1.",
        dir = peers_dir().join("npm").display(),
    )
}

fn python_help(detail: &str) -> String {
    format!(
        "the interop peer, the Python SDK mcp=={PYTHON_MCP_VERSION}, could not be installed: \
         {detail}\n\n\
         The interop tests need Python 3.10 or newer as `python3` on PATH, with the venv module \
         (Debian: `apt-get install python3 python3-venv`), and access to PyPI. They create a venv \
         at {dir} and `pip install -r tests/peers/requirements.txt` into it; to do that by hand, \
         run `bash tests/peers/install.sh py`. To skip the interop tests on a machine without \
         them (never in CI), set {SKIP_VAR}=1.",
        dir = peers_dir().join("py").display(),
    )
}

/// Makes sure `<peers dir>/<name>` holds a finished install made from `pin_file`, running
/// `install` into a fresh temporary folder and renaming it into place when it does not.
fn ensure_installed(
    name: &str,
    pin_file: &Path,
    install: fn(&Path) -> Result<(), String>,
) -> Result<PathBuf, String> {
    let pins =
        fs::read(pin_file).map_err(|e| format!("cannot read {}: {e}", pin_file.display()))?;
    let peers = peers_dir();
    let dest = peers.join(name);
    if is_current(&dest, &pins) {
        return Ok(dest);
    }
    fs::create_dir_all(&peers).map_err(|e| format!("cannot create {}: {e}", peers.display()))?;

    // A folder private to this process: a concurrent installer uses its own, and whichever
    // rename lands first wins.
    let staging = peers.join(format!(".{name}.tmp-{}", std::process::id()));
    let _ = fs::remove_dir_all(&staging);
    fs::create_dir_all(&staging)
        .map_err(|e| format!("cannot create {}: {e}", staging.display()))?;
    let outcome = install(&staging).and_then(|()| {
        fs::write(staging.join(STAMP), &pins).map_err(|e| format!("cannot write the stamp: {e}"))
    });
    if let Err(e) = outcome {
        let _ = fs::remove_dir_all(&staging);
        return Err(e);
    }
    if fs::rename(&staging, &dest).is_ok() {
        return Ok(dest);
    }
    // The rename fails when `dest` exists: either another process has just finished the same
    // install, or `dest` is an outdated install to move aside.
    if is_current(&dest, &pins) {
        let _ = fs::remove_dir_all(&staging);
        return Ok(dest);
    }
    let old = peers.join(format!(".{name}.old-{}", std::process::id()));
    let _ = fs::remove_dir_all(&old);
    let _ = fs::rename(&dest, &old);
    let renamed = fs::rename(&staging, &dest);
    let _ = fs::remove_dir_all(&old);
    if renamed.is_ok() || is_current(&dest, &pins) {
        let _ = fs::remove_dir_all(&staging);
        Ok(dest)
    } else {
        let _ = fs::remove_dir_all(&staging);
        Err(format!(
            "cannot move the finished install into {}",
            dest.display()
        ))
    }
}

fn is_current(dir: &Path, pins: &[u8]) -> bool {
    fs::read(dir.join(STAMP)).is_ok_and(|stamp| stamp == pins)
}

fn install_npm(dir: &Path) -> Result<(), String> {
    check_node()?;
    for file in ["package.json", "package-lock.json"] {
        let from = repo_path("tests/peers").join(file);
        fs::copy(&from, dir.join(file))
            .map_err(|e| format!("cannot copy {}: {e}", from.display()))?;
    }
    let log = dir.join("install.log");
    let mut npm = Command::new(if cfg!(windows) { "npm.cmd" } else { "npm" });
    npm.arg("ci")
        .arg("--prefix")
        .arg(dir)
        .args(["--no-audit", "--no-fund", "--ignore-scripts"]);
    run(&mut npm, &log)?;
    let entry = server_everything_entry(dir);
    if !entry.is_file() {
        return Err(format!(
            "npm ci finished but {} is missing",
            entry.display()
        ));
    }
    Ok(())
}

fn check_node() -> Result<(), String> {
    let output = Command::new(node())
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `node --version`: {e}"))?;
    let version = String::from_utf8_lossy(&output.stdout).trim().to_string();
    let major = version
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse::<u32>().ok());
    match major {
        Some(major) if major >= MIN_NODE_MAJOR => Ok(()),
        _ => Err(format!(
            "`node --version` printed {version:?}; Node.js {MIN_NODE_MAJOR}+ is needed"
        )),
    }
}

fn install_py(dir: &Path) -> Result<(), String> {
    let log = dir.join("install.log");
    let base = if cfg!(windows) { "python" } else { "python3" };
    run(Command::new(base).args(["-m", "venv"]).arg(dir), &log)?;
    let python = venv_python(dir);
    let requirements = repo_path("tests/peers/requirements.txt");
    run(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "--no-input",
                "-r",
            ])
            .arg(&requirements),
        &log,
    )?;
    run(
        Command::new(&python).args(["-c", "import mcp.server.mcpserver"]),
        &log,
    )
}

/// Runs `command` to completion within [`INSTALL_DEADLINE`], its output going to `log`, and
/// returns the end of that log in the error when it fails.
fn run(command: &mut Command, log: &Path) -> Result<(), String> {
    let shown = format!("{command:?}");
    let out = File::options()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let err = out
        .try_clone()
        .map_err(|e| format!("cannot reopen {}: {e}", log.display()))?;
    let mut child = command
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot start {shown}: {e}"))?;
    let started = Instant::now();
    // The child writes to a file, not a pipe, so polling its exit cannot stall it.
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < INSTALL_DEADLINE => {
                thread::sleep(Duration::from_millis(100));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{shown} did not finish within {INSTALL_DEADLINE:?}{}",
                    log_tail(log)
                ));
            }
            Err(e) => return Err(format!("cannot wait for {shown}: {e}")),
        }
    };
    if status.success() {
        Ok(())
    } else {
        Err(format!("{shown} failed ({status}){}", log_tail(log)))
    }
}

fn log_tail(log: &Path) -> String {
    let mut text = String::new();
    if File::open(log)
        .and_then(|mut f| f.read_to_string(&mut text))
        .is_err()
    {
        return String::new();
    }
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(30)..].join("\n    ");
    format!("; its output ended with:\n    {tail}")
}
