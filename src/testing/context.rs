//! [`Context`], what a handler of a fake server gets: the request it serves, and the ways back
//! to the client (progress, notifications, log messages and requests of its own).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use serde_json::{json, Value};

use super::connection::Connection;
use super::lock;
use crate::client::Era;
use crate::error::{Error, Result};
use crate::jsonrpc::RequestId;
use crate::types::{
    CreateMessage, CreateMessageRequestParams, CreateMessageResult, Elicit, ElicitRequestParams,
    ElicitResult, EmptyParams, ListRoots, ListRootsResult, LoggingLevel, Method,
};

/// What a handler of a [`FakeServer`](super::FakeServer) gets: the request it serves, and
/// the ways back to the client while it runs.
///
/// A handler's requests to the client ([`elicit`](Context::elicit),
/// [`create_message`](Context::create_message), [`list_roots`](Context::list_roots)) wait
/// for the answer in either era: in the handshake era they are requests to the client; in
/// the stateless era the request being served is answered `input_required`, and the handler
/// resumes when the client's retry brings the answer (so they work only in `tools/call`,
/// `prompts/get` and `resources/read`, the requests that may take input rounds).
///
/// See the example on [`Context::elicit`].
pub struct Context {
    connection: Arc<Connection>,
    call: Arc<Call>,
    method: String,
    era: Era,
}

impl Context {
    /// The era of the request served.
    ///
    /// See the example on [`Context::elicit`].
    pub fn era(&self) -> Era {
        self.era
    }

    /// The method of the request served, e.g. `tools/call`.
    ///
    /// See the example on [`Context::elicit`].
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The id of the request served; in the stateless era, of its latest round.
    ///
    /// See the example on [`Context::elicit`].
    pub fn request_id(&self) -> RequestId {
        lock(&self.call.round).id.clone()
    }

    /// The params of the request served as the client sent them, `_meta` included; in the
    /// stateless era, of its latest round (with `inputResponses` and `requestState`).
    ///
    /// See the example on [`Context::progress`].
    pub fn params(&self) -> Value {
        lock(&self.call.round).params.clone()
    }

