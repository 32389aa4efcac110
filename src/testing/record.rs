//! The recording transport: any transport, with every message of its sessions written to a
//! file as JSON lines.

use crate::sync::lock;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{json, Value};

use crate::config::{ServerConfig, ServerTransport};
use crate::error::{Error, Result, CLOSED_BY_CLIENT};
use crate::jsonrpc::{Message, RequestId};
use crate::private_file;
use crate::redact::{self, REDACTED};
use crate::transport::{Connect, Inbound, Inbox, SessionEvent, Transport};

/// Secrets shorter than this many characters are not looked for (see "Secrets" on
/// [`RecordingTransport`]).
///
/// See the example on [`RecordingTransport`].
pub const MIN_SECRET_CHARS: usize = 4;

/// A [`Connect`] that records the sessions of the transport it wraps into a file, as JSON
/// lines with their timing and with secrets redacted, for
/// [`ReplayTransport`](super::ReplayTransport) to play back.
///
/// The client runs as it would on the transport wrapped; the recording only watches. Every
/// line is flushed as it is written, so a recording is complete up to the last message even
/// when the process dies. A write that fails stops the recording (logged once) and never the
/// session.
///
/// ```no_run
/// use std::path::Path;
/// use serde_json::json;
/// use umcp::testing::RecordingTransport;
/// use umcp::{Client, StdioConfig};
///
/// let server = StdioConfig::new("npx").args(["-y", "@modelcontextprotocol/server-everything"]);
/// let recorded = RecordingTransport::new(server, Path::new("tests/sessions/everything.jsonl"))?
///     .with_secret(std::env::var("EVERYTHING_TOKEN").unwrap_or_default());
/// let client = Client::connect(recorded)?;
/// client.call_tool("echo", json!({"message": "hi"}))?;
/// client.close();
/// # Ok::<(), umcp::Error>(())
/// ```
///
/// # The recording format
///
/// One JSON object per line. Each connection the client makes starts a session with a
/// header line, and every line after it belongs to that session:
///
/// ```text
/// {"recording":"umcp","version":1,"session":1,"server":"npx -y server-everything"}
/// {"ms":0.113,"from":"client","message":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{…}}}
/// {"ms":4.871,"from":"server","message":{"jsonrpc":"2.0","id":1,"result":{…}}}
/// {"ms":912.4,"from":"server","closed":"server exited"}
/// {"ms":913.0,"from":"client","closed":"closed by client"}
/// ```
///
/// - `ms`: milliseconds since the session started (its connect).
/// - `from`: `client` for what the client sent, `server` for what it received; `transport`
///   for what the transport reported: `not_sent`, the error a message just recorded failed
///   with instead of going out (with the `status` and `body` of an HTTP refusal), played back
///   as that error; `note`, a request lost or a gap in a stream, never played back.
/// - `message`: one JSON-RPC message (a batch the server sent is written one message a
///   line), as the wire carried it, redacted; `text` instead for a line that was no JSON.
/// - `closed`: the connection ended, and why: `server` when the server went away, `client`
///   when the client closed it.
///
/// # Secrets
///
/// Nothing that authenticates is written. The transport's credentials (an `Authorization`
/// header, OAuth tokens) travel beside the messages and are never recorded; the server's
/// description in the header line is the one logs show, with secret-looking arguments and URL
/// query values redacted. Inside the messages, `<redacted>` replaces:
///
/// - every occurrence of a value given with [`RecordingTransport::with_secret`], or taken
///   from the server's configuration by [`RecordingTransport::for_server`] (every header
///   value, `Cookie` included, but those of `Accept…`, `Content-Type`, `User-Agent` and the
///   like; environment variables with credential-like names, `SESSION` and `COOKIE` among
///   them; the OAuth client secret, query values of the URL, secret-looking command-line
///   arguments); values shorter than
///   [`MIN_SECRET_CHARS`] are ignored, since replacing them everywhere would garble the
///   recording rather than hide anything;
/// - the string value of any member named like a credential (`token`, `access_token`,
///   `apiKey`, `password`, `secret`, `client_secret`, `authorization`, `cookie`,
///   `set-cookie`, …);
/// - a word carrying a well-known token prefix (`sk-`, `ghp_`, `xoxb-`, …), and the word after
///   `Bearer`.
///
/// A replay matches a redacted value in a recorded request with anything the client sends
/// there, and gives back `<redacted>` where the server's answer held one.
///
/// The testing guide, [`umcp::guide::testing`](crate::guide::testing), walks through a whole
/// test.
pub struct RecordingTransport {
    inner: Box<dyn Connect>,
    recorder: Arc<Recorder>,
}

