//! The bridge as a stdio server: one host, its messages a line each on stdin, the bridge's on
//! stdout through the writer thread (`umcp-bridge-out`), nothing else ever written there.
//!
//! The servers are started on the host's first message, declaring what it declares. The
//! bridge ends when stdin ends: the jobs are cancelled and the servers closed by the caller.
//! A line longer than [`MAX_MESSAGE_BYTES`] is skipped, said on stderr.

use std::io::{BufRead, ErrorKind};
use std::sync::Arc;

use umcp::jsonrpc::Message;

use super::context::Bridge;
use super::dispatch;
use super::host::Host;
use super::outbox::{write_lines, Kind, Queue, Shared, QUEUE};
use super::wire::{decode, MAX_MESSAGE_BYTES};
use crate::exit::Exit;

/// Serves the host on stdin and stdout until stdin ends; `first` runs once, with the host's
/// first message, before it is taken.
pub fn serve(
    bridge: &Arc<Bridge>,
    mut first: impl FnMut(&Message) -> Result<(), Exit>,
) -> Result<(), Exit> {
    let (queue, written) = Queue::new(QUEUE, bridge.settings.timeout);
    write_lines(std::io::stdout(), written)
        .map_err(|e| Exit(1, format!("bridge: cannot start a thread: {e}")))?;
    let queue = Arc::new(queue);
    let out: Shared = Arc::clone(&queue) as _;
    let host = Host::new(Arc::clone(&out));
    bridge.hosts.add(&host);
    let mut input = std::io::stdin().lock();
    let mut line = Vec::new();
    let mut started = false;
    loop {
        match next_line(&mut input, MAX_MESSAGE_BYTES, &mut line) {
            Ok(None) => break,
            Ok(Some(Err(length))) => {
                crate::output::warn(&format!(
                    "umcp: bridge: skipped a message of {length} bytes, over {MAX_MESSAGE_BYTES}"
                ));
                continue;
            }
            Ok(Some(Ok(()))) => {}
            Err(e) => {
                log::debug!("reading stdin: {e}");
                break;
            }
        }
        let text = String::from_utf8_lossy(&line);
        if text.trim().is_empty() {
            continue;
        }
        log::trace!("< host {text}");
        let (messages, owed) = decode(&text);
        for response in owed {
            out.send(response.into(), Kind::Answer);
        }
        for message in messages {
            if !started {
                started = true;
                first(&message)?;
            }
            dispatch::take(bridge, &host, message, Arc::clone(&out));
        }
    }
    host.end();
    bridge.followers.forget(&host);
    if queue.dropped() > 0 {
        log::debug!(
            "{} notifications for the host were dropped: it read too slowly",
            queue.dropped()
        );
    }
    Ok(())
}

/// Reads one line of at most `max` bytes into `line` (without its newline): `None` at the
/// end of the input, `Some(Err(length))` for a longer line, which is skipped.
fn next_line(
    input: &mut impl BufRead,
    max: usize,
    line: &mut Vec<u8>,
) -> std::io::Result<Option<Result<(), usize>>> {
    line.clear();
    let mut skipped = 0usize;
    loop {
        let available = match input.fill_buf() {
            Ok(available) => available,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(match (line.is_empty(), skipped) {
                (true, 0) => None,
                (_, 0) => Some(Ok(())),
                _ => Some(Err(skipped)),
            });
        }
        let newline = available.iter().position(|b| *b == b'\n');
        let chunk = &available[..newline.unwrap_or(available.len())];
        if skipped == 0 && line.len() + chunk.len() <= max {
            line.extend_from_slice(chunk);
        } else {
            skipped += line.len() + chunk.len();
            line.clear();
        }
        let used = chunk.len() + usize::from(newline.is_some());
        input.consume(used);
        if newline.is_some() {
            return Ok(Some(if skipped == 0 { Ok(()) } else { Err(skipped) }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_longer_than_the_limit_are_skipped_whole() {
        let text = b"short\nmuch too long a line\nend".to_vec();
        let mut input = std::io::BufReader::with_capacity(4, &text[..]);
        let mut line = Vec::new();
        let mut read = Vec::new();
        while let Some(outcome) = next_line(&mut input, 10, &mut line).unwrap() {
            read.push(outcome.map(|()| String::from_utf8(line.clone()).unwrap()));
        }
        assert_eq!(read, [Ok("short".into()), Err(20), Ok("end".into())]);
    }
}
