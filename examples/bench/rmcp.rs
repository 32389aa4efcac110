//! rmcp as the benchmark's third client: the program `.ci/rmcp-baseline` builds, one process
//! per mode kept alive across the repetitions and driven over its stdin.
//!
//! umcp never depends on an async runtime, not even for a benchmark, so rmcp runs in a process
//! of its own (`bash .ci/bench` builds it and passes its path in `UMCP_BENCH_RMCP`). Each
//! repetition asks it for `seq N` or `par N` and reads back `ns <elapsed> allocs <count>`:
//! its start-up and the server's are not measured, and its runs interleave with the other
//! clients' as theirs do with each other. The process and its server are pinned as umcp and
//! its server are; its context switches are read from `/proc/<pid>/task`.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use crate::procfs::{context_switches, cpu_ns, machine_busy, machine_ticks};
use crate::{server_command, BoxResult, Placement, Sample};

/// The environment variable that names the rmcp client's binary.
pub const VARIABLE: &str = "UMCP_BENCH_RMCP";

/// The rmcp client's binary, when the environment names one.
pub fn binary() -> Option<PathBuf> {
    std::env::var_os(VARIABLE)
        .filter(|path| !path.is_empty())
        .map(PathBuf::from)
}

/// One rmcp client process with its server.
pub struct Rmcp {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Rmcp {
    /// Starts `binary` on `server`, placed like umcp: the client on core 0 when pinned, the
    /// server where [`server_command`] puts it. Several threads get tokio's multi-thread
    /// runtime, one gets a current-thread runtime.
    pub fn start(
        binary: &Path,
        server: &Path,
        placement: Placement,
        threads: usize,
    ) -> BoxResult<Rmcp> {
        let mut command = if placement == Placement::Free {
            Command::new(binary)
        } else {
            let mut taskset = Command::new("taskset");
            taskset.args(["-c", "0"]).arg(binary);
            taskset
        };
        if threads > 1 {
            command.arg("--multi-thread");
        }
        let (program, args) = server_command(server, placement);
        let mut child = command
            .arg(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{VARIABLE}={}: {e}", binary.display()))?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let stdin = child.stdin.take();
        Ok(Rmcp {
            child,
            stdin,
            stdout,
        })
    }

    /// Makes `calls` calls, in sequence for one thread, over 8 tasks otherwise.
    pub fn run(&mut self, threads: usize, calls: usize) -> BoxResult<Sample> {
        let process = self.child.id().to_string();
        let ctx = context_switches(&process);
        let cpu = cpu_ns(&process);
        let ticks = machine_ticks();
        let mode = if threads == 1 { "seq" } else { "par" };
        let stdin = self.stdin.as_mut().ok_or("closed")?;
        writeln!(stdin, "{mode} {calls}")?;
        stdin.flush()?;
        let mut line = String::new();
        self.stdout.read_line(&mut line)?;
        let ctx = context_switches(&process).saturating_sub(ctx);
        let cpu = cpu_ns(&process).saturating_sub(cpu);
        // `ns <elapsed> allocs <count>`; anything else means the client failed (it says why
        // on stderr).
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (Some(&"ns"), Some(ns), Some(&"allocs"), Some(allocs)) =
            (fields.first(), fields.get(1), fields.get(2), fields.get(3))
        else {
            return Err(format!("the rmcp client answered {line:?}").into());
        };
        let (ns, allocs): (f64, f64) = (ns.parse()?, allocs.parse()?);
        let n = calls as f64;
        Ok(Sample {
            rate: n / (ns / 1e9),
            ctx: ctx as f64 / n,
            allocs: allocs / n,
            cpu: cpu as f64 / n / 1e3,
            machine: machine_busy(ticks),
            close: std::time::Duration::ZERO,
        })
    }
}

impl Drop for Rmcp {
    /// End of input: the client closes its connection and exits.
    fn drop(&mut self) {
        self.stdin.take();
        let _ = self.child.wait();
    }
}
