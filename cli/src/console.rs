//! Where a command's text goes and its answers come from: this process's stdout, stderr and
//! stdin, or, for a command run through a session, the terminal of the `umcp` that asked.
//!
//! Every line a command prints ([`say`](crate::output::say), [`warn`](crate::output::warn)),
//! every progress line, every question a server asks and its answer pass through the console
//! in use, so that one `execute` serves a command run directly and one a session's process runs
//! for another `umcp`. A session runs the commands of several callers at once: each has a
//! console for its own thread ([`redirect_thread`]), handed to the threads it starts
//! ([`inherited`]) and to the callbacks it gives the client (a call's progress). What reaches
//! the process on a thread of no command (a server's question or log message) goes to the
//! command that started last ([`running`]), else to the process's console ([`redirect`]).

use std::cell::RefCell;
use std::io::{self, BufRead, IsTerminal, Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

/// A standard stream whose being a terminal matters: questions are read on stdin and shown
/// on stderr, and listings are aligned in columns on a terminal's stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    Stdin,
    Stdout,
    Stderr,
}

/// A place to print a command's text and read the user's answers.
pub trait Console: Send + Sync {
    /// Writes `text` (whole lines, or a prompt) to stdout. An error of kind
    /// [`BrokenPipe`](io::ErrorKind::BrokenPipe) says the reader is gone.
    fn out(&self, text: &str) -> io::Result<()>;
    /// Writes `text` to stderr; a failure is not reported (there is nowhere to).
    fn err(&self, text: &str);
    /// Whether `stream` is a terminal.
    fn is_terminal(&self, stream: Stream) -> bool;
    /// One line the user typed, without its line break; `None` at the end of input.
    fn read_line(&self) -> Option<String>;
}

/// This process's own standard streams.
pub struct Local;

impl Console for Local {
    fn out(&self, text: &str) -> io::Result<()> {
        let mut out = io::stdout().lock();
        out.write_all(text.as_bytes())?;
        // A text that is no whole line is a prompt, which is to be seen before the answer.
        match text.ends_with('\n') {
            true => Ok(()),
            false => out.flush(),
        }
    }

    fn err(&self, text: &str) {
        let mut err = io::stderr().lock();
        let _ = err.write_all(text.as_bytes());
        let _ = err.flush();
    }

    fn is_terminal(&self, stream: Stream) -> bool {
        match stream {
            Stream::Stdin => io::stdin().is_terminal(),
            Stream::Stdout => io::stdout().is_terminal(),
            Stream::Stderr => io::stderr().is_terminal(),
        }
    }

    fn read_line(&self) -> Option<String> {
        let mut line = String::new();
        match io::stdin().lock().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => {
                let end = line.trim_end_matches(['\n', '\r']).len();
                line.truncate(end);
                Some(line)
            }
        }
    }
}

/// A console that drops what it is given and has no user: a session's process between
/// commands, when a server's log message or question has nobody to reach.
pub struct Nobody;

impl Console for Nobody {
    fn out(&self, _: &str) -> io::Result<()> {
        Ok(())
    }

    fn err(&self, _: &str) {}

    fn is_terminal(&self, _: Stream) -> bool {
        false
    }

    fn read_line(&self) -> Option<String> {
        None
    }
}

/// The console in use; `None` for [`Local`].
static CURRENT: RwLock<Option<Arc<dyn Console>>> = RwLock::new(None);

/// The consoles of the commands a session's process runs at once, by number, the latest
/// last.
static RUNNING: Mutex<Vec<(u64, Arc<dyn Console>)>> = Mutex::new(Vec::new());

/// The number of the next command counted in [`RUNNING`].
static NEXT: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// This thread's own console, which wins over the process's.
    static THREAD: RefCell<Option<Arc<dyn Console>>> = const { RefCell::new(None) };
}

/// The console in use: this thread's own, else that of the command that started last, else
/// the process's.
fn current() -> Option<Arc<dyn Console>> {
    inherited()
        .or_else(|| {
            let running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
            running.last().map(|(_, console)| Arc::clone(console))
        })
        .or_else(|| {
            CURRENT
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
        })
}

/// Counts `console` among those of the commands running, until the guard is dropped: a
/// thread of no command (a server's question, a log message) reaches the one that started
/// last.
pub fn running(console: Arc<dyn Console>) -> Running {
    let number = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
    running.push((number, console));
    Running(number)
}

/// A command's console counted by [`running`], taken out on drop.
pub struct Running(u64);

impl Drop for Running {
    fn drop(&mut self) {
        let mut running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
        running.retain(|(number, _)| *number != self.0);
    }
}

/// This thread's own console, if it has one, for a thread it starts to take on with
/// [`redirect_thread`].
pub fn inherited() -> Option<Arc<dyn Console>> {
    THREAD.with(|own| own.borrow().clone())
}

