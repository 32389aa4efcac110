//! The server's stdout: whole lines, one writer at a time, flushed per message.

use std::io::{self, Stdout, Write};
use std::process;
use std::sync::Mutex;

use umcp::jsonrpc::Message;

use super::lock;

/// The stdout side: one message per line, plus the garbage of the `garbage` behaviour.
pub struct Out {
    stdout: Mutex<Stdout>,
    /// Written before every message; empty unless the behaviour is `garbage`.
    garbage: Vec<u8>,
}

impl Out {
    /// Stdout, with `garbage` written before every message.
    pub fn new(garbage: Vec<u8>) -> Out {
        Out {
            stdout: Mutex::new(io::stdout()),
            garbage,
        }
    }

    /// Writes `message` as one line and flushes; exits the process when stdout is gone.
    pub fn send(&self, message: &Message) {
        let line = message.encode();
        let mut stdout = lock(&self.stdout);
        let written = stdout
            .write_all(&self.garbage)
            .and_then(|()| stdout.write_all(line.as_bytes()))
            .and_then(|()| stdout.write_all(b"\n"))
            .and_then(|()| stdout.flush());
        if let Err(e) = written {
            // The client closed its end: it is gone, so there is nobody left to serve.
            eprintln!("demo server: writing stdout failed: {e}");
            process::exit(0);
        }
    }
}
