//! Connect time per protocol mode and peer: what `ProtocolMode::Auto` costs next to `Legacy`
//! and a stateless pin, against the bundled demo server and the interop peers.
//!
//! ```sh
//! cargo build --example demo && cargo run --example connect_time
//! ```
//!
//! Each figure is the median of `ROUNDS` connects (process start and handshake or probe,
//! until `Client::connect_with_options` returns), every one in a fresh child process so the era
//! verdict cache starts empty; "auto, cached" is a second connect in the same process. The
//! interop peers are used when `cargo test --test interop_modern` has installed them under
//! `target/peers`; missing ones are reported and skipped.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use umcp::transport::http::HttpConfig;
use umcp::{Client, Options, ProtocolMode, StdioConfig};

/// Connects measured per figure.
const ROUNDS: usize = 7;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--measure") {
        measure(&args[1..]);
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let demo = root.join("target/debug/examples/demo");
    let demo_release = root.join("target/release/examples/demo");
    let demo = if demo_release.exists() {
        demo_release
    } else {
        demo
    };
    let peers = root.join("target/peers");
    let python = peers.join("py/bin/python");
    let script = root.join("tests/peers/python_server.py");
    let everything =
        peers.join("npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let ts_v2 = peers.join("npm/ts_v2_server.mjs");
    let d = demo.to_string_lossy().into_owned();
    let py = python.to_string_lossy().into_owned();
    let sc = script.to_string_lossy().into_owned();
    let ev = everything.to_string_lossy().into_owned();

    println!("| peer | transport | legacy | auto | auto, cached | 2026-07-28 pin |");
    println!("|---|---|---|---|---|---|");
    if demo.exists() {
        row("demo server (handshake era)", "stdio", &[&d, "--server"]);
        row(
            "demo server, exits on a first non-initialize",
            "stdio",
            &[&d, "--server", "--behaviour", "strict-init"],
        );
        row(
            "demo server `--modern`",
            "stdio",
            &[&d, "--server", "--modern"],
        );
        http_row(
            "demo server (handshake era)",
            &[&d, "--server", "--http", "127.0.0.1:{port}"],
            &[],
            "listening on",
        );
        http_row(
            "demo server `--modern`",
            &[&d, "--server", "--modern", "--http", "127.0.0.1:{port}"],
            &[],
            "listening on",
        );
    } else {
        println!("(demo server not built: cargo build --example demo)");
    }
    if everything.exists() {
        row(
            "server-everything 2026.8.31 (TS SDK v1)",
            "stdio",
            &["node", &ev, "stdio"],
        );
        http_row(
            "server-everything 2026.8.31 (TS SDK v1)",
            &["node", &ev, "streamableHttp"],
            &[("PORT", "{port}")],
            "listening on port",
        );
    } else {
        println!("(server-everything not installed)");
    }
    if python.exists() {
        row(
            "Python mcp 2.3.0 (both eras)",
            "stdio",
            &[&py, &sc, "stdio"],
        );
        http_row(
            "Python mcp 2.3.0 (both eras)",
            &[&py, &sc, "streamable-http", "--port", "{port}"],
            &[("PYTHONUNBUFFERED", "1")],
            "Uvicorn running",
        );
    } else {
        println!("(Python mcp not installed)");
    }
    if ts_v2.exists() {
        let ts = ts_v2.to_string_lossy().into_owned();
        http_row(
            "TypeScript SDK v2 2.4.0 (stateless only)",
            &["node", &ts],
            &[("PORT", "{port}")],
            "listening on port",
        );
    } else {
        println!("(TypeScript SDK v2 server not installed)");
    }
}

/// One table row for a stdio server started as `command`.
fn row(peer: &str, transport: &str, command: &[&str]) {
    let target: Vec<String> = std::iter::once("stdio".to_owned())
        .chain(command.iter().map(|s| (*s).to_owned()))
        .collect();
    print_row(peer, transport, &target);
}