/// Makes `console` this thread's own until the guard is dropped (`None`: none of its own).
pub fn redirect_thread(console: Option<Arc<dyn Console>>) -> ThreadRedirected {
    ThreadRedirected(THREAD.with(|own| own.replace(console)))
}

/// The thread's console before [`redirect_thread`], put back on drop.
pub struct ThreadRedirected(Option<Arc<dyn Console>>);

impl Drop for ThreadRedirected {
    fn drop(&mut self) {
        let before = self.0.take();
        THREAD.with(|own| own.replace(before));
    }
}

/// Makes `console` the one in use until the guard is dropped, which puts back the one before.
pub fn redirect(console: Arc<dyn Console>) -> Redirected {
    let mut slot = CURRENT.write().unwrap_or_else(PoisonError::into_inner);
    Redirected(slot.replace(console))
}

/// The console that was in use before [`redirect`], put back on drop.
pub struct Redirected(Option<Arc<dyn Console>>);

impl Drop for Redirected {
    fn drop(&mut self) {
        *CURRENT.write().unwrap_or_else(PoisonError::into_inner) = self.0.take();
    }
}

/// Writes `text` to the console's stdout.
pub fn out(text: &str) -> io::Result<()> {
    match current() {
        Some(console) => console.out(text),
        None => Local.out(text),
    }
}

/// Writes `text` to the console's stderr.
pub fn err(text: &str) {
    match current() {
        Some(console) => console.err(text),
        None => Local.err(text),
    }
}

/// Whether the console's `stream` is a terminal.
pub fn is_terminal(stream: Stream) -> bool {
    match current() {
        Some(console) => console.is_terminal(stream),
        None => Local.is_terminal(stream),
    }
}

/// The console's input, read a line at a time as it is asked for.
pub fn input() -> Input {
    Input {
        line: Vec::new(),
        at: 0,
    }
}

/// The console's stdin as a [`BufRead`]: each time its buffer is empty, it asks the console
/// for one more line (a session's caller reads one from its own stdin).
pub struct Input {
    line: Vec<u8>,
    at: usize,
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Input {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.at >= self.line.len() {
            let line = match current() {
                Some(console) => console.read_line(),
                None => Local.read_line(),
            };
            // The end of input is an empty buffer, as `BufRead` has it.
            self.line = line.map(|l| l + "\n").unwrap_or_default().into_bytes();
            self.at = 0;
        }
        Ok(&self.line[self.at..])
    }

    fn consume(&mut self, amount: usize) {
        self.at = self.at.saturating_add(amount).min(self.line.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A console that keeps what it is given and answers from a script.
    struct Scripted {
        written: Mutex<String>,
        answers: Mutex<Vec<String>>,
    }

    impl Console for Scripted {
        fn out(&self, text: &str) -> io::Result<()> {
            self.written.lock().unwrap().push_str(text);
            Ok(())
        }
        fn err(&self, text: &str) {
            self.written.lock().unwrap().push_str(text);
        }
        fn is_terminal(&self, stream: Stream) -> bool {
            stream == Stream::Stdin
        }
        fn read_line(&self) -> Option<String> {
            let mut answers = self.answers.lock().unwrap();
            (!answers.is_empty()).then(|| answers.remove(0))
        }
    }

    #[test]
    fn a_redirected_console_gets_the_text_and_gives_the_answers_until_dropped() {
        let scripted = Arc::new(Scripted {
            written: Mutex::new(String::new()),
            answers: Mutex::new(vec!["yes".into(), "Ada Lovelace".into()]),
        });
        {
            let _guard = redirect(scripted.clone());
            out("one\n").unwrap();
            err("two: ");
            assert!(is_terminal(Stream::Stdin));
            assert!(!is_terminal(Stream::Stderr));
            let mut input = input();
            let mut line = String::new();
            input.read_line(&mut line).unwrap();
            assert_eq!(line, "yes\n");
            let mut rest = String::new();
            input.read_to_string(&mut rest).unwrap();
            assert_eq!(rest, "Ada Lovelace\n");
        }
        // Other tests may print meanwhile, to the same console: only these two are checked.
        let written = scripted.written.lock().unwrap().clone();
        assert!(
            written.contains("one\n") && written.contains("two: "),
            "{written}"
        );
        assert!(current().is_none(), "the local console is back");
    }

    #[test]
    fn a_thread_of_its_own_console_hands_it_to_the_threads_it_starts() {
        let own = Arc::new(Scripted {
            written: Mutex::new(String::new()),
            answers: Mutex::new(Vec::new()),
        });
        let guard = redirect_thread(Some(own.clone()));
        let handed = inherited();
        std::thread::spawn(move || {
            let _guard = redirect_thread(handed);
            out("from a follower\n").unwrap();
        })
        .join()
        .unwrap();
        out("from the command\n").unwrap();
        drop(guard);
        assert!(inherited().is_none());
        assert_eq!(
            *own.written.lock().unwrap(),
            "from a follower\nfrom the command\n"
        );
    }
}
