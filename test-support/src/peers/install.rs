//! Installing the pinned peers: npm and venv installs made safe against racing test binaries, and
//! their help on failure.

use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use super::{
    node, peers_dir, repo_path, server_everything_entry, venv_python, INSTALL_DEADLINE,
    MIN_NODE_MAJOR, PYTHON_MCP_VERSION, SERVER_EVERYTHING_VERSION, SKIP_VAR, STAMP,
};

pub(super) fn npm_help(detail: &str) -> String {
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

pub(super) fn python_auth_help(detail: &str) -> String {
    format!(
        "the sign-in peers (Authlib's authorization server and the Python SDK mcp=={PYTHON_MCP_VERSION}) \
         could not be installed: {detail}\n\n\
         The sign-in tests need Python 3.10 or newer as `python3` on PATH, with the venv module \
         (Debian: `apt-get install python3 python3-venv`), and access to PyPI. They create a venv \
         at {dir} and `pip install -r tests/peers/requirements-auth.txt` into it; to do that by \
         hand, run `bash tests/peers/install.sh auth`. To skip the interop tests on a machine \
         without them (never in CI), set {SKIP_VAR}=1.",
        dir = peers_dir().join("auth").display(),
    )
}

pub(super) fn python_help(detail: &str) -> String {
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
pub(super) fn ensure_installed(
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

pub(super) fn install_npm(dir: &Path) -> Result<(), String> {
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
    let v2 = dir.join("node_modules/@modelcontextprotocol/server/package.json");
    if !v2.is_file() {
        return Err(format!("npm ci finished but {} is missing", v2.display()));
    }
    let entry = server_everything_entry(dir);
    if !entry.is_file() {
        return Err(format!(
            "npm ci finished but {} is missing",
            entry.display()
        ));
    }
    Ok(())
}

pub(super) fn check_node() -> Result<(), String> {
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

pub(super) fn install_py(dir: &Path) -> Result<(), String> {
    install_venv(
        dir,
        "tests/peers/requirements.txt",
        "import mcp.server.mcpserver",
    )
}

/// The venv of the sign-in peers: Authlib's authorization server and the Python SDK.
pub(super) fn install_py_auth(dir: &Path) -> Result<(), String> {
    install_venv(
        dir,
        "tests/peers/requirements-auth.txt",
        "import authlib.oauth2.rfc8628, flask, mcp.server.mcpserver",
    )
}

/// A venv at `dir` with the pins of `requirements`, checked by running `check` in it.
fn install_venv(dir: &Path, requirements: &str, check: &str) -> Result<(), String> {
    let log = dir.join("install.log");
    let base = if cfg!(windows) { "python" } else { "python3" };
    run(Command::new(base).args(["-m", "venv"]).arg(dir), &log)?;
    let python = venv_python(dir);
    let requirements = repo_path(requirements);
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
    run(Command::new(&python).args(["-c", check]), &log)
}

pub(super) fn network_help(detail: &str) -> String {
    format!(
        "the network test peers (mitmproxy and trustme) could not be installed: {detail}\n\n\
         The network tests need Python 3.10 or newer as `python3` on PATH, with the venv module \
         (Debian: `apt-get install python3 python3-venv`), and access to PyPI. They create a venv \
         at {dir} and `pip install -r tests/peers/requirements-network.txt` into it; to do that \
         by hand, run `bash tests/peers/install.sh net`. To skip the interop tests on a machine \
         without them (never in CI), set {SKIP_VAR}=1.",
        dir = peers_dir().join("net").display(),
    )
}

pub(super) fn install_net(dir: &Path) -> Result<(), String> {
    install_venv(
        dir,
        "tests/peers/requirements-network.txt",
        "import mitmproxy, trustme",
    )
}

/// Runs `command` to completion within [`INSTALL_DEADLINE`], its output going to `log`, and
/// returns the end of that log in the error when it fails.
pub(super) fn run(command: &mut Command, log: &Path) -> Result<(), String> {
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
