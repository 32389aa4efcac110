//! What stands between umcp and a server in the network tests: mitmproxy as a TLS-intercepting,
//! buffering, streaming or SOCKS5 proxy, a test certificate authority from trustme, and the
//! Python SDK server behind TLS (requiring a client certificate, if asked) or on a Unix socket.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

use super::http::HttpPeer;
use super::{network_python, peers_dir, python_mcp, repo_path};

/// The files of the test certificate authority (see `tests/peers/make_certs.py`).
pub struct Certs {
    dir: PathBuf,
}

impl Certs {
    /// A file of the set: `ca.pem`, `server.pem`, `server.key`, `client.pem`, `client.key`,
    /// `other-ca.pem`, `expired.pem`, `expired.key`.
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

/// The certificates of this test process, made once.
///
/// # Panics
///
/// When the network peers cannot be installed or trustme fails.
pub fn certs() -> &'static Certs {
    static CERTS: OnceLock<Certs> = OnceLock::new();
    CERTS.get_or_init(|| {
        let dir = scratch("certs");
        let output = Command::new(network_python())
            .arg(repo_path("tests/peers/make_certs.py"))
            .arg(&dir)
            .stdin(Stdio::null())
            .output()
            .expect("run make_certs.py");
        assert!(
            output.status.success(),
            "make_certs.py failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        Certs { dir }
    })
}

/// A fresh folder of this test process under `target/peers/run`, for `what`.
pub fn scratch(what: &str) -> PathBuf {
    static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let dir = peers_dir()
        .join("run")
        .join(format!("{}-{what}-{n}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("create a scratch folder");
    dir
}

/// How mitmproxy treats what passes through it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MitmMode {
    /// A forward proxy that intercepts TLS with its own CA and buffers bodies (its default).
    Buffering,
    /// A forward proxy that intercepts TLS and forwards every body as it arrives.
    Streaming,
    /// A SOCKS5 proxy (streaming).
    Socks5,
}

/// A running mitmdump, killed when dropped.
pub struct Mitm {
    peer: HttpPeer,
    confdir: PathBuf,
    mode: MitmMode,
}

impl Mitm {
    /// Starts mitmdump in `mode`, trusting `upstream_ca` for the servers it connects to.
    pub fn start(mode: MitmMode, upstream_ca: &Path) -> Mitm {
        let python = network_python();
        let confdir = scratch("mitm");
        let ready = match mode {
            MitmMode::Socks5 => "SOCKS v5 proxy listening at",
            _ => "HTTP(S) proxy listening at",
        };
        let peer = HttpPeer::start(&format!("mitmdump ({mode:?})"), ready, |port| {
            // Through the venv's interpreter: the `mitmdump` script's first line names the
            // folder the venv was built in, before it was renamed into place.
            let mut command = Command::new(&python);
            command
                .args([
                    "-c",
                    "from mitmproxy.tools.main import mitmdump; mitmdump()",
                ])
                .args(["--listen-host", "127.0.0.1", "-p", &port.to_string()])
                .arg("--set")
                .arg(format!("confdir={}", confdir.display()))
                .arg("--set")
                .arg(format!(
                    "ssl_verify_upstream_trusted_ca={}",
                    upstream_ca.display()
                ))
                .args(["--set", "flow_detail=1"]);
            match mode {
                MitmMode::Buffering => {}
                MitmMode::Streaming => {
                    command
                        .arg("-s")
                        .arg(repo_path("tests/peers/mitm_stream.py"));
                }
                MitmMode::Socks5 => {
                    command
                        .args(["--mode", "socks5"])
                        .arg("-s")
                        .arg(repo_path("tests/peers/mitm_stream.py"));
                }
            }
            command.env("PYTHONUNBUFFERED", "1");
            command
        });
        Mitm {
            peer,
            confdir,
            mode,
        }
    }

    /// The proxy URL: `http://127.0.0.1:<port>`, or `socks5://…` for [`MitmMode::Socks5`].
    pub fn url(&self) -> String {
        match self.mode {
            MitmMode::Socks5 => format!("socks5://127.0.0.1:{}", self.peer.port()),
            _ => format!("http://127.0.0.1:{}", self.peer.port()),
        }
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.peer.port()
    }

    /// mitmproxy's own CA certificate, which signs what it intercepts.
    pub fn ca(&self) -> PathBuf {
        self.confdir.join("mitmproxy-ca-cert.pem")
    }

    /// How many requests it has logged whose line contains `needle` (e.g. `POST https://…/mcp`).
    /// Waits up to 2 s for the count to reach `at_least`: its log lags the traffic a little.
    pub fn seen(&self, needle: &str, at_least: usize) -> usize {
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            let count = self
                .peer
                .output()
                .lines()
                .filter(|line| line.contains(needle))
                .count();
            if count >= at_least || Instant::now() >= deadline {
                return count;
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Its log so far.
    pub fn output(&self) -> String {
        self.peer.output()
    }
}

/// Starts the Python SDK test server on `https://127.0.0.1:<port>/mcp` with `cert`/`key` (files
/// of [`certs`]), requiring a client certificate issued by the test CA when `client_ca`.
pub fn python_https(cert: &str, key: &str, client_ca: bool) -> HttpPeer {
    let python = python_mcp();
    let certs = certs();
    HttpPeer::start(
        "the Python SDK server over TLS",
        "Uvicorn running on https://127.0.0.1:",
        |port| {
            let mut command = Command::new(&python);
            command
                .arg(repo_path("tests/peers/network_server.py"))
                .arg("--port")
                .arg(port.to_string())
                .arg("--cert")
                .arg(certs.file(cert))
                .arg("--key")
                .arg(certs.file(key))
                .env("PYTHONUNBUFFERED", "1");
            if client_ca {
                command.arg("--client-ca").arg(certs.file("ca.pem"));
            }
            command
        },
    )
}

/// The Python SDK test server on a Unix domain socket, killed when dropped.
pub struct UnixPeer {
    child: Child,
    /// The socket.
    pub path: PathBuf,
}

impl UnixPeer {
    /// Starts it, and waits (up to 30 s) until the socket accepts connections.
    pub fn start() -> UnixPeer {
        let path = scratch("uds").join("mcp.sock");
        let child = Command::new(python_mcp())
            .arg(repo_path("tests/peers/network_server.py"))
            .arg("--uds")
            .arg(&path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the Python SDK server on a Unix socket");
        let peer = UnixPeer { child, path };
        let deadline = Instant::now() + Duration::from_secs(30);
        while !peer.accepts() {
            assert!(
                Instant::now() < deadline,
                "the Python SDK server did not listen on {} within 30 s",
                peer.path.display()
            );
            thread::sleep(Duration::from_millis(50));
        }
        peer
    }

    #[cfg(unix)]
    fn accepts(&self) -> bool {
        std::os::unix::net::UnixStream::connect(&self.path).is_ok()
    }

    #[cfg(not(unix))]
    fn accepts(&self) -> bool {
        false
    }
}

impl Drop for UnixPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