    /// Reports progress on the request served, if the client asked for it (a
    /// `progressToken` in its `_meta`); returns whether a notification went out.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use serde_json::json;
    /// use umcp::testing::FakeServer;
    /// use umcp::types::{CallToolResult, Tool};
    /// use umcp::{Client, RequestOptions};
    ///
    /// let server = FakeServer::new("busy").with_tool(Tool::new("work", json!({"type": "object"})), |ctx, _| {
    ///     assert!(ctx.params()["_meta"]["progressToken"].is_number());
    ///     for step in 1..=3 {
    ///         ctx.progress(f64::from(step), Some(3.0), Some("working"));
    ///     }
    ///     Ok(CallToolResult::default())
    /// });
    /// let client = Client::connect(server)?;
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let into = seen.clone();
    /// let options = RequestOptions::default().with_progress(move |p| into.lock().unwrap().push(p.progress));
    /// client.with(&options).call_tool("work", json!({}))?;
    /// assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0]);
    /// # Ok::<(), umcp::Error>(())
    /// ```
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        let token = self.params().pointer("/_meta/progressToken").cloned();
        let Some(token) = token else {
            return false;
        };
        let mut params = json!({"progressToken": token, "progress": progress});
        if let Some(total) = total {
            params["total"] = json!(total);
        }
        if let Some(message) = message {
            params["message"] = json!(message);
        }
        self.connection
            .send_notification("notifications/progress", Some(params))
    }

    /// Sends a notification, as [`FakeServer::notify`](super::FakeServer::notify) does on this
    /// connection: list changes and resource updates go to the stateless era's subscriptions
    /// that asked for them, everything else as it is.
    ///
    /// See the example on [`Context::elicit`].
    pub fn notify(&self, method: &str, params: Option<Value>) {
        self.connection.broadcast(method, params);
    }

    /// Sends a log message (`notifications/message`) at `level`.
    ///
    /// See the example on [`Context::elicit`].
    pub fn log(&self, level: LoggingLevel, data: Value) {
        let params = json!({"level": level.as_str(), "data": data});
        self.connection
            .send_notification("notifications/message", Some(params));
    }

    /// Asks the client for input (`elicitation/create`) and waits for its answer, in either
    /// era (see [`Context`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use serde_json::json;
    /// use umcp::testing::FakeServer;
    /// use umcp::types::{
    ///     CallToolResult, ContentBlock, ElicitAction, ElicitRequestFormParams, ElicitRequestParams,
    ///     ElicitResult, LoggingLevel, ServerNotification, Tool,
    /// };
    /// use umcp::{Client, Era, Options, ProtocolMode};
    ///
    /// let server = FakeServer::new("asking")
    ///     .with_input_timeout(Duration::from_secs(5))
    ///     .with_tool(Tool::new("greet", json!({"type": "object"})), |ctx, _| {
    ///         assert_eq!(ctx.method(), "tools/call");
    ///         let form = ElicitRequestFormParams::new("Your name?", json!({"type": "object",
    ///             "properties": {"name": {"type": "string"}}}));
    ///         let answer = ctx.elicit(ElicitRequestParams::Form(form))?;
    ///         ctx.log(LoggingLevel::Info, json!(format!("asked in the {:?} era", ctx.era())));
    ///         let name = match answer.action {
    ///             ElicitAction::Accept => answer.content.unwrap_or_default()["name"].to_string(),
    ///             _ => "stranger".to_owned(),
    ///         };
    ///         Ok(CallToolResult::new(vec![ContentBlock::text(format!("hello {name}"))]))
    ///     });
    /// for (mode, era) in [(ProtocolMode::Legacy, Era::Legacy), (ProtocolMode::modern(), Era::Modern)] {
    ///     let options = Options::default().with_protocol_mode(mode).with_elicitation_handler(|_| {
    ///         let mut content = serde_json::Map::new();
    ///         content.insert("name".into(), json!("Ada"));
    ///         Ok(ElicitResult::accept(content))
    ///     });
    ///     let client = Client::connect_with_options(server.clone(), options)?;
    ///     assert_eq!(client.era(), era);
    ///     assert_eq!(client.call_tool("greet", json!({}))?.text(), r#"hello "Ada""#);
    ///     let logged = client.notifications().recv_timeout(Duration::from_secs(5));
    ///     assert!(matches!(logged, Some(ServerNotification::LoggingMessage(_))));
    /// }
    /// # Ok::<(), umcp::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Rpc`] with the client's error, [`Error::Timeout`] when no answer came within
    /// the server's input timeout, [`Error::Cancelled`] when the request served was
    /// cancelled, [`Error::Closed`] when the connection ended, and [`Error::Protocol`] when
    /// the stateless era allows no input for the request served.
    pub fn elicit(&self, params: ElicitRequestParams) -> Result<ElicitResult> {
        self.request::<Elicit>(&params)
    }

    /// Asks the client to sample its model (`sampling/createMessage`) and waits for the
    /// answer, in either era (see [`Context`]).
    ///
    /// See the example on [`Context::elicit`].
    ///
    /// # Errors
    ///
    /// As [`Context::elicit`].
    pub fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult> {
        self.request::<CreateMessage>(&params)
    }

    /// Asks the client for its roots (`roots/list`) and waits for the answer, in either era
    /// (see [`Context`]).
    ///
    /// See the example on [`Context::elicit`].
    ///
    /// # Errors
    ///
    /// As [`Context::elicit`].
    pub fn list_roots(&self) -> Result<ListRootsResult> {
        self.request::<ListRoots>(&EmptyParams::default())
    }

    /// Sends any request to the client and waits for its answer, in either era (see
    /// [`Context`]).
    ///
    /// See the example on [`Context::elicit`].
    ///
    /// # Errors
    ///
    /// As [`Context::elicit`], and [`Error::Protocol`] when the answer does not decode.
    pub fn request<M: Method>(&self, params: &M::Params) -> Result<M::Result> {
        let params = serde_json::to_value(params)
            .map_err(|e| Error::Protocol(format!("`{}` params: {e}", M::METHOD)))?;
        let answer = match self.era {
            Era::Legacy => self.connection.ask(&self.call, M::METHOD, params)?,
            Era::Modern => {
                if !MULTI_ROUND.contains(&self.method.as_str()) {
                    return Err(Error::Protocol(format!(
                        "`{}` cannot ask the client for input in the stateless era",
                        self.method
                    )));
                }
                self.connection.input_round(&self.call, M::METHOD, params)?
            }
        };
        serde_json::from_value(answer)
            .map_err(|e| Error::Protocol(format!("malformed `{}` result: {e}", M::METHOD)))
    }

    /// Whether the client cancelled the request served.
    ///
    /// See the example on [`Context::sleep`].
    pub fn is_cancelled(&self) -> bool {
        self.call.is_cancelled()
    }

    /// Waits `duration`, or less when the request is cancelled or the connection closes;
    /// returns whether the whole time passed.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicBool, Ordering};
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use serde_json::json;
    /// use umcp::testing::FakeServer;
    /// use umcp::types::{CallToolResult, Tool};
    /// use umcp::{CancelHandle, Client, Error, RequestOptions};
    ///
    /// let stopped = Arc::new(AtomicBool::new(false));
    /// let seen = stopped.clone();
    /// let server = FakeServer::new("slow").with_tool(Tool::new("wait", json!({"type": "object"})), move |ctx, _| {
    ///     let finished = ctx.sleep(Duration::from_secs(60));
    ///     seen.store(!finished && ctx.is_cancelled(), Ordering::SeqCst);
    ///     Ok(CallToolResult::default())
    /// });
    /// let client = Client::connect(server.clone())?;
    /// let cancel = CancelHandle::new();
    /// let later = cancel.clone();
    /// std::thread::spawn(move || {
    ///     std::thread::sleep(Duration::from_millis(100));
    ///     later.cancel();
    /// });
    /// let outcome = client.with(&RequestOptions::default().with_cancel(cancel)).call_tool("wait", json!({}));
    /// assert!(matches!(outcome, Err(Error::Cancelled { .. })));
    /// assert!(server.wait_for("notifications/cancelled", Duration::from_secs(5)).is_some());
    /// let deadline = std::time::Instant::now() + Duration::from_secs(5);
    /// while !stopped.load(Ordering::SeqCst) && std::time::Instant::now() < deadline {
    ///     std::thread::sleep(Duration::from_millis(10));
    /// }
    /// assert!(stopped.load(Ordering::SeqCst));
    /// # Ok::<(), umcp::Error>(())
    /// ```
    pub fn sleep(&self, duration: Duration) -> bool {
        crossbeam_channel::select! {
            recv(self.call.cancelled) -> _ => false,
            recv(self.connection.closed()) -> _ => false,
            default(duration) => true,
        }
    }

    pub(super) fn new(
        connection: Arc<Connection>,
        call: Arc<Call>,
        method: &str,
        era: Era,
    ) -> Context {
        Context {
            connection,
            call,
            method: method.to_owned(),
            era,
        }
    }
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("method", &self.method)
            .field("era", &self.era)
            .field("request_id", &self.request_id())
            .finish_non_exhaustive()
    }
}

