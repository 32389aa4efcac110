//! An [`AuthorizationHandler`] for desktop and command-line programs: the user's browser,
//! and a one-shot HTTP listener on 127.0.0.1 for the redirect (RFC 8252 §7.3).

use std::collections::VecDeque;
use std::fmt;
use std::io;
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

mod connection;

use connection::{respond, Pending, Poll};

use super::encoding::parse_query;
use super::handler::AuthorizationHandler;
use super::pause;
use super::urls;
use crate::error::{AuthError, AuthStep, Error, Result};
use crate::transport::http::provider_deadline;

/// How often a pending accept looks at its deadline.
const POLL: Duration = Duration::from_millis(50);
/// How long writing the answer page may take.
const WRITE_TIMEOUT: Duration = Duration::from_secs(2);
/// The most connections waiting for their request head at once; when more arrive, the
/// oldest is closed (browsers preconnect, and a local process may trickle bytes).
const MAX_CONNECTIONS: usize = 16;

/// The function that shows the authorization URL to the user, usually by opening a browser.
type Opener = dyn Fn(&str) -> io::Result<()> + Send + Sync;

/// Opens the authorization URL with a caller-supplied function and waits for the browser to
/// come back to `http://127.0.0.1:<port>/callback`.
///
/// The listener is bound on the first use (port 0 picks a free one) and kept, so the
/// redirect URI stays the same for later authorizations. Each authorization waits for one
/// request to the callback path carrying the pending `state` (others get a 404 or 400 page),
/// answers it with a short page that shows nothing the authorization server sent (the
/// response is checked after, and the application reports the outcome), and gives up after the
/// timeout (default 5 minutes; `Duration::MAX` waits without limit), cut to the deadline of the
/// call it serves, or within 50 ms of the client closing the
/// connection the authorization is for (the opener it calls first is not interrupted). Connections are read side by side, each given 10 s
/// for its request and at most 16 at once, so a browser's preconnect or a local process
/// trickling bytes cannot hold the redirect back. Authorizations through one handler (one
/// shared by several servers) take turns: the next one waits for the listener at most the
/// timeout, or until its connection closes, and the redirect URI is at hand meanwhile.
///
/// ```
/// use std::process::Command;
/// use std::time::Duration;
/// use umcp::auth::LoopbackHandler;
///
/// // The server registered `http://127.0.0.1:8765/oauth/callback` as its redirect URI.
/// let handler = LoopbackHandler::new(|url: &str| {
///     Command::new("xdg-open").arg(url).spawn().map(drop)
/// })
/// .port(8765)
/// .path("/oauth/callback")
/// .timeout(Duration::from_secs(120));
/// # let _ = handler;
/// ```
///
/// The [`auth`](crate::auth) module's example connects a client with one.
pub struct LoopbackHandler {
    opener: Arc<Opener>,
    port: u16,
    path: String,
    timeout: Duration,
    listener: Mutex<Option<TcpListener>>,
    /// The port once the listener is bound (0 before), so the redirect URI is known without
    /// the listener, which an authorization holds while its user takes their time.
    bound_port: AtomicU16,
}

impl LoopbackHandler {
    /// A handler that calls `opener` with the authorization URL.
    ///
    /// `opener` must not hand the URL to a shell: start the browser with the URL as one
    /// argument (for example `Command::new("xdg-open").arg(url)`), or print it for the user.
    ///
    /// See the example on [`LoopbackHandler`].
    pub fn new(opener: impl Fn(&str) -> io::Result<()> + Send + Sync + 'static) -> LoopbackHandler {
        LoopbackHandler {
            opener: Arc::new(opener),
            port: 0,
            path: "/callback".into(),
            timeout: Duration::from_secs(300),
            listener: Mutex::new(None),
            bound_port: AtomicU16::new(0),
        }
    }

    /// Listens on `port` (default 0: any free port), for servers that registered a fixed one.
    ///
    /// See the example on [`LoopbackHandler`].
    pub fn port(mut self, port: u16) -> LoopbackHandler {
        self.port = port;
        self
    }

