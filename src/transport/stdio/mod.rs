//! The stdio transport: a server run as a child process, speaking newline-delimited JSON.
//!
//! [`StdioConfig`] describes the process; [`Connect::connect`](crate::transport::Connect::connect) starts it. The running
//! connection uses five named threads (six with a stderr callback), so that no caller ever
//! blocks on a pipe:
//!
//! * `umcp-stdio-reader` reads stdout line by line (each line bounded by
//!   [`StdioConfig::max_message_size`]) and delivers messages to the [`Inbox`](crate::transport::Inbox);
//! * `umcp-stdio-stderr` drains stderr into `log` (target `umcp::server_stderr`), the optional
//!   callback's queue and a short tail kept for error reports, so a chatty server never
//!   stalls;
//! * `umcp-stdio-stderr-callback`, only with [`StdioConfig::stderr_callback`], runs the callback,
//!   so a slow one never holds the drain;
//! * `umcp-stdio-writer` writes what the pipe could not take at once: a caller writes its own
//!   message when the pipe has room (on Unix, through a non-blocking pipe), and otherwise
//!   queues it, so a server that stops reading cannot block a caller past its deadline (see
//!   the `stdin` module);
//! * `umcp-stdio-wait` waits on the child and reports its exit the moment it happens;
//! * `umcp-stdio-monitor` notices when the server exits (or closes its output or input), reports
//!   [`Inbound::Closed`](super::Inbound::Closed) once, and runs the shutdown sequence.
//!
//! Closing follows the MCP shutdown order: close stdin, wait [`StdioConfig::close_grace`], send
//! SIGTERM, wait [`StdioConfig::kill_grace`], send SIGKILL, and always reap. On Unix the server
//! runs in its own process group and the signals go to the whole group, so the real server
//! behind a wrapper such as `npx`, `uvx` or `sh` is stopped too. On Windows only the direct
//! child is terminated.
//!
//! ```no_run
//! use std::time::Duration;
//! use umcp::transport::{Connect, Inbox};
//! use umcp::StdioConfig;
//!
//! # fn main() -> umcp::Result<()> {
//! let config = StdioConfig::new("npx")
//!     .args(["-y", "@modelcontextprotocol/server-everything"])
//!     .env("EXAMPLE_API_KEY", "not-a-real-key")
//!     .close_grace(Duration::from_secs(1))
//!     .stderr_callback(|line| log::info!("server: {line}"));
//! let (inbox, inbound) = Inbox::new();
//! let transport = config.connect(inbox)?;
//! // Send with `transport.send(..)`, read what the server sends from `inbound`.
//! # drop(inbound);
//! transport.close();
//! # Ok(())
//! # }
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

mod child;
mod command_line;
mod env;
#[cfg(unix)]
mod group;
#[cfg(unix)]
mod guard;
#[cfg(windows)]
mod job_windows;
mod lines;
mod monitor;
#[cfg(unix)]
mod pipe;
mod reader;
// Used on Windows only, compiled everywhere so its tests run on every platform.
#[cfg_attr(not(windows), allow(dead_code))]
mod resolve;
mod shared;
mod spawn;
mod stderr;
mod stdin;
mod transport;
mod worker;

pub use env::EnvPolicy;

/// How to start a stdio server: the program, its arguments, environment and working directory,
/// plus limits and shutdown timing.
///
/// The program is run directly, never through a shell. Build it with [`StdioConfig::new`] and
/// the setters, then start it with [`Connect::connect`](crate::transport::Connect::connect) (or hand it to the client).
///
/// ```
/// use std::time::Duration;
/// use umcp::{EnvPolicy, StdioConfig};
///
/// let config = StdioConfig::new("uvx")
///     .arg("mcp-server-time")
///     .args(["--local-timezone", "Europe/Paris"])
///     .env("TZ", "UTC")
///     .envs([("LANG", "C.UTF-8"), ("NO_COLOR", "1")])
///     .cwd("/tmp")
///     .env_policy(EnvPolicy::AllowList)
///     .max_message_size(16 << 20)
///     .close_grace(Duration::from_secs(1))
///     .kill_grace(Duration::from_millis(500))
///     .stderr_callback(|line| log::debug!("server: {line}"))
///     .stderr_tail_lines(50);
/// assert_eq!(config.get_command(), "uvx");
/// assert_eq!(config.get_args(), ["mcp-server-time", "--local-timezone", "Europe/Paris"]);
/// assert_eq!(config.get_envs().len(), 3);
/// assert_eq!(config.get_cwd(), Some(std::path::Path::new("/tmp")));
/// assert_eq!(config.get_env_policy(), EnvPolicy::AllowList);
/// assert_eq!(config.get_max_message_size(), 16 << 20);
/// assert_eq!(config.get_close_grace(), Duration::from_secs(1));
/// assert_eq!(config.get_kill_grace(), Duration::from_millis(500));
/// assert_eq!(config.get_stderr_tail_lines(), 50);
/// // Then: umcp::Client::connect(config)
/// ```
#[derive(Clone)]
pub struct StdioConfig {
    command: String,
    args: Vec<String>,
    envs: Vec<(String, String)>,
    cwd: Option<PathBuf>,
    env_policy: EnvPolicy,
    max_message_size: usize,
    close_grace: Duration,
    kill_grace: Duration,
    stderr_callback: Option<StderrCallback>,
    stderr_tail_lines: usize,
    end_with_parent: bool,
}

