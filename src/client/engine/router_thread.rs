//! The router thread (`umcp-router`): server requests, the notification callback and late
//! responses, off the thread that read them, so that user code never holds up the reading of
//! the server's output.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use crossbeam_channel::{select, Sender};

use crate::sync::lock;
use crate::types::ServerNotification;

use super::super::era::session::Shared;
use super::super::server_requests;
use super::super::server_requests::Pool;
use super::router::{RouterChannels, Work};

/// Starts the router thread for `shared`.
///
/// The thread holds only a weak reference between jobs, so dropping the last client handle is
/// never blocked by the router keeping the session alive. `done` is dropped when the thread
/// (and every handler thread it started) ends, which is how `close` waits for them with a
/// bound.
pub(crate) fn spawn(
    shared: &Arc<Shared>,
    channels: RouterChannels,
    done: Sender<()>,
) -> std::io::Result<()> {
    let weak = Arc::downgrade(shared);
    let core = Arc::clone(&shared.core);
    let pool = Pool::new(shared.options.engine.handler_threads, done.clone());
    let handle = std::thread::Builder::new()
        .name("umcp-router".into())
        .spawn(move || {
            run(&weak, &channels, pool);
            // The end of the queue, and of the user's callback.
            core.notes.close();
            lock(&core.callback).take();
            drop(done);
        })?;
    lock(&shared.threads).push(handle);
    Ok(())
}

fn run(weak: &Weak<Shared>, channels: &RouterChannels, mut pool: Pool) {
    loop {
        let work = select! {
            recv(channels.stop) -> _ => break,
            recv(channels.work) -> work => match work {
                Ok(work) => work,
                Err(_) => break,
            },
        };
        let Some(shared) = weak.upgrade() else { return };
        handle(&shared, &mut pool, work);
    }
    // Pass on the notifications that arrived before the end, then end the queue.
    let Some(shared) = weak.upgrade() else { return };
    while let Ok(work) = channels.work.try_recv() {
        if let Work::Notification(note) = work {
            callback(&shared, note);
        }
    }
}

fn handle(shared: &Arc<Shared>, pool: &mut Pool, work: Work) {
    match work {
        Work::Notification(note) => callback(shared, note),
        Work::Request(request) => server_requests::serve(shared, pool, request),
        Work::Invalid(invalid) => server_requests::refuse_invalid(shared, pool, &invalid),
        Work::Late(late) => super::late::deliver(shared, late),
    }
}

/// Runs the notification callback with panics caught, then queues the notification. Once the
/// client is closed neither happens: a callback must not run after `close` returned.
fn callback(shared: &Shared, note: ServerNotification) {
    if shared.core.closing.load(Ordering::Acquire) {
        return;
    }
    let callback = lock(&shared.core.callback).clone();
    if let Some(callback) = callback {
        let call = std::panic::AssertUnwindSafe(|| callback(&note));
        if std::panic::catch_unwind(call).is_err() {
            log::error!(
                "the notification callback panicked on `{}`; carrying on",
                note.method()
            );
        }
    }
    shared.core.queue(note);
}
