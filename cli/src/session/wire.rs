//! What a session's process and the `umcp` that sends it a command say to each other: one
//! JSON object a line over the session's socket, each at most [`MAX_MESSAGE`] bytes, read
//! under a deadline.
//!
//! The caller opens with a [`Request`]: a command to run (`run`), `status` or `stop`. While a
//! command runs, the process sends its output (`out`, `err`), a question's need for a line of
//! the caller's stdin (`ask`), and `alive` when it has had nothing to say for a while; the
//! caller answers (`line`), passes on Ctrl-C (`cancel`) and says when its stdout is gone
//! (`closed`). The process ends the exchange with the command's exit code (`exit`).

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// The longest message read, line break excluded: a longer one ends the connection. Output
/// is sent in pieces of [`CHUNK`] bytes, so only a command line could come near.
pub const MAX_MESSAGE: usize = 4 << 20;

/// The most text one `out` or `err` message carries; longer text is sent in pieces.
pub const CHUNK: usize = 64 << 10;

/// How long the first message of a connection may take to arrive, in total.
pub const HELLO: Duration = Duration::from_secs(5);

/// How long each read waits before its reader looks up (to send `alive`, or see that the
/// command ended): every read of the socket has this deadline.
pub const TICK: Duration = Duration::from_millis(250);

/// How often a process with nothing to say tells its caller it is still there.
pub const HEARTBEAT: Duration = Duration::from_secs(5);

/// How long a caller waits without hearing anything before it takes the process for gone.
pub const SILENCE: Duration = Duration::from_secs(30);

/// How long one write may wait for the other side to read: a caller that takes in nothing
/// for this long while its command writes is dropped, and its command stopped.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// From the caller to the process.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Request {
    /// Runs a command.
    Run(Run),
    /// Describes the session.
    Status {},
    /// Ends the session and its servers.
    Stop {},
    /// A line of the caller's stdin, after `ask`; `None` at its end.
    Line { text: Option<String> },
    /// The caller got this signal (Ctrl-C is 2): the command is to stop.
    Cancel { signal: u8 },
    /// The caller's stdout is gone (`| head -1`): writing more fails.
    Closed {},
}

/// A command to run: `umcp`'s arguments as given, and which of the caller's streams are
/// terminals (a question is asked only on one).
#[derive(Debug, Serialize, Deserialize)]
pub struct Run {
    pub args: Vec<String>,
    pub stdin: bool,
    /// Whether the caller's stdout is a terminal, where listings are aligned in columns.
    #[serde(default)]
    pub stdout: bool,
    pub stderr: bool,
}

/// From the process to the caller.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Reply {
    /// Text for the caller's stdout.
    Out { text: String },
    /// Text for the caller's stderr.
    Err { text: String },
    /// A line of the caller's stdin is wanted.
    Ask {},
    /// Nothing to say, but still there.
    Alive {},
    /// The session, for `session list`.
    Status(Status),
    /// The command ended, with this exit code.
    Exit { code: u8 },
}

/// A session as `session list` shows it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub name: String,
    pub pid: u32,
    /// Each server and its state.
    pub servers: Vec<ServerState>,
    /// Seconds since the session started.
    pub uptime: u64,
    /// Seconds since the last command ended (0 while one runs).
    pub idle: u64,
    /// Seconds without a command after which the session ends.
    pub idle_limit: u64,
    /// Whether a command is running.
    pub busy: bool,
}

/// One server of a session.
#[derive(Debug, Serialize, Deserialize)]
pub struct ServerState {
    pub name: String,
    /// `connected`, or why not.
    pub state: String,
}

/// Writes one message as a line. Concurrent writers must hold a lock, so that lines do not
/// mix.
pub fn send(mut stream: &UnixStream, message: &impl Serialize) -> io::Result<()> {
    let mut line = serde_json::to_vec(message).map_err(io::Error::other)?;
    line.push(b'\n');
    stream.write_all(&line)
}

/// `text` in pieces of at most [`CHUNK`] bytes, cut between characters.
pub fn chunks(mut text: &str) -> impl Iterator<Item = &str> {
    std::iter::from_fn(move || {
        if text.is_empty() {
            return None;
        }
        let mut end = text.len().min(CHUNK);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let (piece, rest) = text.split_at(end);
        text = rest;
        Some(piece)
    })
}

/// Reads messages from a socket, each read waiting at most [`TICK`].
pub struct Reader {
    stream: UnixStream,
    buf: Vec<u8>,
    /// How much of `buf` is known to hold no line break.
    scanned: usize,
}

