//! Streamable HTTP against server-everything (the TypeScript SDK's reference server, Node, event
//! streams for answers), side by side with a bare client and rmcp: sequential `tools/call echo`
//! calls, and the time to a connected client.
//!
//! The clients take turns ([`REPS`] interleaved runs, medians): umcp as connected by default
//! (`ProtocolMode::Auto`), umcp with the handshake era pinned, the bare client (ureq, one
//! kept-alive connection, the session header, each answer's event stream read to its
//! message) and, when `UMCP_BENCH_RMCP` names it, rmcp's client (`.ci/rmcp-baseline --http`).
//! Connecting is timed from nothing to a client ready to call: umcp with no verdict (it
//! probes with `server/discover` first), umcp with the verdict a first connection left in its
//! store (no probe), rmcp and the bare client (`initialize` and `notifications/initialized`).

use std::error::Error;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Value};
use umcp::transport::http::HttpConfig;
use umcp::{Client, Options, ProtocolMode, VerdictStore};

use crate::rmcp::Rmcp;

type BoxResult<T> = Result<T, Box<dyn Error>>;

/// Interleaved runs of each client; medians are reported.
const REPS: usize = 7;
/// Sequential calls per run.
const CALLS: usize = 500;
/// Calls each client makes before it is timed: connections, the server's JIT, allocator pools.
const WARM_UP: usize = 50;
/// Connects per run.
const CONNECTS: usize = 5;

/// Runs the comparison when server-everything is installed under `target/peers`.
pub fn run(root: &Path) -> BoxResult<()> {
    let script = root.join(
        "target/peers/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    if !script.exists() {
        println!(
            "\nserver-everything is not installed: `bash tests/peers/install.sh npm` installs it"
        );
        return Ok(());
    }
    let server = Everything::start(&script)?;
    let url = server.url.clone();
    // The server's first session is slower than the others for as long as it lives (the
    // reference server ties work of its own to it): a session nobody measures takes it.
    let _first = Bare::connect(&url)?;
    let mut rmcp = Rmcp::start(&url)?;
    let pinned = || Options::default().with_protocol_mode(ProtocolMode::Legacy);
    // Warm-up: connections, the server's JIT, allocator pools.
    let echo = |client: &Client| -> BoxResult<()> {
        client.call_tool("echo", json!({"message": "ping"}))?;
        Ok(())
    };
    let timed = |f: &mut dyn FnMut() -> BoxResult<()>| -> BoxResult<f64> {
        let start = Instant::now();
        for _ in 0..CALLS {
            f()?;
        }
        Ok(CALLS as f64 / start.elapsed().as_secs_f64())
    };
    if let Some(rmcp) = &mut rmcp {
        rmcp.seq(WARM_UP)?;
    }
    let mut rates: [Vec<f64>; 4] = Default::default();
    let mut connects: [Vec<f64>; 4] = Default::default();
    for rep in 0..REPS {
        // Each run starts with another client, so that none always follows the same one; the
        // clients of this program connect afresh for each (a session of their own, warmed up).
        for k in (0..4).map(|k| (k + rep) % 4) {
            let umcp = |options: Options| -> BoxResult<f64> {
                let client = Client::connect_with_options(HttpConfig::new(&url), options)?;
                (0..WARM_UP).try_for_each(|_| echo(&client))?;
                let rate = timed(&mut || echo(&client))?;
                client.close();
                Ok(rate)
            };
            let rate = match k {
                0 => umcp(Options::default())?,
                1 => umcp(pinned())?,
                2 => {
                    let bare = Bare::connect(&url)?;
                    (0..WARM_UP).try_for_each(|_| bare.echo())?;
                    timed(&mut || bare.echo())?
                }
                _ => match &mut rmcp {
                    Some(rmcp) => {
                        rmcp.fresh()?;
                        rmcp.seq(WARM_UP)?;
                        CALLS as f64 / (rmcp.seq(CALLS)? as f64 / 1e9)
                    }
                    None => continue,
                },
            };
            rates[k].push(rate);
        }
    }
    for _ in 0..REPS {
        connects[0].push(connect_ms(&url, Some(Arc::new(NoVerdicts)))?);
        connects[1].push(connect_ms(&url, None)?);
        connects[2].push(bare_connect_ms(&url)?);
        if let Some(rmcp) = &mut rmcp {
            let ns = rmcp.connect(CONNECTS)?;
            connects[3].push(ns as f64 / 1e6 / CONNECTS as f64);
        }
    }
    print(&rates, &connects, rmcp.is_some());
    Ok(())
}

