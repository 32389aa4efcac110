//! The tasks extension of the stateless era (`io.modelcontextprotocol/tasks`): a `tools/call`
//! the server runs as a task is polled with `tasks/get` to its end, so that the caller of
//! `call_tool` sees an ordinary result in either era.
//!
//! The client declares the extension only when a server asks for it: a `tools/call` refused
//! with -32021 naming the extension is sent again (under a new id) declaring it. Declaring it
//! always would let a server turn any call into a task, and each poll costs a round trip and
//! the server's poll interval. Once declared, the server may answer `resultType: "task"`; the
//! client then polls at the server's `pollIntervalMs` (kept between [`MIN_POLL`] and the
//! call's deadline), answers `input_required` through the same handlers as an input round
//! (each request key once, however often a poll repeats it) with `tasks/update`, and ends
//! with the task: `completed` is the call's result, `failed` its JSON-RPC error.
//!
//! The call's deadline covers the whole task: its timeout counts from the start of the call,
//! or from the last poll when the timeout is reset on progress (a poll that finds the task
//! alive counts as progress), within the maximum total time. A call that gives up (timeout,
//! cancel handle, a failed handler or poll) sends `tasks/cancel`, bounded by [`CANCEL_TIMEOUT`].

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::jsonrpc::ErrorObject;
use crate::types::META_CLIENT_CAPABILITIES;

use super::super::engine::pending::{Answer, Reply, Slot};
use super::super::engine::request_options::RequestOptions;
use super::clock::Clock;
use super::inputs::fulfil;
use super::session::{CallSpec, Session};
use super::wire::once;

/// The extension's identifier, as declared in `capabilities.extensions`.
pub(crate) const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The methods a server may answer with a task.
pub(super) const TASK_METHODS: [&str; 1] = ["tools/call"];

/// How long the request to cancel an abandoned task may take (in either era).
pub(crate) const CANCEL_TIMEOUT: Duration = Duration::from_secs(5);

/// The shortest wait between two polls, whatever the server suggests.
const MIN_POLL: Duration = Duration::from_millis(10);

/// The wait between two polls when the server suggests none.
const DEFAULT_POLL: Duration = Duration::from_millis(500);

/// The longest a wait between polls goes without checking whether the client was closed.
const CLOSE_CHECK: Duration = Duration::from_millis(100);

/// The most input request keys one task may ask for; beyond it the call fails.
const MAX_INPUT_KEYS: usize = 1_024;

/// A task as `CreateTaskResult` and `tasks/get` describe it (the fields the client reads).
#[derive(Clone, Deserialize)]
struct Task {
    #[serde(rename = "taskId")]
    task_id: String,
    #[serde(default)]
    status: String,
    #[serde(rename = "statusMessage", default)]
    status_message: Option<String>,
    /// `pollInterval` in the handshake era's own tasks (2025-11-25), milliseconds too.
    #[serde(rename = "pollIntervalMs", alias = "pollInterval", default)]
    poll_interval_ms: Option<Value>,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(rename = "inputRequests", default)]
    input_requests: Option<Map<String, Value>>,
}

impl Task {
    fn read(answer: &Answer, method: &str) -> Result<Task> {
        answer
            .peek()
            .map_err(|e| Error::Protocol(format!("malformed task in the `{method}` result: {e}")))
    }

    /// The wait before the next poll: the server's suggestion, at least [`MIN_POLL`].
    fn interval(&self) -> Duration {
        self.poll_interval_ms
            .as_ref()
            .and_then(Value::as_f64)
            .filter(|ms| ms.is_finite() && *ms >= 0.0)
            // A suggestion beyond any deadline is as good as a day.
            .map_or(DEFAULT_POLL, |ms| {
                Duration::from_millis(ms.min(86_400_000.0) as u64)
            })
            .max(MIN_POLL)
    }

    /// " (the status message)", or nothing.
    fn message(&self) -> String {
        self.status_message
            .as_deref()
            .map(|m| format!(" ({m})"))
            .unwrap_or_default()
    }
}

