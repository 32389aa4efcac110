//! Command-line options and the scripted misbehaviours tests pick with `--behaviour`.
//!
//! Each behaviour reproduces one way real servers go wrong (a crash, a flood, a stuck pipe,
//! a grandchild that outlives its parent, …) so the client's handling of it can be tested
//! against a real process.
//!
//! The options for tests, which the demo's usage does not show: `--fixtures` (the tools only
//! tests need, see `fixtures.rs`), `--behaviour NAME`, `--page-size N` (items per page of
//! every list), `--garbage N` and `--bytes N` (the sizes some behaviours use),
//! `--start-delay MS` and `--describe TOOL=TEXT` (lists tool `TOOL` with that description, as
//! an update of the server might). With `UMCP_DEMO_RECORD=<file>` set, the server appends every
//! notification it receives to that file, one JSON object per line.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::process::{self, Command};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use serde_json::json;
use umcp::jsonrpc::Notification;

use super::{lock, spawn, Server};

/// The environment variable naming a file where every client notification is appended.
const RECORD_ENV: &str = "UMCP_DEMO_RECORD";

/// How the server behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// A well-behaved server.
    Normal,
    /// Exits with status 1, unanswered, on the first `tools/call` of `slow`.
    CrashMidCall,
    /// Writes `--garbage N` garbage lines before every real message.
    Garbage,
    /// Writes `--bytes` bytes to stderr from a background thread while serving.
    StderrFlood,
    /// After `notifications/initialized`, sends `--bytes` worth of 1 MiB log notifications.
    StdoutFlood,
    /// Answers `initialize`, then never reads stdin again.
    StopReading,
    /// Answers `initialize`, then reads and ignores every request.
    NeverAnswer,
    /// Starts a child process that sleeps, printing `grandchild pid <pid>` to stderr.
    Grandchild,
    /// Pings the client before answering `initialize`, and answers only after the pong.
    PingFirst,
    /// Answers `initialize` with protocol version `1999-01-01`.
    BadVersion,
    /// Writes `fatal: config missing` to stderr and exits 1 on `initialize`.
    ExitOnInit,
    /// Serves normally; named for the `huge` tool, which returns a text of `--bytes` bytes.
    HugeMessage,
    /// Exits 3 when the first request is anything but `initialize`.
    StrictInit,
    /// Never answers `server/discover`.
    SilentProbe,
    /// `--modern --http`: the first request of each method (but `server/discover`) gets an
    /// event stream that ends before the response, unhandled.
    LoseFirstResponse,
}

const BEHAVIOURS: [(&str, Behaviour); 15] = [
    ("normal", Behaviour::Normal),
    ("crash-mid-call", Behaviour::CrashMidCall),
    ("garbage", Behaviour::Garbage),
    ("stderr-flood", Behaviour::StderrFlood),
    ("stdout-flood", Behaviour::StdoutFlood),
    ("stop-reading", Behaviour::StopReading),
    ("never-answer", Behaviour::NeverAnswer),
    ("grandchild", Behaviour::Grandchild),
    ("ping-first", Behaviour::PingFirst),
    ("bad-version", Behaviour::BadVersion),
    ("exit-on-init", Behaviour::ExitOnInit),
    ("huge-message", Behaviour::HugeMessage),
    ("strict-init", Behaviour::StrictInit),
    ("silent-probe", Behaviour::SilentProbe),
    ("lose-first-response", Behaviour::LoseFirstResponse),
];

/// The command-line options of server mode.
#[derive(Debug, Clone)]
pub struct Opts {
    pub behaviour: Behaviour,
    /// Items per page of every list; 0 puts everything on one page.
    pub page_size: usize,
    /// Garbage lines before each message (`garbage` behaviour).
    pub garbage: usize,
    /// Size of the floods and of the `huge` tool's text.
    pub bytes: u64,
    /// Serve Streamable HTTP on this address instead of stdio (`--http 127.0.0.1:0`).
    pub http: Option<String>,
    /// Speak the stateless protocol 2026-07-28 only (`--modern`).
    pub modern: bool,
    /// Offer the tools only tests need (`--fixtures`).
    pub fixtures: bool,
    /// How long the server takes to start before it reads stdin (`--start-delay MS`), as a
    /// first `npx -y` download or heavy imports do; it says so on stderr first.
    pub start_delay: Duration,
    /// Descriptions that replace the listed ones, by tool name (`--describe TOOL=TEXT`).
    pub describe: Vec<(String, String)>,
}

impl Opts {
    /// Parses `[--modern] [--http ADDR]` and the options for tests: `[--fixtures]
    /// [--behaviour NAME] [--page-size N] [--garbage N] [--bytes N] [--start-delay MS]
    /// [--describe TOOL=TEXT]…`.
    pub fn parse(args: &[String]) -> Result<Opts, String> {
        let mut opts = Opts {
            behaviour: Behaviour::Normal,
            page_size: 0,
            garbage: 5,
            bytes: 100 * 1024 * 1024,
            http: None,
            modern: false,
            fixtures: false,
            start_delay: Duration::ZERO,
            describe: Vec::new(),
        };
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            if arg == "--modern" {
                opts.modern = true;
                continue;
            }
            if arg == "--fixtures" {
                opts.fixtures = true;
                continue;
            }
            let value = args
                .next()
                .ok_or_else(|| format!("`{arg}` needs a value"))?;
            let number = || {
                value
                    .parse::<u64>()
                    .map_err(|_| format!("`{arg} {value}`: not a number"))
            };
            match arg.as_str() {
                "--behaviour" | "--behavior" => {
                    opts.behaviour = BEHAVIOURS
                        .iter()
                        .find(|(name, _)| name == value)
                        .map(|(_, b)| *b)
                        .ok_or_else(|| {
                            let names: Vec<&str> = BEHAVIOURS.iter().map(|(n, _)| *n).collect();
                            format!("unknown behaviour `{value}`; one of: {}", names.join(", "))
                        })?;
                }
                "--page-size" => opts.page_size = usize::try_from(number()?).unwrap_or(usize::MAX),
                "--garbage" => opts.garbage = usize::try_from(number()?).unwrap_or(usize::MAX),
                "--bytes" => opts.bytes = number()?,
                "--http" => opts.http = Some(value.clone()),
                "--start-delay" => opts.start_delay = Duration::from_millis(number()?),
                "--describe" => {
                    let (tool, text) = value
                        .split_once('=')
                        .ok_or_else(|| format!("`--describe {value}`: not TOOL=TEXT"))?;
                    opts.describe.push((tool.to_owned(), text.to_owned()));
                }
                _ => {
                    return Err(format!(
                        "unknown argument `{arg}`; usage: demo --server [--modern] \
                         [--http ADDR]"
                    ))
                }
            }
        }
        Ok(opts)
    }
}