/// The requests that may answer `input_required` in the stateless era.
pub(super) const MULTI_ROUND: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

/// One request a handler serves, across the input rounds of the stateless era: each round
/// is a request of its own, with its own id, and the same handler answers the last one.
pub(super) struct Call {
    round: Mutex<Round>,
    /// Dropped when the client cancels, which wakes everything waiting on `cancelled`.
    cancel: Mutex<Option<Sender<()>>>,
    pub(super) cancelled: Receiver<()>,
    /// How many inputs the handler has asked for: each gets its own key.
    inputs: AtomicU32,
}

/// The request of the current round.
struct Round {
    id: RequestId,
    params: Value,
}

impl Call {
    pub(super) fn new(id: RequestId, params: Value) -> Arc<Call> {
        let (cancel, cancelled) = crossbeam_channel::bounded(0);
        Arc::new(Call {
            round: Mutex::new(Round { id, params }),
            cancel: Mutex::new(Some(cancel)),
            cancelled,
            inputs: AtomicU32::new(0),
        })
    }

    /// The id the handler's answer goes to.
    pub(super) fn id(&self) -> RequestId {
        lock(&self.round).id.clone()
    }

    /// The client's retry carrying the answers: the handler answers it from now on.
    pub(super) fn next_round(&self, id: RequestId, params: Value) {
        *lock(&self.round) = Round { id, params };
    }

    /// A fresh key for one input of this call.
    pub(super) fn input_key(&self) -> String {
        format!("input-{}", self.inputs.fetch_add(1, Ordering::Relaxed) + 1)
    }

    pub(super) fn cancel(&self) {
        lock(&self.cancel).take();
    }

    pub(super) fn is_cancelled(&self) -> bool {
        lock(&self.cancel).is_none()
    }
}