/// The callback that receives each stderr line.
pub(crate) type StderrCallback = Arc<dyn Fn(&str) + Send + Sync>;

/// The default limit of one message: 64 MiB.
const DEFAULT_MAX_MESSAGE_SIZE: usize = 64 << 20;

/// How many stderr lines are kept for error reports by default.
const DEFAULT_STDERR_TAIL_LINES: usize = 20;

/// The most bytes of stderr kept for error reports, whatever the number of lines.
pub(crate) const STDERR_TAIL_MAX_BYTES: usize = 8 << 10;

/// The longest stderr line passed on; longer lines are cut there and marked with ` […]`.
pub(crate) const STDERR_LINE_MAX_BYTES: usize = 4 << 10;

impl StdioConfig {
    /// A server started by running `command`, found through `PATH` when it has no path
    /// separator.
    ///
    /// See the example on [`StdioConfig`].
    pub fn new(command: impl Into<String>) -> StdioConfig {
        StdioConfig {
            command: command.into(),
            args: Vec::new(),
            envs: Vec::new(),
            cwd: None,
            env_policy: EnvPolicy::default(),
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            close_grace: Duration::from_secs(2),
            kill_grace: Duration::from_secs(2),
            stderr_callback: None,
            stderr_tail_lines: DEFAULT_STDERR_TAIL_LINES,
            end_with_parent: false,
        }
    }

    /// Adds one argument.
    ///
    /// See the example on [`StdioConfig`].
    pub fn arg(mut self, arg: impl Into<String>) -> StdioConfig {
        self.args.push(arg.into());
        self
    }

    /// Adds several arguments.
    ///
    /// See the example on [`StdioConfig`].
    pub fn args<I, S>(mut self, args: I) -> StdioConfig
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets one environment variable for the server; it wins over the parent's.
    ///
    /// See the example on [`StdioConfig`].
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> StdioConfig {
        self.envs.push((key.into(), value.into()));
        self
    }