impl Reader {
    /// A reader of `stream`, whose reads are given their deadline here.
    pub fn new(stream: UnixStream) -> io::Result<Reader> {
        stream.set_read_timeout(Some(TICK))?;
        Ok(Reader {
            stream,
            buf: Vec::new(),
            scanned: 0,
        })
    }

    /// The next message, or `None` after a [`TICK`] without one; `UnexpectedEof` once the other
    /// side closed, `InvalidData` for a message too long or not understood.
    pub fn next<T: DeserializeOwned>(&mut self) -> io::Result<Option<T>> {
        let mut chunk = [0u8; 8192];
        loop {
            if let Some(at) = self.buf[self.scanned..].iter().position(|b| *b == b'\n') {
                let end = self.scanned + at;
                let line: Vec<u8> = self.buf.drain(..=end).collect();
                self.scanned = 0;
                return serde_json::from_slice(&line[..end])
                    .map(Some)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e));
            }
            self.scanned = self.buf.len();
            if self.buf.len() > MAX_MESSAGE {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("a message longer than {MAX_MESSAGE} bytes"),
                ));
            }
            match self.stream.read(&mut chunk) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Ok(None)
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The next message, waiting for it at most `within` in all (a sender that trickles
    /// bytes gets no more).
    pub fn next_within<T: DeserializeOwned>(&mut self, within: Duration) -> io::Result<T> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(message) = self.next()? {
                return Ok(message);
            }
            if Instant::now() >= deadline {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("no message within {within:?}"),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_one_json_object_a_line() {
        let run = Request::Run(Run {
            args: vec!["call".into(), "add".into()],
            stdin: true,
            stdout: false,
            stderr: false,
        });
        assert_eq!(
            serde_json::to_string(&run).unwrap(),
            r#"{"run":{"args":["call","add"],"stdin":true,"stdout":false,"stderr":false}}"#
        );
        assert_eq!(
            serde_json::to_string(&Reply::Exit { code: 4 }).unwrap(),
            r#"{"exit":{"code":4}}"#
        );
        assert_eq!(
            serde_json::to_string(&Request::Stop {}).unwrap(),
            r#"{"stop":{}}"#
        );
    }

    #[test]
    fn reads_whole_lines_in_pieces_and_bounds_them() {
        let (a, b) = UnixStream::pair().unwrap();
        let mut reader = Reader::new(b).unwrap();
        assert!(reader.next::<Reply>().unwrap().is_none(), "nothing yet");
        (&a).write_all(br#"{"alive":{}}"#).unwrap();
        assert!(reader.next::<Reply>().unwrap().is_none(), "half a line");
        (&a).write_all(b"\n{\"exit\":{\"code\":3}}\n").unwrap();
        assert!(matches!(
            reader.next::<Reply>().unwrap(),
            Some(Reply::Alive {})
        ));
        assert!(matches!(
            reader.next::<Reply>().unwrap(),
            Some(Reply::Exit { code: 3 })
        ));
        (&a).write_all(b"{\"nonsense\":1}\n").unwrap();
        let err = reader.next::<Reply>().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        // A line that never ends is cut off at the bound, not kept growing.
        let writer = std::thread::spawn(move || {
            let big = vec![b'x'; MAX_MESSAGE + CHUNK];
            let _ = (&a).write_all(&big);
            a
        });
        let err = loop {
            match reader.next::<Reply>() {
                Ok(None) => continue,
                Ok(Some(_)) => panic!("no message was whole"),
                Err(e) => break e,
            }
        };
        assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{err}");
        drop(reader);
        drop(writer.join().unwrap());
    }

    #[test]
    fn a_first_message_that_never_comes_times_out() {
        let (_a, b) = UnixStream::pair().unwrap();
        let mut reader = Reader::new(b).unwrap();
        let err = reader
            .next_within::<Request>(Duration::from_millis(300))
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        drop(_a);
        let err = reader.next::<Request>().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    }

    #[test]
    fn long_text_goes_in_pieces_cut_between_characters() {
        let text = "é".repeat(CHUNK);
        let pieces: Vec<&str> = chunks(&text).collect();
        assert_eq!(pieces.concat(), text);
        assert!(pieces.iter().all(|p| p.len() <= CHUNK));
        assert_eq!(pieces.len(), 2);
        assert_eq!(chunks("").count(), 0);
    }
}

#[cfg(test)]
#[path = "../../tests/fuzz/session_frames.rs"]
mod fuzz;
