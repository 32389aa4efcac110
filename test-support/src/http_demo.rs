//! The bundled demo server in Streamable HTTP mode, for the tests that need it over HTTP.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use umcp::{Client, Options, ServerConfig};

use crate::demo;

/// The demo server in HTTP mode; killed and reaped on drop, also when a test fails.
pub struct HttpDemo {
    child: Child,
    /// `http://127.0.0.1:<port>/mcp`
    pub url: String,
    /// `127.0.0.1:<port>`
    pub address: String,
}

impl HttpDemo {
    /// Starts `demo --server --fixtures --http 127.0.0.1:0` with `extra` arguments
    /// (`--modern`, …) and waits for the URL it prints.
    pub fn start(extra: &[&str]) -> HttpDemo {
        let mut child = Command::new(demo::demo_binary())
            .args(["--server", "--fixtures", "--http", "127.0.0.1:0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the demo server");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        // Kill the child if it never says where it listens.
        let mut server = HttpDemo {
            child,
            url: String::new(),
            address: String::new(),
        };
        let line = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("the server printed its URL");
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_default();
        let address = url
            .strip_prefix("http://")
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"));
        assert!(address.starts_with("127.0.0.1:"), "{line:?}");
        server.address = address.to_owned();
        server.url = url.to_owned();
        server
    }

    /// Connects to it over HTTP with `options`. Through a [`ServerConfig`], which every build
    /// of the library has (a build without `http` compiles this, and its HTTP tests are left
    /// out).
    pub fn connect(&self, options: Options) -> Client {
        let connector = ServerConfig::http("demo", &self.url)
            .connector()
            .expect("an HTTP connector");
        Client::connect_with_options(connector, options).expect("connect over HTTP")
    }

    /// Whether the server process is still running.
    pub fn still_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for HttpDemo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
