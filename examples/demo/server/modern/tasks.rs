//! The tasks extension (`io.modelcontextprotocol/tasks`) of `--modern` mode: the `report` tool
//! runs as a task for a client that declares the extension (and is refused with -32021 for
//! one that does not), and `tasks/get`, `tasks/update` and `tasks/cancel` follow it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use umcp::jsonrpc::{ErrorCode, ErrorObject};

use super::super::{lock, tools, Reply};

/// The extension's identifier.
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The most tasks kept; a `report` beyond it is refused.
const MAX_TASKS: usize = 1_000;

/// The poll interval the server suggests.
const POLL_MS: u64 = 50;

/// One task: when it started, how long it takes, and what it reports on.
struct Entry {
    started: Instant,
    created_at: String,
    takes: Duration,
    topic: String,
    cancelled: bool,
}

fn tasks() -> &'static Mutex<HashMap<String, Entry>> {
    static TASKS: OnceLock<Mutex<HashMap<String, Entry>>> = OnceLock::new();
    TASKS.get_or_init(Mutex::default)
}

/// The `report` tool's listing.
pub fn tool() -> Value {
    let string = json!({"type": "string"});
    let integer = json!({"type": "integer"});
    tools::tool(
        "report",
        "Runs as a task (the client must declare the tasks extension): a report on `topic`, \
         ready after `ms` milliseconds (default 300, at most 60000).",
        json!({ "topic": string, "ms": integer }),
        &[],
    )
}

/// A `tools/call` of `report`: a new task, or -32021 when the client did not declare the
/// extension on this request.
pub fn start(params: &Value) -> Reply {
    let declared = params
        .pointer("/_meta/io.modelcontextprotocol~1clientCapabilities/extensions")
        .and_then(|e| e.get(EXTENSION))
        .is_some();
    if !declared {
        return Err(ErrorObject::new(
            ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
            "`report` runs as a task: declare the tasks extension",
        )
        .with_data(json!({"requiredCapabilities": {"extensions": {EXTENSION: {}}}})));
    }
    let args = &params["arguments"];
    let ms = args["ms"].as_u64().unwrap_or(300).min(60_000);
    let topic = args["topic"].as_str().unwrap_or("everything").to_owned();
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let id = format!("task-{}", NEXT.fetch_add(1, Ordering::SeqCst));
    let entry = Entry {
        started: Instant::now(),
        created_at: now_utc(),
        takes: Duration::from_millis(ms),
        topic,
        cancelled: false,
    };
    let mut all = lock(tasks());
    if all.len() >= MAX_TASKS {
        let why = format!("{MAX_TASKS} tasks already");
        return Err(ErrorObject::new(ErrorCode::INTERNAL_ERROR, why));
    }
    let mut created = describe(&id, &entry);
    created["resultType"] = json!("task");
    all.insert(id, entry);
    Ok(created)
}

/// `tasks/get`, `tasks/update` and `tasks/cancel`; `None` for any other method.
pub fn on_request(method: &str, params: &Value) -> Option<Reply> {
    if !matches!(method, "tasks/get" | "tasks/update" | "tasks/cancel") {
        return None;
    }
    let id = params["taskId"].as_str().unwrap_or_default();
    let mut all = lock(tasks());
    let Some(entry) = all.get_mut(id) else {
        let why = format!("no task `{id}`");
        return Some(Err(ErrorObject::new(ErrorCode::INVALID_PARAMS, why)));
    };
    Some(Ok(match method {
        "tasks/get" => describe(id, entry),
        "tasks/cancel" => {
            entry.cancelled = true;
            json!({})
        }
        // This task never asks for input: nothing is outstanding, so nothing is taken.
        _ => json!({}),
    }))
}

/// A task's state as `tasks/get` tells it.
fn describe(id: &str, entry: &Entry) -> Value {
    let done = entry.started.elapsed() >= entry.takes;
    let status = match (entry.cancelled, done) {
        (true, false) => "cancelled",
        (_, true) => "completed",
        (false, false) => "working",
    };
    let mut task = json!({
        "taskId": id, "status": status, "createdAt": entry.created_at,
        "lastUpdatedAt": now_utc(), "ttlMs": 600_000, "pollIntervalMs": POLL_MS,
    });
    if status == "completed" {
        let text = format!("report on {}: all quiet", entry.topic);
        task["result"] = tools::text(text);
    }
    task
}

/// The time now, as an ISO 8601 UTC timestamp.
fn now_utc() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Days since 1970-01-01 to a civil date (the proleptic Gregorian calendar).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s) = (rest / 3_600, rest % 3_600 / 60, rest % 60);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}Z")
}