/// The task `created` followed to its end with the installed
/// [`Follow`](super::session::Follow); without task support
/// the call fails, naming the builder that turns it on.
pub(super) fn follow_installed(
    session: &Session,
    clock: &mut Clock<'_>,
    created: &Answer,
) -> Result<Answer> {
    match session.tasks {
        Some(follow) => follow(session, clock.spec(), clock.times(), created),
        None => Err(without_support(clock.spec().method)),
    }
}

/// The error of a call that needs task support the client was not given.
pub(super) fn without_support(method: &str) -> Error {
    Error::Unsupported(crate::error::Unsupported::Feature(format!(
        "`{method}` runs as a task, and this client follows no tasks \
         (Options::with_tasks(true) turns that on)"
    )))
}

/// Whether `error` refuses a request for want of the tasks extension (-32021 naming it, or
/// the drafts' -32003 with the same data).
pub(super) fn requires_tasks(error: &Error) -> bool {
    // Only the request's own answer, which refused it before it ran: the call is sent again.
    matches!(error, Error::Rpc(_))
        && error
            .missing_client_capabilities()
            .is_some_and(|required| required["extensions"][TASKS_EXTENSION].is_object())
}

/// Whether a request with `params` declares the tasks extension: in its own `_meta` client
/// capabilities, or else in the connection's (those of every stateless request, or those
/// sent in `initialize`).
pub(super) fn declares(session: &Session, params: Option<&Value>) -> bool {
    let own = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(META_CLIENT_CAPABILITIES));
    let capabilities = match own {
        Some(own) => own,
        None if session.era.is_modern() => &session.era.identity.capabilities,
        None => &session.handshake_capabilities,
    };
    capabilities["extensions"][TASKS_EXTENSION].is_object()
}

/// `params` with the tasks extension added to the client capabilities of their `_meta`
/// (those of the connection, unless the caller put others there).
pub(super) fn declare(session: &Session, params: Option<Value>) -> Option<Value> {
    let mut object = match params {
        Some(Value::Object(map)) => map,
        None | Some(Value::Null) => Map::new(),
        Some(other) => return Some(other),
    };
    let meta = object.entry("_meta").or_insert_with(|| json!({}));
    if let Value::Object(meta) = meta {
        let capabilities = meta.entry(META_CLIENT_CAPABILITIES).or_insert_with(|| {
            if session.era.is_modern() {
                session.era.identity.capabilities.clone()
            } else {
                session.handshake_capabilities.clone()
            }
        });
        if let Value::Object(capabilities) = capabilities {
            let extensions = capabilities
                .entry("extensions")
                .or_insert_with(|| json!({}));
            if let Value::Object(extensions) = extensions {
                extensions.insert(TASKS_EXTENSION.into(), json!({}));
            }
        }
    }
    Some(Value::Object(object))
}

/// Follows the task `created` announced to its end, under the clock of the call `spec` (see
/// [`Follow`](super::session::Follow)); its result is the call's.
pub(crate) fn follow(
    session: &Session,
    spec: &CallSpec<'_>,
    times: (Instant, Instant),
    created: &Answer,
) -> Result<Answer> {
    let clock = &mut Clock::resume(session, spec, times);
    let task = Task::read(created, clock.spec().method)?;
    log::debug!("`{}` runs as task {}", clock.spec().method, task.task_id);
    drive(session, clock, task, &mut HashSet::new())
}

/// Polls `task` to its end under `clock`; a call that gives up cancels it.
fn drive(
    session: &Session,
    clock: &mut Clock<'_>,
    task: Task,
    answered: &mut HashSet<String>,
) -> Result<Answer> {
    let id = task.task_id.clone();
    let spec = clock.spec();
    let mut poll = Poll {
        session,
        spec,
        clock,
        id: &id,
        answered: std::mem::take(answered),
        ended: false,
        polls: 0,
    };
    let outcome = poll.run(task);
    if let Err(error) = &outcome {
        // The caller gets no result: the work is not worth finishing. A task that ended
        // itself, or a connection that is gone, needs no cancel.
        if !matches!(error, Error::Closed(_)) && !poll.ended {
            if let Err(err) = cancel(session, &id) {
                log::debug!("cancelling abandoned task {id} failed: {err}");
            }
        }
    }
    *answered = poll.answered;
    outcome
}

