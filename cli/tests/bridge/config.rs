//! A whole configuration file bridged: the tools of every server, named as the manager names
//! them (`server__tool`), each call routed to its server; a tool the file denies is neither
//! listed nor called.

use serde_json::json;
use umcp_test_support::demo::demo_binary;
use umcp_test_support::peers;

use crate::support::{folder, spawned, ts_host};

#[test]
fn the_servers_of_a_configuration_appear_as_one_with_a_denied_tool_left_out() {
    if peers::skip_interop() {
        return;
    }
    let everything = peers::server_everything();
    let config = json!({ "mcpServers": {
        "everything": { "command": "node", "args": [everything, "stdio"] },
        "demo": {
            "command": demo_binary(),
            "args": ["--server", "--fixtures"],
            "excludedTools": ["echo"],
        },
    }});
    let path = folder("config").join("mcp.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let plan = json!({
        "sdk": "v1",
        "stdio": spawned(&["--config", path.to_str().unwrap()]),
        "steps": [
            { "do": "list" },
            { "do": "call", "tool": "demo__add", "args": {"a": 2, "b": 3} },
            { "do": "call", "tool": "everything__echo", "args": {"message": "hi"} },
            { "do": "call", "tool": "demo__echo", "args": {"message": "denied"} },
            { "do": "info" },
        ],
    });
    let seen = ts_host(plan);
    let run = seen["steps"].as_array().unwrap();
    let tools = run[0]["tools"].as_array().unwrap();
    for offered in [
        "demo__add",
        "demo__slow",
        "everything__echo",
        "everything__get-sum",
    ] {
        assert!(tools.contains(&json!(offered)), "{offered} in {seen}");
    }
    assert!(
        !tools.contains(&json!("demo__echo")),
        "the denied tool is listed: {seen}"
    );
    assert_eq!(run[1]["text"], "5", "{seen}");
    assert_eq!(run[2]["text"], "Echo: hi", "{seen}");
    let refused = run[3].to_string();
    assert!(
        run[3].get("error").is_some() || run[3]["isError"] == true,
        "{refused}"
    );
    assert!(!refused.contains("Echo: denied"), "{refused}");
    assert_eq!(run[4]["server"]["name"], "umcp-bridge", "{seen}");
}
