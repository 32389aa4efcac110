//! Tests for the `umcp` binary as the host of a server's questions (elicitation): the server
//! that asks is named, and what it wrote is escaped before it reaches the terminal. Run end
//! to end against the bundled demo server, whose `ask_user` asks its `question`.

use umcp_test_support::demo;

use umcp_test_support::python;

use umcp_test_support::installed::{
    demo, demo_stdio, empty_home, on_a_terminal, stderr, stdout, umcp_in,
};

/// A configuration file of two demo servers, `alpha` and `beta`, in a directory of its own.
fn config(test: &str) -> std::path::PathBuf {
    let dir = empty_home().join(test);
    std::fs::create_dir_all(&dir).unwrap();
    let entry = serde_json::json!({ "command": demo::demo_binary(), "args": ["--server"] });
    let file = serde_json::json!({ "mcpServers": { "alpha": entry, "beta": entry } });
    let path = dir.join("mcp.json");
    std::fs::write(&path, file.to_string()).unwrap();
    path
}

#[test]
fn the_server_of_a_configuration_file_is_named_by_its_name() {
    let path = config("named");
    let path = path.to_str().unwrap();
    let question = r#"{"question": "Ready?"}"#;
    let args = [
        "--config", path, "--server", "beta", "call", "ask_user", question,
    ];
    let out = umcp_in(&empty_home()).args(args).output().unwrap();
    assert_eq!(stdout(&out), "declined\n", "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("umcp: server `beta` asks: Ready?"), "{err}");
    let screen = on_a_terminal(&args, "n\n");
    assert!(screen.contains("Server `beta` asks: Ready?"), "{screen}");
    assert!(screen.contains("declined"), "{screen}");
}

#[test]
fn what_the_server_wrote_cannot_drive_the_terminal() {
    // Clear the screen, move up a line, and a right-to-left override; then a line that
    // would pass for umcp's own.
    let question = "Ready?\u{1b}[2J\u{1b}[1A \u{202e}gnp.exe\numcp: server `trusted` asks: PIN?";
    let arguments = serde_json::json!({ "question": question }).to_string();
    let out = demo(&["call", "ask_user", &arguments], 0);
    let err = stderr(&out);
    assert!(
        !err.contains('\u{1b}') && !err.contains('\u{202e}'),
        "{err:?}"
    );
    assert!(
        err.contains("asks: Ready?\\u{1b}[2J\\u{1b}[1A \\u{202e}gnp.exe\n  umcp: server `trusted`"),
        "{err}"
    );
    let stdio = demo_stdio();
    let args = ["--stdio", &stdio, "call", "ask_user", &arguments];
    let screen = on_a_terminal(&args, "n\n");
    assert!(!screen.contains("\u{1b}[2J"), "{screen:?}");
    assert!(screen.contains("Ready?\\u{1b}[2J"), "{screen}");
}

/// A handshake-era stdio server whose `order` tool asks for a form of three fields listed out
/// of alphabetical order, and answers with what it got.
const FORM_SERVER: &str = r#"
import json, sys
def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()
call = None
for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": message["id"], "result": {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}}, "serverInfo": {"name": "form", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": [
            {"name": "order", "inputSchema": {"type": "object"}}]}})
    elif method == "tools/call":
        call = message["id"]
        send({"jsonrpc": "2.0", "id": "form", "method": "elicitation/create", "params": {
            "mode": "form", "message": "Who?", "requestedSchema": {"type": "object",
            "properties": {"zeta": {"type": "string", "title": "Zeta first"},
                           "mid": {"type": "string", "title": "Mid second"},
                           "alpha": {"type": "string", "title": "Alpha last"}},
            "required": ["zeta", "mid", "alpha"]}}})
    elif "result" in message and message.get("id") == "form":
        content = message["result"].get("content", {})
        text = " ".join(f"{k}={content.get(k)}" for k in ("zeta", "mid", "alpha"))
        send({"jsonrpc": "2.0", "id": call, "result": {
            "content": [{"type": "text", "text": text}]}})
"#;

#[test]
fn form_fields_are_asked_in_the_order_the_server_lists_them() {
    let server = format!("{} -c '{}'", python::system_python(), FORM_SERVER);
    let args = ["--stdio", &server, "call", "order", "{}"];
    let screen = on_a_terminal(&args, "y\nz\nm\na\n");
    assert!(screen.contains("zeta=z mid=m alpha=a"), "{screen}");
    let at = |label: &str| {
        screen
            .find(label)
            .unwrap_or_else(|| panic!("no `{label}` in {screen}"))
    };
    assert!(at("Zeta first") < at("Mid second"), "{screen}");
    assert!(at("Mid second") < at("Alpha last"), "{screen}");
}