/// Asks the server to cancel task `id` with `tasks/cancel` (never `notifications/cancelled`,
/// which the extension reserves for requests), bounded by [`CANCEL_TIMEOUT`].
fn cancel(session: &Session, id: &str) -> Result<()> {
    let options = RequestOptions::default().with_timeout(CANCEL_TIMEOUT);
    let mut spec = CallSpec {
        method: "tasks/cancel",
        params: about(session, id, json!({})),
        options: &options,
        handshake: false,
    };
    once(session, &mut spec).map(drop)
}

/// The params of a request about task `id` (`fields` added), declaring the extension, as the
/// extension has every `tasks/*` request do in the stateless era.
fn about(session: &Session, id: &str, fields: Value) -> Option<Value> {
    let mut params = json!({ "taskId": id });
    for (key, value) in fields.as_object().into_iter().flatten() {
        params[key] = value.clone();
    }
    if session.era.is_modern() {
        return declare(session, Some(params));
    }
    Some(params)
}

/// A task an application holds by handle: its id, its last known state and the input keys
/// already answered.
pub(crate) struct Tracked {
    task: Task,
    answered: HashSet<String>,
}

impl Tracked {
    /// The task a `CreateTaskResult` announced.
    pub(crate) fn created(answer: &Answer) -> Result<Tracked> {
        Ok(Tracked {
            task: Task::read(answer, "tools/call")?,
            answered: HashSet::new(),
        })
    }

    /// A task known only by its id (its state unknown until polled).
    pub(crate) fn known(id: &str) -> Tracked {
        Tracked {
            task: Task {
                task_id: id.to_owned(),
                status: String::new(),
                status_message: None,
                poll_interval_ms: None,
                result: None,
                error: None,
                input_requests: None,
            },
            answered: HashSet::new(),
        }
    }

    pub(crate) fn id(&self) -> &str {
        &self.task.task_id
    }

    /// The last status seen (empty before the first poll of a task known by id).
    pub(crate) fn status(&self) -> &str {
        &self.task.status
    }

    pub(crate) fn status_message(&self) -> Option<&str> {
        self.task.status_message.as_deref()
    }

    /// The server's suggested wait before the next poll.
    pub(crate) fn poll_interval(&self) -> Duration {
        self.task.interval()
    }

    /// One `tasks/get` now, under `options`; an `input_required` task's new requests are
    /// answered at once by the client's handlers with `tasks/update`.
    pub(crate) fn poll(&mut self, session: &Session, options: &RequestOptions) -> Result<()> {
        let spec = CallSpec {
            method: "tasks/get",
            params: None,
            options,
            handshake: false,
        };
        let mut clock = Clock::start(session, &spec);
        let id = self.task.task_id.clone();
        let mut poll = Poll {
            session,
            spec: &spec,
            clock: &mut clock,
            id: &id,
            answered: std::mem::take(&mut self.answered),
            ended: false,
            polls: 0,
        };
        let outcome = poll.get().and_then(|task| {
            if task.status == "input_required" {
                poll.answer(&task)?;
            }
            Ok(task)
        });
        self.answered = poll.answered;
        self.task = outcome?;
        Ok(())
    }

    /// Follows the task to its end under `options` (its timeout covers the whole wait),
    /// polling at the server's interval; each poll is reported to the options' progress
    /// callback. A wait given up (timeout, cancel) cancels the task.
    pub(crate) fn wait(&mut self, session: &Session, options: &RequestOptions) -> Result<Answer> {
        let spec = CallSpec {
            method: "tools/call",
            params: None,
            options,
            handshake: false,
        };
        let mut clock = Clock::start(session, &spec);
        drive(session, &mut clock, self.task.clone(), &mut self.answered)
    }

