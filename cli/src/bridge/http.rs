//! `bridge --listen`: the bridge as a Streamable HTTP server, for hosts that connect over
//! HTTP, in either era (the 2025 revisions' sessions and GET stream, the 2026-07-28 stateless
//! requests and their routing headers).
//!
//! It listens on loopback unless `--allow-remote` says otherwise, requires the bearer token of
//! [`token`](super::token) on every request, and refuses web pages from other origins than
//! this machine's (or `--allow-origin`'s). One thread accepts (the calling one); each
//! connection is served by a thread of its own (`umcp-bridge-http`), at most
//! [`MAX_CONNECTIONS`] at once (one more is answered 503 and closed), keeping the connection
//! for further requests until it has been idle for [`IDLE`].

use std::io::BufReader;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::context::Bridge;
use super::flags::Flags;
use super::token::Token;
use crate::exit::{usage, Exit};

mod check;
mod exchange;
mod message;
mod sessions;

use exchange::{Served, ENDPOINT};
use message::{read, respond, Unread};

/// How many connections are served at once, each on a thread.
pub const MAX_CONNECTIONS: usize = 32;

/// How long a connection may wait for its next request (or the rest of one).
const IDLE: Duration = Duration::from_secs(60);

/// The listening socket, its token and who may connect.
pub struct Listener {
    socket: TcpListener,
    token: Token,
    origins: Vec<String>,
}

impl Listener {
    /// Binds `address` as `flags` allow, and obtains the token; says on stderr where the
    /// bridge listens and where its token is.
    pub fn bind(address: &str, flags: &Flags) -> Result<Listener, Exit> {
        let parsed: SocketAddr = address.parse().map_err(|_| {
            usage(format!(
                "--listen {address}: expected an address and port, as 127.0.0.1:8765"
            ))
        })?;
        if !parsed.ip().is_loopback() && !flags.remote {
            return Err(usage(format!(
                "--listen {address}: not a loopback address; add --allow-remote to listen there"
            )));
        }
        let socket = TcpListener::bind(parsed)
            .map_err(|e| Exit(1, format!("bridge: cannot listen on {address}: {e}")))?;
        let bound = socket
            .local_addr()
            .map_err(|e| Exit(1, format!("bridge: {e}")))?;
        let token = Token::obtain(flags.token_file.as_deref(), bound.port())?;
        let url = format!("http://{bound}{ENDPOINT}");
        let said = match &token.file {
            Some(file) => format!(
                "umcp: bridge: listening on {url}; token in {}",
                file.display()
            ),
            None => format!(
                "umcp: bridge: listening on {url}; token from ${}",
                super::token::VARIABLE
            ),
        };
        crate::output::warn(&said);
        Ok(Listener {
            socket,
            token,
            origins: flags.origins.clone(),
        })
    }
}

/// Serves hosts until the program is stopped (a signal ends it, closing the servers).
pub fn serve(bridge: &Arc<Bridge>, listener: Listener) -> Result<(), Exit> {
    let served = Arc::new(Served {
        bridge: Arc::clone(bridge),
        token: listener.token,
        origins: listener.origins,
        sessions: sessions::Sessions::default(),
    });
    let open = Arc::new(AtomicUsize::new(0));
    for stream in listener.socket.incoming() {
        let Ok(stream) = stream else {
            continue;
        };
        if open.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            open.fetch_sub(1, Ordering::SeqCst);
            let mut stream = stream;
            let _ = respond(&mut stream, 503, &[("Connection", "close".into())], None);
            continue;
        }
        let (served, counted) = (Arc::clone(&served), Arc::clone(&open));
        let spawned = std::thread::Builder::new()
            .name("umcp-bridge-http".into())
            .spawn(move || {
                connection(&served, stream);
                counted.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            open.fetch_sub(1, Ordering::SeqCst);
        }
    }
    Ok(())
}

/// Serves one connection's requests until it closes, idles or asks to close.
fn connection(served: &Served, mut stream: TcpStream) {
    let timeouts = stream
        .set_read_timeout(Some(IDLE))
        .and_then(|()| stream.set_write_timeout(Some(served.bridge.settings.timeout)));
    let Ok(reading) = timeouts.and_then(|()| stream.try_clone()) else {
        return;
    };
    let _ = stream.set_nodelay(true);
    let mut input = BufReader::new(reading);
    loop {
        let request = match read(&mut input) {
            Ok(request) => request,
            Err(Unread::Ended) => return,
            Err(Unread::Refused(status)) => {
                let _ = respond(&mut stream, status, &[("Connection", "close".into())], None);
                return;
            }
        };
        if !exchange::exchange(served, &mut stream, &request) {
            return;
        }
    }
}
