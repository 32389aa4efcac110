//! A session's process: it connects the servers as a command would, tells the `umcp` that
//! started it how that went, and then runs the commands other `umcp`s send it over its
//! socket, several at once, each on its caller's console, until it is stopped, its servers
//! are gone, or it has been idle (no command running) for its `--idle` time.
//!
//! Bounds: at most [`MAX_CALLERS`] connections at once (one thread each; one more is told the
//! session is busy and closed at once); each message at most
//! [`MAX_MESSAGE`](super::wire::MAX_MESSAGE) bytes; the first message within
//! [`HELLO`](super::wire::HELLO); every read with a deadline of [`TICK`], every write of
//! [`WRITE_TIMEOUT`]. A caller that says nothing, trickles bytes, stops reading or goes away
//! holds no more than its own connection, and its command is stopped.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use crate::sync::lock;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TrySendError};
use umcp::{Manager, ServerConfig, ServerStatus, ServerTransport};

use super::dir;
use super::turns::{Seats, Turns};
use super::wire::{self, Reader, Reply, Request, Run, Status, TICK, WRITE_TIMEOUT};
use crate::args;
use crate::arguments::Stdin;
use crate::console::{self, Console, Nobody, Stream};
use crate::deadline::Interrupt;
use crate::exit::Exit;
use crate::signals::Shutdown;

/// The most callers connected at once, each served by a thread of its own.
pub const MAX_CALLERS: usize = 16;

/// How long a question waits for its answer from the caller's terminal.
const ASK_WAIT: Duration = Duration::from_secs(600);

/// How long a session waits for a command by default before it ends.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(3600);

/// How often the session looks whether it is idle or its servers are gone.
const WATCH_EVERY: Duration = Duration::from_secs(1);

/// Runs the session's process, its stdin the connection to the `umcp` that started it, whose
/// first message holds the command line it was started with (`session start NAME …`).
pub fn run(shutdown: &Shutdown) -> Result<(), Exit> {
    let startup = io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .map(UnixStream::from)
        .map_err(|e| Exit(1, format!("no connection to the starting umcp: {e}")))?;
    let mut reader = Reader::new(startup.try_clone().map_err(io_exit)?).map_err(io_exit)?;
    let run: Run = match reader.next_within(wire::HELLO) {
        Ok(Request::Run(run)) => run,
        _ => return Err(Exit(1, "the starting umcp said nothing".into())),
    };
    let link = Link::open(startup, reader, &run).map_err(io_exit)?;
    let bound: Arc<Mutex<Option<Bound>>> = Arc::new(Mutex::new(None));
    // Ctrl-C in the starting umcp: the servers started so far are stopped, and that is all.
    let stop = shutdown.stopper();
    let (cancelled, unbind) = (Arc::clone(&link), Arc::clone(&bound));
    link.on_cancel(move |signal| {
        if let Some(bound) = lock(&unbind).as_ref() {
            bound.remove();
        }
        let code = 128 + i32::from(signal);
        cancelled.finish(u8::try_from(code).unwrap_or(1));
        stop(code);
    });
    let code = {
        let _console = console::redirect(Arc::clone(&link) as Arc<dyn Console>);
        let raw = run.args.iter().map(OsString::from).collect();
        crate::exit::report(start(raw, shutdown, &bound))
    };
    let session = match code {
        0 => bound_session(&bound),
        _ => None,
    };
    let Some(session) = session else {
        if let Some(bound) = lock(&bound).take() {
            bound.remove();
        }
        let code = code.max(1);
        link.finish(code);
        return Err(Exit(code, String::new()));
    };
    // From now on, what nobody asked for (a log message, a question between commands)
    // reaches nobody.
    let _nobody = console::redirect(Arc::new(Nobody));
    link.finish(0);
    drop(link);
    session.serve(shutdown)
}

/// The session being set up: its socket once bound, and its servers once connected.
struct Bound {
    name: String,
    path: PathBuf,
    /// The socket's inode, so that only this process's socket is ever removed.
    ino: u64,
    listener: UnixListener,
    idle: Duration,
    /// The servers, once connected.
    connected: Option<crate::run::Connected>,
}

impl Bound {
    /// Removes the socket, if it is still this session's.
    fn remove(&self) {
        remove_socket(&self.path, self.ino);
    }
}

