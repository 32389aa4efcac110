//! Peers serving HTTP on a loopback port: starting them on a free port, draining their output and
//! killing their process group.

use std::fs;
use std::io::{self, Read};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use super::{
    node, python_mcp, python_oauth, python_server_script, repo_path, server_everything,
    ts_v2_server, ts_v2_skills_server,
};

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
    /// `HTTP_START_DEADLINE`, until the server has printed a line containing both
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

    /// As [`HttpPeer::start`], on `port` (a server started again where another one ran).
    ///
    /// # Panics
    ///
    /// As [`HttpPeer::start`], and when the port stays taken.
    pub fn start_on(
        port: u16,
        name: &str,
        ready_text: &str,
        command: impl Fn(u16) -> Command,
    ) -> HttpPeer {
        let mut last_failure = String::new();
        for _ in 0..HTTP_START_ATTEMPTS {
            match HttpPeer::try_start(name, port, ready_text, command(port)) {
                Ok(peer) => return peer,
                Err((failure, true)) => last_failure = failure,
                Err((failure, false)) => panic!("{failure}"),
            }
            // The old server's socket may linger a moment after it was killed.
            thread::sleep(Duration::from_millis(200));
        }
        panic!("{last_failure} (gave up on port {port})")
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
    server_everything_http_on(mode, None)
}

/// As [`server_everything_http`], on `port` when given (a server started again on the port
/// another one listened on).
pub fn server_everything_http_on(mode: &str, port: Option<u16>) -> HttpPeer {
    let entry = server_everything();
    let ready = match mode {
        "sse" => "Server is running on port",
        _ => "listening on port",
    };
    let name = format!("server-everything {mode}");
    let command = |port: u16| {
        let mut command = Command::new(node());
        command.arg(&entry).arg(mode).env("PORT", port.to_string());
        command
    };
    match port {
        Some(port) => HttpPeer::start_on(port, &name, ready, command),
        None => HttpPeer::start(&name, ready, command),
    }
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

/// Starts the TypeScript SDK v2 skills server (its catalog, with directory reads) serving
/// the stateless protocol over Streamable HTTP (endpoint `/mcp`).
pub fn ts_v2_skills_http() -> HttpPeer {
    let script = ts_v2_skills_server();
    HttpPeer::start(
        "the TypeScript SDK v2 skills server",
        "listening on port",
        |port| {
            let mut command = Command::new(node());
            command.arg(&script).env("PORT", port.to_string());
            command
        },
    )
}

/// Starts the Authlib authorization server of `tests/peers/oauth_peer.py`, with `args` after
/// `--port N` (`--access-token-ttl`, `--interval`, …); its issuer is `http://127.0.0.1:<port>`.
pub fn oauth_authorization_server(args: &[&str]) -> HttpPeer {
    let python = python_oauth();
    let script = repo_path("tests/peers/oauth_peer.py");
    HttpPeer::start(
        "the Authlib authorization server",
        "listening on http://127.0.0.1:",
        |port| {
            let mut command = Command::new(&python);
            command
                .arg(&script)
                .arg("authorization-server")
                .arg("--port")
                .arg(port.to_string())
                .args(args)
                .env("PYTHONUNBUFFERED", "1");
            command
        },
    )
}

/// Starts the Python SDK MCP server of `tests/peers/oauth_peer.py` at `/mcp`, protected by the
/// authorization server `issuer`.
pub fn oauth_mcp_server(issuer: &str) -> HttpPeer {
    let python = python_oauth();
    let script = repo_path("tests/peers/oauth_peer.py");
    HttpPeer::start(
        "the Python SDK server behind OAuth",
        "listening on http://127.0.0.1:",
        |port| {
            let mut command = Command::new(&python);
            command
                .arg(&script)
                .arg("mcp-server")
                .arg("--port")
                .arg(port.to_string())
                .args(["--issuer", issuer])
                .env("PYTHONUNBUFFERED", "1");
            command
        },
    )
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