impl RecordingTransport {
    /// Records the sessions of `inner` into the file at `path`, created or truncated now, and
    /// readable by its owner only (mode 0600 on unix): recordings hold whole sessions. A
    /// symbolic link, a file with other hard links or another user's file at `path` is
    /// refused, not written through.
    ///
    /// See the example on [`RecordingTransport`].
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the file cannot be created or is refused.
    pub fn new(inner: impl Connect + 'static, path: &Path) -> Result<RecordingTransport> {
        let file = private_file::create_or_truncate(path).map_err(Error::io)?;
        Ok(RecordingTransport {
            inner: Box::new(inner),
            recorder: Arc::new(Recorder {
                out: Mutex::new(Some(BufWriter::new(file))),
                secrets: Mutex::new(Vec::new()),
                sessions: AtomicU32::new(0),
            }),
        })
    }

    /// Records the sessions of the server `config` describes, as
    /// [`ServerConfig::connector`] connects to it, into the file at `path`, with the secrets
    /// of its configuration redacted (see "Secrets" on [`RecordingTransport`]).
    ///
    /// ```no_run
    /// use std::path::Path;
    /// use umcp::testing::RecordingTransport;
    /// use umcp::{Client, HttpConfig, ServerConfig};
    ///
    /// let search = HttpConfig::new("https://mcp.example.com/mcp")
    ///     .header("Authorization", "Bearer not-a-real-token");
    /// let config = ServerConfig::new("search", search);
    /// let client = Client::connect(RecordingTransport::for_server(&config, Path::new("search.jsonl"))?)?;
    /// # let _ = client;
    /// # Ok::<(), umcp::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`ServerConfig::connector`] and [`RecordingTransport::new`].
    pub fn for_server(config: &ServerConfig, path: &Path) -> Result<RecordingTransport> {
        let recording = RecordingTransport::new(config.connector()?, path)?;
        Ok(secrets_of(config)
            .into_iter()
            .fold(recording, RecordingTransport::with_secret))
    }

    /// Redacts every occurrence of `secret` (a token, a key, the value of a `${VAR}` a
    /// configuration used) in what is recorded from now on. A secret shorter than
    /// [`MIN_SECRET_CHARS`] is ignored.
    ///
    /// See the example on [`RecordingTransport`].
    pub fn with_secret(self, secret: impl Into<String>) -> RecordingTransport {
        let secret = secret.into();
        if secret.chars().count() >= MIN_SECRET_CHARS {
            let mut secrets = lock(&self.recorder.secrets);
            secrets.push(secret);
            // The longest first, so that a secret holding another is hidden whole.
            secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
            secrets.dedup();
        }
        self
    }

    /// A recording session of one connection, its header line written.
    fn session(&self) -> Arc<Session> {
        let number = self.recorder.sessions.fetch_add(1, Ordering::Relaxed) + 1;
        let session = Arc::new(Session {
            recorder: Arc::clone(&self.recorder),
            start: Instant::now(),
        });
        let server = json!(self.recorder.redact_text(&self.inner.describe()));
        self.recorder.line(&format!(
            r#"{{"recording":"umcp","version":1,"session":{number},"server":{server}}}"#
        ));
        session
    }

    fn wrap(&self, session: Arc<Session>, inner: Box<dyn Transport>) -> Box<dyn Transport> {
        Box::new(Recorded {
            inner,
            session,
            closed: AtomicBool::new(false),
        })
    }
}

impl Connect for RecordingTransport {
    fn connect(&self, inbox: Inbox) -> Result<Box<dyn Transport>> {
        let session = self.session();
        let inner = self.inner.connect(tapped(inbox, Arc::clone(&session)))?;
        Ok(self.wrap(session, inner))
    }

    fn connect_by(&self, inbox: Inbox, deadline: Instant) -> Result<Box<dyn Transport>> {
        let session = self.session();
        let inner = self
            .inner
            .connect_by(tapped(inbox, Arc::clone(&session)), deadline)?;
        Ok(self.wrap(session, inner))
    }

    fn fallback(&self) -> Option<Box<dyn Connect>> {
        let inner = self.inner.fallback()?;
        Some(Box::new(RecordingTransport {
            inner,
            recorder: Arc::clone(&self.recorder),
        }))
    }

    fn describe(&self) -> String {
        // What the client keys its era verdicts on: the server's, not the recording's.
        self.inner.describe()
    }
}

