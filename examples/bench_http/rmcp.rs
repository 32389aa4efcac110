//! rmcp's Streamable HTTP client as a process of its own (`.ci/rmcp-baseline --http URL`,
//! named by `UMCP_BENCH_RMCP`), driven over stdin: no async runtime enters this program.

use std::error::Error;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

type BoxResult<T> = Result<T, Box<dyn Error>>;

/// The rmcp client process, connected to one server.
pub struct Rmcp {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Rmcp {
    /// Starts rmcp's client for `url`, when `UMCP_BENCH_RMCP` names its binary.
    pub fn start(url: &str) -> BoxResult<Option<Rmcp>> {
        let Some(binary) = std::env::var_os("UMCP_BENCH_RMCP").filter(|b| !b.is_empty()) else {
            return Ok(None);
        };
        let mut child = Command::new(binary)
            .args(["--http", url])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let input = child.stdin.take().ok_or("no stdin")?;
        let output = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        Ok(Some(Rmcp {
            child,
            input,
            output,
        }))
    }

    /// `calls` sequential echo calls; the nanoseconds they took.
    pub fn seq(&mut self, calls: usize) -> BoxResult<u64> {
        self.command(&format!("seq {calls}"))
    }

    /// Closes the client's session and opens a new one.
    pub fn fresh(&mut self) -> BoxResult<()> {
        self.command("fresh 0").map(drop)
    }

    /// `n` connects, each ready to call; the nanoseconds they took, closes left out.
    pub fn connect(&mut self, n: usize) -> BoxResult<u64> {
        self.command(&format!("connect {n}"))
    }

    fn command(&mut self, line: &str) -> BoxResult<u64> {
        writeln!(self.input, "{line}")?;
        self.input.flush()?;
        let mut answer = String::new();
        self.output.read_line(&mut answer)?;
        let ns = answer
            .split_whitespace()
            .nth(1)
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("rmcp-baseline answered {answer:?}"))?;
        Ok(ns)
    }
}

impl Drop for Rmcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
