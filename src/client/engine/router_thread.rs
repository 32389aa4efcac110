//! The router thread (`umcp-router`): server requests, the notification callback and late
//! responses, off the thread that read them, so that user code never holds up the reading of
//! the server's output.

use std::sync::{Arc, Weak};

use crate::jsonrpc::Notification;
use crate::queue::Sender;
use crate::sync::lock;

use super::connection::Connection;
use super::late;
use super::pool::Pool;
use super::router::{RouterChannels, Work};

/// Starts the router thread of `conn`. Between jobs it holds only a weak reference, so the last
/// client handle can drop; `done` drops when it and its handlers end, which `close` waits for.
pub(crate) fn spawn(
    conn: &Arc<Connection>,
    channels: RouterChannels,
    pool: Pool,
    done: Sender<()>,
) -> std::io::Result<()> {
    let weak = Arc::downgrade(conn);
    let core = Arc::clone(&conn.core);
    let handle = crate::threads::spawn(
        "umcp-router",
        Box::new(move || {
            run(&weak, &channels, pool);
            // The end of the queue, and of the user's callback.
            core.notes.close();
            lock(&core.callback).take();
            drop(done);
        }),
    )?;
    lock(&conn.threads).push(handle);
    Ok(())
}

fn run(weak: &Weak<Connection>, channels: &RouterChannels, mut pool: Pool) {
    // Ends once the connection closed the queue (or dropped it).
    while let Ok(work) = channels.work.recv() {
        let Some(conn) = weak.upgrade() else { return };
        handle(&conn, &mut pool, work);
    }
    // Pass on the notifications that arrived before the end, then end the queue.
    let Some(conn) = weak.upgrade() else { return };
    while let Some(work) = channels.work.try_recv() {
        if let Work::Notification(note) = work {
            callback(&conn, note);
        }
    }
}

fn handle(conn: &Arc<Connection>, pool: &mut Pool, work: Work) {
    match work {
        Work::Notification(note) => callback(conn, note),
        Work::Request(request) => pool.serve(conn, request),
        Work::Invalid(invalid) => pool.refuse_invalid(conn, &invalid),
        Work::Late(response) => late::deliver(conn.on_late_response.as_ref(), response),
    }
}

/// Runs the notification callback with panics caught, then queues the notification. A
/// notification that arrived before `close` still reaches the callback while `close` waits for
/// this thread (a log line sent just before a result is not lost); once `close` returned the
/// callback is gone, and never runs again.
fn callback(conn: &Connection, note: Notification) {
    let core = &conn.core;
    let callback = lock(&core.callback).clone();
    if let Some(callback) = callback {
        let call = std::panic::AssertUnwindSafe(|| callback(&note));
        if std::panic::catch_unwind(call).is_err() {
            log::error!(
                "the notification callback panicked on `{}`; carrying on",
                note.method
            );
        }
    }
    core.queue(note);
}