/// `calls` sequential calls of umcp alone against server-everything, for a profiler.
pub fn profile(root: &Path, calls: usize, pinned: bool) -> BoxResult<()> {
    let script = root.join(
        "target/peers/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    let server = Everything::start(&script)?;
    let mode = match pinned {
        true => ProtocolMode::Legacy,
        false => ProtocolMode::Auto,
    };
    let options = Options::default().with_protocol_mode(mode);
    let client = Client::connect_with_options(HttpConfig::new(&server.url), options)?;
    let start = Instant::now();
    for _ in 0..calls {
        client.call_tool("echo", json!({"message": "ping"}))?;
    }
    println!(
        "{:.0} calls/s",
        calls as f64 / start.elapsed().as_secs_f64()
    );
    client.close();
    Ok(())
}

/// Prints the medians and umcp's ratios.
fn print(rates: &[Vec<f64>; 4], connects: &[Vec<f64>; 4], with_rmcp: bool) {
    let [auto, legacy, bare, rmcp] = rates.clone().map(median);
    println!(
        "\nStreamable HTTP against server-everything, {CALLS} sequential calls, median of {REPS} \
         interleaved runs"
    );
    println!("{:<28} {:>10} {:>10}", "", "calls/s", "µs/call");
    let mut rows = vec![
        ("umcp (auto: handshake era)", auto),
        ("umcp (handshake era pinned)", legacy),
        ("bare ureq client", bare),
    ];
    if with_rmcp {
        rows.push(("rmcp 3.11", rmcp));
    }
    for (label, rate) in rows {
        println!("{label:<28} {rate:>10.0} {:>10.1}", 1e6 / rate);
    }
    let ratio = |other: f64| {
        if other > 0.0 {
            format!("{:.2}", auto / other)
        } else {
            "-".into()
        }
    };
    println!(
        "ratio umcp / bare: {}, umcp / rmcp: {} (pinned: {}, {})",
        ratio(bare),
        ratio(rmcp),
        format_args!("{:.2}", legacy / bare),
        if with_rmcp {
            format!("{:.2}", legacy / rmcp)
        } else {
            "-".into()
        }
    );
    let [cold, warm, bare, rmcp] = connects.clone().map(median);
    println!(
        "connect and initialize over HTTP, median of {REPS} runs of {CONNECTS} connects, ms each"
    );
    println!("{:<28} {:>10.2}", "umcp, no verdict (probes)", cold);
    println!("{:<28} {:>10.2}", "umcp, verdict known", warm);
    println!("{:<28} {:>10.2}", "bare ureq client", bare);
    if with_rmcp {
        println!("{:<28} {:>10.2}", "rmcp 3.11", rmcp);
        println!(
            "ratio umcp with the verdict known / rmcp: {:.2} (below 1: faster)",
            warm / rmcp
        );
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

/// The time of one connect (median of [`CONNECTS`]), ready to call, in ms; each client closed
/// after it was timed. `store`: the verdict store (`None`: the process's, which a first
/// connect has filled).
fn connect_ms(url: &str, store: Option<Arc<dyn VerdictStore>>) -> BoxResult<f64> {
    let mut times = Vec::new();
    for _ in 0..CONNECTS {
        let options = match &store {
            Some(store) => Options::default().with_verdict_store(Arc::clone(store)),
            None => Options::default(),
        };
        let start = Instant::now();
        let client = Client::connect_with_options(HttpConfig::new(url), options)?;
        times.push(start.elapsed().as_secs_f64() * 1e3);
        client.close();
    }
    Ok(median(times))
}

/// The bare client's connect time, as [`connect_ms`].
fn bare_connect_ms(url: &str) -> BoxResult<f64> {
    let mut times = Vec::new();
    for _ in 0..CONNECTS {
        let start = Instant::now();
        let bare = Bare::connect(url)?;
        times.push(start.elapsed().as_secs_f64() * 1e3);
        drop(bare);
    }
    Ok(median(times))
}

/// A store that remembers nothing: every connect probes.
struct NoVerdicts;

impl VerdictStore for NoVerdicts {
    fn load(&self, _: &str) -> Option<ProtocolMode> {
        None
    }
    fn save(&self, _: &str, _: &ProtocolMode) {}
    fn forget(&self, _: &str) {}
}

/// The least a blocking Streamable HTTP client does: POSTs on one kept-alive connection, the
/// session id echoed, each answer read as an event stream to its message.
struct Bare {
    agent: ureq::Agent,
    url: String,
    session: Option<String>,
}

impl Bare {
    fn connect(url: &str) -> BoxResult<Bare> {
        let mut bare = Bare {
            agent: ureq::Agent::new_with_defaults(),
            url: url.to_owned(),
            session: None,
        };
        let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "bare", "version": "0"}});
        bare.request("initialize", init)?;
        bare.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(bare)
    }

    fn echo(&self) -> BoxResult<()> {
        let params = json!({"name": "echo", "arguments": {"message": "ping"}});
        let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params});
        answer(&self.post(&body)?.1).map(drop)
    }

    /// A request whose answer may start the session.
    fn request(&mut self, method: &str, params: Value) -> BoxResult<Value> {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let (session, text) = self.post(&body)?;
        if self.session.is_none() {
            self.session = session;
        }
        answer(&text)
    }

    /// POSTs `body`; the session header and the body's text.
    fn post(&self, body: &Value) -> BoxResult<(Option<String>, String)> {
        let mut request = self
            .agent
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json");
        if let Some(session) = &self.session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-11-25");
        }
        let response = request.send(body.to_string())?;
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        Ok((session, response.into_body().read_to_string()?))
    }
}

