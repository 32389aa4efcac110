//! An [`AuthorizationHandler`] for a sign-in finished elsewhere: the user opens the authorization
//! URL in a browser on any machine and pastes back the address the browser ended on.

use std::fmt;
use std::io::{self, BufRead, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender};

use super::encoding::parse_query;
use super::handler::AuthorizationHandler;
use super::pause;
use super::urls;
use crate::error::{AuthError, AuthStep, Error, Result};
use crate::sync::lock;
use crate::transport::http::provider_deadline;

/// The longest line read: a redirect address is a few hundred bytes.
const MAX_LINE: u64 = 16 * 1024;
/// How many lines that are not the redirect are read before giving up.
const MAX_TRIES: usize = 3;

/// What a [`PasteHandler`] asks its prompt to show.
///
/// `Display` gives a line ready for a terminal (the URL is the authorization server's: escape it
/// if the terminal must not see control characters).
///
/// See the example on [`PasteHandler`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PastePrompt<'a> {
    /// Open `url` in a browser (on any machine), sign in, and paste the address the browser
    /// ends on: `redirect_uri` followed by `?code=…`, a page that fails to load.
    Open {
        /// The authorization URL.
        url: &'a str,
        /// The address the browser is sent back to, which the pasted one starts with.
        redirect_uri: &'a str,
    },
    /// The pasted line was not that address; ask again.
    Again {
        /// Why the line was not taken.
        reason: &'a str,
    },
}

impl fmt::Display for PastePrompt<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PastePrompt::Open { url, redirect_uri } => write!(
                f,
                "Open this page in a browser, on any machine, and sign in:\n  {url}\nThe browser \
                 then goes to {redirect_uri}?code=… (a page that may fail to load). Paste that \
                 whole address here:"
            ),
            PastePrompt::Again { reason } => {
                write!(f, "{reason}. Paste the whole address the browser ended on:")
            }
        }
    }
}

/// What reads the lines the user pastes.
type Input = Box<dyn BufRead + Send>;

/// Shows the authorization URL with a caller-supplied prompt and reads back, from stdin or
/// another reader, the redirect address the user pastes: the sign-in for a terminal without a
/// browser (over SSH, in a container), finished in a browser elsewhere.
///
/// The pasted address must be the redirect URI followed by the authorization response; a line
/// that is not (an empty line, another address) is asked for again, up to three times. One that
/// carries another `state` than this authorization's is refused at once, as the flow refuses one
/// whose `iss` names another authorization server (RFC 9207). Nothing listens on the redirect
/// URI: by default `http://127.0.0.1/callback`, which the browser elsewhere fails to load,
/// leaving the address to copy.
///
/// The wait for a line ends at the handler's timeout (default 5 minutes), cut to the deadline
/// of the call it serves, or at once when that call's connection closes or its sign-in is
/// cancelled ([`OAuth::authorize_within`](super::OAuth::authorize_within)). Lines are read on a
/// thread of the handler's own (`umcp-paste`), one line when one is asked for, so the reader
/// is never read ahead of the authorization; a read still waiting when the wait ends is
/// answered by the next line typed, which is dropped. Dropping the handler ends that thread
/// when it is not blocked in a read (then it ends with the read).
///
/// ```
/// use std::io::Cursor;
/// use umcp::auth::{OAuthConfig, PasteHandler, PastePrompt};
///
/// let handler = PasteHandler::new(|prompt: PastePrompt<'_>| {
///     eprintln!("{prompt}");
///     Ok(())
/// })
/// // stdin by default; here a reader standing in for the user.
/// .input(Cursor::new("http://127.0.0.1/callback?code=c&state=s\n"))
/// .timeout(std::time::Duration::from_secs(120));
/// let config = OAuthConfig::new(handler);
/// # let _ = config;
/// ```
pub struct PasteHandler {
    prompt: Arc<PromptFn>,
    redirect_uri: String,
    timeout: Duration,
    lines: Mutex<Lines>,
}