/// Removes the socket at `path` if it is the one of inode `ino`.
fn remove_socket(path: &Path, ino: u64) {
    if fs::symlink_metadata(path).is_ok_and(|m| m.ino() == ino) {
        let _ = fs::remove_file(path);
    }
}

/// `server`, ending with this process however it ends: a session lives for hours, and may be
/// killed (`kill -9`, out of memory, a logout) with no code of its own run; a stdio server's
/// whole process tree then ends with it, the helpers it started included.
fn ended_with_this_process(mut server: ServerConfig) -> ServerConfig {
    if let ServerTransport::Stdio(stdio) = &mut server.transport {
        *stdio = stdio.clone().end_with_parent(true);
    }
    server
}

/// Parses the command line, takes the session's name and connects the servers, everything
/// said on the starting umcp's console. The session is left in `bound`.
fn start(
    raw: Vec<OsString>,
    shutdown: &Shutdown,
    bound: &Arc<Mutex<Option<Bound>>>,
) -> Result<(), Exit> {
    let args = args::parse(raw)?;
    crate::verbose::init(args.verbose);
    let (cmd, rest) = args::command(&args)?;
    let name = match rest.as_slice() {
        ["start", name] => name.to_string(),
        _ => return Err(crate::exit::usage("bad arguments: umcp session start NAME")),
    };
    super::check_start(&args, &name)?;
    let servers = crate::run::configured(&args, cmd)?;
    let mut servers = servers;
    servers.servers = servers
        .servers
        .into_iter()
        .map(ended_with_this_process)
        .collect();
    let dir = dir::runtime_dir()?;
    let path = dir::socket(&dir, &name);
    let listener = bind(&path, &name)?;
    let ino = fs::symlink_metadata(&path).map(|m| m.ino()).unwrap_or(0);
    *lock(bound) = Some(Bound {
        name,
        path,
        ino,
        listener,
        idle: args.idle.unwrap_or(DEFAULT_IDLE),
        connected: None,
    });
    let connected = crate::run::connect(&args, servers, shutdown, false)?;
    if let Some(bound) = lock(bound).as_mut() {
        bound.connected = Some(connected);
    }
    Ok(())
}

/// Listens at `path`, where no other session of the name may be running; a socket left by
/// one that crashed is taken over. Only the user can connect.
fn bind(path: &Path, name: &str) -> Result<UnixListener, Exit> {
    match dir::connect(path)? {
        dir::Found::Live(_) => return Err(Exit(1, format!("session `{name}` is already running"))),
        dir::Found::Stale | dir::Found::Missing => {}
    }
    let listener = UnixListener::bind(path).map_err(|e| match e.kind() {
        io::ErrorKind::AddrInUse => Exit(1, format!("session `{name}` is already running")),
        _ => Exit(
            1,
            format!(
                "cannot listen at {}: {e} (a shorter UMCP_RUNTIME_DIR helps if it is too long)",
                path.display()
            ),
        ),
    })?;
    // The directory is private already; the socket is too, should it ever be moved.
    let _ = fs::set_permissions(path, fs::Permissions::from_mode(0o600));
    Ok(listener)
}

/// The session once set up: its socket bound and its servers connected.
fn bound_session(bound: &Arc<Mutex<Option<Bound>>>) -> Option<Session> {
    let bound = lock(bound).take()?;
    let connected = bound.connected?;
    Some(Session {
        name: bound.name.clone(),
        path: bound.path.clone(),
        ino: bound.ino,
        idle: bound.idle,
        started: Instant::now(),
        manager: Arc::clone(&connected.manager),
        listener: bound.listener,
        turns: Turns::new(),
        seats: Seats::new(MAX_CALLERS),
        _connected: connected,
    })
}

/// A running session.
struct Session {
    name: String,
    path: PathBuf,
    ino: u64,
    idle: Duration,
    started: Instant,
    manager: Arc<Manager>,
    listener: UnixListener,
    /// The command running, and the `watch`es beside it.
    turns: Turns,
    /// The callers connected.
    seats: Arc<Seats>,
    /// The servers and the printer of their log messages (`--log`), for the session's life.
    _connected: crate::run::Connected,
}