/// Progress of the stderr flood, which the `flood_status` tool waits on.
pub struct Flood {
    /// Bytes written so far, and whether the flood is over.
    progress: Mutex<(u64, bool)>,
    over: Condvar,
}

impl Flood {
    /// A flood that is over before it started unless `running`.
    pub fn new(running: bool) -> Flood {
        Flood {
            progress: Mutex::new((0, !running)),
            over: Condvar::new(),
        }
    }

    /// Waits up to `timeout` for the flood to end; returns the bytes written and whether it
    /// ended.
    pub fn wait(&self, timeout: Duration) -> (u64, bool) {
        let progress = lock(&self.progress);
        let (progress, _) = self
            .over
            .wait_timeout_while(progress, timeout, |(_, over)| !*over)
            .unwrap_or_else(PoisonError::into_inner);
        *progress
    }

    fn wrote(&self, bytes: u64) {
        lock(&self.progress).0 += bytes;
    }

    fn finish(&self) {
        lock(&self.progress).1 = true;
        self.over.notify_all();
    }
}

/// Starts what a behaviour does from the beginning, before any message is read.
pub fn on_start(server: &Arc<Server>) {
    match server.opts.behaviour {
        Behaviour::StderrFlood => {
            let server = Arc::clone(server);
            spawn("demo-stderr-flood", move || stderr_flood(&server));
        }
        Behaviour::Grandchild => {
            // Started like a wrapper (npx, uvx) starts the real server: same stdio, same
            // process group, so it keeps the pipes open after its parent is gone.
            let spawned = std::env::current_exe()
                .and_then(|exe| Command::new(exe).arg("--grandchild").spawn());
            match spawned {
                Ok(child) => eprintln!("grandchild pid {}", child.id()),
                Err(e) => {
                    eprintln!("demo server: cannot start the grandchild: {e}");
                    process::exit(1);
                }
            }
        }
        _ => {}
    }
}

/// Starts what a behaviour does once the client has sent `notifications/initialized`.
pub fn on_initialized(server: &Arc<Server>) {
    if server.opts.behaviour == Behaviour::StdoutFlood {
        let server = Arc::clone(server);
        spawn("demo-stdout-flood", move || {
            let chunk = "x".repeat(1024 * 1024);
            let mut sent = 0;
            while sent < server.opts.bytes {
                let params = json!({"level": "debug", "logger": "flood", "data": chunk});
                server.notify("notifications/message", Some(params));
                sent += chunk.len() as u64;
            }
        });
    }
}

fn stderr_flood(server: &Server) {
    let line = format!("{}\n", "stderr flood ".repeat(5000));
    let mut written = 0;
    while written < server.opts.bytes {
        let left = usize::try_from(server.opts.bytes - written).unwrap_or(usize::MAX);
        let chunk = &line.as_bytes()[..line.len().min(left)];
        if io::stderr().write_all(chunk).is_err() {
            break;
        }
        written += chunk.len() as u64;
        server.flood.wrote(chunk.len() as u64);
    }
    server.flood.finish();
}

/// `n` lines of garbage: log lines, invalid UTF-8, JSON that is not JSON-RPC, blank lines.
pub fn garbage_block(n: usize) -> Vec<u8> {
    const KINDS: [&[u8]; 7] = [
        b"Server listening on port 3000\n",
        b"\xff\xfe invalid \xc3\x28 UTF-8\n",
        b"{\"hello\":\"world\"}\n",
        b"[1,2,3]\n",
        b"42\n",
        b"{\"jsonrpc\":\"2.0\"}\n",
        b"\n",
    ];
    KINDS
        .iter()
        .cycle()
        .take(n)
        .flat_map(|k| k.iter().copied())
        .collect()
}

/// Appends `note` to the file named by `UMCP_DEMO_RECORD`, one JSON object per line, so
/// tests can see what the client sent even when the server answers nothing.
pub fn record(note: &Notification) {
    let Some(path) = std::env::var_os(RECORD_ENV) else {
        return;
    };
    let line = json!({"method": note.method, "params": note.params}).to_string();
    let written = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(format!("{line}\n").as_bytes()));
    if let Err(e) = written {
        eprintln!(
            "demo server: cannot record to {}: {e}",
            path.to_string_lossy()
        );
    }
}

/// Sleeps "forever": an hour, then exits, so a process a failed test left behind does not
/// linger on the machine indefinitely.
pub fn sleep_forever() -> ! {
    thread::sleep(Duration::from_secs(3600));
    process::exit(0);
}
