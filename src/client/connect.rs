//! Connecting: starting the transport, setting up the protocol era, and the fallbacks and
//! restarts in between, all within one deadline.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::error::{Error, Result, TimeoutKind};
use crate::sync::lock;
use crate::transport::Connect;

use super::connect_cancel::Watch;
use super::engine::connection::Connection;
use super::engine::observer::Observer;
use super::engine::pool::Pool;
use super::engine::router::Core;
use super::engine::router_thread;
use super::era::discover;
use super::era::session::{Inputs, ResponseCache, Session};
use super::era::state::{Era, EraState, ProtocolMode};
use super::era::transport::EraTransport;
use super::follow::route::Follower;
use super::handle::Client;
use super::options::Options;
use super::screen::Screened;
use super::server_requests::ServerRequests;

impl Client {
    /// Connects with default [`Options`]: probes with `server/discover` and speaks the era the
    /// server answers in (see [`ProtocolMode::Auto`]), running `initialize` for a
    /// handshake-era server.
    ///
    /// See the example on [`Client`].
    ///
    /// # Errors
    ///
    /// Fails when the transport cannot start ([`Error::Spawn`], [`Error::Io`], HTTP errors),
    /// the server dies or times out during the handshake ([`Error::Closed`], [`Error::Timeout`],
    /// both with a stdio server's last stderr lines), or answers with a protocol version this
    /// client does not speak ([`Error::Unsupported`]), or is cancelled ([`Error::Cancelled`],
    /// see [`Options::with_connect_cancel`]).
    pub fn connect(transport: impl Connect + 'static) -> Result<Client> {
        Client::connect_with_options(transport, Options::default())
    }

    /// Connects with `options` and sets up the protocol era they ask for
    /// ([`Options::with_protocol_mode`]): `server/discover`, `initialize`, or both in turn.
    ///
    /// When the server rejects the very first request with HTTP 400, 404 or 405 and the
    /// transport names a fallback (the `auto` HTTP kind falls back to legacy SSE), the
    /// fallback is tried. Authorization errors never fall back.
    ///
    /// The start-up timeout ([`Options::with_startup_timeout`]) bounds the whole connect: the
    /// `server/discover` probe, `initialize`, and any new start or fallback in between (time
    /// spent obtaining credentials aside), the transport's own start included: it gets the
    /// deadline through [`Connect::connect_by`], so a legacy SSE server that never sends its
    /// `endpoint` event fails the connect with [`TimeoutKind::Startup`] when the connect
    /// timeout is later. A connection that fails is then closed, within the
    /// transport's own bounds; a server that did not answer in time gets no close grace (a
    /// stdio server is sent SIGTERM at once, and SIGKILL after
    /// [`kill_grace`](crate::StdioConfig::kill_grace) if it is still running).
    ///
    /// Another thread can end a connect early through the [`CancelHandle`](crate::CancelHandle)
    /// given in [`Options::with_connect_cancel`]: the connection under way is closed and the
    /// connect fails with [`Error::Cancelled`].
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use umcp::types::Implementation;
    /// use umcp::{Client, Options, StdioConfig};
    ///
    /// # fn main() -> umcp::Result<()> {
    /// let options = Options::default()
    ///     .with_client_info(Implementation::new("my-tool", "1.0.0"))
    ///     .with_request_timeout(Duration::from_secs(10));
    /// let server = StdioConfig::new("npx")
    ///     .args(["-y", "@modelcontextprotocol/server-everything"]);
    /// let client = Client::connect_with_options(server, options)?;
    /// log::info!("connected to {}", client.server_info().name);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Client::connect`].
    pub fn connect_with_options(
        transport: impl Connect + 'static,
        options: Options,
    ) -> Result<Client> {
        let watch = Watch::new(&options)?;
        let connected = Client::connect_rounds(Box::new(transport), options, &watch);
        watch.finish(connected)
    }

