//! A lock's digests against an implementation of canonical JSON and SHA-256 written by
//! others: Python's `json` (keys sorted, no spaces, text unescaped) and `hashlib`. For
//! definitions without fractions or exponents the two canonical forms are the same bytes, so
//! every digest umcp writes must be the one Python computes, and a changed definition must
//! change it.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::json;
use umcp::lock::{Lockfile, ServerIdentity, ServerLock};
use umcp::types::{Tool, ToolAnnotations};
use umcp_test_support::python;

/// Python's digest of every tool of the lock `text`, as `name digest` lines.
fn python_digests(text: &str) -> String {
    const SCRIPT: &str = r#"
import hashlib, json, sys
lock = json.load(sys.stdin)
for server in lock["servers"].values():
    for name, tool in server["tools"].items():
        text = json.dumps(tool["definition"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        print(name, "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest())
"#;
    let mut child = Command::new(python::system_python())
        .args(["-c", SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 is needed for this test (the system's Python 3)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "python failed");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn digests_agree_with_pythons_canonical_json_and_sha256() {
    let tools = [
        Tool::new(
            "weird",
            json!({"type": "object", "properties": {"é\u{1}\"\\": {"enum": [1, -2, 30000000000_u64]}},
                   "z": [true, false, null, {}], "$defs": {"b": {}, "a": {}}}),
        )
        .with_title("Tab\there, quote \" and ünïcode 😀")
        .with_description("Line one\nline two \u{7f} \u{2028} </script>")
        .with_output_schema(json!({"type": "object", "required": []}))
        .with_annotations(ToolAnnotations {
            read_only_hint: Some(true),
            ..ToolAnnotations::default()
        }),
        Tool::new("plain", json!({"type": "object"})),
    ];
    let mut lock = Lockfile::new();
    lock.insert(ServerLock::new("s", ServerIdentity::new("s", "1"), &tools));
    let text = lock.to_json_string();
    let ours: Vec<String> = lock
        .server("s")
        .unwrap()
        .tools()
        .map(|tool| format!("{} {}", tool.name(), tool.digest()))
        .collect();
    assert_eq!(python_digests(&text).lines().collect::<Vec<_>>(), ours);

    // Read back from a server's own text, spaced and ordered its way: the same digests.
    let listed: Tool =
        serde_json::from_str(r#"{ "inputSchema": { "type" : "object" },  "name" : "plain" }"#)
            .unwrap();
    let again = ServerLock::new("s", ServerIdentity::new("s", "1"), &[listed]);
    assert_eq!(
        again.tool("plain").unwrap().digest(),
        ours[0].split(' ').nth(1).unwrap()
    );
}
