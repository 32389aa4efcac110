//! What the engine tells the layers above about what is not its own, on the thread that read
//! it: the notifications and responses of their subscriptions, lost notifications, and the
//! end of the connection. The engine names none of them; the client plugs them in.

use crate::error::{Closed, Result};
use crate::jsonrpc::Notification;

use super::pending::Answer;

/// The layers above the engine, as its reading threads see them. Every method runs on a
/// transport's reading thread, so none may block.
pub(crate) trait Observer: Send + Sync {
    /// A notification on its way to the client's queue: taken (`None`) when it is the
    /// observer's alone, or handed back to be queued.
    fn notification(&self, notification: Notification) -> Option<Notification>;

    /// A response to request `id`, which no caller waits for: taken (`None`) when the
    /// observer sent that request, or handed back.
    fn unmatched(&self, id: i64, result: Result<Answer>) -> Option<Result<Answer>>;

    /// Notifications may have been lost, for `reason`.
    fn gap(&self, reason: &str);

    /// The connection closed.
    fn closed(&self, closed: &Closed);
}