/// One table row for an HTTP server: started once, measured at `http://127.0.0.1:<port>/mcp`.
fn http_row(peer: &str, command: &[&str], env: &[(&str, &str)], ready: &str) {
    let port = free_port();
    let fill = |s: &str| s.replace("{port}", &port.to_string());
    let mut cmd = Command::new(fill(command[0]));
    cmd.args(command[1..].iter().map(|a| fill(a)));
    for (k, v) in env {
        cmd.env(k, fill(v));
    }
    let Some(_server) = Server::start(cmd, ready) else {
        println!("| {peer} | streamable-http | (did not start) | | | |");
        return;
    };
    let target = vec!["http".to_owned(), format!("http://127.0.0.1:{port}/mcp")];
    print_row(peer, "streamable-http", &target);
}

fn print_row(peer: &str, transport: &str, target: &[String]) {
    // The modes take turns, so a busy moment of the machine spreads over all columns.
    let modes = [
        ("legacy", false),
        ("auto", false),
        ("auto", true),
        ("modern", false),
    ];
    let mut times: Vec<Result<Vec<f64>, String>> = modes.iter().map(|_| Ok(Vec::new())).collect();
    for _ in 0..ROUNDS {
        for (slot, (mode, cached)) in times.iter_mut().zip(modes) {
            if let Ok(list) = slot {
                match once(target, mode, cached) {
                    Ok(ms) => list.push(ms),
                    Err(why) => *slot = Err(why),
                }
            }
        }
    }
    let cells: Vec<String> = times
        .into_iter()
        .map(|slot| match slot {
            Ok(mut list) => {
                list.sort_by(f64::total_cmp);
                format!("{:.0} ms", list[list.len() / 2])
            }
            Err(why) => why,
        })
        .collect();
    println!("| {peer} | {transport} | {} |", cells.join(" | "));
}

/// One connect time in a fresh process, or why it failed.
fn once(target: &[String], mode: &str, cached: bool) -> Result<f64, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(&exe)
        .arg("--measure")
        .arg(mode)
        .arg(if cached { "cached" } else { "cold" })
        .args(target)
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("({e})"))?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    text.parse::<f64>().map_err(|_| {
        if text.starts_with("error") {
            "fails".to_owned()
        } else {
            text
        }
    })
}

/// Child mode: `--measure <mode> <cold|cached> <stdio cmd…|http url>`; prints milliseconds.
fn measure(args: &[String]) {
    // `RUST_LOG=umcp=debug` shows what a connect does, with millisecond timestamps.
    let _ = env_logger::builder().format_timestamp_millis().try_init();
    let mode = match args[0].as_str() {
        "legacy" => ProtocolMode::Legacy,
        "modern" => ProtocolMode::modern(),
        _ => ProtocolMode::Auto,
    };
    let cached = args[1] == "cached";
    let connect = || -> Result<Duration, umcp::Error> {
        let options = Options::default().with_protocol_mode(mode.clone());
        let started = Instant::now();
        let client = match args[2].as_str() {
            "http" => Client::connect_with_options(HttpConfig::new(&args[3]), options)?,
            _ => {
                Client::connect_with_options(StdioConfig::new(&args[3]).args(&args[4..]), options)?
            }
        };
        let elapsed = started.elapsed();
        client.close();
        Ok(elapsed)
    };
    let outcome = if cached {
        connect().and_then(|_| connect())
    } else {
        connect()
    };
    match outcome {
        Ok(elapsed) => println!("{:.1}", elapsed.as_secs_f64() * 1000.0),
        Err(e) => println!("error: {e}"),
    }
}

/// A server process, killed and reaped when dropped.
struct Server(Child);

impl Server {
    /// Starts `command` and waits up to 30 s for a line containing `ready` on stdout or stderr.
    fn start(mut command: Command, ready: &str) -> Option<Server> {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .ok()?;
        let (tx, rx) = mpsc::channel();
        let pipes: Vec<Box<dyn std::io::Read + Send>> = vec![
            Box::new(child.stdout.take()?),
            Box::new(child.stderr.take()?),
        ];
        for pipe in pipes {
            let tx = tx.clone();
            let ready = ready.to_owned();
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    if line.contains(&ready) {
                        let _ = tx.send(());
                    }
                }
            });
        }
        let server = Server(child);
        rx.recv_timeout(Duration::from_secs(30)).ok()?;
        Some(server)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(38_000)
}
