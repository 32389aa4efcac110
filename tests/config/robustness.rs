//! Files that are unusual rather than wrong: repeated keys, a byte order mark, many servers.

use std::time::{Duration, Instant};

use super::*;

fn err(text: &str) -> String {
    ConfigFile::parse_with(text, &vars).unwrap_err().to_string()
}

#[test]
fn a_server_defined_twice_in_one_section_is_an_error_for_the_second() {
    let text = r#"{"mcpServers": {
        "a": { "command": "one" },
        "b": { "command": "two" },
        "a": { "url": "http://h/mcp" }
    }}"#;
    let file = ConfigFile::parse_with(text, &vars).unwrap();
    let names: Vec<&str> = file.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(stdio(&file.servers[0]).command, "one");
    let errors: Vec<String> = file.errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(errors, ["server `a`: defined again in `mcpServers`"]);
}

#[test]
fn a_repeated_section_is_refused_with_its_line() {
    let text = "{\n  \"mcpServers\": { \"a\": { \"command\": \"x\" } },\n  \"mcpServers\": { \"b\": { \"command\": \"y\" } }\n}";
    let message = err(text);
    assert!(
        message.starts_with("config: `mcpServers` defined again at line 3"),
        "{message}"
    );
    let nested = r#"{"mcp": {"servers": {}, "servers": {"b": {"command": "y"}}}}"#;
    assert!(
        err(nested).contains("`mcp.servers` defined again"),
        "{}",
        err(nested)
    );
    assert!(err(r#"{"servers": {}, "servers": {}}"#).contains("`servers` defined again"));
    // Keys that are not sections may repeat, as in any editor's settings file.
    let other = r#"{"editor.fontSize": 12, "editor.fontSize": 13, "servers": {}}"#;
    assert!(ConfigFile::parse_with(other, &vars).is_ok());
}

#[test]
fn the_shapes_other_than_objects_are_reported_as_before() {
    assert_eq!(err("[1, 2]"), "config: the top level must be a JSON object");
    assert_eq!(
        err("\"text\""),
        "config: the top level must be a JSON object"
    );
    assert_eq!(
        err(r#"{"servers": [{"command": "x"}]}"#),
        "config: `servers` must be an object of servers"
    );
    assert_eq!(
        err(r#"{"mcp": {"servers": 5}}"#),
        "config: `mcp.servers` must be an object of servers"
    );
    assert_eq!(
        err(r#"{"mcp": null}"#),
        "config: no `mcpServers` or `servers` object"
    );
    assert!(err(r#"{"servers": {"a": }}"#).starts_with("config: invalid JSON: "));
}

#[test]
fn a_byte_order_mark_is_skipped() {
    let file = ConfigFile::parse_with(
        "\u{feff}{\"servers\": {\"a\": {\"command\": \"x\"}}}",
        &vars,
    )
    .unwrap();
    assert_eq!(file.servers.len(), 1);
    // Lines and columns still count from the text after the mark.
    let message = err("\u{feff}{\n  \"servers\": {\"a\" 1}\n}");
    assert!(message.contains("line 2"), "{message}");
}

#[test]
fn many_servers_load_in_linear_time() {
    let entries: Vec<String> = (0..40_000)
        .map(|i| format!("\"s{i}\": {{\"command\": \"x\"}}"))
        .collect();
    let text = format!("{{\"mcpServers\": {{{}}}}}", entries.join(","));
    let start = Instant::now();
    let file = ConfigFile::parse_with(&text, &vars).unwrap();
    let took = start.elapsed();
    assert_eq!(file.servers.len(), 40_000);
    // Checking each name against every earlier one took about 20 s here in a debug build.
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn env_of_an_editor_variable_points_at_the_editor_form() {
    let text = r#"{"servers": {"a": {"command": "x", "args": ["${env:userHome}"]}}}"#;
    let file = ConfigFile::parse_with(text, &vars).unwrap();
    let message = file.errors[0].to_string();
    assert!(message.contains("`${userHome}`"), "{message}");
    let text = r#"{"servers": {"a": {"command": "x", "args": ["${env:workspaceFolder}"]}}}"#;
    let message = ConfigFile::parse_with(text, &vars).unwrap().errors[0].to_string();
    assert!(message.contains("`${workspaceFolder}`"), "{message}");
}

#[test]
fn huge_user_text_is_quoted_only_in_part() {
    let long = "A".repeat(100_000);
    let cases = [
        format!(r#"{{"servers": {{"a": {{"command": "x", "args": ["${{{long}}}"]}}}}}}"#),
        format!(r#"{{"servers": {{"a": {{"command": "x", "args": ["${{{long}-}}"]}}}}}}"#),
        format!(r#"{{"servers": {{"a": {{"type": "{long}", "url": "http://h"}}}}}}"#),
        format!(r#"{{"servers": {{"a": {{"command": "x", "protocol": "{long}"}}}}}}"#),
        format!(r#"{{"servers": {{"a": {{"url": "http://h", "auth": "{long}"}}}}}}"#),
        format!(r#"{{"servers": {{"{long}": {{"command": 5}}}}}}"#),
        format!(r#"{{"servers": {{"a": {{"command": "x", "env": {{"{long}": 5}}}}}}}}"#),
    ];
    for text in cases {
        let file = ConfigFile::parse_with(&text, &vars).unwrap();
        let message = file.errors[0].to_string();
        assert!(message.len() < 400, "{}", &message[..400]);
        assert!(message.contains('…'), "{message}");
    }
}
