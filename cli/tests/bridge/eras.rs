//! A host is answered in the era it speaks, whatever the server behind the bridge speaks: the
//! TypeScript SDK's v1 client (2025-11-25) with servers that speak 2026-07-28 only (rmcp's, the
//! TypeScript SDK v2's, the demo's `--modern`) or are spoken to in it (the Python SDK's), and with
//! server-everything over Streamable HTTP; the Python SDK's and the TypeScript v2 client
//! pinned to 2026-07-28 with handshake-era servers (server-everything, the demo), and a server
//! on the deprecated HTTP+SSE transport. Progress, cancellation and the server's questions
//! cross in both directions.

use serde_json::{json, Value};
use umcp_test_support::peers;

use crate::support::{demo, everything, py_host, rmcp, spawned, ts_host};

/// The steps' outcomes of a host's run.
fn steps(seen: &Value) -> &Vec<Value> {
    seen["steps"].as_array().expect("the host ran its steps")
}

/// The 2025 host's run against a stateless-only server whose tools are `slow` (progress,
/// stops when cancelled), `cancellations` and a question named `ask`.
fn a_2025_host_against(server: &str, ask: (&str, Value), answer: Value) -> Vec<Value> {
    let plan = json!({
        "sdk": "v1",
        "stdio": spawned(&["--stdio", server]),
        "elicit": { "action": "accept", "content": answer },
        "steps": [
            { "do": "list" },
            { "do": "call", "tool": "slow", "args": {"steps": 3, "delay_ms": 50}, "progress": true },
            { "do": "call", "tool": "slow", "args": {"steps": 200, "delay_ms": 50}, "abort_after_progress": 2 },
            { "do": "call", "tool": ask.0, "args": ask.1 },
            { "do": "call", "tool": "cancellations" },
        ],
    });
    let seen = ts_host(plan);
    assert_eq!(seen["elicitations"], json!(["Ready?"]), "{seen}");
    steps(&seen).clone()
}

/// What a 2025 host sees of a stateless-only server: its tools, the progress of a call, a
/// call it cancelled (the server heard of it: the one id in its list), and the answer it gave
/// to a question the server asked in an input round.
fn check_2025_run(run: &[Value], asked: &str) {
    let tools = run[0]["tools"].as_array().unwrap();
    assert!(
        tools.contains(&json!("slow")) && tools.contains(&json!(asked)),
        "{run:?}"
    );
    // The last step's notification may come after the result, which the host then ignores.
    let progress = run[1]["progress"].as_array().unwrap();
    assert!(
        progress.starts_with(&[json!(1), json!(2)]) && progress.len() <= 3,
        "{run:?}"
    );
    assert_eq!(run[1]["text"], "finished 3 steps");
    assert_eq!(run[2]["aborted"], true, "{run:?}");
    assert_eq!(run[2]["progress"], json!([1, 2]), "{run:?}");
    let cancelled: Value = serde_json::from_str(run[4]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        cancelled["cancelled"].as_array().map(Vec::len),
        Some(1),
        "{run:?}"
    );
}

