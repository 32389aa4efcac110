//! Stdio request throughput, umcp next to a bare baseline and, when `UMCP_BENCH_RMCP` names
//! its binary, rmcp: `cargo run --release --example bench` (a debug build measures a debug
//! client and server), or `bash .ci/bench` with rmcp.
//!
//! The baseline is the least a blocking client can do: the caller writes its request to the
//! server's stdin, one reader thread parses each line and hands the reply over a crossbeam
//! channel. All call `tools/call echo` on the same minimal server (this program, started with
//! `--server`), which answers each request at once, so the client is what is measured. Every
//! mode runs every client [`REPS`] times, interleaved, and the table shows medians and umcp's
//! ratio to the baseline and to rmcp (the client in [`rmcp`], a process of its own, pinned the
//! same way): [`CALLS`] sequential calls with client and server on the same core, on two
//! different cores (both pinned, when `taskset` and two cores are there) and unpinned, then 8
//! threads sharing one client, each making [`CALLS`] calls (a steady state rather than the
//! start and end of a short run). Context switches (every thread of the client's process, the
//! calling threads included, from `/proc/*/task/*/status`), allocations (counting global
//! allocators) and CPU time (every thread of client and server, from `/proc/*/task/*/schedstat`)
//! are per call, as is the time `close` takes for a server that exits when its stdin closes.
//! Beside the 8-thread modes' scaling stands how busy the whole machine was (`/proc/stat`).
//! Peak RSS is measured in child processes that run only one client's sequential calls (build
//! with `--no-default-features` for the stdio-only figure), split into what is mapped from
//! files (code) and private memory; when `UMCP_BENCH_SMALL` names this program built with the
//! `small` profile and linked statically (as `.ci/bench` does), its peak RSS too.
//!
//! `--only TEXT` runs only the modes whose name contains TEXT (to profile one).
//!
//! The figures vary with the machine and its load; compare ratios within one run.

use std::alloc::{GlobalAlloc, Layout, System};
use std::error::Error;
use std::io::{BufRead, Write};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;

use bare::Bare;
use procfs::{context_switches, cpu_ns, machine_busy, machine_ticks, status_kb, this_thread};
use umcp::{Client, StdioConfig};

mod bare;
mod procfs;
mod rmcp;
mod table;

const REPS: usize = 7;
const CALLS: usize = 2_000;
const THREADS: usize = 8;

type BoxResult<T> = Result<T, Box<dyn Error + Send + Sync>>;

/// Counts every allocation of this process.
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

/// Where client and server run.
#[derive(Clone, Copy, PartialEq)]
enum Placement {
    SameCore,
    AcrossCores,
    Free,
}

/// A client under test.
trait Echo: Sync {
    fn echo(&self, message: &str) -> BoxResult<()>;
    fn close(self: Box<Self>);
}

