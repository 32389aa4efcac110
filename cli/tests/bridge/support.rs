//! What the bridge's tests share: the installed `umcp`, the command lines of the servers put
//! behind it, the hosts written by others (run with a plan, read back as JSON), and a host of
//! our own that speaks raw JSON-RPC lines, for what the others do not show.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;
use serde_json::{json, Value};
use umcp_test_support::demo::demo_binary;
use umcp_test_support::installed::{empty_home, install_dir};
use umcp_test_support::peers;

/// The installed `umcp`.
pub fn umcp() -> String {
    install_dir().join("umcp").to_string_lossy().into_owned()
}

/// The demo server's command line: `--modern` makes it speak 2026-07-28 only.
pub fn demo(modern: bool) -> String {
    let mut line = format!("'{}' --server --fixtures", demo_binary().display());
    if modern {
        line.push_str(" --modern");
    }
    line
}

/// server-everything's command line over stdio.
pub fn everything() -> String {
    format!("node '{}' stdio", peers::server_everything().display())
}

/// The rmcp server's command line (2026-07-28 only).
pub fn rmcp() -> String {
    format!("'{}'", peers::rmcp_modern().display())
}

/// Runs a host on the TypeScript SDK (`sdk` is `v1` or `v2`) with `plan` (see
/// `cli/tests/peers/ts_host.mjs`), and returns what it printed.
pub fn ts_host(plan: Value) -> Value {
    let script = peers::ts_host();
    let mut command = Command::new(peers::node());
    command.arg(script).arg(plan.to_string());
    host(command)
}

/// Runs the host on the Python SDK with `plan` (see `cli/tests/peers/py_host.py`).
pub fn py_host(plan: Value) -> Value {
    let (python, script) = peers::py_host();
    let mut command = Command::new(python);
    command.arg(script).arg(plan.to_string());
    host(command)
}

/// The plan's way to the bridge over stdio: `umcp bridge` with `args`.
pub fn spawned(args: &[&str]) -> Value {
    let mut all = vec!["bridge"];
    all.extend_from_slice(args);
    json!({ "command": umcp(), "args": all })
}

/// Runs a host to its end (two minutes at most) in the test home, with the bridge's
/// diagnostics on, and reads the JSON line it printed.
fn host(mut command: Command) -> Value {
    let output = command
        .current_dir(empty_home())
        .env("HOME", empty_home())
        .env("UMCP_LOG", "warn")
        .stdin(Stdio::null())
        .output()
        .expect("run the host");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last)
        .unwrap_or_else(|e| panic!("the host printed no JSON ({e}): {stdout}\nstderr: {stderr}"))
}

/// A host of our own: `umcp bridge` started with `args`, spoken to in JSON-RPC lines.
pub struct RawHost {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    /// What came that was not asked for: notifications, and requests for the host.
    pub seen: Vec<Value>,
}

impl RawHost {
    pub fn start(args: &[&str]) -> RawHost {
        RawHost::start_in(args, &[])
    }

    /// Starts it with `envs` added to its environment.
    pub fn start_in(args: &[&str], envs: &[(&str, &str)]) -> RawHost {
        let mut child = Command::new(umcp())
            .arg("bridge")
            .args(args)
            .envs(envs.iter().copied())
            .current_dir(empty_home())
            .env("HOME", empty_home())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start umcp bridge");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = crossbeam_channel::unbounded();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("the bridge wrote no JSON on stdout ({e}): {line}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        RawHost {
            child,
            stdin,
            lines,
            seen: Vec::new(),
        }
    }

    /// Writes a line to the bridge.
    pub fn write(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, message: Value) {
        self.write(&message.to_string());
    }

    /// The next message from the bridge, within `wait`.
    pub fn next(&mut self, wait: Duration) -> Option<Value> {
        self.lines.recv_timeout(wait).ok()
    }

    /// Sends request `id` and waits for its response (30 s), keeping what comes meanwhile.
    pub fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(id)
    }

    /// Waits for the response to request `id` (30 s), keeping what comes meanwhile.
    pub fn response(&mut self, id: i64) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self
                .next(left)
                .unwrap_or_else(|| panic!("no response to {id}; seen: {:?}", self.seen));
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                return message;
            }
            self.seen.push(message);
        }
    }

    /// The handshake of a 2025-11-25 host declaring `capabilities`.
    pub fn initialize(&mut self, capabilities: Value) -> Value {
        let params = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities,
            "clientInfo": {"name": "raw-host", "version": "1.0.0"},
        });
        let answer = self.request(0, "initialize", params);
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    /// Closes stdin, as a host that ends does, and waits for the bridge to exit (20 s).
    pub fn end(&mut self) -> Option<std::process::ExitStatus> {
        self.stdin.take();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for RawHost {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A folder of its own in the test home.
pub fn folder(name: &str) -> PathBuf {
    let dir = empty_home().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Whether process `pid` still runs (Linux: its `/proc` entry, zombies counted as gone).
pub fn alive(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| !stat.split(") ").nth(1).unwrap_or_default().starts_with('Z'))
        .unwrap_or(false)
}
