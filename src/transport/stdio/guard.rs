//! Ending servers' process groups together with this process, however it ends (Unix): for
//! the servers started with [`StdioConfig::end_with_parent`](super::StdioConfig::end_with_parent),
//! a watcher, `/bin/sh` started once, reads the groups to end from a pipe, and ends them when
//! the pipe closes, which the kernel does as this process exits, by `SIGKILL` or an
//! out-of-memory kill too. (On Windows a job object does the same for every server.)
//!
//! A group is named to the watcher when its server starts and withdrawn when the monitor
//! saw it gone, so that a group id the system has since given to another group is never
//! signalled. The pipe is written without blocking: a watcher that stopped reading costs a
//! line lost and a debug log, never a stalled `connect`.

use std::collections::BTreeSet;
use std::io::{self, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;

use super::pipe;

/// The watcher: it ignores the signals a terminal or a dying session sends, keeps the
/// groups it is told, and once its input ends asks them to exit, then kills what is left.
const WATCHER: &str = r#"trap '' HUP INT TERM QUIT PIPE
groups=' '
while read -r op group; do
  case $op in
    add) groups="$groups$group " ;;
    remove) kept=' '; for g in $groups; do [ "$g" = "$group" ] || kept="$kept$g "; done; groups=$kept ;;
  esac
done
[ "$groups" = ' ' ] && exit 0
for g in $groups; do kill -s TERM -- "-$g" 2>/dev/null; done
sleep 2
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done
"#;

/// The watcher of this process, started at the first server that asks for one.
static WATCHER_PROCESS: Mutex<Option<Watcher>> = Mutex::new(None);

/// A running watcher and the groups it was told.
pub(super) struct Watcher {
    child: Child,
    input: ChildStdin,
    groups: BTreeSet<u32>,
}

/// A server's process group enlisted with the watcher; withdrawn when dropped.
pub(super) struct Enlisted(u32);

/// Enlists the process group `pgid` with this process's watcher, starting it (again) when
/// needed; `None` when no watcher can run here (no `/bin/sh`), which is logged.
pub(super) fn enlist(pgid: u32) -> Option<Enlisted> {
    let mut slot = WATCHER_PROCESS.lock().unwrap_or_else(|e| e.into_inner());
    let running = slot
        .as_mut()
        .is_some_and(|w| w.child.try_wait().ok().flatten().is_none());
    if !running {
        let groups = slot.take().map(|w| w.groups).unwrap_or_default();
        match Watcher::start() {
            Ok(mut watcher) => {
                for group in groups {
                    watcher.add(group);
                }
                *slot = Some(watcher);
            }
            Err(e) => {
                log::debug!("no watcher for the servers' process groups (/bin/sh): {e}");
                return None;
            }
        }
    }
    slot.as_mut()?.add(pgid);
    Some(Enlisted(pgid))
}

impl Drop for Enlisted {
    fn drop(&mut self) {
        let mut slot = WATCHER_PROCESS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(watcher) = slot.as_mut() {
            watcher.remove(self.0);
        }
    }
}

impl Watcher {
    /// Starts a watcher in a process group of its own, so that nothing sent to this
    /// process's group reaches it.
    pub(super) fn start() -> io::Result<Watcher> {
        use std::os::unix::process::CommandExt;
        let mut child = Command::new("/bin/sh")
            .args(["-c", WATCHER])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()?;
        let input = child
            .stdin
            .take()
            .ok_or_else(|| io::Error::other("no pipe to the watcher"))?;
        pipe::set_nonblocking(&input)?;
        log::debug!(
            "started the watcher of the servers' process groups (pid {})",
            child.id()
        );
        Ok(Watcher {
            child,
            input,
            groups: BTreeSet::new(),
        })
    }

    /// Tells the watcher to end `group` with this process.
    pub(super) fn add(&mut self, group: u32) {
        if self.tell(&format!("add {group}\n")) {
            self.groups.insert(group);
        }
    }

    /// Tells the watcher that `group` is gone.
    pub(super) fn remove(&mut self, group: u32) {
        if self.groups.remove(&group) {
            self.tell(&format!("remove {group}\n"));
        }
    }

    /// Writes one line without waiting; whether it went out whole.
    fn tell(&mut self, line: &str) -> bool {
        match self.input.write(line.as_bytes()) {
            Ok(n) if n == line.len() => true,
            Ok(_) | Err(_) => {
                log::debug!(
                    "the watcher of the servers' process groups missed `{}`",
                    line.trim()
                );
                false
            }
        }
    }

    /// Ends the watcher's input, as this process exiting does, and waits for it to finish.
    #[cfg(test)]
    fn finish(self) -> io::Result<std::process::ExitStatus> {
        let Watcher {
            mut child, input, ..
        } = self;
        drop(input);
        child.wait()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// A process group of a shell and a `sleep` it left behind, as a server starting a helper
    /// would; its group id.
    fn server_group() -> (Child, u32) {
        use std::os::unix::process::CommandExt;
        let child = Command::new("/bin/sh")
            .args(["-c", "sleep 300 & exec sleep 301"])
            .process_group(0)
            .spawn()
            .expect("sh");
        let pgid = child.id();
        (child, pgid)
    }

    fn gone_within(pgid: u32, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        while Instant::now() < until {
            if !super::super::group::alive(pgid) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    #[test]
    fn a_group_ends_when_the_watchers_input_ends_and_a_withdrawn_one_is_left_alone() {
        let (mut ended, ended_pgid) = server_group();
        let (mut kept, kept_pgid) = server_group();
        let mut watcher = Watcher::start().expect("a watcher");
        watcher.add(ended_pgid);
        watcher.add(kept_pgid);
        watcher.remove(kept_pgid);
        // The input ends as it would when this process is killed.
        watcher.finish().expect("the watcher finished");
        let _ = ended.wait();
        assert!(
            gone_within(ended_pgid, Duration::from_secs(10)),
            "the group ended"
        );
        assert!(
            super::super::group::alive(kept_pgid),
            "the withdrawn group runs on"
        );
        let _ = super::super::group::signal(kept_pgid, super::super::group::Signal::Kill);
        let _ = kept.wait();
    }
}