    /// The callback path (default `/callback`).
    ///
    /// See the example on [`LoopbackHandler`].
    pub fn path(mut self, path: impl Into<String>) -> LoopbackHandler {
        let path = path.into();
        self.path = if path.starts_with('/') {
            path
        } else {
            format!("/{path}")
        };
        self
    }

    /// How long to wait for the user (default 5 minutes).
    ///
    /// See the example on [`LoopbackHandler`].
    pub fn timeout(mut self, timeout: Duration) -> LoopbackHandler {
        self.timeout = timeout;
        self
    }

    /// Binds the listener when that has not happened yet; returns its port.
    fn bound(&self, listener: &mut Option<TcpListener>) -> Result<u16> {
        if listener.is_none() {
            let bound = TcpListener::bind((Ipv4Addr::LOCALHOST, self.port)).map_err(|e| {
                Error::from(AuthError::new(
                    AuthStep::Authorization,
                    format!("cannot listen on 127.0.0.1:{}: {e}", self.port),
                ))
            })?;
            *listener = Some(bound);
        }
        let port = listener
            .as_ref()
            .and_then(|l| l.local_addr().ok())
            .map(|a| a.port());
        let port = port.ok_or_else(|| {
            Error::from(AuthError::new(
                AuthStep::Authorization,
                "the loopback listener has no port",
            ))
        })?;
        self.bound_port.store(port, Ordering::SeqCst);
        Ok(port)
    }

    /// Takes the listener, or with `port_only` returns the bound port once known. Another
    /// authorization may hold it while its user takes their time: the wait is polled, to end at
    /// `deadline` or when the connection closes.
    fn take_listener(&self, deadline: Option<Instant>, port_only: bool) -> Result<Turn<'_>> {
        loop {
            let port = self.bound_port.load(Ordering::SeqCst);
            if port_only && port != 0 {
                return Ok(Turn::Port(port));
            }
            match self.listener.try_lock() {
                Ok(guard) => return Ok(Turn::Listener(guard)),
                Err(TryLockError::Poisoned(e)) => return Ok(Turn::Listener(e.into_inner())),
                Err(TryLockError::WouldBlock) => {}
            }
            let failed =
                |message: &str| Err(AuthError::new(AuthStep::Authorization, message).into());
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return failed(
                    "another authorization kept the loopback listener until the timeout",
                );
            }
            if provider_deadline::closed() {
                return failed("the connection closed while another authorization was waiting");
            }
            std::thread::sleep(POLL);
        }
    }

    /// Answers one request for `target`; returns the target when it is the awaited callback,
    /// with a page that shows nothing of what the authorization server sent.
    fn serve(&self, stream: &mut TcpStream, target: &str, state: Option<&str>) -> Option<String> {
        // The answer is a small page; a client that does not read it cannot hold us long.
        let _ = stream.set_nonblocking(false);
        let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        if path != self.path {
            respond(
                stream,
                "404 Not Found",
                "Not found",
                "This is not the page you are looking for.",
            );
            return None;
        }
        let params = parse_query(query);
        let param = |name: &str| {
            params
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        if state.is_some() && param("state") != state {
            respond(
                stream,
                "400 Bad Request",
                "Unexpected response",
                "This response does not belong to the pending authorization.",
            );
            return None;
        }
        // One page whatever the response says: until the flow has compared its `iss` with
        // the authorization server's issuer, the response may come from anyone, and its
        // `error` fields must be neither shown nor acted on (MCP 2026-07-28, RFC 9207). The
        // application reports the outcome once the response is checked.
        respond(
            stream,
            "200 OK",
            "Authorization complete",
            "The authorization server has answered. You can close this window and return to \
             the application, which shows the outcome.",
        );
        Some(target.to_owned())
    }
}

