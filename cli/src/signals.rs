//! Ctrl-C, SIGTERM and SIGHUP: the servers are stopped before the program exits.
//!
//! Stdio servers run in process groups of their own, so a Ctrl-C typed on the terminal never
//! reaches them: were umcp to die of it, a server busy with a long call would carry on alone.
//! So a signal wakes a watcher thread (`umcp-signals`), which closes the manager (each server's
//! group gets SIGTERM, then SIGKILL, within the manager's close timeout) and exits with
//! 128 + the signal's number: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP. A second signal
//! while the servers are stopping exits at once. Elsewhere than on Unix this is a no-op: on
//! Windows each server runs in a Job Object that ends it with umcp, however umcp ends.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use umcp::Manager;

use crate::sync::lock;

#[cfg(unix)]
mod handler;

/// Set once a signal came: the servers are being stopped and the watcher ends the program.
static STOPPING: AtomicBool = AtomicBool::new(false);

/// The manager, once started, for the watcher to close.
type Slot = Arc<Mutex<Option<Arc<Manager>>>>;

/// What takes a signal before it stops the servers (see [`Shutdown::intercept`]).
pub type Hook = Arc<dyn Fn(u8) -> bool + Send + Sync>;

/// What a signal stops: the manager [`Shutdown::start`] started.
pub struct Shutdown {
    manager: Slot,
    #[cfg_attr(not(unix), allow(dead_code))] // Only Unix has signals to take.
    hook: Arc<Mutex<Option<Hook>>>,
}

impl Shutdown {
    /// Installs the signal handler and starts the watcher thread. Should either fail, umcp
    /// runs on as before, with a warning: signals then end it the default way.
    pub fn install() -> Shutdown {
        let shutdown = Shutdown {
            manager: Arc::new(Mutex::new(None)),
            hook: Arc::new(Mutex::new(None)),
        };
        #[cfg(unix)]
        if let Err(err) = watch(Arc::clone(&shutdown.manager), Arc::clone(&shutdown.hook)) {
            crate::output::warn(&format!(
                "umcp: cannot handle Ctrl-C ({err}); interrupted, the servers may keep running"
            ));
        }
        shutdown
    }

    /// Starts the manager with `start` and hands it to the watcher. A signal that comes while
    /// it starts waits for `start` to return, so that no server it spawned is missed.
    pub fn start(&self, start: impl FnOnce() -> Manager) -> Arc<Manager> {
        let mut slot = lock(&self.manager);
        let manager = Arc::new(start());
        *slot = Some(Arc::clone(&manager));
        manager
    }

    /// Has `hook` take each signal first, with its number: one it returns true for was dealt
    /// with (a shell stopped its running command), and neither stops the servers nor ends the
    /// program. Returns the hook it replaces, for [`Shutdown::restore`].
    pub fn intercept(&self, hook: impl Fn(u8) -> bool + Send + Sync + 'static) -> Option<Hook> {
        lock(&self.hook).replace(Arc::new(hook))
    }

    /// Puts back the hook [`Shutdown::intercept`] replaced.
    pub fn restore(&self, hook: Option<Hook>) {
        *lock(&self.hook) = hook;
    }

    /// Closes the manager, if one was started, and ends the program with `code`: for a
    /// thread other than the watcher that must stop everything (a session's end).
    pub fn stopper(&self) -> impl Fn(i32) + Send + Sync + 'static {
        let slot = Arc::clone(&self.manager);
        move |code| stop(&slot, code)
    }

    /// Closes the manager, if one was started; then, if a signal came, waits for the watcher
    /// to end the program, so that the error of a call cut short by the signal is neither
    /// printed nor the exit code.
    pub fn finish(&self) {
        let manager = lock(&self.manager).clone();
        if let Some(manager) = manager {
            manager.close();
        }
        while STOPPING.load(Ordering::SeqCst) {
            std::thread::park();
        }
    }
}

/// Whether a signal came: the servers are being stopped at the user's request, so what ends
/// now (a subscription, a call) ends because of it, not of a server.
pub fn stopping() -> bool {
    STOPPING.load(Ordering::SeqCst)
}

/// Installs the handler and starts the thread that waits for its signals.
#[cfg(unix)]
fn watch(manager: Slot, hook: Arc<Mutex<Option<Hook>>>) -> std::io::Result<()> {
    use std::io::Read;

    let mut signals = handler::install()?;
    std::thread::Builder::new()
        .name("umcp-signals".into())
        .spawn(move || {
            let signal = loop {
                let Some(signal) = next(&mut signals) else {
                    return;
                };
                let hook = lock(&hook).clone();
                if !hook.is_some_and(|hook| hook(signal)) {
                    break signal;
                }
            };
            let code = 128 + i32::from(signal);
            STOPPING.store(true, Ordering::SeqCst);
            crate::output::warn("umcp: stopping the servers (again to quit at once)");
            // Closed on a thread of its own, so that this one can still hear a second signal.
            let slot = Arc::clone(&manager);
            let closer = std::thread::Builder::new().name("umcp-signal-close".into());
            if closer.spawn(move || stop(&slot, code)).is_err() {
                stop(&manager, code);
            }
            if next(&mut signals).is_some() {
                std::process::exit(code);
            }
        })?;
    return Ok(());

    /// The number of the next signal, or `None` once the socket fails (it never closes).
    fn next(signals: &mut std::os::unix::net::UnixStream) -> Option<u8> {
        let mut byte = [0u8];
        loop {
            match signals.read(&mut byte) {
                Ok(1) => return Some(byte[0]),
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                _ => return None,
            }
        }
    }
}

/// Closes the manager, if one was started, and ends the program with `code`.
fn stop(manager: &Slot, code: i32) -> ! {
    let manager = lock(manager).clone();
    if let Some(manager) = manager {
        manager.close();
    }
    std::process::exit(code);
}