impl Session {
    /// Accepts callers until the session ends (which ends the process).
    fn serve(self, shutdown: &Shutdown) -> Result<(), Exit> {
        let session = Arc::new(self);
        // A signal (`kill`) ends the session as `session stop` does: its socket goes first.
        let (path, ino) = (session.path.clone(), session.ino);
        shutdown.intercept(move |_| {
            remove_socket(&path, ino);
            false
        });
        let watcher = Arc::clone(&session);
        let stop = shutdown.stopper();
        std::thread::Builder::new()
            .name("umcp-session-idle".into())
            .spawn(move || watcher.watch(stop))
            .map_err(|e| Exit(1, format!("cannot watch the session: {e}")))?;
        for stream in session.listener.incoming() {
            let Ok(stream) = stream else {
                // Out of descriptors, say: a moment for callers to leave.
                std::thread::sleep(TICK);
                continue;
            };
            let Some(seat) = session.seats.take() else {
                refuse(
                    &stream,
                    &format!("{MAX_CALLERS} callers are connected already"),
                );
                continue;
            };
            let serving = Arc::clone(&session);
            // The seat goes with the thread, and back when it ends, however it ends (or at
            // once, when no thread can be started).
            let _ = std::thread::Builder::new()
                .name("umcp-session-caller".into())
                .spawn(move || {
                    let _seat = seat;
                    serving.caller(stream);
                });
        }
        Ok(())
    }

    /// Ends the session when it has been idle for its time, or its servers are all gone;
    /// `stop` closes the servers and ends the process.
    fn watch(&self, stop: impl Fn(i32)) {
        loop {
            let turn = self.turns.after(WATCH_EVERY);
            if turn.busy() {
                continue;
            }
            let idle = turn.last.elapsed() >= self.idle;
            drop(turn);
            let gone = self.manager.statuses().iter().all(|(_, status)| {
                !status.is_connected() && !matches!(status, ServerStatus::Connecting { .. })
            });
            if idle || gone {
                remove_socket(&self.path, self.ino);
                stop(0);
                return;
            }
        }
    }

    /// Serves one connection: its first message says what it wants.
    fn caller(&self, stream: UnixStream) {
        if stream.set_write_timeout(Some(WRITE_TIMEOUT)).is_err() {
            return;
        }
        let Ok(mut reader) = stream.try_clone().and_then(Reader::new) else {
            return;
        };
        match reader.next_within::<Request>(wire::HELLO) {
            Ok(Request::Run(run)) => self.command(stream, reader, run),
            Ok(Request::Status {}) => {
                let _ = wire::send(&stream, &Reply::Status(self.status()));
            }
            Ok(Request::Stop {}) => {
                remove_socket(&self.path, self.ino);
                self.manager.close();
                let _ = wire::send(&stream, &Reply::Exit { code: 0 });
                std::process::exit(0);
            }
            _ => {}
        }
    }

    /// Runs one command for a caller, on the caller's console, beside the commands of the
    /// other callers: each one's output, questions and Ctrl-C are its own caller's.
    fn command(&self, stream: UnixStream, reader: Reader, run: Run) {
        let received = Instant::now();
        let Ok(link) = Link::open(stream, reader, &run) else {
            return;
        };
        let words = run.args.into_iter().map(OsString::from).collect();
        let parsed = args::parse(words);
        let watch = parsed
            .as_ref()
            .is_ok_and(|a| a.command.first().is_some_and(|c| c == "watch"));
        let json = parsed.as_ref().is_ok_and(|a| a.json);
        // Held until the command ends, or unwinds: either gives the turn back.
        let _watching = watch.then(|| self.turns.watch());
        let turn = (!watch).then(|| self.turns.take());
        if turn.as_ref().is_some_and(|t| t.alone) {
            // The time the user took answering questions is forgotten when no other command
            // runs to count it.
            crate::deadline::reset_asked();
        }
        let interrupt = Interrupt::default();
        let stopping = interrupt.clone();
        link.ends_with_stdout.store(watch, Ordering::SeqCst);
        link.on_cancel(move |_| stopping.interrupt());
        let result = {
            let console = Arc::clone(&link) as Arc<dyn Console>;
            let _thread = console::redirect_thread(Some(Arc::clone(&console)));
            // What a server asks or logs on a thread of its own reaches the command that
            // started last, a watch excepted.
            let _running = (!watch).then(|| console::running(console));
            // A command that panics ends with an error for its caller, as any failure does;
            // its turn and seat go back as the guards unwind.
            let run = std::panic::AssertUnwindSafe(|| {
                parsed.and_then(|args| {
                    let (cmd, rest) = args::command(&args)?;
                    super::check_through(&args, cmd)?;
                    // The caller read its stdin and files into the words it sent.
                    let stdin = Stdin::Refused("a session's process has no stdin of yours");
                    let arguments = crate::run::arguments(cmd, &rest, stdin)?;
                    let command = (cmd, rest.as_slice(), arguments);
                    crate::run::execute(&self.manager, &args, command, received, &interrupt)
                })
            });
            let result = std::panic::catch_unwind(run).unwrap_or_else(|_| {
                Err(Exit(
                    1,
                    "the command failed unexpectedly (a bug in umcp)".into(),
                ))
            });
            match link.cancelled() {
                // Stopped by the caller: its own signal is the exit code, nothing printed.
                Some(signal) => 128 + signal,
                None => crate::exit::report_as(result, json),
            }
        };
        // The caller has its exit code before the session looks idle (or ends, its servers
        // gone): what it printed last is never cut off. The turn goes back after.
        link.finish(result);
    }

