//! Sockets the transport can bound and cut: a ureq connector that remembers the shutdown
//! handle of every connection it opens and caps every wait for input by a per-thread budget.
//!
//! ureq fixes a request's timeouts when the request is made, before anyone knows whether the
//! body will be a JSON reply (which must end by the caller's deadline) or an event stream
//! (which may live as long as it stays active). The cap here is set by the reader of a body
//! for the duration of the read ([`with_deadline`]), on the reading thread, so a server that
//! trickles a body byte by byte cannot hold a caller past its deadline.
//!
//! A stream nobody waits for any more is ended by shutting its socket down from another
//! thread ([`Socket::shutdown`]): the reader wakes at once, whatever the server sends.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use std::net::{IpAddr, SocketAddr};

use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, NextTimeout, ShutdownHandle, Transport,
};
use ureq::{Agent, Timeout};

thread_local! {
    /// The deadline set by [`with_deadline`] for waits on this thread.
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
    /// The connection the last request on this thread was written to.
    static LAST: RefCell<Option<Socket>> = const { RefCell::new(None) };
    /// Whether the request being made on this thread carries a message whose writing out the
    /// layer above hears of (see [`writing`]).
    static WRITING: Cell<bool> = const { Cell::new(false) };
}

/// Durations at least this long mean "no limit": ureq adds its timeouts to an `Instant`
/// without checking, so anything this long is passed on as no timeout at all.
pub(crate) const UNBOUNDED: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

pub(crate) use crate::sync::deadline_after;

/// A ureq timeout for `duration`: none at all when it is effectively unbounded.
pub(crate) fn ureq_timeout(duration: Duration) -> Option<Duration> {
    (duration < UNBOUNDED).then_some(duration)
}

/// A handle that shuts the socket of one connection down from any thread.
#[derive(Clone)]
pub(crate) struct Socket(Weak<dyn ShutdownHandle>);

impl Socket {
    /// Shuts the connection down: a read blocked on it returns at once. A connection that is
    /// gone already is left alone.
    pub fn shutdown(&self) {
        if let Some(handle) = self.0.upgrade() {
            handle.shutdown();
        }
    }
}

impl fmt::Debug for Socket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Socket")
    }
}

/// Restores the previous deadline when a [`with_deadline`] scope ends, even by unwinding.
struct Restore(Option<Instant>);

impl Drop for Restore {
    fn drop(&mut self) {
        DEADLINE.with(|d| d.set(self.0));
    }
}

/// Runs `f` with every wait for input or output on this thread's HTTP connections ending by
/// `deadline` (as [`ureq::Error::Timeout`]).
pub(crate) fn with_deadline<T>(deadline: Instant, f: impl FnOnce() -> T) -> T {
    let _restore = Restore(DEADLINE.with(|d| d.replace(Some(deadline))));
    f()
}

/// Clears [`WRITING`] when a [`writing`] scope ends, even by unwinding.
struct Written;

impl Drop for Written {
    fn drop(&mut self) {
        WRITING.with(|w| w.set(false));
    }
}

/// Marks the request `f` makes on this thread as the message being sent, so the layer above hears
/// when it is written whole; not the credentials' own requests made before it.
pub(crate) fn writing<T>(f: impl FnOnce() -> T) -> T {
    WRITING.with(|w| w.set(true));
    let _written = Written;
    f()
}

/// Forgets which connection the last request on this thread used; call before a request.
pub(crate) fn forget_last() {
    LAST.with(|last| last.borrow_mut().take());
}

/// The connection the last request on this thread was written to, if it is known.
pub(crate) fn take_last() -> Option<Socket> {
    LAST.with(|last| last.borrow_mut().take())
}

/// A ureq agent whose connections, made along `route`, are watched (see the [module docs](self)).
pub(crate) fn agent(config: ureq::config::Config, route: &super::route::Route) -> Agent {
    let watching = Watching {
        inner: route.connector(),
    };
    let resolving = Resolving {
        unix_socket: route.unix_socket.is_some(),
        ..Resolving::default()
    };
    Agent::with_parts(config, watching, resolving)
}