    /// Starts and sets up connections until one is ready, or fails: a restart after the
    /// probe and a fallback each take another round, all within one deadline.
    fn connect_rounds(
        mut connector: Box<dyn Connect>,
        mut options: Options,
        watch: &Watch,
    ) -> Result<Client> {
        let started = Instant::now();
        let mut deadline = crate::sync::deadline_after(started, options.era.startup_timeout);
        // The error that sent us to a fallback: when the fallback is refused just as plainly,
        // this one (a 400 with the server's reason, say) says more than the fallback's 405.
        let mut first: Option<Error> = None;
        loop {
            // Cancelled before this round: nothing more is started.
            watch.check()?;
            let client = match Client::start(connector.as_ref(), options.clone(), deadline) {
                Ok(client) => client,
                Err(err) => {
                    let err = timed_out_connect(err, started.elapsed(), None);
                    return Err(after_fallback(first, err));
                }
            };
            if let Err(err) = watch.track(&client) {
                client.close();
                return Err(err);
            }
            // One deadline for every attempt; credentials obtained meanwhile push it back.
            *lock(&client.session.handshake_deadline) = deadline;
            let established = discover::establish(&client.session, &connector.describe());
            deadline = *lock(&client.session.handshake_deadline);
            let err = match established {
                Ok(discover::Established::Ready) => return Ok(client),
                Ok(discover::Established::Restart) => {
                    // The server exited on the probe (at once, or once it was up after a
                    // slow start): start it again for `initialize`.
                    client.close();
                    watch.untrack();
                    options = options.with_protocol_mode(ProtocolMode::Legacy);
                    options.era.legacy_after_probe = true;
                    continue;
                }
                Ok(discover::Established::Again) => {
                    // The cached verdict was wrong and is forgotten: the next round probes.
                    client.close();
                    watch.untrack();
                    continue;
                }
                Err(err) => err,
            };
            let elapsed = started.elapsed();
            // A server that did not answer in time gets no grace to exit on its own: the
            // caller's deadline has passed already.
            if matches!(err, Error::Timeout { .. }) {
                client.abort();
            } else {
                client.close();
            }
            watch.untrack();
            let err = timed_out_connect(err, elapsed, Some(&client));
            if first.is_some() {
                return Err(after_fallback(first, err));
            }
            match err
                .refuses_transport()
                .then(|| connector.fallback())
                .flatten()
            {
                Some(next) => {
                    log::debug!(
                        "{} answered {err}; falling back to {}",
                        connector.describe(),
                        next.describe()
                    );
                    first = Some(err);
                    connector = next;
                }
                None => return Err(err),
            }
        }
    }

    /// Starts the transport and the router thread; a start that waits on the server (legacy
    /// SSE's `endpoint` event) ends by `deadline`, the start-up deadline.
    fn start(connector: &dyn Connect, options: Options, deadline: Instant) -> Result<Client> {
        // The layers are built bottom up: the engine's core (which the transport delivers
        // into, and which tells the follower what is its own), the transport, the era's
        // wrapper around it, the engine's connection, and the session above it.
        let follower = Arc::new(Follower::new(
            options.cache.clone(),
            options.listen_capacity,
        ));
        let observer: Arc<dyn Observer> = Arc::clone(&follower) as Arc<dyn Observer>;
        let (core, channels) = Core::new(&options.engine, observer);
        let transport = connector.connect_by(core.inbox(), deadline)?;
        log::debug!(
            "connected to {} over {}",
            connector.describe(),
            transport.kind()
        );
        let http = transport.kind() == "streamable-http";
        let era = Arc::new(EraState::new(
            &options.era,
            options.capabilities(Era::Modern),
            http,
        ));
        let transport = Arc::new(EraTransport::new(transport, Arc::clone(&era)));
        let (done_tx, threads_done) = crossbeam_channel::bounded(0);
        let conn = Connection::new(transport, core, &options.engine, done_tx.clone());
        let handlers = Arc::new(ServerRequests::new(
            options.handlers.clone(),
            Arc::clone(&era),
        ));
        let session = Session::new(
            Arc::new(conn),
            era,
            options.era.clone(),
            options.capabilities(Era::Legacy),
            Arc::clone(&follower) as Arc<dyn ResponseCache>,
            Arc::clone(&handlers) as Arc<dyn Inputs>,
        );
        let client = Client {
            session: Arc::new(session),
            follower,
            threads_done,
            task_tools: Mutex::default(),
            screen: Screened::new(options.tools.clone()),
        };
        // On failure the client's drop closes the transport.
        let pool = Pool::new(options.engine.handler_threads, handlers, done_tx.clone());
        router_thread::spawn(&client.session.conn, channels, pool, done_tx).map_err(Error::io)?;
        Ok(client)
    }
}

/// The error to report once a fallback failed too: the first refusal when the fallback was refused
/// as plainly (it says more), else the fallback's own (the one to act on).
fn after_fallback(first: Option<Error>, err: Error) -> Error {
    match first {
        Some(first) if err.refuses_transport() => {
            log::debug!("the fallback was refused too ({err}); reporting {first}");
            first
        }
        Some(first) => {
            log::debug!("falling back after {first} failed with {err}");
            err
        }
        None => err,
    }
}

/// A connect that timed out says how long it took in all and, like a server that exits, what
/// the server wrote on stderr (read once the connection is closed, so that nothing is missed;
/// there is no `client` when the transport did not even start).
fn timed_out_connect(err: Error, elapsed: Duration, client: Option<&Client>) -> Error {
    match err {
        Error::Timeout {
            method,
            kind,
            stderr_tail,
            ..
        } => Error::Timeout {
            method,
            elapsed,
            // The request's own deadline during connect is the start-up deadline.
            kind: match kind {
                TimeoutKind::Request => TimeoutKind::Startup,
                other => other,
            },
            stderr_tail: stderr_tail.or_else(|| {
                let closed = client?.closed()?;
                let tail = closed.stderr_tail.as_deref()?;
                (!tail.trim().is_empty()).then(|| Arc::new(tail.to_owned()))
            }),
        },
        other => other,
    }
}
