//! Where the server's messages go: stdout (whole lines, one writer at a time, flushed per
//! message) or the open event streams of an HTTP session.

use std::cell::RefCell;
use std::io::{self, Stdout, Write};
use std::process;
use std::sync::{Arc, Mutex};

use umcp::jsonrpc::{Message, RequestId};

use super::lock;
use super::routes::Routes;

thread_local! {
    /// The request whose handling this thread is doing, if any.
    static ORIGIN: RefCell<Option<RequestId>> = const { RefCell::new(None) };
}

/// Marks what this thread sends from now on as belonging to request `id`, so that over HTTP
/// it goes on that request's stream (progress, log messages, sampling requests of a tool).
pub fn set_origin(id: Option<RequestId>) {
    ORIGIN.with(|origin| *origin.borrow_mut() = id);
}

/// The server's output.
pub enum Out {
    /// One message per line on stdout, plus the garbage of the `garbage` behaviour.
    Stdio {
        stdout: Mutex<Stdout>,
        /// Written before every message; empty unless the behaviour is `garbage`.
        garbage: Vec<u8>,
    },
    /// The event streams of one Streamable HTTP session.
    Http(Arc<Routes>),
}

impl Out {
    /// Stdout, with `garbage` written before every message.
    pub fn stdio(garbage: Vec<u8>) -> Out {
        Out::Stdio {
            stdout: Mutex::new(io::stdout()),
            garbage,
        }
    }

    /// Sends `message`. On stdio: writes it as one line and flushes, and exits the process
    /// when stdout is gone. Over HTTP: hands it to the stream it belongs on.
    pub fn send(&self, message: &Message) {
        match self {
            Out::Stdio { stdout, garbage } => {
                let line = message.encode();
                let mut stdout = lock(stdout);
                let written = stdout
                    .write_all(garbage)
                    .and_then(|()| stdout.write_all(line.as_bytes()))
                    .and_then(|()| stdout.write_all(b"\n"))
                    .and_then(|()| stdout.flush());
                if let Err(e) = written {
                    // The client closed its end: it is gone, so there is nobody left to serve.
                    eprintln!("demo server: writing stdout failed: {e}");
                    process::exit(0);
                }
            }
            Out::Http(routes) => {
                let origin = ORIGIN.with(|origin| origin.borrow().clone());
                routes.route(message, origin.as_ref());
            }
        }
    }

    /// Request `id` will get no response (it was cancelled): over HTTP its stream ends now.
    pub fn abandon(&self, id: &RequestId) {
        if let Out::Http(routes) = self {
            routes.end_request(id);
        }
    }
}