#[test]
fn a_2025_host_uses_the_demo_speaking_2026_07_28_only() {
    if peers::skip_interop() {
        return;
    }
    let run = a_2025_host_against(
        &demo(true),
        ("ask_user", json!({"question": "Ready?"})),
        json!({"answer": "yes"}),
    );
    check_2025_run(&run, "ask_user");
    assert_eq!(run[3]["text"], r#"accepted: {"answer":"yes"}"#, "{run:?}");
}

#[test]
fn a_2025_host_uses_an_rmcp_server_speaking_2026_07_28_only() {
    if peers::skip_interop() {
        return;
    }
    let run = a_2025_host_against(
        &rmcp(),
        ("confirm", json!({"question": "Ready?"})),
        json!({"ok": true}),
    );
    check_2025_run(&run, "confirm");
    assert_eq!(run[3]["text"], r#"confirmed: "accept""#, "{run:?}");
}

#[test]
fn a_2025_host_uses_a_typescript_v2_server_over_streamable_http() {
    if peers::skip_interop() {
        return;
    }
    let server = peers::ts_v2_http();
    let url = server.url("/mcp");
    let plan = json!({
        "sdk": "v1",
        "stdio": spawned(&["--url", &url]),
        "elicit": { "action": "accept", "content": {"confirm": true} },
        "steps": [
            { "do": "list" },
            { "do": "call", "tool": "echo", "args": {"message": "through the bridge"} },
            { "do": "call", "tool": "confirm", "args": {"question": "Ready?"} },
        ],
    });
    let seen = ts_host(plan);
    let run = steps(&seen);
    assert!(
        run[0]["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("confirm")),
        "{seen}"
    );
    assert_eq!(run[1]["text"], "through the bridge", "{seen}");
    assert_eq!(run[2]["text"], "confirmed: true", "{seen}");
    assert_eq!(seen["elicitations"], json!(["Ready?"]));
}

#[test]
fn a_2026_python_host_uses_a_handshake_era_server() {
    if peers::skip_interop() {
        return;
    }
    let plan = json!({
        "mode": "2026-07-28",
        "stdio": spawned(&["--stdio", &everything()]),
        "elicit": { "action": "accept", "content": {"color": "blue"} },
        "steps": [
            { "do": "list" },
            { "do": "call", "tool": "echo", "args": {"message": "hi"} },
            { "do": "call", "tool": "trigger-long-running-operation", "args": {"duration": 1, "steps": 3}, "progress": true },
            { "do": "call", "tool": "trigger-elicitation-request", "args": {} },
        ],
    });
    let seen = py_host(plan);
    assert_eq!(seen["protocol"], "2026-07-28", "{seen}");
    let run = steps(&seen);
    // Registered by server-everything only for a client that declared elicitation: the
    // bridge declared what the host declared.
    let tools = run[0]["tools"].as_array().unwrap();
    assert!(
        tools.contains(&json!("trigger-elicitation-request")),
        "{seen}"
    );
    assert_eq!(run[1]["text"], "Echo: hi", "{seen}");
    let progress = run[2]["progress"].as_array().unwrap();
    assert!(progress.starts_with(&[json!(1.0), json!(2.0)]), "{seen}");
    // The server's request became an input round of the host's call, and its answer went back.
    assert!(
        run[3]["text"]
            .as_str()
            .unwrap()
            .contains("Favorite Color: blue"),
        "{seen}"
    );
    assert_eq!(
        seen["elicitations"].as_array().map(Vec::len),
        Some(1),
        "{seen}"
    );
}

#[test]
fn a_2026_typescript_v2_host_uses_a_handshake_era_server() {
    if peers::skip_interop() {
        return;
    }
    let plan = json!({
        "sdk": "v2",
        "stdio": spawned(&["--stdio", &demo(false)]),
        "elicit": { "action": "accept", "content": {"answer": "v2"} },
        "steps": [
            { "do": "list" },
            { "do": "call", "tool": "slow", "args": {"steps": 3, "delay_ms": 50}, "progress": true },
            { "do": "call", "tool": "ask_user", "args": {"question": "Ready?"} },
            { "do": "prompt", "name": "greet", "args": {"name": "Ada"} },
            { "do": "read", "uri": "demo://text/readme" },
        ],
    });
    let seen = ts_host(plan);
    let run = steps(&seen);
    assert!(
        run[0]["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("ask_user")),
        "{seen}"
    );
    let progress = run[1]["progress"].as_array().unwrap();
    assert!(progress.starts_with(&[json!(1), json!(2)]), "{seen}");
    assert_eq!(run[2]["text"], r#"accepted: {"answer":"v2"}"#, "{seen}");
    assert!(
        run[3]["messages"][0].as_str().unwrap().contains("Ada"),
        "{seen}"
    );
    assert!(run[4]["contents"][0].as_str().is_some(), "{seen}");
}

#[test]
fn a_2025_host_uses_a_server_on_the_deprecated_http_and_sse_transport() {
    if peers::skip_interop() {
        return;
    }
    let server = peers::server_everything_http("sse");
    let url = server.url("/sse");
    let plan = json!({
        "sdk": "v1",
        "stdio": spawned(&["--url", &url, "--transport", "sse"]),
        "steps": [
            { "do": "list" },
            { "do": "call", "tool": "get-sum", "args": {"a": 2, "b": 3} },
        ],
    });
    let seen = ts_host(plan);
    let run = steps(&seen);
    assert!(
        run[0]["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("get-sum")),
        "{seen}"
    );
    assert!(run[1]["text"].as_str().unwrap().contains('5'), "{seen}");
}

/// The numbers of a step's progress notifications.
fn progress_of(step: &Value) -> Vec<f64> {
    let progress = step["progress"].as_array().expect("progress was asked for");
    progress.iter().filter_map(Value::as_f64).collect()
}

#[test]
fn a_2025_host_uses_the_python_server_in_the_2026_07_28_era() {
    if peers::skip_interop() {
        return;
    }
    let server = peers::python_http(&["streamable-http"]);
    let url = server.url("/mcp");
    // `--protocol modern`: the bridge speaks 2026-07-28 to the server or fails, never less.
    let plan = json!({
        "sdk": "v1",
        "stdio": spawned(&["--protocol", "modern", "--url", &url]),
        "elicit": { "action": "accept", "content": {"confirm": true, "note": "bridged"} },
        "steps": [
            { "do": "list" },
            { "do": "call", "tool": "echo", "args": {"text": "through the bridge"} },
            { "do": "call", "tool": "long_task", "args": {"steps": 3}, "progress": true },
            { "do": "call", "tool": "confirm_resolved", "args": {"question": "Ready?"} },
        ],
    });
    let seen = ts_host(plan);
    let run = steps(&seen);
    let tools = run[0]["tools"].as_array().unwrap();
    assert!(tools.contains(&json!("confirm_resolved")), "{seen}");
    assert_eq!(run[1]["text"], "through the bridge", "{seen}");
    assert_eq!(run[2]["text"], "done after 3 steps", "{seen}");
    // The last step's notification may come after the result, which the host then ignores.
    assert!(progress_of(&run[2]).starts_with(&[1.0, 2.0]), "{seen}");
    // The server's input round became the host's elicitation, and its answer the next round.
    assert_eq!(seen["elicitations"], json!(["Ready?"]), "{seen}");
    assert_eq!(
        run[3]["text"], "accepted: confirm=true note=bridged",
        "{seen}"
    );
}

#[test]
fn a_2025_host_uses_server_everything_over_streamable_http() {
    if peers::skip_interop() {
        return;
    }
    let server = peers::server_everything_http("streamableHttp");
    let url = server.url("/mcp");
    let plan = json!({
        "sdk": "v1",
        "stdio": spawned(&["--url", &url]),
        "steps": [
            { "do": "list" },
            { "do": "call", "tool": "get-sum", "args": {"a": 2, "b": 3} },
            { "do": "call", "tool": "trigger-long-running-operation", "args": {"duration": 1, "steps": 3}, "progress": true },
        ],
    });
    let seen = ts_host(plan);
    let run = steps(&seen);
    let tools = run[0]["tools"].as_array().unwrap();
    assert!(tools.contains(&json!("get-sum")), "{seen}");
    assert!(run[1]["text"].as_str().unwrap().contains('5'), "{seen}");
    assert!(progress_of(&run[2]).starts_with(&[1.0, 2.0]), "{seen}");
}

#[test]
fn a_tool_the_server_runs_as_a_task_is_followed_for_a_host_of_either_era() {
    if peers::skip_interop() {
        return;
    }
    let steps_of = |mode: &str| {
        json!({
            "sdk": "v1",
            "mode": mode,
            "stdio": spawned(&["--stdio", &demo(true)]),
            "steps": [
                { "do": "list" },
                { "do": "call", "tool": "report", "args": {"topic": "the weather", "ms": 200} },
            ],
        })
    };
    // The host knows nothing of tasks: the bridge's call declares the extension the server
    // asks for, follows the task to its end and answers with the task's result.
    let seen = ts_host(steps_of("2025-11-25"));
    let run = steps(&seen);
    assert!(
        run[0]["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("report")),
        "{seen}"
    );
    assert_eq!(run[1]["text"], "report on the weather: all quiet", "{seen}");
    let seen = py_host(steps_of("2026-07-28"));
    assert_eq!(seen["protocol"], "2026-07-28", "{seen}");
    assert_eq!(
        steps(&seen)[1]["text"],
        "report on the weather: all quiet",
        "{seen}"
    );
}
