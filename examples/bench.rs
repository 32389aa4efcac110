//! Request throughput and latency against the bundled demo server:
//! `cargo run --release --example bench` (a debug build measures a debug client and server).
//!
//! `tools/call echo` is called sequentially, then from 8 threads sharing one client; each
//! scenario runs several times and the table shows the median of each column.

use std::error::Error;
use std::path::PathBuf;
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;
use umcp::{Client, StdioConfig};

const RUNS: usize = 5;
const CALLS_PER_RUN: usize = 2_000;
const THREADS: usize = 8;

fn main() -> Result<(), Box<dyn Error>> {
    let server = demo_server()?;
    let client = Client::connect(StdioConfig::new(server.to_string_lossy()).arg("--server"))?;
    run(&client, 1, 200)?; // Warm-up: first calls pay for page faults and allocations.
    println!(
        "{:<12} {:>10} {:>10} {:>10}",
        "", "calls/s", "p50 µs", "p99 µs"
    );
    for (label, threads) in [("sequential", 1), ("8 threads", THREADS)] {
        let runs = (0..RUNS)
            .map(|_| run(&client, threads, CALLS_PER_RUN))
            .collect::<umcp::Result<Vec<Run>>>()?;
        let rate = median(runs.iter().map(|r| r.calls_per_sec));
        let p50 = median(runs.iter().map(|r| r.p50.as_secs_f64() * 1e6));
        let p99 = median(runs.iter().map(|r| r.p99.as_secs_f64() * 1e6));
        println!("{label:<12} {rate:>10.0} {p50:>10.1} {p99:>10.1}");
    }
    client.close();
    Ok(())
}

/// One measured run.
struct Run {
    calls_per_sec: f64,
    p50: Duration,
    p99: Duration,
}

/// Makes `calls` calls split over `threads` threads, timing each one.
fn run(client: &Client, threads: usize, calls: usize) -> umcp::Result<Run> {
    let start = Instant::now();
    let mut latencies = thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| scope.spawn(|| echo_calls(client, calls / threads)))
            .collect();
        let mut all = Vec::with_capacity(calls);
        for worker in workers {
            // A panic in a worker is a bug in this program; let it surface as one.
            all.extend(
                worker
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p))?,
            );
        }
        Ok::<_, umcp::Error>(all)
    })?;
    let elapsed = start.elapsed();
    latencies.sort_unstable();
    let at = |pct: usize| latencies[(latencies.len() - 1) * pct / 100];
    Ok(Run {
        calls_per_sec: latencies.len() as f64 / elapsed.as_secs_f64(),
        p50: at(50),
        p99: at(99),
    })
}

fn echo_calls(client: &Client, calls: usize) -> umcp::Result<Vec<Duration>> {
    let mut latencies = Vec::with_capacity(calls);
    for _ in 0..calls {
        let start = Instant::now();
        client.call_tool("echo", json!({"message": "ping"}))?;
        latencies.push(start.elapsed());
    }
    Ok(latencies)
}

fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut values: Vec<f64> = values.collect();
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The demo server built with this program's profile: it sits next to this program in
/// `target/<profile>/examples/`, and is built there first when missing.
fn demo_server() -> Result<PathBuf, Box<dyn Error>> {
    let exe = std::env::current_exe()?;
    let dir = exe.parent().ok_or("this program has no directory")?;
    let server = dir.join(format!("demo{}", std::env::consts::EXE_SUFFIX));
    if !server.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let mut build = Command::new(cargo);
        build
            .args(["build", "--example", "demo"])
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        if !cfg!(debug_assertions) {
            build.arg("--release");
        }
        if !build.status()?.success() {
            return Err("`cargo build --example demo` failed".into());
        }
    }
    Ok(server)
}