/// Shows what a [`PasteHandler`] asks.
type PromptFn = dyn Fn(PastePrompt<'_>) -> io::Result<()> + Send + Sync;

/// The reader, or the thread that took it.
#[derive(Default)]
struct Lines {
    input: Option<Input>,
    reader: Option<Reader>,
}

/// The thread reading lines on request: one request, one line.
struct Reader {
    ask: Sender<()>,
    answers: Receiver<io::Result<Option<String>>>,
    /// Whether the thread is blocked reading (then dropping cannot join it).
    reading: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    /// Whether a line asked for has not been taken yet (a wait that ended before it came).
    owed: bool,
}

impl PasteHandler {
    /// A handler that shows its questions with `prompt` and reads the pasted address from stdin.
    ///
    /// See the example on [`PasteHandler`].
    pub fn new(
        prompt: impl Fn(PastePrompt<'_>) -> io::Result<()> + Send + Sync + 'static,
    ) -> PasteHandler {
        PasteHandler {
            prompt: Arc::new(prompt),
            redirect_uri: "http://127.0.0.1/callback".into(),
            timeout: Duration::from_secs(300),
            lines: Mutex::new(Lines::default()),
        }
    }

    /// Reads the pasted lines from `input` instead of stdin.
    ///
    /// See the example on [`PasteHandler`].
    pub fn input(self, input: impl BufRead + Send + 'static) -> PasteHandler {
        lock(&self.lines).input = Some(Box::new(input));
        self
    }

    /// The redirect URI to register and send (an `http` URI on a loopback host; default
    /// `http://127.0.0.1/callback`).
    ///
    /// See the example on [`PasteHandler`].
    pub fn redirect_uri(mut self, redirect_uri: impl Into<String>) -> PasteHandler {
        self.redirect_uri = redirect_uri.into();
        self
    }

    /// How long to wait for the user (default 5 minutes; `Duration::MAX`: no limit but the
    /// call's).
    ///
    /// See the example on [`PasteHandler`].
    pub fn timeout(mut self, timeout: Duration) -> PasteHandler {
        self.timeout = timeout;
        self
    }

    /// One line from the reader thread, waiting at most until the handler's deadline.
    fn line(&self, lines: &mut Lines) -> Result<Option<String>> {
        let deadline = pause::deadline_within(self.timeout);
        let reader = lines.reader()?;
        if !reader.owed {
            reader.ask.send(()).map_err(|_| gone())?;
            reader.owed = true;
        }
        // The wait is sliced so that the connection's closing is seen within 50 ms.
        loop {
            let slice = Duration::from_millis(50);
            match reader.answers.recv_timeout(slice) {
                Ok(answer) => {
                    reader.owed = false;
                    return answer
                        .map_err(|e| failed(format!("cannot read the pasted address: {e}")));
                }
                Err(RecvTimeoutError::Disconnected) => return Err(gone()),
                Err(RecvTimeoutError::Timeout) => {}
            }
            if provider_deadline::closed() {
                return Err(pause::interrupted().into());
            }
            if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                return Err(failed(format!(
                    "no address was pasted within {:?} (the user did not finish)",
                    self.timeout
                )));
            }
        }
    }

    /// Checks a pasted line against the pending authorization: the redirect address to hand to
    /// the flow, or why the line is not one, to ask again; an error for another sign-in's.
    fn check(
        &self,
        line: &str,
        state: Option<&str>,
    ) -> Result<std::result::Result<String, &'static str>> {
        let line = line.trim();
        if line.is_empty() {
            return Ok(Err("Nothing was pasted"));
        }
        let (address, query) = line.split_once('?').unwrap_or((line, ""));
        let expected = self.redirect_uri.split('?').next().unwrap_or_default();
        if address != expected || query.is_empty() {
            return Ok(Err("That is not the address the browser was sent back to"));
        }
        let params = parse_query(query);
        let pasted_state = params
            .iter()
            .find(|(n, _)| n == "state")
            .map(|(_, v)| v.as_str());
        if state.is_some() && pasted_state != state {
            return Err(failed(
                "the pasted address does not carry this authorization's state (it belongs to \
                 another sign-in); refusing it"
                    .into(),
            ));
        }
        Ok(Ok(line.to_owned()))
    }
}

