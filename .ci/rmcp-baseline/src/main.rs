//! An rmcp client driven over stdin, so that `examples/bench` can interleave its runs with
//! umcp's and the bare client's without measuring this process's start-up.
//!
//! `rmcp-baseline [--multi-thread] PROGRAM [ARGS...]` starts the server `PROGRAM ARGS...`;
//! `rmcp-baseline [--multi-thread] --http URL` connects to a Streamable HTTP server. Either way
//! it initializes, then reads one command per line: `seq N` makes N sequential `tools/call
//! echo` calls, `par N` makes N calls spread over 8 tasks sharing the one client, and (over
//! HTTP) `connect N` makes N fresh connections, each initialized and then closed, timing only
//! the connect and `initialize` (until the client is ready to call), and `fresh 0` closes the
//! client and connects a new one, for runs each on a session of its own. After each it prints
//! `ns <elapsed nanoseconds> allocs <allocations>` and waits for the next. At the end of its
//! input it closes the client and exits.
//!
//! Sequential calls run on a tokio current-thread runtime: what a blocking program that
//! wanted rmcp would build, one `block_on` per batch. With `--multi-thread` the runtime is
//! tokio's multi-thread one (a worker per core), which the benchmark uses for the 8-way mode
//! so that rmcp's tasks can run on both cores, as umcp's 8 threads do.

use std::alloc::{GlobalAlloc, Layout, System};
use std::error::Error;
use std::io::{BufRead, Write};
use std::process::{ExitCode, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value};

/// Tasks sharing the client in the `par` mode, as many as the benchmark's threads.
const TASKS: usize = 8;

type BoxResult<T> = Result<T, Box<dyn Error + Send + Sync>>;
type Client = Arc<RunningService<RoleClient, ()>>;

/// Counts every allocation of this process, as the benchmark does for its own clients.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; only a counter is added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() -> ExitCode {
    match drive() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("rmcp-baseline: {error}");
            ExitCode::FAILURE
        }
    }
}

fn drive() -> BoxResult<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let multi_thread = args.first().is_some_and(|a| a == "--multi-thread");
    if multi_thread {
        args.remove(0);
    }
    if args.is_empty() {
        return Err("usage: rmcp-baseline [--multi-thread] (PROGRAM [ARGS...] | --http URL)".into());
    }
    let runtime = if multi_thread {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    }
    .enable_all()
    .build()?;
    let mut client: Client = Arc::new(runtime.block_on(connect(&args))?);
    let url = (args[0] == "--http").then(|| args[1].clone());
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let (mode, calls) = line.split_once(' ').ok_or("expected `seq N` or `par N`")?;
        let calls: usize = calls.trim().parse()?;
        let allocations = ALLOCATIONS.load(Ordering::Relaxed);
        let start = Instant::now();
        match mode {
            "seq" => runtime.block_on(sequential(&client, calls))?,
            "par" => runtime.block_on(spread(&client, calls))?,
            "fresh" => {
                let old = std::mem::replace(&mut client, Arc::new(runtime.block_on(connect(&args))?));
                let old = Arc::try_unwrap(old).map_err(|_| "the client is still shared")?;
                runtime.block_on(old.cancel())?;
            }
            "connect" => {
                let url = url.as_deref().ok_or("`connect` needs --http")?;
                let spent = runtime.block_on(connects(url, calls))?;
                let allocations = ALLOCATIONS.load(Ordering::Relaxed) - allocations;
                writeln!(out, "ns {} allocs {allocations}", spent.as_nanos())?;
                out.flush()?;
                continue;
            }
            _ => return Err(format!("unknown command {line:?}").into()),
        }
        let elapsed = start.elapsed().as_nanos();
        let allocations = ALLOCATIONS
            .load(Ordering::Relaxed)
            .saturating_sub(allocations);
        writeln!(out, "ns {elapsed} allocs {allocations}")?;
        out.flush()?;
    }
    let client = Arc::try_unwrap(client).map_err(|_| "the client is still shared")?;
    runtime.block_on(client.cancel())?;
    Ok(())
}

/// Starts the server, or connects to its URL (`--http URL`), and initializes with rmcp's
/// defaults (the `initialize` handshake).
async fn connect(command: &[String]) -> BoxResult<RunningService<RoleClient, ()>> {
    if let [flag, url] = command {
        if flag == "--http" {
            let transport = StreamableHttpClientTransport::from_uri(url.as_str());
            return Ok(().serve(transport).await?);
        }
    }
    let mut server = tokio::process::Command::new(&command[0]);
    server.args(&command[1..]);
    // The server's stderr is not the benchmark's output (the bare client drops it too).
    let (transport, _) = TokioChildProcess::builder(server)
        .stderr(Stdio::null())
        .spawn()?;
    Ok(().serve(transport).await?)
}

/// `n` fresh connections to `url`, each closed after it is ready; the time spent connecting
/// and initializing, closes left out.
async fn connects(url: &str, n: usize) -> BoxResult<std::time::Duration> {
    let mut spent = std::time::Duration::ZERO;
    for _ in 0..n {
        let start = Instant::now();
        let client = ().serve(StreamableHttpClientTransport::from_uri(url)).await?;
        spent += start.elapsed();
        client.cancel().await?;
    }
    Ok(spent)
}

/// One `tools/call echo` with the arguments the benchmark's other clients send.
async fn echo(client: &Client) -> BoxResult<()> {
    let mut arguments = Map::new();
    arguments.insert("message".to_owned(), Value::from("ping"));
    let params = CallToolRequestParams::new("echo").with_arguments(arguments);
    client.call_tool(params).await?;
    Ok(())
}

async fn sequential(client: &Client, calls: usize) -> BoxResult<()> {
    for _ in 0..calls {
        echo(client).await?;
    }
    Ok(())
}

/// `calls` calls over [`TASKS`] spawned tasks, each making its share in sequence.
async fn spread(client: &Client, calls: usize) -> BoxResult<()> {
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move { sequential(&client, calls / TASKS).await })
        })
        .collect();
    for task in tasks {
        task.await??;
    }
    Ok(())
}
