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

/// The TypeScript SDK v2 test server (`tests/peers/ts_v2_server.mjs`), installing the npm
/// peers on first use. The script is copied next to their `node_modules`, where Node resolves
/// its imports; run it as `PORT=<port> node <path>`.
///
/// # Panics
///
/// As [`server_everything`], or when the script cannot be copied.
pub fn ts_v2_server() -> PathBuf {
    let entry = server_everything();
    // <dir>/node_modules/@modelcontextprotocol/server-everything/dist/index.js -> <dir>
    let dir = entry
        .ancestors()
        .nth(5)
        .expect("the npm install folder")
        .to_path_buf();
    let script = dir.join("ts_v2_server.mjs");
    // Copied under a unique name and renamed into place: parallel tests never see half a file.
    let staging = dir.join(format!(
        ".ts_v2_server.{}.{:?}.tmp",
        std::process::id(),
        thread::current().id()
    ));
    fs::copy(repo_path("tests/peers/ts_v2_server.mjs"), &staging)
        .and_then(|_| fs::rename(&staging, &script))
        .unwrap_or_else(|e| panic!("cannot copy ts_v2_server.mjs into {}: {e}", dir.display()));
    script
}

/// Starts the TypeScript SDK v2 server serving the stateless protocol over Streamable HTTP
/// (endpoint `/mcp`).
pub fn ts_v2_http() -> HttpPeer {
    let script = ts_v2_server();
    HttpPeer::start(
        "the TypeScript SDK v2 server",
        "listening on port",
        |port| {
            let mut command = Command::new(node());
            command.arg(&script).env("PORT", port.to_string());
            command
        },
    )
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

// ---------------------------------------------------------------------------------------------
// Peers serving HTTP on a loopback port
// ---------------------------------------------------------------------------------------------

/// How long a peer HTTP server may take to start listening: generous, machines are shared.
const HTTP_START_DEADLINE: Duration = Duration::from_secs(30);

/// How many ports are tried when the one picked is taken before the server binds it.
const HTTP_START_ATTEMPTS: usize = 5;

/// How many lines of a server's output are kept for failure messages.
const OUTPUT_LINES: usize = 200;

/// A peer server listening on `127.0.0.1:<port>`, killed together with its process group when
/// dropped (also when the test panics, in which case the end of its output is printed).
///
/// Its stdout and stderr are drained by two threads, so a chatty server never blocks on a full
/// pipe; the threads end when the killed server's pipes close.
pub struct HttpPeer {
    name: String,
    port: u16,
    child: std::process::Child,
    output: std::sync::Arc<std::sync::Mutex<std::collections::VecDeque<String>>>,
}

/// What a drain thread reports to [`HttpPeer::start`].
enum PeerEvent {
    /// A line that says the server listens.
    Ready,
    /// One of the two pipes closed.
    Eof,
}

impl HttpPeer {
    /// Starts the command that `command(port)` builds on a free loopback port and waits, up to
    /// [`HTTP_START_DEADLINE`], until the server has printed a line containing both
    /// `ready_text` and the port, holds the listening socket itself (checked in `/proc` on
    /// Linux) and accepts TCP connections. When the server exits instead because the port was
    /// taken in the meantime, it starts over on another port.
    ///
    /// # Panics
    ///
    /// When the server cannot be started, exits for another reason, or does not get ready in
    /// time; the message holds the end of its output.
    pub fn start(name: &str, ready_text: &str, command: impl Fn(u16) -> Command) -> HttpPeer {
        let mut last_failure = String::new();
        for _ in 0..HTTP_START_ATTEMPTS {
            let port = free_port();
            match HttpPeer::try_start(name, port, ready_text, command(port)) {
                Ok(peer) => return peer,
                Err((failure, true)) => last_failure = failure,
                Err((failure, false)) => panic!("{failure}"),
            }
        }
        panic!("{last_failure} (gave up after {HTTP_START_ATTEMPTS} ports)")
    }

    /// One attempt; the error says what happened and whether another port may help.
    fn try_start(
        name: &str,
        port: u16,
        ready_text: &str,
        mut command: Command,
    ) -> Result<HttpPeer, (String, bool)> {
        use std::io::BufRead;
        use std::sync::mpsc;
        use std::sync::{Arc, Mutex};

        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Its own process group, so that whatever it starts dies with it.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command
            .spawn()
            .map_err(|e| (format!("cannot start {name} ({command:?}): {e}"), false))?;
        let output = Arc::new(Mutex::new(std::collections::VecDeque::new()));
        let (events_tx, events) = mpsc::channel();
        let pipes: [Option<Box<dyn Read + Send>>; 2] = [
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        ];
        for pipe in pipes.into_iter().flatten() {
            let output = Arc::clone(&output);
            let events_tx = events_tx.clone();
            let marker = ready_text.to_owned();
            let port_text = port.to_string();
            let spawned = thread::Builder::new()
                .name(format!("peer-output-{port}"))
                .spawn(move || {
                    let mut reader = io::BufReader::new(pipe);
                    let mut raw = Vec::new();
                    loop {
                        raw.clear();
                        match reader.read_until(b'\n', &mut raw) {
                            Ok(0) | Err(_) => break,
                            Ok(_) => {}
                        }
                        let line = String::from_utf8_lossy(&raw).trim_end().to_owned();
                        if line.contains(&marker) && line.contains(&port_text) {
                            let _ = events_tx.send(PeerEvent::Ready);
                        }
                        if let Ok(mut lines) = output.lock() {
                            if lines.len() == OUTPUT_LINES {
                                lines.pop_front();
                            }
                            lines.push_back(line);
                        }
                    }
                    let _ = events_tx.send(PeerEvent::Eof);
                });
            if let Err(e) = spawned {
                let _ = child.kill();
                let _ = child.wait();
                return Err((format!("cannot start a thread for {name}: {e}"), false));
            }
        }
        drop(events_tx);
        // From here on, dropping the peer kills the server.
        let mut peer = HttpPeer {
            name: name.to_owned(),
            port,
            child,
            output,
        };

        let deadline = Instant::now() + HTTP_START_DEADLINE;
        let mut closed_pipes = 0;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match events.recv_timeout(left) {
                Ok(PeerEvent::Ready) => break,
                Ok(PeerEvent::Eof) => {
                    closed_pipes += 1;
                    if closed_pipes < 2 {
                        continue;
                    }
                    let output = peer.output().to_lowercase();
                    let port_taken = output.contains("in use") || output.contains("eaddrinuse");
                    return Err((peer.failure("exited before it listened"), port_taken));
                }
                Err(_) => {
                    return Err((
                        peer.failure(&format!("did not listen within {HTTP_START_DEADLINE:?}")),
                        false,
                    ))
                }
            }
        }
        // The line is not proof that the server got the port: Express 5 runs its listen
        // callback on failure too, so server-everything prints it and then exits (in `sse`
        // mode silently, with status 0). Until the server is seen listening itself, another
        // process may own the port; a server that exits meanwhile lost the port to it.
        let address = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        loop {
            if let Ok(Some(status)) = peer.child.try_wait() {
                let what = format!("exited ({status}) right after saying it listens");
                return Err((peer.failure(&what), true));
            }
            let owned = listens_on(peer.child.id(), port);
            if owned != Some(false) && std::net::TcpStream::connect(address).is_ok() {
                return Ok(peer);
            }
            if Instant::now() >= deadline {
                return Err((peer.failure("is not listening"), false));
            }
            // Polling the process and its socket: there is nothing to wait on instead.
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// The last lines the server printed, stdout and stderr interleaved as read.
    pub fn output(&self) -> String {
        match self.output.lock() {
            Ok(lines) => lines.iter().cloned().collect::<Vec<_>>().join("\n"),
            Err(_) => String::new(),
        }
    }

    fn failure(&self, what: &str) -> String {
        format!(
            "{} on port {} {what}; its output ended with:\n{}",
            self.name,
            self.port,
            self.output()
        )
    }
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        #[cfg(unix)]
        {
            // The server leads its own group (see `try_start`): kill the whole group.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", self.child.id())])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        if thread::panicking() {
            eprintln!(
                "--- output of {} on port {} ---\n{}\n---",
                self.name,
                self.port,
                self.output()
            );
        }
    }
}

/// Whether process `pid` holds the socket listening on TCP `port`, from `/proc` (Linux), or
/// `None` where that cannot be told.
fn listens_on(pid: u32, port: u16) -> Option<bool> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    // The inodes of the listening sockets on `port`: in /proc/net/tcp{,6}, the local address
    // ends with the port in hex, state 0A is LISTEN, and the tenth field is the inode.
    let suffix = format!(":{port:04X}");
    let mut inodes = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() > 9 && fields[1].ends_with(&suffix) && fields[3] == "0A" {
                inodes.push(format!("socket:[{}]", fields[9]));
            }
        }
    }
    let fds = fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    let owned = fds.flatten().any(|fd| {
        fs::read_link(fd.path()).is_ok_and(|target| {
            inodes
                .iter()
                .any(|inode| target.as_os_str() == inode.as_str())
        })
    });
    Some(owned)
}

