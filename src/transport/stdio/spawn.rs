//! How a [`StdioConfig`] becomes a running server: the command it spawns, and the transport
//! that talks to it.

use std::fmt;
use std::io;
use std::process::{Command, Stdio};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::transport::{Connect, Inbox, Transport};

#[cfg(windows)]
use super::job_windows;
#[cfg(windows)]
use super::resolve;
use super::{env, transport, StdioConfig};

impl StdioConfig {
    /// The program to start. On Windows a bare name is looked up through `PATHEXT` in the
    /// server's own `PATH` (the configured one if set), so `npx` finds `npx.cmd`.
    fn program(&self) -> std::path::PathBuf {
        #[cfg(windows)]
        {
            let configured = |name: &str| {
                self.envs
                    .iter()
                    .rev()
                    .find(|(k, _)| k.eq_ignore_ascii_case(name))
                    .map(|(_, v)| std::ffi::OsString::from(v))
            };
            let path = configured("PATH").or_else(|| std::env::var_os("PATH"));
            let pathext = configured("PATHEXT").or_else(|| std::env::var_os("PATHEXT"));
            resolve::program(&self.command, path.as_deref(), pathext.as_deref())
        }
        #[cfg(not(windows))]
        {
            std::path::PathBuf::from(&self.command)
        }
    }

    /// The command line, with arguments quoted where a reader would otherwise misread them.
    fn command_line(&self) -> String {
        let mut line = quote(&self.command);
        for arg in &crate::redact::args(&self.args) {
            line.push(' ');
            line.push_str(&quote(arg));
        }
        line
    }

    /// A spawn failure, said more precisely when the usual mistakes explain it: the OS
    /// reports a missing working directory as a missing program, and a whole command line
    /// given as the program is looked up as one file name.
    fn explain(&self, error: io::Error) -> io::Error {
        if error.kind() != io::ErrorKind::NotFound {
            return error;
        }
        if let Some(dir) = self.cwd.as_deref().filter(|dir| !dir.is_dir()) {
            let message = format!(
                "the working directory `{}` does not exist or is not a directory",
                dir.display()
            );
            return io::Error::new(io::ErrorKind::NotFound, message);
        }
        if self.command.trim().contains(char::is_whitespace) {
            let message = format!(
                "{error}; the whole text is taken as the program's name: give its arguments \
                 separately (`args`), or split a command line with \
                 `StdioConfig::from_command_line`"
            );
            return io::Error::new(io::ErrorKind::NotFound, message);
        }
        error
    }

    /// The command prepared for spawning: pipes, environment, directory and process group.
    fn command(&self) -> Command {
        let mut cmd = Command::new(self.program());
        cmd.args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        env::apply(&mut cmd, self.env_policy, &self.envs);
        if let Some(dir) = &self.cwd {
            cmd.current_dir(dir);
        }
        #[cfg(unix)]
        {
            // Its own process group lets close signal the server together with whatever it
            // started (the real server behind npx, uvx or sh), so nothing is orphaned.
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        #[cfg(windows)]
        {
            // Without this a console window pops up for every server started from a GUI host.
            use std::os::windows::process::CommandExt;
            const CREATE_NO_WINDOW: u32 = 0x0800_0000;
            cmd.creation_flags(CREATE_NO_WINDOW);
        }
        cmd
    }
}

impl Connect for StdioConfig {
    /// Spawns the server and starts the transport's threads.
    ///
    /// # Errors
    ///
    /// [`Error::Spawn`] when the program cannot be started (not found, not executable, bad
    /// working directory); [`Error::Io`] when the transport's threads cannot be started.
    fn connect(&self, inbox: Inbox) -> Result<Box<dyn Transport>> {
        let child = self.command().spawn().map_err(|source| Error::Spawn {
            command: self.command.clone(),
            source: Arc::new(self.explain(source)),
        })?;
        log::debug!("spawned `{}` (pid {})", self.command_line(), child.id());
        #[cfg(windows)]
        let job = job_windows::Job::contain(&child);
        let transport = transport::StdioTransport::start(child, self, inbox)?;
        #[cfg(windows)]
        match job {
            Ok(job) => return Ok(Box::new(job_windows::Contained::new(transport, job))),
            Err(e) => log::debug!("no job object for `{}`: {e}", self.command),
        }
        Ok(Box::new(transport))
    }

    fn describe(&self) -> String {
        self.command_line()
    }
}

impl fmt::Debug for StdioConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Values of the configured variables may be secrets, so only their names are shown;
        // the arguments as the command line in messages shows them (`--token <redacted>`).
        let env_names: Vec<&str> = self.envs.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("StdioConfig")
            .field("command", &self.command)
            .field("args", &crate::redact::args(&self.args))
            .field("envs", &env_names)
            .field("cwd", &self.cwd)
            .field("env_policy", &self.env_policy)
            .field("max_message_size", &self.max_message_size)
            .field("close_grace", &self.close_grace)
            .field("kill_grace", &self.kill_grace)
            .field("stderr_callback", &self.stderr_callback.is_some())
            .field("stderr_tail_lines", &self.stderr_tail_lines)
            .field("end_with_parent", &self.end_with_parent)
            .finish()
    }
}

/// Quotes a word of a command line for display when it is empty or holds spaces or quotes.
fn quote(word: &str) -> String {
    if word.is_empty() || word.contains(|c: char| c.is_whitespace() || c == '"' || c == '\'') {
        format!("{word:?}")
    } else {
        word.to_owned()
    }
}
