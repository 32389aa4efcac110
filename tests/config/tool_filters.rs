//! Allowed and excluded tools in a configuration file, in every host's spelling.

use umcp::ConfigFile;

use super::{server, vars};

#[test]
fn every_hosts_spelling_reads_as_the_same_filter() {
    let file = ConfigFile::parse_with(
        r#"{ "mcpServers": {
            "mcphost": { "command": "s", "allowedTools": ["read_*"], "excludedTools": ["read_secret"] },
            "gemini": { "command": "s", "includeTools": ["read_*"], "excludeTools": ["read_secret"] },
            "mcporter": { "command": "s", "allowedTools": ["read_*"], "blockedTools": ["read_secret"] },
            "codex": { "command": "s", "enabled_tools": ["read_*"], "disabled_tools": ["read_secret"] }
        } }"#,
        &vars,
    )
    .unwrap();
    assert!(file.errors.is_empty(), "{:?}", file.errors);
    for name in ["mcphost", "gemini", "mcporter", "codex"] {
        let filter = &server(&file, name).tool_filter;
        assert!(filter.allows("read_file"), "{name}");
        assert!(!filter.allows("read_secret"), "{name}");
        assert!(!filter.allows("write_file"), "{name}");
    }
}

#[test]
fn two_spellings_narrow_an_empty_list_allows_nothing_and_null_says_nothing() {
    let file = ConfigFile::parse_with(
        r#"{ "servers": {
            "both": { "command": "s", "allowedTools": ["a", "b"], "includeTools": ["b", "c"],
                      "excludeTools": ["x"], "blockedTools": ["y"] },
            "none": { "command": "s", "allowedTools": [] },
            "open": { "command": "s", "allowedTools": null, "excludedTools": null },
            "plain": { "command": "s" }
        } }"#,
        &vars,
    )
    .unwrap();
    let both = &server(&file, "both").tool_filter;
    assert!(both.allows("b") && !both.allows("a") && !both.allows("c"));
    let denied = both.clone().with_allowed(["x", "y", "b"]);
    assert!(!denied.allows("x") && !denied.allows("y"));
    assert!(!server(&file, "none").tool_filter.allows("anything"));
    assert!(server(&file, "open").tool_filter.is_open());
    assert!(server(&file, "plain").tool_filter.is_open());
}

#[test]
fn a_malformed_list_is_an_error_for_its_server_only() {
    let file = ConfigFile::parse_with(
        r#"{ "mcpServers": {
            "bad": { "command": "s", "excludedTools": "echo" },
            "worse": { "command": "s", "allowedTools": ["ok", 3] },
            "good": { "command": "s", "excludedTools": ["echo"] }
        } }"#,
        &vars,
    )
    .unwrap();
    assert_eq!(file.servers.len(), 1);
    assert!(!server(&file, "good").tool_filter.allows("echo"));
    let errors: Vec<String> = file.errors.iter().map(ToString::to_string).collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].contains("`bad`") && errors[0].contains("`excludedTools`"),
        "{errors:?}"
    );
    assert!(
        errors[0].contains("must be an array of strings"),
        "{errors:?}"
    );
    assert!(
        errors[1].contains("`worse`") && errors[1].contains("allowedTools[1]"),
        "{errors:?}"
    );
}

#[test]
fn a_key_written_twice_in_a_filter_is_refused_like_any_read_key() {
    let file = ConfigFile::parse(
        r#"{ "mcpServers": { "twice": { "command": "s",
            "excludedTools": ["a"],
            "excludedTools": ["b"] } } }"#,
    )
    .unwrap();
    assert!(file.servers.is_empty());
    assert!(
        file.errors[0].to_string().contains("excludedTools"),
        "{:?}",
        file.errors
    );
}

#[test]
fn frozen_at_the_top_level_pins_the_file() {
    let frozen =
        ConfigFile::parse(r#"{ "frozen": true, "mcpServers": { "a": { "command": "s" } } }"#);
    assert!(frozen.unwrap().frozen);
    let plain = ConfigFile::parse(r#"{ "mcpServers": { "a": { "command": "s" } } }"#).unwrap();
    assert!(!plain.frozen);
    let value = serde_json::json!({ "frozen": true, "servers": {} });
    assert!(ConfigFile::from_value(&value, &vars).unwrap().frozen);
    for bad in [
        r#"{ "frozen": "yes", "mcpServers": {} }"#,
        r#"{ "frozen": true, "frozen": false, "mcpServers": {} }"#,
    ] {
        let error = ConfigFile::parse(bad).unwrap_err().to_string();
        assert!(error.contains("frozen"), "{error}");
    }
    // JSONC, as VS Code writes it.
    let commented = "{ // pinned\n \"frozen\": true, \"servers\": {}, }";
    assert!(ConfigFile::parse(commented).unwrap().frozen);
}