/// How long a host name's addresses are reused before it is looked up again.
const RESOLVED_TTL: Duration = Duration::from_secs(10);

/// Resolves within this thread's deadline, keeping the last answer for [`RESOLVED_TTL`]: with a
/// timeout, ureq's resolver starts a thread per lookup, costlier than a local request.
#[derive(Debug, Default)]
struct Resolving {
    inner: DefaultResolver,
    /// Connections go to a Unix socket: the URL's host is only a name for the `Host` header.
    unix_socket: bool,
    /// The last host resolved (`host:port`), when, and its addresses. One entry: a
    /// transport talks to one server (and, for OAuth, to nothing else through this agent).
    last: Mutex<Option<(String, Instant, ResolvedSocketAddrs)>>,
}

impl Resolver for Resolving {
    fn resolve(
        &self,
        uri: &Uri,
        config: &ureq::config::Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        if self.unix_socket {
            let mut addrs = self.empty();
            addrs.push(SocketAddr::from((
                [127, 0, 0, 1],
                uri.port_u16().unwrap_or(80),
            )));
            return Ok(addrs);
        }
        let host = uri.host().unwrap_or_default();
        let literal = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>();
        let port = uri.port_u16().or(match uri.scheme_str() {
            Some("https") => Some(443),
            Some("http") => Some(80),
            _ => None,
        });
        if let (Ok(ip), Some(port)) = (literal, port) {
            let mut addrs = self.empty();
            addrs.push(SocketAddr::new(ip, port));
            return Ok(addrs);
        }
        let key = format!("{host}:{}", port.unwrap_or_default());
        if let Ok(last) = self.last.lock() {
            if let Some((_, _, addrs)) = last
                .as_ref()
                .filter(|(k, at, _)| *k == key && at.elapsed() < RESOLVED_TTL)
            {
                return Ok(addrs.clone());
            }
        }
        let addrs = self
            .inner
            .resolve(uri, config, capped(timeout, Timeout::Resolve)?)?;
        if let Ok(mut last) = self.last.lock() {
            *last = Some((key, Instant::now(), addrs.clone()));
        }
        Ok(addrs)
    }
}

/// Wraps the route's connector chain (a Unix socket or TCP, proxies, TLS) to capture shutdown
/// handles.
#[derive(Debug)]
struct Watching {
    inner: super::route::BoxedConnector,
}

impl Connector<()> for Watching {
    type Out = Box<dyn Transport>;

    fn connect(
        &self,
        details: &ConnectionDetails,
        chained: Option<()>,
    ) -> Result<Option<Self::Out>, ureq::Error> {
        let captured: Arc<Mutex<Option<Weak<dyn ShutdownHandle>>>> = Arc::default();
        let register = Arc::clone(&details.register_shutdown);
        let sink = Arc::clone(&captured);
        let watched = ConnectionDetails {
            uri: details.uri,
            addrs: details.addrs.clone(),
            config: details.config,
            request_level: details.request_level,
            resolver: details.resolver,
            now: details.now,
            timeout: capped(details.timeout, Timeout::Connect)?,
            current_time: Arc::clone(&details.current_time),
            run_connector: Arc::clone(&details.run_connector),
            register_shutdown: Arc::new(move |handle: Weak<dyn ShutdownHandle>| {
                if let Ok(mut slot) = sink.lock() {
                    *slot = Some(handle.clone());
                }
                register(handle)
            }),
        };
        let transport = self.inner.connect(&watched, chained)?;
        let socket = captured.lock().ok().and_then(|mut slot| slot.take());
        Ok(transport.map(|inner| {
            Box::new(Watched {
                inner,
                socket: socket.map(Socket),
            }) as Box<dyn Transport>
        }))
    }
}

/// One connection: records itself as this thread's last connection when a request is
/// written, and caps waits by this thread's deadline.
struct Watched {
    inner: Box<dyn Transport>,
    socket: Option<Socket>,
}