/// A port that was free on 127.0.0.1 a moment ago.
fn free_port() -> u16 {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .unwrap_or_else(|e| panic!("cannot bind a loopback port: {e}"))
}

/// Starts server-everything serving HTTP: `mode` is `streamableHttp` (endpoint `/mcp`) or
/// `sse` (event stream at `/sse`).
pub fn server_everything_http(mode: &str) -> HttpPeer {
    let entry = server_everything();
    let ready = match mode {
        "sse" => "Server is running on port",
        _ => "listening on port",
    };
    HttpPeer::start(&format!("server-everything {mode}"), ready, |port| {
        let mut command = Command::new(node());
        command.arg(&entry).arg(mode).env("PORT", port.to_string());
        command
    })
}

/// Starts the Python SDK server serving HTTP: `args` is `["streamable-http"]` (endpoint
/// `/mcp`), `["streamable-http", "--json-response"]` or `["sse"]` (event stream at `/sse`).
pub fn python_http(args: &[&str]) -> HttpPeer {
    let python = python_mcp();
    let script = python_server_script();
    HttpPeer::start(
        &format!("the Python SDK server {}", args.join(" ")),
        "Uvicorn running on http://127.0.0.1:",
        |port| {
            let mut command = Command::new(&python);
            command
                .arg(&script)
                .args(args)
                .arg("--port")
                .arg(port.to_string())
                // Unbuffered, so that the ready line is not held back in a pipe buffer.
                .env("PYTHONUNBUFFERED", "1");
            command
        },
    )
}
