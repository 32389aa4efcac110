//! The configuration parser: every entry accounted for, names unique and sorted, variables
//! expanded once and never recursively, the same answer every time.

use serde_json::Value;
use umcp::ConfigFile;

use super::engine::{Rng, Target};
use super::json;

const DICTIONARY: &[&[u8]] = &[
    b"\"mcpServers\":",
    b"\"servers\":",
    b"\"mcp\":{\"servers\":{}}",
    b"\"command\":\"npx\"",
    b"\"args\":[\"-y\",\"${HOME}\"]",
    b"\"url\":\"https://example.com/mcp\"",
    b"\"type\":\"sse\"",
    b"\"env\":{\"K\":\"${env:KEY}\"}",
    b"\"headers\":{\"Authorization\":\"Bearer ${TOKEN:-x}\"}",
    b"\"disabled\":true",
    b"\"startupTimeoutMs\":18446744073709551615",
    b"\"auth\":\"oauth\"",
    b"${",
    b"$${",
    b"}",
    b"${input:x}",
];

const WORDS: &[&str] = &[
    "mcpServers",
    "servers",
    "mcp",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "type",
    "stdio",
    "http",
    "streamable-http",
    "sse",
    "headers",
    "disabled",
    "enabled",
    "inheritEnv",
    "startupTimeoutMs",
    "requestTimeoutMs",
    "auth",
    "oauth",
    "clientId",
    "scopes",
    "redirectPort",
    "${HOME}",
    "${env:TOKEN}",
    "${MISSING:-fallback}",
    "${",
    "$${HOME}",
    "${input:key}",
    "${LOOP}",
];

#[test]
fn config_files_parse_consistently() {
    Target {
        name: "config",
        dictionary: DICTIONARY,
        default_cases: 2000,
    }
    .run(check);
}

/// Variables for the parser: some set, one that expands to a variable reference (which must
/// stay as written), one long.
fn lookup(name: &str) -> Option<String> {
    match name {
        "HOME" => Some("/home/fuzz".into()),
        "TOKEN" | "KEY" => Some("s3cret".into()),
        "LOOP" => Some("${LOOP}".into()),
        "LONG" => Some("x".repeat(1000)),
        _ => None,
    }
}

fn check(input: &[u8], rng: &mut Rng) {
    let text = String::from_utf8_lossy(input);
    parse_and_check(&text);
    if let Ok(mut value) = serde_json::from_str::<Value>(&text) {
        json::mutate(&mut value, WORDS, rng);
        parse_and_check(&value.to_string());
    }
}

fn parse_and_check(text: &str) {
    let Ok(file) = ConfigFile::parse_with(text, &lookup) else {
        return;
    };
    let again = ConfigFile::parse_with(text, &lookup).expect("parsed once");
    assert_eq!(
        format!("{file:?}"),
        format!("{again:?}"),
        "not deterministic"
    );

    // Every entry of every section is a server or an error, exactly once. Text that only the
    // JSONC reading accepts (comments, trailing commas) has no plain JSON form to count in.
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        let sections = [
            value.get("mcpServers"),
            value.get("servers"),
            value.get("mcp").and_then(|m| m.get("servers")),
        ];
        let entries: usize = sections
            .iter()
            .flatten()
            .filter_map(|s| s.as_object())
            .map(|s| s.len())
            .sum();
        assert_eq!(
            file.servers.len() + file.errors.len(),
            entries,
            "entries lost or invented"
        );
    }

    let names: Vec<&str> = file.servers.iter().map(|s| s.name.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(names, sorted, "server names unsorted or repeated");

    for server in &file.servers {
        // Expansion happens once: a value holding `${LOOP}` came from `${LOOP}` itself, and
        // nothing grows past what one substitution per reference can give.
        let shown = format!("{:?}", server.transport);
        assert!(shown.len() <= 64 + text.len() * 1000, "expansion blew up");
        assert!(!server.kind().is_empty());
    }
    for error in &file.errors {
        assert!(!error.to_string().is_empty());
    }
}
