//! Streamable HTTP call throughput against a bare ureq keep-alive POST loop:
//! `cargo run --release --example bench_http`.
//!
//! Both clients talk to the same minimal JSON server in this program (HTTP/1.1 keep-alive,
//! one thread per connection, every request answered at once), so the client is the
//! bottleneck. The bare loop POSTs the same JSON-RPC body on one reused connection and parses
//! the reply; umcp calls `tools/call` through a `Client`. Runs alternate between the two
//! ([`REPS`] each, interleaved so that drift hits both alike) and the medians are compared.

use std::error::Error;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread;
use std::time::Instant;

use serde_json::{json, Value};
use umcp::transport::http::{HttpConfig, HttpTransportKind};
use umcp::Client;

/// Repetitions of each client; the medians are reported.
const REPS: usize = 9;
/// Calls per repetition.
const CALLS: usize = 2_000;

fn main() -> Result<(), Box<dyn Error>> {
    let url = serve()?;
    let agent = ureq::Agent::new_with_defaults();
    let client = Client::connect(
        HttpConfig::new(&url)
            .transport(HttpTransportKind::StreamableHttp)
            .get_stream(false),
    )?;
    // Warm-up: connections, page faults, allocator pools.
    bare(&agent, &url, 200)?;
    with_umcp(&client, 200)?;
    let mut bare_rates = Vec::with_capacity(REPS);
    let mut umcp_rates = Vec::with_capacity(REPS);
    for _ in 0..REPS {
        bare_rates.push(bare(&agent, &url, CALLS)?);
        umcp_rates.push(with_umcp(&client, CALLS)?);
    }
    let bare_rate = median(bare_rates);
    let umcp_rate = median(umcp_rates);
    println!("Streamable HTTP, {CALLS} sequential calls, median of {REPS} interleaved runs");
    println!("{:<10} {:>10} {:>10}", "", "calls/s", "µs/call");
    for (label, rate) in [("bare ureq", bare_rate), ("umcp", umcp_rate)] {
        println!("{label:<10} {rate:>10.0} {:>10.1}", 1e6 / rate);
    }
    println!("ratio umcp / bare: {:.2}", umcp_rate / bare_rate);
    client.close();
    Ok(())
}

/// The bare baseline: one agent, one kept-alive connection, a JSON body per call, the reply
/// read and parsed. Returns calls per second.
fn bare(agent: &ureq::Agent, url: &str, calls: usize) -> Result<f64, Box<dyn Error>> {
    let start = Instant::now();
    for id in 0..calls {
        let body = json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hi"}}
        })
        .to_string();
        let text = agent
            .post(url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .send(&body)?
            .into_body()
            .read_to_string()?;
        let reply: Value = serde_json::from_str(&text)?;
        if reply["result"].is_null() {
            return Err(format!("unexpected reply {reply}").into());
        }
    }
    Ok(calls as f64 / start.elapsed().as_secs_f64())
}

/// The same calls through umcp. Returns calls per second.
fn with_umcp(client: &Client, calls: usize) -> Result<f64, Box<dyn Error>> {
    let start = Instant::now();
    for _ in 0..calls {
        client.call_tool("echo", json!({"text": "hi"}))?;
    }
    Ok(calls as f64 / start.elapsed().as_secs_f64())
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

/// Starts the minimal server; returns its URL.
fn serve() -> Result<String, Box<dyn Error>> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    thread::Builder::new()
        .name("bench-accept".into())
        .spawn(move || {
            for stream in listener.incoming().flatten() {
                let _ = thread::Builder::new()
                    .name("bench-conn".into())
                    .spawn(move || connection(stream));
            }
        })?;
    Ok(url)
}

/// Answers requests on one connection until the client closes it.
fn connection(stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    loop {
        let (method, length) = {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let method = line.split(' ').next().unwrap_or_default().to_owned();
            let mut length = 0;
            loop {
                line.clear();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let header = line.trim_end();
                if header.is_empty() {
                    break;
                }
                if let Some((name, value)) = header.split_once(':') {
                    if name.eq_ignore_ascii_case("content-length") {
                        length = value.trim().parse().unwrap_or(0);
                    }
                }
            }
            (method, length)
        };
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let response = answer(&method, &body);
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}

/// The HTTP response to one request: JSON-RPC results at once, 202 for notifications, 405
/// for anything but POST.
fn answer(method: &str, body: &[u8]) -> String {
    if method != "POST" {
        return "HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n".into();
    }
    let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    if request["id"].is_null() {
        return "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n".into();
    }
    let result = if request["method"] == "initialize" {
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bench", "version": "0"}
        })
    } else {
        json!({"content": [{"type": "text", "text": "hi"}]})
    };
    let reply = json!({"jsonrpc": "2.0", "id": request["id"], "result": result}).to_string();
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{reply}",
        reply.len()
    )
}