impl std::fmt::Debug for RecordingTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordingTransport")
            .field("server", &self.inner.describe())
            .finish_non_exhaustive()
    }
}

/// The file and the secrets, shared by every session of a recording.
struct Recorder {
    /// `None` once a write failed.
    out: Mutex<Option<BufWriter<File>>>,
    secrets: Mutex<Vec<String>>,
    sessions: AtomicU32,
}

impl Recorder {
    /// Writes one line; the first failure ends the recording.
    fn line(&self, line: &str) {
        let mut out = lock(&self.out);
        let Some(writer) = out.as_mut() else {
            return;
        };
        let written = writer
            .write_all(line.as_bytes())
            .and_then(|()| writer.write_all(b"\n"))
            .and_then(|()| writer.flush());
        if let Err(e) = written {
            log::warn!("the session recording stopped: {e}");
            *out = None;
        }
    }

    fn redact_text(&self, text: &str) -> String {
        redact_string(text, &lock(&self.secrets))
    }
}

/// One connection's part of the recording.
struct Session {
    recorder: Arc<Recorder>,
    start: Instant,
}

impl Session {
    /// Writes one entry of this session, from `from`, with its time.
    fn entry(&self, from: &str, key: &str, value: Value) {
        let ms = self.start.elapsed().as_micros() as f64 / 1000.0;
        // Written by hand, for the members' order: time, direction, content.
        self.recorder
            .line(&format!(r#"{{"ms":{ms},"from":"{from}","{key}":{value}}}"#));
    }

    fn message(&self, from: &str, mut message: Value) {
        redact_value(&mut message, &lock(&self.recorder.secrets));
        self.entry(from, "message", message);
    }

    /// What the server sent, as the transport read it: one line per message of a batch.
    fn server_text(&self, text: &str) {
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Array(batch)) => batch.into_iter().for_each(|m| self.message("server", m)),
            Ok(message) => self.message("server", message),
            Err(_) => self.entry("server", "text", json!(self.recorder.redact_text(text))),
        }
    }

    fn server_inbound(&self, inbound: &Inbound) {
        match inbound {
            Inbound::Message(message) => self.message("server", message.to_value()),
            Inbound::Batch(messages, _) => {
                for message in messages {
                    self.message("server", message.to_value());
                }
            }
            Inbound::Invalid(request) => {
                self.entry("transport", "note", json!(format!("refused: {request}")));
            }
            Inbound::Failed(id, error) | Inbound::Unanswered(id, error) => {
                let note = format!("request {id} lost: {error}");
                self.entry("transport", "note", json!(self.recorder.redact_text(&note)));
            }
            Inbound::Gap(why) => self.entry("transport", "note", json!(format!("gap: {why}"))),
            Inbound::Closed(closed) => {
                let reason = self.recorder.redact_text(&closed.reason);
                self.entry("server", "closed", json!(reason));
            }
        }
    }
}

/// An inbox that records what it delivers, then delivers it to `inner` as it would have
/// (the client's text fast path included).
fn tapped(inner: Inbox, session: Arc<Session>) -> Inbox {
    let text_inner = inner.clone();
    let text_session = Arc::clone(&session);
    Inbox::with_sink(move |inbound| {
        session.server_inbound(&inbound);
        match inbound {
            Inbound::Message(message) => inner.deliver(message),
            Inbound::Batch(messages, invalid) => inner.deliver_batch(messages, invalid),
            Inbound::Invalid(request) => inner.deliver_invalid(request),
            Inbound::Failed(id, error) => inner.fail(id, error),
            Inbound::Unanswered(id, error) => inner.unanswered(id, error),
            Inbound::Gap(why) => {
                inner.gap(why);
                true
            }
            Inbound::Closed(closed) => {
                inner.closed((*closed).clone());
                true
            }
        }
    })
    .with_text_sink(move |text| {
        text_session.server_text(text);
        // Not JSON-RPC: the outer inbox fails it too, without delivering anything.
        text_inner.deliver_text(text).ok()
    })
}

/// The transport of one recorded connection.
struct Recorded {
    inner: Box<dyn Transport>,
    session: Arc<Session>,
    /// Whether the client's end is recorded (`close` may be called again).
    closed: AtomicBool,
}