impl fmt::Debug for Watched {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Watched")
            .field("inner", &self.inner)
            .finish()
    }
}

/// `timeout`, shortened to this thread's deadline (reported as `reason`); an error once the
/// deadline has passed.
fn capped(mut timeout: NextTimeout, reason: Timeout) -> Result<NextTimeout, ureq::Error> {
    let Some(deadline) = DEADLINE.with(Cell::get) else {
        return Ok(timeout);
    };
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(ureq::Error::Timeout(reason));
    }
    let left = coarse(left);
    if left < *timeout.after {
        timeout.after = left.into();
        timeout.reason = reason;
    }
    Ok(timeout)
}

/// Rounds waits of a second or more up to [`COARSE`]: ureq sets a socket's timeout only when it
/// changes, and an exact remainder changes on every call. A wait may end `COARSE` late.
fn coarse(left: Duration) -> Duration {
    if left < Duration::from_secs(1) {
        return left;
    }
    let quantum = COARSE.as_nanos();
    let rounded = left.as_nanos().div_ceil(quantum).saturating_mul(quantum);
    u64::try_from(rounded).map_or(left, Duration::from_nanos)
}

/// The granularity of long waits (see [`coarse`]).
const COARSE: Duration = Duration::from_millis(50);

impl Transport for Watched {
    fn buffers(&mut self) -> &mut dyn Buffers {
        self.inner.buffers()
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        if let Some(socket) = &self.socket {
            LAST.with(|last| *last.borrow_mut() = Some(socket.clone()));
        }
        self.inner
            .transmit_output(amount, capped(timeout, Timeout::RecvBody)?)
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        // The first wait for the answer: the request is out whole.
        if WRITING.with(|w| w.replace(false)) {
            crate::transport::written::report();
        }
        self.inner.await_input(capped(timeout, Timeout::RecvBody)?)
    }

    fn is_open(&mut self) -> bool {
        self.inner.is_open()
    }

    fn is_tls(&self) -> bool {
        self.inner.is_tls()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ip_literals_resolve_as_they_are_and_names_through_the_resolver() {
        let resolver = Resolving::default();
        let config = Agent::config_builder().build();
        let resolve = |url: &str| {
            let uri: Uri = url.parse().expect("uri");
            resolver
                .resolve(&uri, &config, NextTimeout::default())
                .expect("resolves")
                .to_vec()
        };
        assert_eq!(
            resolve("http://127.0.0.1:8080/mcp"),
            ["127.0.0.1:8080".parse::<SocketAddr>().unwrap()]
        );
        assert_eq!(
            resolve("https://[::1]/mcp"),
            ["[::1]:443".parse::<SocketAddr>().unwrap()]
        );
        let first = resolve("http://localhost:9/mcp");
        assert!(!first.is_empty() && first.iter().all(|a| a.port() == 9 && a.ip().is_loopback()));
        assert_eq!(resolve("http://localhost:9/other"), first, "reused");
    }

    #[test]
    fn long_waits_are_rounded_up_and_short_ones_kept() {
        let short = Duration::from_millis(999);
        assert_eq!(coarse(short), short);
        let long = Duration::from_millis(29_999) + Duration::from_nanos(1);
        assert_eq!(coarse(long), Duration::from_secs(30));
        assert_eq!(coarse(Duration::from_secs(2)), Duration::from_secs(2));
        let huge = Duration::from_secs(u64::MAX / 2);
        assert!(coarse(huge) >= huge);
    }

    #[test]
    fn far_deadlines_saturate() {
        let now = Instant::now();
        assert!(deadline_after(now, Duration::MAX) > now + Duration::from_secs(3600));
        assert_eq!(
            deadline_after(now, Duration::from_secs(1)),
            now + Duration::from_secs(1)
        );
        assert_eq!(ureq_timeout(Duration::MAX), None);
        assert_eq!(
            ureq_timeout(Duration::from_secs(5)),
            Some(Duration::from_secs(5))
        );
    }
}