impl Lines {
    /// The reader thread, started on first use with the configured input (stdin by default).
    fn reader(&mut self) -> Result<&mut Reader> {
        if self.reader.is_none() {
            let input = self
                .input
                .take()
                .unwrap_or_else(|| Box::new(io::BufReader::new(io::stdin())));
            self.reader = Some(Reader::start(input).map_err(|e| {
                failed(format!(
                    "cannot start the thread reading the pasted address: {e}"
                ))
            })?);
        }
        self.reader.as_mut().ok_or_else(gone)
    }
}

impl Reader {
    fn start(mut input: Input) -> io::Result<Reader> {
        let (ask, asked) = bounded::<()>(1);
        let (answer, answers) = bounded(1);
        let reading = Arc::new(AtomicBool::new(false));
        let busy = Arc::clone(&reading);
        let thread = std::thread::Builder::new()
            .name("umcp-paste".into())
            .spawn(move || {
                while asked.recv().is_ok() {
                    busy.store(true, Ordering::SeqCst);
                    let line = read_line(&mut input);
                    busy.store(false, Ordering::SeqCst);
                    if answer.send(line).is_err() {
                        break;
                    }
                }
            })?;
        Ok(Reader {
            ask,
            answers,
            reading,
            thread: Some(thread),
            owed: false,
        })
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        // Closing the request channel ends an idle thread; one blocked in a read ends with it.
        let (closed, _) = bounded(0);
        self.ask = closed;
        if let Some(thread) = self.thread.take() {
            if !self.reading.load(Ordering::SeqCst) {
                let _ = thread.join();
            }
        }
    }
}

/// One line of at most [`MAX_LINE`] bytes, without its line end; `None` at the end of input.
fn read_line(input: &mut Input) -> io::Result<Option<String>> {
    let mut bytes = Vec::new();
    let read = input
        .by_ref()
        .take(MAX_LINE)
        .read_until(b'\n', &mut bytes)?;
    if read == 0 {
        return Ok(None);
    }
    if !bytes.ends_with(b"\n") && read as u64 == MAX_LINE {
        // The rest of an overlong line is skipped, to the line end.
        let mut rest = Vec::new();
        while input.by_ref().take(MAX_LINE).read_until(b'\n', &mut rest)? > 0
            && !rest.ends_with(b"\n")
        {
            rest.clear();
        }
        return Ok(Some(String::new()));
    }
    Ok(Some(
        String::from_utf8_lossy(&bytes)
            .trim_end_matches(['\r', '\n'])
            .to_owned(),
    ))
}

fn failed(message: String) -> Error {
    AuthError::new(AuthStep::Authorization, message).into()
}

fn gone() -> Error {
    failed("the thread reading the pasted address is gone".into())
}