fn main() -> BoxResult<()> {
    if std::env::args().any(|a| a == "--server") {
        return serve();
    }
    let server = std::env::current_exe()?;
    // `--rss umcp` or `--rss bare`: only that client's sequential calls, then the peak RSS.
    if let Some(which) = std::env::args().skip_while(|a| a != "--rss").nth(1) {
        let client: Box<dyn Echo> = if which == "bare" {
            Box::new(Bare::connect(&server, Placement::Free)?)
        } else {
            connect_umcp(&server, Placement::Free)?
        };
        run(client.as_ref(), 1, CALLS)?;
        client.close();
        let field = |name| status_kb(name).map_or("?".to_owned(), |kb| kb.to_string());
        println!(
            "{} kB ({} kB of files, {} kB private)",
            field("VmHWM:"),
            field("RssFile:"),
            field("RssAnon:")
        );
        return Ok(());
    }
    let pinned = cfg!(target_os = "linux")
        && Command::new("taskset").arg("-V").output().is_ok()
        && cores() >= 2;
    let mut modes = Vec::new();
    if pinned {
        modes.push(("sequential, same core", 1, Placement::SameCore));
        modes.push(("sequential, across cores", 1, Placement::AcrossCores));
    }
    modes.push(("sequential, free", 1, Placement::Free));
    if pinned {
        modes.push(("8 threads, across cores", THREADS, Placement::AcrossCores));
    }
    modes.push(("8 threads, free", THREADS, Placement::Free));
    // `--only TEXT`: only the modes whose name contains TEXT (to profile one of them).
    if let Some(only) = std::env::args().skip_while(|a| a != "--only").nth(1) {
        modes.retain(|(name, _, _)| name.contains(only.as_str()));
    }
    // One rmcp process per mode, started before this thread is pinned.
    let mut rmcps = match rmcp::binary() {
        Some(binary) => modes
            .iter()
            .map(|&(_, threads, placement)| rmcp::Rmcp::start(&binary, &server, placement, threads))
            .collect::<BoxResult<Vec<_>>>()?,
        None => Vec::new(),
    };
    // samples[mode][0 = bare, 1 = umcp, 2 = rmcp (empty without it)]
    let mut samples: Vec<[Vec<Sample>; 3]> = modes.iter().map(|_| Default::default()).collect();
    for _ in 0..REPS {
        for (m, &(_, threads, placement)) in modes.iter().enumerate() {
            // This thread only waits while rmcp runs, but where it waits is the mode's too.
            pin_self(placement);
            if let Some(rmcp) = rmcps.get_mut(m) {
                rmcp.run(1, 200)?; // The same warm-up as the others get.
                samples[m][2].push(rmcp.run(threads, CALLS * threads)?);
            }
            for (k, samples) in samples[m].iter_mut().take(2).enumerate() {
                pin_self(placement);
                let client: Box<dyn Echo> = if k == 0 {
                    Box::new(Bare::connect(&server, placement)?)
                } else {
                    connect_umcp(&server, placement)?
                };
                run(client.as_ref(), 1, 200)?; // Warm-up: page faults and first allocations.
                let mut sample = run(client.as_ref(), threads, CALLS * threads)?;
                let closing = Instant::now();
                client.close();
                sample.close = closing.elapsed();
                samples.push(sample);
            }
        }
    }
    pin_self(Placement::Free);
    drop(rmcps); // Each closes its client and server.
    table::print(&modes, &samples);
    let all = |k: usize| samples.iter().flat_map(move |s| s[k].iter());
    println!(
        "close, median: umcp {:.3} ms, bare {:.3} ms",
        median(all(1).map(|s| s.close.as_secs_f64() * 1e3)),
        median(all(0).map(|s| s.close.as_secs_f64() * 1e3))
    );
    let exe = std::env::current_exe()?;
    println!(
        "peak RSS of sequential calls alone: umcp {}; bare {}",
        peak_rss(&exe, "umcp")?,
        peak_rss(&exe, "bare")?
    );
    // The same program built for size and linked statically (`.ci/bench` builds it).
    if let Some(small) = std::env::var_os("UMCP_BENCH_SMALL").filter(|s| !s.is_empty()) {
        println!(
            "the same, built for size and linked statically: umcp {}; bare {}",
            peak_rss(Path::new(&small), "umcp")?,
            peak_rss(Path::new(&small), "bare")?
        );
    }
    Ok(())
}

