//! The tools only tests need, offered with `--fixtures`: they expose what the server saw
//! (`requests_seen`, `cancellations`, `client_info`, `process`, `env`), send notifications on
//! request (`touch`, `list_changed`, `end_subscriptions`, `drop_subscriptions`), or make the
//! server misbehave (`fail`, `huge`, `flood_status`, `crash`, `redescribe`). The demo never
//! shows them.

use std::process;

use serde_json::{json, Value};

use super::tools::{string, structured, text, timeout, tool, uint, Call};
use super::{listen, lock};

/// The fixture tools, in `tools/list` order after the demo's own.
pub fn list() -> Vec<Value> {
    let string = json!({"type": "string"});
    let integer = json!({"type": "integer", "minimum": 0});
    let timeout = json!({"type": "integer", "minimum": 0, "description": "default 30000"});
    vec![
        tool(
            "touch",
            "Changes a resource: subscribers get notifications/resources/updated.",
            json!({"uri": string}),
            &["uri"],
        ),
        tool(
            "list_changed",
            "Sends notifications/<what>/list_changed.",
            json!({"what": {"type": "string", "enum": ["tools", "resources", "prompts"]}}),
            &["what"],
        ),
        tool(
            "end_subscriptions",
            "Ends every subscriptions/listen subscription with its result (--modern).",
            json!({}),
            &[],
        ),
        tool(
            "requests_seen",
            "How many requests of each method the server received.",
            json!({}),
            &[],
        ),
        tool(
            "drop_subscriptions",
            "Closes every subscription's stream without a result (--modern over HTTP).",
            json!({}),
            &[],
        ),
        tool(
            "cancellations",
            "The requestId of every notifications/cancelled received so far.",
            json!({}),
            &[],
        ),
        tool(
            "client_info",
            "What the client sent in initialize.",
            json!({}),
            &[],
        ),
        tool(
            "process",
            "This server's pid and working directory.",
            json!({}),
            &[],
        ),
        tool(
            "env",
            "The value of environment variable `name`.",
            json!({"name": string}),
            &["name"],
        ),
        tool(
            "fail",
            "Fails with `message` (a tool error, isError).",
            json!({"message": string}),
            &[],
        ),
        tool(
            "huge",
            "Returns a text of `bytes` bytes (default: the --bytes option).",
            json!({"bytes": integer}),
            &[],
        ),
        tool(
            "flood_status",
            "Waits up to `timeout_ms` for the stderr flood to finish; reports bytes written.",
            json!({"timeout_ms": timeout}),
            &[],
        ),
        tool(
            "crash",
            "Exits the server with status 3 at once.",
            json!({}),
            &[],
        ),
        tool(
            "redescribe",
            "Lists tool `tool` with `description` from now on, and says the tool list changed.",
            json!({"tool": string, "description": string}),
            &["tool", "description"],
        ),
    ]
}

/// Runs fixture tool `name`; `None` when `name` is none of them.
pub fn run(call: &Call, name: &str, args: &Value) -> Option<Result<Value, String>> {
    list()
        .iter()
        .any(|t| t["name"] == name)
        .then(|| run_fixture(call, name, args))
}

fn run_fixture(call: &Call, name: &str, args: &Value) -> Result<Value, String> {
    let server = &call.server;
    match name {
        "touch" => {
            let uri = string(args, "uri")?;
            if server.opts.modern {
                let sent = listen::broadcast(server, "notifications/resources/updated", Some(uri));
                return Ok(text(format!("{sent} subscriptions notified")));
            }
            if !lock(&server.state).subscriptions.contains(uri) {
                return Ok(text("not subscribed"));
            }
            server.notify(
                "notifications/resources/updated",
                Some(json!({ "uri": uri })),
            );
            Ok(text("subscribers notified"))
        }
        "list_changed" => match string(args, "what")? {
            what @ ("tools" | "resources" | "prompts") if server.opts.modern => {
                let method = format!("notifications/{what}/list_changed");
                let sent = listen::broadcast(server, &method, None);
                Ok(text(format!("sent {method} to {sent} subscriptions")))
            }
            what @ ("tools" | "resources" | "prompts") => {
                server.notify(&format!("notifications/{what}/list_changed"), None);
                Ok(text(format!("sent notifications/{what}/list_changed")))
            }
            other => Err(format!("cannot change the list of `{other}`")),
        },
        "end_subscriptions" => {
            let ended = listen::end_all(server);
            Ok(text(format!("ended {ended} subscriptions")))
        }
        "requests_seen" => {
            let seen = lock(&server.state).seen.clone();
            Ok(structured(json!(seen)))
        }
        "drop_subscriptions" => {
            let dropped = listen::drop_all(server);
            Ok(text(format!("dropped {dropped} subscriptions")))
        }
        "cancellations" => {
            let cancelled = lock(&server.state).cancelled.clone();
            Ok(structured(json!({ "cancelled": cancelled })))
        }
        "client_info" => {
            let state = lock(&server.state);
            Ok(structured(json!({
                "protocolVersion": state.protocol_version,
                "clientInfo": state.client_init.get("clientInfo"),
                "capabilities": state.client_init.get("capabilities"),
            })))
        }
        "process" => {
            let cwd = std::env::current_dir().map_err(|e| format!("no working directory: {e}"))?;
            Ok(structured(json!({"pid": process::id(), "cwd": cwd})))
        }
        "env" => {
            let name = string(args, "name")?;
            std::env::var(name)
                .map(text)
                .map_err(|_| format!("`{name}` is not set"))
        }
        "fail" => Err(args["message"]
            .as_str()
            .unwrap_or("failed as asked")
            .to_owned()),
        "huge" => {
            let bytes = uint(args, "bytes", server.opts.bytes)?;
            let bytes = usize::try_from(bytes).map_err(|_| "`bytes` is too large".to_owned())?;
            Ok(text("x".repeat(bytes)))
        }
        "flood_status" => {
            let (written, done) = server.flood.wait(timeout(args)?);
            Ok(structured(json!({"written": written, "done": done})))
        }
        "crash" => {
            eprintln!("demo server: crash requested, exiting with status 3");
            process::exit(3);
        }
        "redescribe" => {
            let tool = string(args, "tool")?.to_owned();
            let description = string(args, "description")?.to_owned();
            lock(&server.state).descriptions.insert(tool, description);
            let method = "notifications/tools/list_changed";
            if server.opts.modern {
                listen::broadcast(server, method, None);
            } else {
                server.notify(method, None);
            }
            Ok(text("described anew"))
        }
        other => Err(format!("`{other}` is listed but not implemented")),
    }
}
