//! The HTTP part of the demo: starts this same program as a Streamable HTTP server on a free
//! port and does tools, progress and sampling again, now over HTTP.

use std::error::Error;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::json;
use umcp::{Client, HttpConfig, RequestOptions};

/// How long the server may take to print its URL.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// The server process, killed and reaped when dropped: on success and on error alike.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs the HTTP part against `exe --server --http 127.0.0.1:0`.
pub fn run(exe: &Path) -> Result<(), Box<dyn Error>> {
    println!("\nthe same server over Streamable HTTP (demo --server --http 127.0.0.1:0):");
    let mut child = Command::new(exe)
        .args(["--server", "--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()?;
    let stdout = child.stdout.take();
    let _server = Served(child);
    let url = server_url(stdout)?;
    let client = Client::connect_with_options(HttpConfig::new(&url), crate::show::options())?;
    let transport = client.transport_kind();
    println!("  connected to {url}, transport {transport}");

    let tools = client.list_all_tools()?;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    println!("  {} tools: {}", names.len(), names.join(", "));

    let sum = client.call_tool("add", json!({"a": 2, "b": 3}))?;
    println!("\nadd(2, 3) over HTTP:\n  {:?}", sum.text());

    // Progress comes on the event stream that answers the POST of the call.
    println!("\nslow(3 steps) over HTTP, with progress:");
    let progress = RequestOptions::default().with_progress(|p| {
        let message = p.message.as_deref().unwrap_or_default();
        println!("  {}/{} {message}", p.progress, p.total.unwrap_or_default());
    });
    let slow = client
        .with(&progress)
        .call_tool("slow", json!({"steps": 3, "delay_ms": 200}))?;
    println!("  {}", slow.text());

    // The server's sampling request comes on that stream too; our answer is a POST of its own.
    println!("\nask_llm over HTTP, sampling on the call's event stream:");
    let reply = client.call_tool("ask_llm", json!({"prompt": "What is 2 + 2?"}))?;
    println!("  {:?}", reply.text());

    // Closing sends DELETE, which ends the session on the server.
    client.close();
    Ok(())
}

/// Reads the URL from the server's first line, `listening on <url>`, waiting at most
/// `START_TIMEOUT`.
fn server_url(stdout: Option<ChildStdout>) -> Result<String, Box<dyn Error>> {
    let stdout = stdout.ok_or("the server's stdout is not piped")?;
    let (tx, rx) = mpsc::channel();
    // The thread ends with the read: at the first line, or when the server is killed.
    std::thread::Builder::new()
        .name("demo-server-stdout".into())
        .spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        })?;
    let line = rx
        .recv_timeout(START_TIMEOUT)
        .map_err(|_| format!("the server printed no URL within {START_TIMEOUT:?}"))?;
    match line.trim().strip_prefix("listening on ") {
        Some(url) => Ok(url.to_owned()),
        None => Err(format!("unexpected first line from the server: {line:?}").into()),
    }
}
