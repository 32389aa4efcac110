//! The stdio front end: reads stdin line by line and hands every message to the server.

use std::io::{self, BufRead};
use std::process;
use std::sync::Arc;

use umcp::jsonrpc::{ErrorCode, ErrorObject, Payload, Response};

use super::Server;

/// Reads stdin until it ends, then exits 0: a closed stdin is how a client says goodbye.
pub fn serve(server: &Arc<Server>) -> ! {
    let mut input = io::stdin().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) => process::exit(0),
            Ok(_) => {}
            Err(e) => {
                eprintln!("demo server: reading stdin failed: {e}");
                process::exit(1);
            }
        }
        let Ok(text) = std::str::from_utf8(&line) else {
            parse_error(server, "invalid UTF-8");
            continue;
        };
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        match Payload::decode(text) {
            Ok(Payload::Single(message)) => server.handle(message),
            Ok(Payload::Batch(messages, _, _)) => {
                messages.into_iter().for_each(|m| server.handle(m))
            }
            Err(e) => parse_error(server, &e.to_string()),
        }
    }
}

/// Answers a line that is not JSON-RPC with an error that has no id, as JSON-RPC asks.
fn parse_error(server: &Server, why: &str) {
    let error = ErrorObject::new(ErrorCode::PARSE_ERROR, format!("parse error: {why}"));
    server.send(
        Response {
            id: None,
            result: Err(error),
        }
        .into(),
    );
}