/// Runs `exe --rss which` (sequential calls of one client alone) and returns what it printed.
fn peak_rss(exe: &Path, which: &str) -> BoxResult<String> {
    let out = Command::new(exe).args(["--rss", which]).output()?;
    if !out.status.success() {
        return Err(format!("{} --rss {which}: {}", exe.display(), out.status).into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// One measured run.
struct Sample {
    rate: f64,
    ctx: f64,
    /// CPU time per call, client and server together, in µs.
    cpu: f64,
    allocs: f64,
    /// How busy the whole machine was, all its processes and the kernel's own work together,
    /// from 0 to 1 (NaN where `/proc/stat` is missing).
    machine: f64,
    close: Duration,
}

/// Makes `calls` calls split over `threads` threads.
fn run(client: &dyn Echo, threads: usize, calls: usize) -> BoxResult<Sample> {
    // The client's own threads, the server, and (below) the calling threads, each counted by
    // itself before it ends.
    let (ctx, allocs) = (
        context_switches("self"),
        ALLOCATIONS.load(Ordering::Relaxed),
    );
    let cpu = cpu_ns("self");
    let ticks = machine_ticks();
    let start = Instant::now();
    let callers = thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| -> BoxResult<(u64, u64)> {
                    let (cpu, ctx) = this_thread();
                    (0..calls / threads).try_for_each(|_| client.echo("ping"))?;
                    let (cpu_now, ctx_now) = this_thread();
                    Ok((cpu_now.saturating_sub(cpu), ctx_now.saturating_sub(ctx)))
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .try_fold((0, 0), |(cpu, ctx), used| {
                used.map(|(c, x)| (cpu + c, ctx + x))
            })
    })?;
    let elapsed = start.elapsed();
    let n = calls as f64;
    let ctx = context_switches("self").saturating_sub(ctx) + callers.1;
    let cpu = cpu_ns("self").saturating_sub(cpu) + callers.0;
    Ok(Sample {
        rate: n / elapsed.as_secs_f64(),
        ctx: ctx as f64 / n,
        cpu: cpu as f64 / n / 1e3,
        allocs: ALLOCATIONS.load(Ordering::Relaxed).saturating_sub(allocs) as f64 / n,
        machine: machine_busy(ticks),
        close: Duration::ZERO,
    })
}

fn connect_umcp(server: &Path, placement: Placement) -> BoxResult<Box<dyn Echo>> {
    let (program, args) = server_command(server, placement);
    let client = Client::connect(StdioConfig::new(program).args(args))?;
    Ok(Box::new(client))
}

impl Echo for Client {
    fn echo(&self, message: &str) -> BoxResult<()> {
        self.call_tool("echo", json!({ "message": message }))?;
        Ok(())
    }
    fn close(self: Box<Self>) {
        Client::close(&self);
    }
}

/// The command line of the server, pinned with `taskset` where asked.
fn server_command(server: &Path, placement: Placement) -> (String, Vec<String>) {
    let server = server.to_string_lossy().into_owned();
    let cpu = match placement {
        Placement::SameCore => "0",
        Placement::AcrossCores => "1",
        Placement::Free => return (server, vec!["--server".into()]),
    };
    let args = vec!["-c".into(), cpu.into(), server, "--server".into()];
    ("taskset".into(), args)
}

/// Pins this thread (and the threads it starts from now on) to core 0, or frees it.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn pin_self(placement: Placement) {
    let cpus = cores();
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET writes inside it; and
    // sched_setaffinity reads exactly `size_of::<cpu_set_t>()` bytes of it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        match placement {
            Placement::Free => (0..cpus).for_each(|cpu| libc::CPU_SET(cpu, &mut set)),
            _ => libc::CPU_SET(0, &mut set),
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

#[cfg(not(target_os = "linux"))]
fn pin_self(_placement: Placement) {}

/// The machine's cores, counted once before any pinning (which narrows what
/// `available_parallelism` sees to the pinned set).
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| thread::available_parallelism().map_or(1, usize::from))
}

fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut values: Vec<f64> = values.collect();
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

/// The server every client talks to: the least an MCP server can do, so that the client is
/// what is measured, and the server's core is not what limits the 8-thread modes. It reads
/// only the fields it needs, answers each request at once on the thread that read it, and
/// flushes unless another whole request is already waiting (replies to requests that arrived
/// together leave in one write); unknown methods (such as umcp's `server/discover` probe) get
/// -32601.
fn serve() -> BoxResult<()> {
    // A buffer of its own (larger than the one inside `Stdin`, which reads past it), to see
    // whether another request is already waiting.
    let mut stdin = std::io::BufReader::with_capacity(64 * 1024, std::io::stdin());
    let mut stdout = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let mut line = String::new();
    loop {
        // Before waiting for input, never after a reply alone: a notification read after a
        // request must not leave that request's reply waiting in the buffer.
        if !stdin.buffer().contains(&b'\n') {
            stdout.flush()?;
        }
        line.clear();
        if stdin.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let request: Request = serde_json::from_str(&line)?;
        let Some(id) = request.id else {
            continue; // A notification.
        };
        let params = request.params.unwrap_or_default();
        write!(stdout, r#"{{"jsonrpc":"2.0","id":{id},"#)?;
        match request.method.as_ref() {
            "initialize" => {
                let version = serde_json::to_string(&params.protocol_version)?;
                write!(
                    stdout,
                    r#""result":{{"protocolVersion":{version},"capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"bench","version":"0"}}}}}}"#
                )?
            }
            "tools/call" => {
                let text = serde_json::to_string(&params.arguments.message)?;
                write!(
                    stdout,
                    r#""result":{{"content":[{{"type":"text","text":{text}}}]}}}}"#
                )?
            }
            "ping" => write!(stdout, r#""result":{{}}}}"#)?,
            _ => write!(
                stdout,
                r#""error":{{"code":-32601,"message":"method not found"}}}}"#
            )?,
        }
        stdout.write_all(b"\n")?;
    }
}

/// What the server reads of a request: no more than it needs.
#[derive(serde::Deserialize)]
struct Request<'a> {
    #[serde(borrow)]
    id: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow)]
    method: std::borrow::Cow<'a, str>,
    params: Option<Params>,
}

#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Params {
    #[serde(default)]
    protocol_version: String,
    #[serde(default)]
    arguments: Arguments,
}

#[derive(serde::Deserialize, Default)]
struct Arguments {
    #[serde(default)]
    message: String,
}