    /// Asks the server to cancel the task (`tasks/cancel`).
    pub(crate) fn cancel(&self, session: &Session) -> Result<()> {
        cancel(session, &self.task.task_id)
    }
}

/// One task being followed.
struct Poll<'a, 'c> {
    session: &'a Session,
    spec: &'a CallSpec<'a>,
    /// The call's deadlines (moved on by polls when the timeout resets on progress).
    clock: &'a mut Clock<'c>,
    id: &'a str,
    /// The input request keys already answered.
    answered: HashSet<String>,
    /// Whether the task reached a terminal status.
    ended: bool,
    /// How many polls were made, for the progress reported.
    polls: u32,
}

impl Poll<'_, '_> {
    fn run(&mut self, mut task: Task) -> Result<Answer> {
        loop {
            let mut poll_now = false;
            match task.status.as_str() {
                "completed" => {
                    self.ended = true;
                    return match &task.result {
                        Some(result) if result.is_object() => Ok(Answer::from_value(result)),
                        // The handshake era's own tasks give their outcome to `tasks/result`.
                        None if !self.session.era.is_modern() => self.outcome(),
                        _ => Err(Error::Protocol(format!(
                            "task {} completed without a result",
                            self.id
                        ))),
                    };
                }
                "failed" if task.error.is_none() && !self.session.era.is_modern() => {
                    self.ended = true;
                    return self.outcome();
                }
                "failed" => {
                    self.ended = true;
                    return Err(self.failure(&task));
                }
                "cancelled" => {
                    self.ended = true;
                    return Err(Error::Protocol(format!(
                        "the server cancelled task {}{}",
                        self.id,
                        task.message()
                    )));
                }
                "input_required" => poll_now = self.answer(&task)?,
                // `working`, or a status this client does not know: keep polling.
                _ => {}
            }
            if !poll_now {
                self.wait(task.interval())?;
            }
            task = self.get()?;
            self.clock.progress();
            self.report(&task);
        }
    }

    /// Tells the call's progress callback of a poll: the number of polls so far, and the
    /// task's status message.
    fn report(&mut self, task: &Task) {
        self.polls = self.polls.saturating_add(1);
        let Some(callback) = &self.spec.options.progress else {
            return;
        };
        let params = json!({
            "progressToken": self.id,
            "progress": self.polls,
            "message": task.status_message.clone().unwrap_or_else(|| task.status.clone()),
        });
        callback(&params);
    }

    /// Answers the input requests not answered yet; whether any were.
    fn answer(&mut self, task: &Task) -> Result<bool> {
        let fresh: Vec<(&String, &Value)> = task
            .input_requests
            .iter()
            .flatten()
            .filter(|(key, _)| !self.answered.contains(*key))
            .collect();
        if fresh.is_empty() {
            return Ok(false);
        }
        if self.answered.len() + fresh.len() > MAX_INPUT_KEYS {
            return Err(Error::Protocol(format!(
                "task {} asked for more than {MAX_INPUT_KEYS} inputs",
                self.id
            )));
        }
        let responses = fulfil(self.session, self.clock, fresh.iter().copied())?;
        self.answered
            .extend(fresh.iter().map(|(key, _)| (*key).clone()));
        let params = about(
            self.session,
            self.id,
            json!({ "inputResponses": responses }),
        );
        self.request("tasks/update", params)?;
        Ok(true)
    }

