//! Streamable HTTP call throughput against a bare ureq keep-alive POST loop:
//! `cargo run --release --example bench_http`, then the same against server-everything with
//! rmcp beside them (see [`everything`]; `bash .ci/bench` runs both with rmcp).
//!
//! Both clients talk to the same minimal JSON server in this program (HTTP/1.1 keep-alive,
//! one thread per connection, every request answered at once), so the client is the
//! bottleneck. The bare loop POSTs the same JSON-RPC body on one reused connection and parses
//! the reply; umcp calls `tools/call` through a `Client`, and through the bare transport
//! (`Transport::send`, the reply taken from the inbox on the same thread), which shows the
//! transport's own cost apart from the client's hand-offs between threads. Runs alternate
//! ([`REPS`] each, interleaved so that drift hits all alike) and the medians are compared.

use std::error::Error;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use umcp::jsonrpc::{Message, Request};
use umcp::transport::http::{HttpConfig, HttpTransportKind};
use umcp::transport::{Connect, Inbound, Inbox, Transport};
use umcp::Client;

mod everything;
mod rmcp;

/// Repetitions of each client; the medians are reported.
const REPS: usize = 9;
/// Calls per repetition.
const CALLS: usize = 2_000;

fn main() -> Result<(), Box<dyn Error>> {
    let url = serve()?;
    let agent = ureq::Agent::new_with_defaults();
    let config = HttpConfig::new(&url)
        .transport(HttpTransportKind::StreamableHttp)
        .standalone_stream(false);
    let client = Client::connect(config.clone())?;
    let (inbox, replies) = Inbox::new();
    let transport = config.connect(inbox)?;
    // `bench_http MODE N` runs one mode only, for profilers (`strace -c`, `perf`);
    // `bench_http everything` only the comparison against server-everything.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    match args.as_slice() {
        [only] if only == "everything" => return everything::run(root),
        // `bench_http everything-umcp N [legacy]`: N calls of umcp alone, for profilers.
        [only, calls, rest @ ..] if only == "everything-umcp" => {
            let pinned = rest.first().is_some_and(|mode| mode == "legacy");
            return everything::profile(root, calls.parse()?, pinned);
        }
        _ => {}
    }
    if let [mode, calls] = args.as_slice() {
        let calls: usize = calls.parse()?;
        let rate = match mode.as_str() {
            "bare" => bare(&agent, &url, calls)?,
            "transport" => with_transport(transport.as_ref(), &replies, calls)?,
            _ => with_client(&client, calls)?,
        };
        println!("{mode}: {rate:.0} calls/s");
        return Ok(());
    }
    // Warm-up: connections, page faults, allocator pools.
    bare(&agent, &url, 200)?;
    with_transport(transport.as_ref(), &replies, 200)?;
    with_client(&client, 200)?;
    let mut rates = [const { Vec::new() }; 3];
    for _ in 0..REPS {
        rates[0].push(bare(&agent, &url, CALLS)?);
        rates[1].push(with_transport(transport.as_ref(), &replies, CALLS)?);
        rates[2].push(with_client(&client, CALLS)?);
    }
    let [bare_rate, transport_rate, client_rate] = rates.map(median);
    println!("Streamable HTTP, {CALLS} sequential calls, median of {REPS} interleaved runs");
    println!(
        "{:<16} {:>10} {:>10} {:>8}",
        "", "calls/s", "µs/call", "ratio"
    );
    for (label, rate) in [
        ("bare ureq", bare_rate),
        ("umcp transport", transport_rate),
        ("umcp client", client_rate),
    ] {
        println!(
            "{label:<16} {rate:>10.0} {:>10.1} {:>8.2}",
            1e6 / rate,
            rate / bare_rate
        );
    }
    println!(
        "ratio umcp / bare: client {:.2}, transport {:.2}",
        client_rate / bare_rate,
        transport_rate / bare_rate
    );
    transport.close();
    client.close();
    everything::run(std::path::Path::new(env!("CARGO_MANIFEST_DIR")))
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

/// The same calls through the transport alone: send, then take the reply from the inbox on
/// this thread. Returns calls per second.
fn with_transport(
    transport: &dyn Transport,
    replies: &crossbeam_channel::Receiver<Inbound>,
    calls: usize,
) -> Result<f64, Box<dyn Error>> {
    let start = Instant::now();
    for id in 0..calls {
        let params = json!({"name": "echo", "arguments": {"text": "hi"}});
        let request = Message::Request(Request::new(id as i64, "tools/call", Some(params)));
        transport.send(&request, Instant::now() + Duration::from_secs(10))?;
        match replies.try_recv() {
            Ok(Inbound::Message(Message::Response(_))) => {}
            other => return Err(format!("unexpected {other:?}").into()),
        }
    }
    Ok(calls as f64 / start.elapsed().as_secs_f64())
}

/// The same calls through a `Client`. Returns calls per second.
fn with_client(client: &Client, calls: usize) -> Result<f64, Box<dyn Error>> {
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
