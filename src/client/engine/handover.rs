//! A request handed to a sending thread, and its cancellation: `notifications/cancelled` must
//! not reach the server before the request it cancels (the server would ignore it, then run
//! the request anyway), so a request given up on before it was written out is cancelled by its
//! sender once it has been, and not at all when it never is.
//!
//! "Written out" is the transport's word when it can tell ([`crate::transport::written`]: an
//! HTTP POST whose request is out, while it still waits for a JSON answer), else the return of
//! a successful send.

use std::sync::{Arc, Mutex};

use serde_json::json;

use crate::jsonrpc::{Message, Notification};
use crate::sync::lock;

/// Where a request handed to a sending thread stands.
pub(crate) struct Handover(Mutex<Stage>);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Not written out yet; with the reason its caller let go of it, once it did.
    Sending(Option<&'static str>),
    /// Written out: the server has it, or will.
    Written,
    /// The send failed before the request was written out: the server never sees it.
    Failed,
}

impl Handover {
    pub(crate) fn new() -> Arc<Handover> {
        Arc::new(Handover(Mutex::new(Stage::Sending(None))))
    }

    /// The caller gives up on the request for `reason`: whether it must cancel it on the
    /// server now. Not while it is still being sent (its sender cancels it once it is out),
    /// nor once it failed to go out (there is nothing to cancel).
    pub(crate) fn let_go(&self, reason: &'static str) -> bool {
        let mut stage = lock(&self.0);
        match *stage {
            Stage::Sending(None) => {
                *stage = Stage::Sending(Some(reason));
                false
            }
            Stage::Sending(Some(_)) | Stage::Failed => false,
            Stage::Written => true,
        }
    }

    /// The request has been written out: the reason to cancel it now, when its caller let go
    /// of it meanwhile.
    pub(crate) fn written(&self) -> Option<&'static str> {
        let mut stage = lock(&self.0);
        match std::mem::replace(&mut *stage, Stage::Written) {
            Stage::Sending(reason) => reason,
            Stage::Written => None,
            // A transport never writes a request out after its send failed; keep the failure.
            Stage::Failed => {
                *stage = Stage::Failed;
                None
            }
        }
    }

    /// The send returned, having `sent` the request or not. A success the transport did not
    /// announce is the moment the request was written out (as [`written`](Self::written));
    /// a failure before it means the request never went out.
    pub(crate) fn finished(&self, sent: bool) -> Option<&'static str> {
        if sent {
            return self.written();
        }
        let mut stage = lock(&self.0);
        if matches!(*stage, Stage::Sending(_)) {
            *stage = Stage::Failed;
        }
        None
    }
}

/// `notifications/cancelled` for request `id`.
pub(crate) fn cancellation(id: i64, reason: &str) -> Message {
    let params = json!({ "requestId": id, "reason": reason });
    Message::Notification(Notification::new("notifications/cancelled", Some(params)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_let_go_of_while_being_sent_is_cancelled_by_its_sender_once_written() {
        let handover = Handover::new();
        assert!(
            !handover.let_go("cancelled"),
            "not out yet: not the caller's"
        );
        assert_eq!(handover.written(), Some("cancelled"), "the sender's");
        assert_eq!(handover.finished(true), None, "once");
    }

    #[test]
    fn a_request_written_before_it_is_let_go_of_is_cancelled_by_its_caller() {
        let announced = Handover::new();
        assert_eq!(announced.written(), None);
        assert!(announced.let_go("cancelled"));
        assert_eq!(
            announced.finished(false),
            None,
            "written, then the answer failed"
        );

        let unannounced = Handover::new();
        assert_eq!(unannounced.finished(true), None);
        assert!(unannounced.let_go("timed out"));
    }

    #[test]
    fn a_request_that_never_went_out_is_not_cancelled() {
        let failed_first = Handover::new();
        assert_eq!(failed_first.finished(false), None);
        assert!(!failed_first.let_go("cancelled"));

        let let_go_first = Handover::new();
        assert!(!let_go_first.let_go("cancelled"));
        assert_eq!(let_go_first.finished(false), None, "nobody cancels it");
        assert_eq!(let_go_first.written(), None);
    }
}