impl Recorded {
    /// Notes a message that did not go (it was recorded before it went: a fast server's
    /// answer must not come first).
    fn sent(&self, outcome: Result<()>) -> Result<()> {
        if let Err(error) = &outcome {
            let recorder = &self.session.recorder;
            let mut refusal = json!({"error": recorder.redact_text(&error.to_string())});
            let http = match error {
                Error::Http(http) => Some(("http", http)),
                Error::Unauthorized(http) => Some(("unauthorized", http)),
                Error::Forbidden(http) => Some(("forbidden", http)),
                _ => None,
            };
            if let Some((kind, http)) = http {
                refusal["kind"] = json!(kind);
                refusal["status"] = json!(http.status);
                refusal["url"] = json!(recorder.redact_text(&redact::url(&http.url)));
                refusal["body"] = json!(recorder.redact_text(&http.body));
            } else if matches!(error, Error::SessionExpired) {
                refusal["kind"] = json!("session_expired");
            }
            self.session.entry("transport", "not_sent", refusal);
        }
        outcome
    }
}

impl Transport for Recorded {
    fn send(&self, message: &Message, deadline: Instant) -> Result<()> {
        self.session.message("client", message.to_value());
        self.sent(self.inner.send(message, deadline))
    }

    fn send_with_headers(
        &self,
        message: &Message,
        deadline: Instant,
        headers: &[(String, String)],
    ) -> Result<()> {
        self.session.message("client", message.to_value());
        let outcome = self.inner.send_with_headers(message, deadline, headers);
        self.sent(outcome)
    }

    fn send_waits_for_peer(&self) -> bool {
        self.inner.send_waits_for_peer()
    }

    fn abandon(&self, id: &RequestId) {
        self.inner.abandon(id);
    }

    fn session_event(&self, event: SessionEvent<'_>) {
        self.inner.session_event(event);
    }

    fn close(&self) {
        if !self.closed.swap(true, Ordering::Relaxed) {
            self.session
                .entry("client", "closed", json!(CLOSED_BY_CLIENT));
        }
        self.inner.close();
    }

    fn abort(&self) {
        if !self.closed.swap(true, Ordering::Relaxed) {
            self.session
                .entry("client", "closed", json!("aborted by client"));
        }
        self.inner.abort();
    }

    fn kind(&self) -> &'static str {
        self.inner.kind()
    }

    fn authorization_context(&self) -> u64 {
        self.inner.authorization_context()
    }
}

/// The secrets of a server's configuration (see "Secrets" on [`RecordingTransport`]).
fn secrets_of(config: &ServerConfig) -> Vec<String> {
    let mut secrets = Vec::new();
    // `None` for a name: a value that counts whatever its name.
    let mut named = |name: Option<&str>, value: &str| {
        if name.is_none_or(redact::secret_name) || redact::token_like(value) {
            secrets.push(value.to_owned());
            // `Bearer abc` is sent as `abc` in some places.
            if let Some((_, token)) = value.split_once(' ') {
                secrets.push(token.trim().to_owned());
            }
        }
    };
    match &config.transport {
        ServerTransport::Stdio(stdio) => {
            let args = stdio.get_args();
            for (name, value) in stdio.get_envs() {
                named(Some(name), value);
            }
            let shown = redact::args(args);
            let mut hidden = Vec::new();
            for (arg, shown) in args.iter().zip(&shown) {
                if arg == shown {
                    continue;
                }
                // `--token=x`, `KEY=x`, `Header: x`, or the whole argument.
                let value = match shown.rsplit_once(REDACTED) {
                    Some((before, "")) if before.ends_with('=') || before.ends_with(": ") => {
                        let cut = arg.find(['=', ':']).map_or(0, |at| at + 1);
                        arg[cut..].trim()
                    }
                    _ => arg.as_str(),
                };
                hidden.push(value.to_owned());
            }
            secrets.extend(hidden);
        }
        ServerTransport::Http(http, oauth) => {
            let url = http.get_url();
            // A header given for a server is mostly there to identify the client (a cookie, a
            // key under a name of the server's choosing): every value counts but those of the
            // standard headers that describe the content or the client.
            for (name, value) in http.get_headers() {
                let plain = PLAIN_HEADERS.iter().any(|h| h.eq_ignore_ascii_case(name));
                named(if plain { Some(name) } else { None }, value);
            }
            if let Some(secret) = oauth.as_ref().and_then(|o| o.client_secret.clone()) {
                secrets.push(secret);
            }
            if let Some((_, query)) = url.split_once('?') {
                let query = query.split('#').next().unwrap_or_default();
                let values = query.split('&').filter_map(|pair| pair.split_once('='));
                secrets.extend(values.map(|(_, value)| value.to_owned()));
            }
        }
    }
    secrets
}

