//! Stateless-era (2026-07-28) stdio servers whose caching hints (`ttlMs`, `cacheScope`) are
//! out of the ordinary: of any size, negative, or of the wrong type. A hint never breaks the
//! result it rides on; above all an odd hint in `server/discover` never makes the client take
//! the server for a handshake-era one (which refuses `initialize`).

use std::time::Duration;

use umcp::types::ResourceContents;
use umcp::{Client, Era, Options, StdioConfig};

use umcp_test_support::python;

/// A 2026-07-28 server that writes the JSON text `sys.argv[1]` verbatim into every result,
/// numbers the tools it lists (`t1`, `t2`, … one per `tools/list` it answers), and refuses
/// `initialize` as a server of that era alone does.
const SERVER: &str = r#"
import json, sys
hints = sys.argv[1]
lists = 0
def send(rid, result):
    text = json.dumps(result)
    sys.stdout.write('{"jsonrpc":"2.0","id":%s,"result":{%s,%s}}\n'
        % (json.dumps(rid), hints, text[1:-1]))
    sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method, rid = msg.get("method"), msg["id"]
    schema = {"type": "object"}
    if method == "server/discover":
        send(rid, {"supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "hints", "version": "1"}}})
    elif method == "tools/list":
        lists += 1
        send(rid, {"tools": [{"name": "t%d" % lists, "inputSchema": schema}]})
    elif method == "prompts/list":
        send(rid, {"prompts": [{"name": "p"}]})
    elif method == "resources/list":
        send(rid, {"resources": [{"uri": "demo://r", "name": "r"}]})
    elif method == "resources/templates/list":
        send(rid, {"resourceTemplates": [{"uriTemplate": "demo://{x}", "name": "x"}]})
    elif method == "resources/read":
        send(rid, {"contents": [{"uri": "demo://r", "text": "hello"}]})
    else:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid,
            "error": {"code": -32601, "message": "Method not found"}}) + "\n")
        sys.stdout.flush()
"#;

/// Connects to [`SERVER`] with `hints` in every result, with the start-up deadline that a
/// refused `initialize` would end well inside of.
fn connect(hints: &str) -> Client {
    let config = StdioConfig::new(python::system_python()).args(["-c", SERVER, hints]);
    let options = Options::default().with_startup_timeout(Duration::from_secs(30));
    Client::connect_with_options(config, options)
        .unwrap_or_else(|e| panic!("connect with hints {hints}: {e}"))
}

/// Connects, checks the era and every list and read, and gives the `ttl_ms` and
/// `cache_scope` each read.
fn lists(hints: &str) -> Vec<(Option<u64>, Option<String>)> {
    let client = connect(hints);
    assert_eq!(client.era(), Era::Modern, "{hints}");
    assert_eq!(client.protocol_version(), "2026-07-28", "{hints}");
    assert_eq!(client.server_info().name, "hints", "{hints}");
    let tools = client.list_tools(None).expect("tools/list");
    assert_eq!(tools.tools[0].name, "t1", "{hints}");
    let prompts = client.list_prompts(None).expect("prompts/list");
    assert_eq!(prompts.prompts[0].name, "p");
    let resources = client.list_resources(None).expect("resources/list");
    assert_eq!(resources.resources[0].uri, "demo://r");
    let templates = client
        .list_resource_templates(None)
        .expect("resources/templates/list");
    assert_eq!(templates.resource_templates[0].uri_template, "demo://{x}");
    let read = client.read_resource("demo://r").expect("resources/read");
    assert!(matches!(&read.contents[0], ResourceContents::Text(t) if t.text == "hello"));
    client.close();
    vec![
        (tools.ttl_ms, tools.cache_scope),
        (prompts.ttl_ms, prompts.cache_scope),
        (resources.ttl_ms, resources.cache_scope),
        (templates.ttl_ms, templates.cache_scope),
        (read.ttl_ms, read.cache_scope),
    ]
}

#[test]
fn a_ttl_of_any_size_is_a_long_lifetime() {
    for huge in ["18446744073709551615", "1e300", "1e400"] {
        let hints = format!(r#""ttlMs": {huge}, "cacheScope": "public""#);
        for read in lists(&hints) {
            assert_eq!(read, (Some(u64::MAX), Some("public".into())), "{hints}");
        }
    }
}

#[test]
fn a_negative_or_malformed_hint_is_left_out() {
    for (hints, scope) in [
        (r#""ttlMs": -5, "cacheScope": "private""#, Some("private")),
        (r#""ttlMs": "x", "cacheScope": "public""#, Some("public")),
        (r#""ttlMs": "NaN", "cacheScope": null"#, None),
        (r#""ttlMs": {"ms": [1e400]}, "cacheScope": 42"#, None),
        (r#""ttlMs": 60000, "cacheScope": {"scope": "public"}"#, None),
    ] {
        for (ttl, cache_scope) in lists(hints) {
            assert_eq!(cache_scope.as_deref(), scope, "{hints}");
            assert_eq!(ttl, hints.contains("60000").then_some(60_000), "{hints}");
        }
    }
}

#[test]
fn a_ttl_of_any_size_keeps_a_list_cached() {
    // Each `tools/list` the server answers names its tool anew: a cached list does not.
    for (hints, cached) in [
        (r#""ttlMs": 18446744073709551615"#, true),
        (r#""ttlMs": 1e300"#, true),
        (r#""ttlMs": 60000.5"#, true),
        (r#""ttlMs": -5"#, false),
        (r#""ttlMs": "60000""#, false),
    ] {
        let client = connect(hints);
        assert_eq!(client.list_tools(None).expect("list").tools[0].name, "t1");
        let again = client.list_tools(None).expect("list again");
        let expected = if cached { "t1" } else { "t2" };
        assert_eq!(again.tools[0].name, expected, "{hints}");
        client.close();
    }
}