impl fmt::Debug for PasteHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PasteHandler")
            .field("redirect_uri", &self.redirect_uri)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl AuthorizationHandler for PasteHandler {
    fn redirect_uri(&self) -> Result<String> {
        urls::check_redirect_uri(&self.redirect_uri)?;
        Ok(self.redirect_uri.clone())
    }

    fn authorize(&self, authorization_url: &str) -> Result<String> {
        let state = parse_query(urls::query(authorization_url))
            .into_iter()
            .find(|(n, _)| n == "state")
            .map(|(_, v)| v);
        // One authorization at a time reads the input.
        let mut lines = lock(&self.lines);
        let shown = PastePrompt::Open {
            url: authorization_url,
            redirect_uri: &self.redirect_uri,
        };
        (self.prompt)(shown)
            .map_err(|e| failed(format!("cannot show the authorization URL: {e}")))?;
        for _ in 0..MAX_TRIES {
            let Some(line) = self.line(&mut lines)? else {
                return Err(failed(
                    "the input ended before an address was pasted".into(),
                ));
            };
            match self.check(&line, state.as_deref())? {
                Ok(redirect) => return Ok(redirect),
                Err(reason) => (self.prompt)(PastePrompt::Again { reason })
                    .map_err(|e| failed(format!("cannot ask again: {e}")))?,
            }
        }
        Err(failed(format!(
            "no redirect address among {MAX_TRIES} pasted lines; giving up"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn handler(input: &'static str, shown: Arc<Mutex<Vec<String>>>) -> PasteHandler {
        PasteHandler::new(move |prompt: PastePrompt<'_>| {
            lock(&shown).push(prompt.to_string());
            Ok(())
        })
        .input(Cursor::new(input))
    }

    #[test]
    fn a_pasted_redirect_is_taken_after_lines_that_are_not_it() {
        let shown = Arc::new(Mutex::new(Vec::new()));
        let input = "\nhttps://elsewhere.example/?code=x&state=s\n  http://127.0.0.1/callback?code=c&state=s  \n";
        let paste = handler(input, Arc::clone(&shown));
        let redirect = paste
            .authorize("https://as.example/authorize?client_id=a&state=s")
            .unwrap();
        assert_eq!(redirect, "http://127.0.0.1/callback?code=c&state=s");
        let shown = lock(&shown).clone();
        assert_eq!(shown.len(), 3, "{shown:?}");
        assert!(shown[0].contains("https://as.example/authorize"));
        assert!(shown[1].starts_with("Nothing was pasted"));
        assert!(shown[2].starts_with("That is not the address"));
    }

    #[test]
    fn another_sign_ins_state_is_refused_and_the_input_may_end() {
        let shown = Arc::new(Mutex::new(Vec::new()));
        let paste = handler(
            "http://127.0.0.1/callback?code=c&state=other\n",
            Arc::clone(&shown),
        );
        let error = paste.authorize("https://as.example/a?state=s").unwrap_err();
        assert!(error.to_string().contains("state"), "{error}");
        let ended = handler("", Arc::clone(&shown)).authorize("https://as.example/a?state=s");
        assert!(ended.unwrap_err().to_string().contains("input ended"));
        let tries = handler("a\nb\nc\nd\n", shown).authorize("https://as.example/a?state=s");
        assert!(tries.unwrap_err().to_string().contains("giving up"));
    }

    #[test]
    fn the_wait_for_a_paste_ends_at_the_call_deadline_or_when_its_connection_closes() {
        use crate::error::Closed;
        use crate::transport::http::provider_deadline::{within, CloseSignal};
        use std::time::Instant;

        // Nobody ever types: the writer end is kept open and silent.
        let (reader, _writer) = io::pipe().unwrap();
        let paste =
            PasteHandler::new(|_: PastePrompt<'_>| Ok(())).input(io::BufReader::new(reader));
        let signal = Arc::new(CloseSignal::default());
        let started = Instant::now();
        let soon = started + Duration::from_millis(300);
        let late = within(soon, &signal, || {
            paste.authorize("https://as.example/a?state=s")
        });
        assert!(late
            .unwrap_err()
            .to_string()
            .contains("no address was pasted"));
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );

        // The read still waiting is the next authorization's; a close ends that one at once.
        let closer = Arc::clone(&signal);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            closer.close(Arc::new(Closed::default()));
        });
        let started = Instant::now();
        let far = started + Duration::from_secs(60);
        let closed = within(far, &signal, || {
            paste.authorize("https://as.example/a?state=s")
        });
        assert!(closed.is_err());
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn an_overlong_line_is_skipped_not_kept() {
        let long = format!("{}\nnext\n", "x".repeat(40 * 1024));
        let mut input: Input = Box::new(Cursor::new(long));
        assert_eq!(read_line(&mut input).unwrap().as_deref(), Some(""));
        assert_eq!(read_line(&mut input).unwrap().as_deref(), Some("next"));
        assert_eq!(read_line(&mut input).unwrap(), None);
    }
}