impl fmt::Debug for LoopbackHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoopbackHandler")
            .field("port", &self.port)
            .field("path", &self.path)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl AuthorizationHandler for LoopbackHandler {
    fn redirect_uri(&self) -> Result<String> {
        let port = match self.take_listener(Instant::now().checked_add(self.timeout), true)? {
            Turn::Listener(mut listener) => self.bound(&mut listener)?,
            Turn::Port(port) => port,
        };
        Ok(format!("http://127.0.0.1:{port}{}", self.path))
    }

    fn authorize(&self, authorization_url: &str) -> Result<String> {
        let failed =
            |message: String| Error::from(AuthError::new(AuthStep::Authorization, message));
        // Holding the listener for the whole wait keeps authorizations one at a time; the
        // wait ends at the handler's timeout whatever connects.
        let taken = self.take_listener(Instant::now().checked_add(self.timeout), false)?;
        let Turn::Listener(mut guard) = taken else {
            return Err(failed("no listener".into()));
        };
        let port = self.bound(&mut guard)?;
        let listener = guard.as_ref().ok_or_else(|| failed("no listener".into()))?;
        let state = parse_query(urls::query(authorization_url))
            .into_iter()
            .find(|(n, _)| n == "state")
            .map(|(_, v)| v);
        listener
            .set_nonblocking(true)
            .map_err(|e| failed(format!("cannot poll the loopback listener: {e}")))?;
        log::debug!(
            "oauth: waiting for the redirect on 127.0.0.1:{port}{}",
            self.path
        );
        (self.opener)(authorization_url)
            .map_err(|e| failed(format!("cannot open the browser: {e}")))?;
        // The handler's timeout, cut to the deadline of the call it serves (`Duration::MAX` and
        // no call: no limit).
        let deadline = pause::deadline_within(self.timeout);
        let target = self.redirect(listener, state.as_deref(), deadline)?;
        Ok(format!("http://127.0.0.1:{port}{target}"))
    }
}

impl LoopbackHandler {
    /// Serves the listener's connections side by side until one brings the callback for `state`,
    /// and returns its target; fails at `deadline` or when the connection closes.
    fn redirect(
        &self,
        listener: &TcpListener,
        state: Option<&str>,
        deadline: Option<Instant>,
    ) -> Result<String> {
        let failed =
            |message: String| Error::from(AuthError::new(AuthStep::Authorization, message));
        let started = Instant::now();
        let mut pending: VecDeque<Pending> = VecDeque::new();
        loop {
            let mut progress = accept(listener, &mut pending, deadline)?;
            let now = Instant::now();
            let mut index = 0;
            while index < pending.len() {
                let target = match pending[index].poll(now) {
                    Poll::Waiting => {
                        index += 1;
                        continue;
                    }
                    Poll::Progress => {
                        progress = true;
                        index += 1;
                        continue;
                    }
                    Poll::Done(target) => target,
                };
                progress = true;
                let served = match (pending.remove(index), target) {
                    (Some(mut c), Some(target)) => self.serve(&mut c.stream, &target, state),
                    _ => None,
                };
                if let Some(target) = served {
                    return Ok(target);
                }
            }
            if deadline.is_some_and(|d| now >= d) {
                return Err(failed(format!(
                    "no redirect arrived within {} s (the user did not finish)",
                    started.elapsed().as_secs()
                )));
            }
            // The connection this authorization is for closed: nobody waits for it any more.
            if provider_deadline::closed() {
                return Err(failed(
                    "the connection closed before the redirect came".into(),
                ));
            }
            if !progress {
                std::thread::sleep(POLL);
            }
        }
    }
}

/// Accepts a waiting connection, if any, into `pending` (closing the oldest beyond
/// [`MAX_CONNECTIONS`]); true when one came.
fn accept(
    listener: &TcpListener,
    pending: &mut VecDeque<Pending>,
    deadline: Option<Instant>,
) -> Result<bool> {
    match listener.accept() {
        Ok((stream, _)) => {
            if let Some(connection) = Pending::new(stream, deadline) {
                if pending.len() >= MAX_CONNECTIONS {
                    // The oldest is the likeliest to be a preconnect or a trickler.
                    pending.pop_front();
                }
                pending.push_back(connection);
            }
            Ok(true)
        }
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
            ) =>
        {
            Ok(false)
        }
        Err(e) => Err(AuthError::new(
            AuthStep::Authorization,
            format!("the loopback listener failed: {e}"),
        )
        .into()),
    }
}

/// What [`LoopbackHandler::take_listener`] got.
enum Turn<'a> {
    /// The listener, held.
    Listener(MutexGuard<'a, Option<TcpListener>>),
    /// The port of the bound listener, which another authorization holds.
    Port(u16),
}
