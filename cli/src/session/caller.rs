//! The `umcp` side of a session: a request sent to the session's process, and what comes back
//! relayed until it says how the command ended.
//!
//! The output goes to this process's stdout and stderr as it arrives (or to a [`Sink`] that
//! keeps it); a question's need for a line is met from this process's stdin; Ctrl-C is passed
//! on, so that the command stops in the session while its servers go on.

use std::io;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::wire::{self, Reader, Reply, Request, SILENCE};
use crate::console::{self, Console, Local};
use crate::exit::Exit;
use crate::signals::Shutdown;

/// How long a caller waits for the session to stop a command it passed Ctrl-C on to.
const GRACE: Duration = Duration::from_secs(5);

/// Where a command's output goes.
pub trait Sink {
    fn out(&mut self, text: &str) -> io::Result<()>;
    fn err(&mut self, text: &str);
}

/// This process's console: the output as a command run here would print it.
pub struct Printed;

impl Sink for Printed {
    fn out(&mut self, text: &str) -> io::Result<()> {
        console::out(text)
    }

    fn err(&mut self, text: &str) {
        console::err(text);
    }
}

/// The output kept (stdout) and dropped (stderr): for what a shell asks for itself.
#[derive(Default)]
pub struct Kept(pub String);

impl Sink for Kept {
    fn out(&mut self, text: &str) -> io::Result<()> {
        self.0.push_str(text);
        Ok(())
    }

    fn err(&mut self, _: &str) {}
}

/// What a signal does while a request is relayed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum OnSignal {
    /// Passes it on, waits a moment for the command to stop, and ends the program (a
    /// command run through a session).
    Exit,
    /// Passes it on, and the program goes on (a shell).
    Stop,
}

/// Sends `request` on `stream` and relays the replies until the exit code; `session` names
/// the session in messages. While it runs, the signals `shutdown` watches are passed on as
/// `on_signal` says. A command stopped by a signal here ends with 128 + its number.
pub fn relay(
    stream: UnixStream,
    request: &Request,
    session: &str,
    sink: &mut dyn Sink,
    shutdown: Option<(&Shutdown, OnSignal)>,
) -> Result<u8, Exit> {
    let lost = |why: String| Exit(3, format!("session `{session}`: {why}"));
    stream
        .set_write_timeout(Some(wire::WRITE_TIMEOUT))
        .map_err(|e| lost(e.to_string()))?;
    let mut reader = stream
        .try_clone()
        .and_then(Reader::new)
        .map_err(|e| lost(e.to_string()))?;
    let writer = Arc::new(Mutex::new(stream));
    let send = |request: &Request| {
        let writer = writer.lock().unwrap_or_else(PoisonError::into_inner);
        wire::send(&writer, request)
    };
    send(request).map_err(|e| lost(format!("cannot send the command: {e}")))?;
    let signalled = Arc::new(AtomicU8::new(0));
    let ended = Arc::new((Mutex::new(false), Condvar::new()));
    let mut before = None;
    if let Some((shutdown, mode)) = shutdown {
        let (writer, signalled, ended) = (
            Arc::clone(&writer),
            Arc::clone(&signalled),
            Arc::clone(&ended),
        );
        before = shutdown.intercept(move |signal| {
            // A second signal: the program ends at once, as it always does.
            if signalled.swap(signal, Ordering::SeqCst) != 0 {
                return false;
            }
            let writer = writer.lock().unwrap_or_else(PoisonError::into_inner);
            let _ = wire::send(&writer, &Request::Cancel { signal });
            drop(writer);
            if mode == OnSignal::Stop {
                return true;
            }
            // The session's last words (its exit code) are awaited a moment, then the
            // program ends as interrupted whatever they are.
            let (done, wake) = &*ended;
            let done = done.lock().unwrap_or_else(PoisonError::into_inner);
            let _ = wake.wait_timeout_while(done, GRACE, |done| !*done);
            std::process::exit(128 + i32::from(signal));
        });
    }
    let result = relay_replies(&mut reader, &send, sink, &signalled, &lost);
    if let Some((shutdown, _)) = shutdown {
        shutdown.restore(before);
    }
    let (done, wake) = &*ended;
    *done.lock().unwrap_or_else(PoisonError::into_inner) = true;
    wake.notify_all();
    let signal = signalled.load(Ordering::SeqCst);
    match (result, signal) {
        (result, 0) => result,
        // Interrupted here: the exit code says so, whatever the session answered.
        (Ok(_), signal) => Ok(128 + signal),
        (Err(e), _) => Err(e),
    }
}

/// Relays replies until the exit code.
fn relay_replies(
    reader: &mut Reader,
    send: &dyn Fn(&Request) -> io::Result<()>,
    sink: &mut dyn Sink,
    signalled: &AtomicU8,
    lost: &dyn Fn(String) -> Exit,
) -> Result<u8, Exit> {
    let mut heard = Instant::now();
    let mut interrupted: Option<Instant> = None;
    let mut closed = false;
    loop {
        let reply = match reader.next::<Reply>() {
            Ok(Some(reply)) => reply,
            Ok(None) => {
                if signalled.load(Ordering::SeqCst) != 0 {
                    let since = *interrupted.get_or_insert_with(Instant::now);
                    if since.elapsed() >= GRACE {
                        return Ok(128 + signalled.load(Ordering::SeqCst));
                    }
                }
                if heard.elapsed() >= SILENCE {
                    return Err(lost(format!("no answer for {}s", SILENCE.as_secs())));
                }
                continue;
            }
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                return Err(lost("it ended during the command".into()));
            }
            Err(e) => return Err(lost(e.to_string())),
        };
        heard = Instant::now();
        match reply {
            Reply::Out { text } => {
                if let Err(error) = sink.out(&text) {
                    crate::output::failed_write(&error);
                    // The reader had enough (`| head -1`): the session is told, so that a
                    // `watch` there ends as it would here.
                    if !closed && error.kind() == io::ErrorKind::BrokenPipe {
                        closed = true;
                        let _ = send(&Request::Closed {});
                    }
                }
            }
            Reply::Err { text } => sink.err(&text),
            Reply::Ask {} => {
                let text = Local.read_line();
                heard = Instant::now();
                if send(&Request::Line { text }).is_err() {
                    return Err(lost("it ended during the command".into()));
                }
            }
            Reply::Exit { code } => return Ok(code),
            Reply::Alive {} | Reply::Status(_) => {}
        }
    }
}