    /// Sets several environment variables for the server.
    ///
    /// See the example on [`StdioConfig`].
    pub fn envs<I, K, V>(mut self, vars: I) -> StdioConfig
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        self.envs
            .extend(vars.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    /// Runs the server in `dir` instead of the parent's working directory.
    ///
    /// See the example on [`StdioConfig`].
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> StdioConfig {
        self.cwd = Some(dir.into());
        self
    }

    /// Chooses which of the parent's environment variables the server sees
    /// ([`EnvPolicy::AllowList`] by default).
    ///
    /// See the example on [`StdioConfig`].
    pub fn env_policy(mut self, policy: EnvPolicy) -> StdioConfig {
        self.env_policy = policy;
        self
    }

    /// The longest line (one message, without its `\n` or `\r\n`) accepted from the server; 64 MiB by
    /// default.
    ///
    /// A line is held whole until it passes the limit (a line within the limit must be kept to
    /// be decoded). A longer line is then let go of at once (only its first 4 KiB are kept) and
    /// the rest of it is skipped as it arrives, 64 KiB read at a time, so however long it is it
    /// costs at most the limit: a 64 MiB line under a 1 MiB limit holds about 1 MiB. When it
    /// starts like a response (`{"jsonrpc":"2.0","id":7,"result":…`) the request it answers
    /// fails with [`Error::MessageTooLarge`](crate::Error::MessageTooLarge); otherwise it is only logged. The next line is read
    /// as usual.
    ///
    /// See the example on [`StdioConfig`].
    pub fn max_message_size(mut self, bytes: usize) -> StdioConfig {
        self.max_message_size = bytes;
        self
    }

    /// How long [`Transport::close`](crate::transport::Transport::close) waits for the server to exit after closing its stdin,
    /// before sending SIGTERM; 2 s by default.
    ///
    /// See the example on [`StdioConfig`].
    pub fn close_grace(mut self, grace: Duration) -> StdioConfig {
        self.close_grace = grace;
        self
    }

    /// How long [`Transport::close`](crate::transport::Transport::close) waits after SIGTERM before sending SIGKILL; 2 s by default.
    ///
    /// See the example on [`StdioConfig`].
    pub fn kill_grace(mut self, grace: Duration) -> StdioConfig {
        self.kill_grace = grace;
        self
    }

    /// Whether the server's whole process tree ends with this process, however it ends
    /// (default off). `close` ends it in any case; this is for the ends that run no code of
    /// this process: `SIGKILL`, an out-of-memory kill, a crash. On Unix, a watcher process
    /// (`/bin/sh`, one for all servers of this process, started with the first) ends the
    /// server's process group, asking first (`SIGTERM`) and killing 2 s later, when this
    /// process is gone; without `/bin/sh` the server starts all the same, unwatched. On
    /// Windows every server's tree ends with this process already (a job object).
    ///
    /// ```no_run
    /// let daemon_server = umcp::StdioConfig::new("my-server").end_with_parent(true);
    /// assert!(daemon_server.get_end_with_parent());
    /// let client = umcp::Client::connect(daemon_server)?;
    /// # Ok::<(), umcp::Error>(())
    /// ```
    pub fn end_with_parent(mut self, end: bool) -> StdioConfig {
        self.end_with_parent = end;
        self
    }

    /// Calls `callback` with each line the server writes to stderr (without the newline),
    /// in order, from a thread of its own (`umcp-stdio-stderr-callback`).
    ///
    /// stderr is read on while it runs, so a slow callback never stalls the server: up to
    /// 1,024 lines wait for it, and lines beyond that skip it (a debug log says how many).
    /// A panic is caught, and the next line is passed as usual. Lines are also logged at debug
    /// level under the target `umcp::server_stderr`, and kept for the stderr tail, whether or
    /// not a callback is set.
    ///
    /// See the example on [`StdioConfig`].
    pub fn stderr_callback(
        mut self,
        callback: impl Fn(&str) + Send + Sync + 'static,
    ) -> StdioConfig {
        self.stderr_callback = Some(Arc::new(callback));
        self
    }

    /// How many of the server's last stderr lines are kept for
    /// [`Closed::stderr_tail`](crate::Closed::stderr_tail) (with the first three lines on stdout
    /// that were not JSON-RPC); 20 by default, and never more than 8 KiB in all. Lines longer than 4 KiB are cut there (for the log and the callback too).
    ///
    /// See the example on [`StdioConfig`].
    pub fn stderr_tail_lines(mut self, lines: usize) -> StdioConfig {
        self.stderr_tail_lines = lines;
        self
    }

    /// The program to run.
    ///
    /// See the example on [`StdioConfig`].
    pub fn get_command(&self) -> &str {
        &self.command
    }

    /// The arguments.
    ///
    /// See the example on [`StdioConfig`].
    pub fn get_args(&self) -> &[String] {
        &self.args
    }

    /// The configured environment variables, in the order they were set (a later one wins).
    ///
    /// See the example on [`StdioConfig`].
    pub fn get_envs(&self) -> &[(String, String)] {
        &self.envs
    }

    /// The working directory, when one is set.
    ///
    /// See the example on [`StdioConfig`].
    pub fn get_cwd(&self) -> Option<&Path> {
        self.cwd.as_deref()
    }

    /// The environment policy.
    ///
    /// See the example on [`StdioConfig`].
    pub fn get_env_policy(&self) -> EnvPolicy {
        self.env_policy
    }

    /// The largest accepted message in bytes.
    ///
    /// See the example on [`StdioConfig`].
    pub fn get_max_message_size(&self) -> usize {
        self.max_message_size
    }

    /// The wait after closing stdin before SIGTERM.
    ///
    /// See the example on [`StdioConfig`].
    pub fn get_close_grace(&self) -> Duration {
        self.close_grace
    }

    /// The wait after SIGTERM before SIGKILL.
    ///
    /// See the example on [`StdioConfig`].
    pub fn get_kill_grace(&self) -> Duration {
        self.kill_grace
    }

    /// Whether the server's process tree ends with this process.
    ///
    /// See the example on [`StdioConfig::end_with_parent`].
    pub fn get_end_with_parent(&self) -> bool {
        self.end_with_parent
    }

    /// How many stderr lines are kept for error reports.
    ///
    /// See the example on [`StdioConfig`].
    pub fn get_stderr_tail_lines(&self) -> usize {
        self.stderr_tail_lines
    }
}

#[cfg(test)]
mod tests;
