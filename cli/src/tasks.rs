//! `umcp tasks`: the requests a server runs in the background as tasks (2025-11-25), listed,
//! shown, cancelled or waited for with `tasks/list`, `tasks/get`, `tasks/cancel` and
//! `tasks/result`, sent through the client's generic requests.

use serde_json::{json, Map, Value};
use umcp::types::CallToolResult;
use umcp::{Client, ToolCall};

use crate::exit::{usage, Exit};
use crate::interact::Progress;
use crate::output::{pretty, say, warn};
use crate::shown;
use crate::target::Target;

/// The most pages of `tasks/list` read from one server: a server whose cursor never ends
/// is not followed forever.
const MAX_PAGES: usize = 100;

/// The members of a task shown by `get` and `cancel`, in this order.
const FIELDS: [&str; 7] = [
    "taskId",
    "status",
    "statusMessage",
    "createdAt",
    "lastUpdatedAt",
    "ttl",
    "pollInterval",
];

impl Target<'_> {
    /// `tasks list`, `tasks get ID`, `tasks cancel ID`, `tasks result ID` or `tasks wait ID`.
    pub fn tasks(&self, rest: &[&str]) -> Result<(), Exit> {
        let (what, id) = match rest {
            ["list"] => return self.list_tasks(),
            [what, id] => (*what, *id),
            _ => {
                return Err(usage(
                    "bad arguments: umcp tasks list|get ID|cancel ID|result ID|wait ID",
                ))
            }
        };
        if self.single.is_none() {
            return Err(usage(format!(
                "tasks {what} needs one server: add --server NAME"
            )));
        }
        let client = self.client()?;
        let params = json!({ "taskId": id });
        match what {
            "wait" => self.wait_task(&client, id),
            "result" => {
                let (options, progress) = Progress::attach(self.options().clone());
                let result = self.timed(
                    client
                        .with(&options)
                        .request_raw("tasks/result", Some(params)),
                );
                progress.finish();
                let result = result.map_err(|e| self.failed(e))?;
                // The result of the request the task ran: a tool's is shown as `call` shows it.
                match serde_json::from_value::<CallToolResult>(result.clone()) {
                    Ok(tool) if result.get("content").is_some() => self.show_result(&tool, id),
                    _ => {
                        say(&pretty(&result));
                        Ok(())
                    }
                }
            }
            "get" | "cancel" => {
                let method = format!("tasks/{what}");
                let task = self
                    .timed(
                        client
                            .with(self.options())
                            .request_raw(&method, Some(params)),
                    )
                    .map_err(|e| self.failed(e))?;
                self.show_task(&task);
                Ok(())
            }
            other => Err(usage(format!(
                "tasks {other}: expected list, get, cancel or result"
            ))),
        }
    }

    /// `call --task`: calls `tool` of `server` asking for a task, and prints the task's id
    /// (with `--json`, its id, status and server) as soon as the server made one; a server
    /// that answers at once has its result printed as `call` prints it.
    pub fn start_task(&self, server: &str, tool: &str, arguments: Value) -> Result<(), Exit> {
        let client = self.manager.client(server).map_err(|e| self.failed(e))?;
        let started = self.timed(
            client
                .with(&self.request_options())
                .call_tool_as_task(tool, arguments),
        );
        match started.map_err(|e| self.failed(e))? {
            ToolCall::Task(task) => {
                match self.out.json {
                    true => say(&pretty(&json!({
                        "taskId": task.id(),
                        "status": format!("{:?}", task.status()).to_lowercase(),
                        "server": server,
                    }))),
                    false => say(&shown::line(task.id())),
                }
                Ok(())
            }
            ToolCall::Done(result) => {
                warn("umcp: the server answered at once, without a task");
                self.show_result(&result, tool)
            }
            _ => Err(Exit(
                1,
                "the server answered in a way umcp does not know".into(),
            )),
        }
    }

    /// `tasks wait ID`: waits for the task's result within `--timeout` (polls shown as
    /// progress on a terminal) and prints it as `call` prints a result; a wait given up
    /// cancels the task.
    fn wait_task(&self, client: &Client, id: &str) -> Result<(), Exit> {
        let (options, progress) = Progress::attach(self.options().clone());
        let result = self.timed(client.task(id).wait(&options));
        progress.finish();
        self.show_result(&result.map_err(|e| self.failed(e))?, id)
    }

    /// Each task of each connected server (or of the one server): one line or one JSON object
    /// each. A server that offers no task listing is said so on stderr and skipped.
    fn list_tasks(&self) -> Result<(), Exit> {
        let mut rows = Vec::new();
        let mut failed = Vec::new();
        let mut offered = false;
        for (server, client) in self.clients() {
            let capabilities = client.server_capabilities();
            if capabilities.tasks.as_ref().is_none_or(|t| t.list.is_none()) {
                crate::output::warn(&format!("umcp: server `{server}` offers no task listing"));
                continue;
            }
            offered = true;
            match self.all_tasks(&client) {
                Ok(tasks) => rows.extend(tasks.into_iter().map(|task| (server.clone(), task))),
                Err(error) => failed.push((server, error)),
            }
        }
        let code = self.report_failed("tasks", failed.iter().map(|(s, e)| (s.as_str(), e)));
        self.out.table(rows.into_iter().map(|(server, task)| {
            let text = |key: &str| {
                let value = task.get(key).and_then(Value::as_str);
                value.unwrap_or_default().to_owned()
            };
            let whose = match self.single {
                Some(_) => String::new(),
                None => format!("{server}: "),
            };
            let cells = vec![
                format!("{whose}{}", text("taskId")),
                text("status"),
                text("statusMessage"),
            ];
            (json!({"server": server, "task": task}), cells)
        }));
        match (code, offered) {
            (0, true) => Ok(()),
            (0, false) => Err(Exit(1, String::new())),
            (code, _) => Err(Exit(code, String::new())),
        }
    }

    /// Every page of `client`'s task list.
    fn all_tasks(&self, client: &Client) -> umcp::Result<Vec<Map<String, Value>>> {
        let mut tasks = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
            let page = self.timed(
                client
                    .with(self.options())
                    .request_raw("tasks/list", params),
            )?;
            let listed = page.get("tasks").and_then(Value::as_array);
            tasks.extend(
                listed
                    .into_iter()
                    .flatten()
                    .filter_map(|t| t.as_object().cloned()),
            );
            let next = page.get("nextCursor").and_then(Value::as_str);
            match next {
                Some(next) if cursor.as_deref() != Some(next) => cursor = Some(next.to_owned()),
                _ => break,
            }
        }
        Ok(tasks)
    }

    /// One task: `key: value` lines of what it says (the server's words escaped), or JSON.
    fn show_task(&self, task: &Value) {
        if self.out.json {
            say(&pretty(task));
            return;
        }
        for key in FIELDS {
            let shown = match task.get(key) {
                None => continue,
                Some(Value::String(text)) => shown::line(text),
                Some(Value::Null) => "-".to_owned(),
                Some(other) => shown::line(&other.to_string()),
            };
            say(&format!("{key}: {shown}"));
        }
    }
}