impl Drop for Bare {
    fn drop(&mut self) {
        if let Some(session) = &self.session {
            let _ = self
                .agent
                .delete(&self.url)
                .header("mcp-session-id", session)
                .call();
        }
    }
}

/// The result of a JSON-RPC answer, as JSON or as an event stream's first `data` that is not
/// empty (a stream may open with an event that only primes its id).
fn answer(text: &str) -> BoxResult<Value> {
    let json = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .find(|data| !data.trim().is_empty())
        .unwrap_or(text);
    let reply: Value = serde_json::from_str(json.trim())?;
    match reply.get("result") {
        Some(result) => Ok(result.clone()),
        None => Err(format!("no result in {reply}").into()),
    }
}

/// server-everything on a free port, killed when dropped.
struct Everything {
    child: Child,
    url: String,
}

impl Everything {
    fn start(script: &PathBuf) -> BoxResult<Everything> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let mut child = Command::new("node")
            .arg(script)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()?;
        // It says where it listens on stderr.
        let stderr = child.stderr.take().ok_or("no stderr")?;
        let mut lines = BufReader::new(stderr).lines();
        loop {
            match lines.next() {
                Some(Ok(line)) if line.contains("listening on port") => break,
                Some(Ok(_)) => {}
                _ => return Err("server-everything did not start".into()),
            }
        }
        // Its output is drained for good, so it never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Ok(Everything {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        })
    }
}

impl Drop for Everything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