    /// Waits `interval` before the next poll, or less when the deadline comes first; the
    /// cancel handle and closing the client end the wait at once.
    fn wait(&self, interval: Duration) -> Result<()> {
        let wake = Instant::now()
            .checked_add(interval)
            .map_or(self.clock.deadline(), |w| w.min(self.clock.deadline()));
        // The cancel handle wakes this slot; the id is one no request has.
        let slot = Arc::new(Slot::default());
        let cancel = self.spec.options.cancel.as_ref();
        let _attached = match cancel.map(|c| c.attach(i64::MIN, &slot)) {
            Some(None) => return Err(self.cancelled()),
            attached => attached.flatten(),
        };
        loop {
            self.check()?;
            let now = Instant::now();
            if now >= wake {
                return if now >= self.clock.deadline() {
                    Err(self.timed_out())
                } else {
                    Ok(())
                };
            }
            let until = wake.min(now + CLOSE_CHECK);
            if let Some(Reply::Cancel) = slot.take(i64::MIN, Some(until)) {
                return Err(self.cancelled());
            }
        }
    }

    /// The task's state now.
    fn get(&self) -> Result<Task> {
        let answer = self.request("tasks/get", about(self.session, self.id, json!({})))?;
        let task = Task::read(&answer, "tasks/get")?;
        if task.task_id != self.id {
            return Err(Error::Protocol(format!(
                "`tasks/get` for task {} described task {}",
                self.id, task.task_id
            )));
        }
        Ok(task)
    }

    /// One request about the task, under what is left of the call's time and its cancel
    /// handle.
    fn request(&self, method: &str, params: Option<Value>) -> Result<Answer> {
        self.check()?;
        let left = self.clock.left()?;
        let mut options = RequestOptions::default().with_timeout(left);
        options.cancel = self.spec.options.cancel.clone();
        let mut spec = CallSpec {
            method,
            params,
            options: &options,
            handshake: false,
        };
        once(self.session, &mut spec).map_err(|error| match error {
            // The call timed out, whichever of its requests was waiting.
            Error::Timeout { .. } => self.timed_out(),
            Error::Cancelled { .. } => self.cancelled(),
            other => other,
        })
    }

    /// Fails when the caller cancelled or the client closed.
    fn check(&self) -> Result<()> {
        self.clock.check(self.session)
    }

    /// The JSON-RPC error a failed task carries.
    /// The outcome of an ended task of the handshake era's own (2025-11-25): `tasks/result`
    /// answers with the request's result, or its error.
    fn outcome(&self) -> Result<Answer> {
        self.request("tasks/result", Some(json!({ "taskId": self.id })))
    }

    fn failure(&self, task: &Task) -> Error {
        let error = task
            .error
            .as_ref()
            .and_then(|e| crate::jsonrpc::decode_value::<ErrorObject>(e).ok());
        match error {
            Some(error) => Error::Rpc(error),
            None => Error::Protocol(format!(
                "task {} failed without a valid error{}",
                self.id,
                task.message()
            )),
        }
    }

    fn timed_out(&self) -> Error {
        self.clock.timed_out()
    }

    fn cancelled(&self) -> Error {
        self.clock.cancelled()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::ErrorCode;

    fn refusal(code: ErrorCode, data: Option<Value>) -> Error {
        let mut error = ErrorObject::new(code, "Missing required client capability");
        if let Some(data) = data {
            error = error.with_data(data);
        }
        Error::Rpc(error)
    }

    #[test]
    fn the_drafts_minus_32003_asks_for_the_extension_only_with_its_data() {
        let data = json!({"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}});
        let current = refusal(
            ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
            Some(data.clone()),
        );
        let draft = refusal(
            ErrorCode::TASKS_MISSING_REQUIRED_CLIENT_CAPABILITY,
            Some(data),
        );
        assert!(requires_tasks(&current) && requires_tasks(&draft));
        assert_eq!(
            draft.missing_client_capabilities().unwrap()["extensions"][TASKS_EXTENSION],
            json!({})
        );
        // -32003 is in the implementation-defined range: without the data it is another
        // error.
        let bare = refusal(ErrorCode::TASKS_MISSING_REQUIRED_CLIENT_CAPABILITY, None);
        assert!(!requires_tasks(&bare) && bare.missing_client_capabilities().is_none());
    }
}