/// Headers that say what the content or the client is, not who: their values are no secret
/// unless they look like one.
const PLAIN_HEADERS: [&str; 8] = [
    "accept",
    "accept-encoding",
    "accept-language",
    "cache-control",
    "content-language",
    "content-type",
    "user-agent",
    "mcp-protocol-version",
];

/// Member names whose string values are credentials, compared on their lowercased letters
/// and digits alone.
const CREDENTIAL_MEMBERS: [&str; 17] = [
    "token",
    "accesstoken",
    "refreshtoken",
    "idtoken",
    "authtoken",
    "apitoken",
    "apikey",
    "secret",
    "clientsecret",
    "password",
    "passwd",
    "authorization",
    "cookie",
    "setcookie",
    "privatekey",
    "bearer",
    "sessiontoken",
];

/// Redacts, in place, what the [`RecordingTransport`] says is redacted.
fn redact_value(value: &mut Value, secrets: &[String]) {
    match value {
        Value::String(text) => *text = redact_string(text, secrets),
        Value::Array(items) => items.iter_mut().for_each(|v| redact_value(v, secrets)),
        Value::Object(members) => {
            for (name, member) in members.iter_mut() {
                let plain: String = name
                    .chars()
                    .filter(char::is_ascii_alphanumeric)
                    .map(|c| c.to_ascii_lowercase())
                    .collect();
                match member {
                    Value::String(text) if CREDENTIAL_MEMBERS.contains(&plain.as_str()) => {
                        *text = REDACTED.to_owned();
                    }
                    other => redact_value(other, secrets),
                }
            }
        }
        _ => {}
    }
}

/// `text` with every secret, every token-like word and every word after `Bearer` replaced.
fn redact_string(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_owned();
    for secret in secrets {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), REDACTED);
        }
    }
    if !out.contains(char::is_whitespace) && !redact::token_like(&out) {
        return out;
    }
    let mut words: Vec<String> = Vec::new();
    let mut after_bearer = false;
    for word in out.split(' ') {
        let bare = word.trim_matches(|c: char| "\"'`,;()[]{}<>".contains(c));
        let hide = after_bearer && !bare.is_empty() && bare != REDACTED || redact::token_like(bare);
        after_bearer = bare.eq_ignore_ascii_case("bearer");
        words.push(match hide {
            true => word.replace(bare, REDACTED),
            false => word.to_owned(),
        });
    }
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::http::HttpConfig;
    use crate::transport::StdioConfig;

    #[test]
    fn secrets_credentials_and_tokens_are_redacted_and_the_rest_kept() {
        let secrets = vec!["hunter2-long".to_owned()];
        let mut message = json!({
            "params": {
                "arguments": {"note": "the key is hunter2-long, ok", "count": 3},
                "apiKey": "k-123",
                "access_token": "at-456",
                "_meta": {"progressToken": "p1"},
                "text": "use sk-abc123 or Bearer xyz789 now",
                "author": "Ada",
            }
        });
        redact_value(&mut message, &secrets);
        let params = &message["params"];
        assert_eq!(params["arguments"]["note"], "the key is <redacted>, ok");
        assert_eq!(params["arguments"]["count"], 3);
        assert_eq!(params["apiKey"], REDACTED);
        assert_eq!(params["access_token"], REDACTED);
        assert_eq!(params["_meta"]["progressToken"], "p1");
        assert_eq!(params["text"], "use <redacted> or Bearer <redacted> now");
        assert_eq!(params["author"], "Ada");
    }

    #[test]
    fn a_configuration_gives_its_credentials_and_nothing_else() {
        let stdio = StdioConfig::new("server")
            .args([
                "--token",
                "tok-1234",
                "--api-key=key-5678",
                "--port",
                "8080",
            ])
            .env("GITHUB_TOKEN", "ghp_abcdef")
            .env("LANG", "en_US.UTF-8");
        let stdio = ServerConfig::new("s", stdio);
        let mut secrets = secrets_of(&stdio);
        secrets.sort();
        assert_eq!(secrets, ["ghp_abcdef", "key-5678", "tok-1234"]);

        let http = HttpConfig::new("https://h.example/mcp?api_key=q-98765")
            .header("Authorization", "Bearer b-4321")
            .header("Accept-Language", "fr-CH, fr;q=0.9")
            .header("Cookie", "sid=c-1111")
            .header("X-Acme-Tenant", "t-2222");
        let http = ServerConfig::new("h", http);
        let mut secrets = secrets_of(&http);
        secrets.sort();
        assert_eq!(
            secrets,
            ["Bearer b-4321", "b-4321", "q-98765", "sid=c-1111", "t-2222"]
        );
    }
}