    fn status(&self) -> Status {
        let turn = self.turns.now();
        let servers = self.manager.statuses().into_iter().map(|(name, status)| {
            let state = match status.is_connected() {
                true => "connected".to_owned(),
                false => crate::servers::why_down(&status),
            };
            wire::ServerState { name, state }
        });
        Status {
            name: self.name.clone(),
            pid: std::process::id(),
            servers: servers.collect(),
            uptime: self.started.elapsed().as_secs(),
            idle: match turn.busy() {
                true => 0,
                false => turn.last.elapsed().as_secs(),
            },
            idle_limit: self.idle.as_secs(),
            busy: turn.busy(),
        }
    }
}

/// Tells a caller the session cannot take it, without waiting on it.
fn refuse(stream: &UnixStream, why: &str) {
    let _ = stream.set_write_timeout(Some(TICK));
    let _ = wire::send(
        stream,
        &Reply::Err {
            text: format!("umcp: session busy: {why}\n"),
        },
    );
    let _ = wire::send(stream, &Reply::Exit { code: 1 });
}

fn io_exit(error: io::Error) -> Exit {
    Exit(1, error.to_string())
}

/// What ends the callback given to [`Link::on_cancel`].
type OnCancel = Box<dyn Fn(u8) + Send + Sync>;

/// The connection to one caller while its command runs: its console (output, questions)
/// and the thread that reads what it sends (answers, Ctrl-C) and says `alive` meanwhile.
struct Link {
    writer: Mutex<UnixStream>,
    last_write: Mutex<Instant>,
    stdin: bool,
    stdout: bool,
    stderr: bool,
    answers: Receiver<Option<String>>,
    /// The signal the caller passed on (0: none).
    cancelled: AtomicU8,
    /// Set when the caller's stdout is gone.
    closed: AtomicBool,
    /// Whether the command ends when the caller's stdout is gone (a `watch`, which would
    /// only learn it from its next line).
    ends_with_stdout: AtomicBool,
    /// Set when the connection failed or the caller left.
    gone: AtomicBool,
    /// Set when the command ended: the reader stops.
    done: AtomicBool,
    on_cancel: Mutex<Option<OnCancel>>,
    reader: Mutex<Option<JoinHandle<()>>>,
}

impl Link {
    /// Starts reading what the caller sends.
    fn open(stream: UnixStream, reader: Reader, run: &Run) -> io::Result<Arc<Link>> {
        stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
        // One answer waits at most: the caller sends one per question.
        let (answer, answers) = crossbeam_channel::bounded(1);
        let link = Arc::new(Link {
            writer: Mutex::new(stream),
            last_write: Mutex::new(Instant::now()),
            stdin: run.stdin,
            stdout: run.stdout,
            stderr: run.stderr,
            answers,
            cancelled: AtomicU8::new(0),
            closed: AtomicBool::new(false),
            ends_with_stdout: AtomicBool::new(false),
            gone: AtomicBool::new(false),
            done: AtomicBool::new(false),
            on_cancel: Mutex::new(None),
            reader: Mutex::new(None),
        });
        let reading = Arc::clone(&link);
        let thread = std::thread::Builder::new()
            .name("umcp-session-read".into())
            .spawn(move || reading.read(reader, answer))?;
        *lock(&link.reader) = Some(thread);
        Ok(link)
    }

    /// Reads the caller's messages until the command ends or the caller leaves.
    fn read(&self, mut reader: Reader, answer: Sender<Option<String>>) {
        while !self.done.load(Ordering::SeqCst) {
            match reader.next::<Request>() {
                Ok(None) => {
                    if lock(&self.last_write).elapsed() >= wire::HEARTBEAT {
                        self.send(&Reply::Alive {});
                    }
                }
                Ok(Some(Request::Line { text })) => {
                    // An answer nobody asked for is dropped rather than queued.
                    if let Err(TrySendError::Full(_)) = answer.try_send(text) {}
                }
                Ok(Some(Request::Cancel { signal })) => self.cancel(signal.max(1)),
                Ok(Some(Request::Closed {})) => {
                    self.closed.store(true, Ordering::SeqCst);
                    if self.ends_with_stdout.load(Ordering::SeqCst) {
                        // Stopped, though not by the caller: the exit code is the command's.
                        self.fire(0);
                    }
                }
                Ok(Some(_)) => {}
                Err(_) => {
                    self.gone.store(true, Ordering::SeqCst);
                    // The caller left (or broke the protocol): as if it was interrupted.
                    self.cancel(1);
                    return;
                }
            }
        }
    }

    /// Runs `callback` with the signal when the caller cancels (at once if it did).
    fn on_cancel(&self, callback: impl Fn(u8) + Send + Sync + 'static) {
        *lock(&self.on_cancel) = Some(Box::new(callback));
        if let Some(signal) = self.cancelled() {
            self.fire(signal);
        }
    }

    fn cancel(&self, signal: u8) {
        if self.cancelled.swap(signal, Ordering::SeqCst) == 0 {
            self.fire(signal);
        }
    }

    fn fire(&self, signal: u8) {
        let callback = lock(&self.on_cancel).take();
        if let Some(callback) = callback {
            callback(signal);
        }
    }

    /// The signal the caller passed on, if it did (1 when it left).
    fn cancelled(&self) -> Option<u8> {
        match self.cancelled.load(Ordering::SeqCst) {
            0 => None,
            signal => Some(signal),
        }
    }

    /// Whether the caller stopped the command or left.
    fn ended(&self) -> bool {
        self.cancelled().is_some() || self.gone.load(Ordering::SeqCst)
    }

    /// Sends one message; false when it could not be (the caller is then gone).
    fn send(&self, reply: &Reply) -> bool {
        if self.gone.load(Ordering::SeqCst) {
            return false;
        }
        let sent = wire::send(&lock(&self.writer), reply);
        *lock(&self.last_write) = Instant::now();
        if sent.is_err() {
            self.gone.store(true, Ordering::SeqCst);
            self.cancel(1);
        }
        sent.is_ok()
    }

    /// Stops reading and sends the exit code. The caller leaves once it has it: its leaving
    /// no longer cancels anything.
    fn finish(&self, code: u8) {
        lock(&self.on_cancel).take();
        self.done.store(true, Ordering::SeqCst);
        self.send(&Reply::Exit { code });
        let reader = lock(&self.reader).take();
        // The reader looks up every tick; the cancel callback runs on it, and may end here.
        if let Some(reader) = reader {
            if reader.thread().id() != std::thread::current().id() {
                let _ = reader.join();
            }
        }
    }
}

impl Console for Link {
    fn out(&self, text: &str) -> io::Result<()> {
        let broken = || io::Error::from(io::ErrorKind::BrokenPipe);
        if self.closed.load(Ordering::SeqCst) {
            return Err(broken());
        }
        for piece in wire::chunks(text) {
            if !self.send(&Reply::Out {
                text: piece.to_owned(),
            }) {
                return Err(broken());
            }
        }
        Ok(())
    }

    fn err(&self, text: &str) {
        for piece in wire::chunks(text) {
            if !self.send(&Reply::Err {
                text: piece.to_owned(),
            }) {
                return;
            }
        }
    }

    fn is_terminal(&self, stream: Stream) -> bool {
        match stream {
            Stream::Stdin => self.stdin,
            Stream::Stdout => self.stdout,
            Stream::Stderr => self.stderr,
        }
    }

    fn read_line(&self) -> Option<String> {
        while self.answers.try_recv().is_ok() {}
        if !self.send(&Reply::Ask {}) {
            return None;
        }
        let asked = Instant::now();
        while asked.elapsed() < ASK_WAIT {
            if self.ended() {
                return None;
            }
            if let Ok(answer) = self.answers.recv_timeout(TICK) {
                return answer;
            }
        }
        None
    }
}
