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
        "config: no `mcpServers`, `servers` or `context_servers` object"
    );
    assert!(err(r#"{"servers": {"a": }}"#).starts_with("config: invalid JSON: "));
    // JSON that is only found wrong when an entry is read keeps the place in the file.
    for text in [
        "{\"servers\": {\"a\": {\"command\": \"x\", \"n\": 1e400}}}",
        "{\"servers\": {\"z\": {},\n  \"a\": {\"command\": \"x\",\n \"n\": [1, 2e999]}}}",
    ] {
        let whole = serde_json::from_str::<serde_json::Value>(text).unwrap_err();
        assert_eq!(err(text), format!("config: invalid JSON: {whole}"));
    }
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
        format!(r#"{{"servers": {{"a": {{"command": "x", "env": {{"{long}": [5]}}}}}}}}"#),
        format!(
            r#"{{"servers": {{"a": {{"command": "x", "env": {{"{long}": "1", "{long}": "2"}}}}}}}}"#
        ),
        format!(r#"{{"servers": {{"{long}": {{"command": "x", "command": "y"}}}}}}"#),
    ];
    for text in cases {
        let file = ConfigFile::parse_with(&text, &vars).unwrap();
        let message = file.errors[0].to_string();
        assert!(message.len() < 400, "{}", &message[..400]);
        assert!(message.contains('…'), "{message}");
    }
}

#[test]
fn a_key_repeated_in_a_server_entry_is_an_error_with_its_line() {
    let text = r#"{"mcpServers": {
    "a": { "command": "one",
           "command": "two" },
    "b": { "command": "x", "env": { "API_KEY": "1", "API_KEY": "2" } },
    "c": { "url": "http://h/one", "url": "http://h/two" },
    "d": { "url": "http://h/mcp", "headers": { "X-Key": "1", "X-Key": "2" } },
    "e": { "command": "x", "env": { "A": "1" },
           "env": { "B": "2" } },
    "f": { "url": "http://h/mcp", "oauth": { "clientId": "one", "clientId": "two" } },
    "ok": { "command": "x", "env": { "A": "1" }, "headers": { "A": "1" } }
}}"#;
    let file = ConfigFile::parse_with(text, &vars).unwrap();
    let names: Vec<&str> = file.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["ok"]);
    let errors: Vec<String> = file.errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        errors,
        [
            "server `a`, field `command`: defined again at line 3 column 20",
            "server `b`, field `env.API_KEY`: defined again at line 4 column 61",
            "server `c`, field `url`: defined again at line 5 column 39",
            "server `d`, field `headers.X-Key`: defined again at line 6 column 68",
            "server `e`, field `env`: defined again at line 8 column 16",
            "server `f`, field `oauth.clientId`: defined again at line 9 column 74",
        ]
    );
    assert_eq!(file.errors[1].field.as_deref(), Some("env.API_KEY"));
    // Keys repeated outside the servers' entries are not umcp's business.
    let other =
        r#"{"editor.fontSize": 12, "editor.fontSize": 13, "servers": {"a": {"command": "x"}}}"#;
    assert!(ConfigFile::parse_with(other, &vars)
        .unwrap()
        .errors
        .is_empty());
}

#[test]
fn a_key_repeated_where_umcp_does_not_read_is_no_error() {
    let text = r#"{"mcpServers": {
    "a": { "command": "x", "meta": { "k": 1, "k": 2 }, "description": "1", "description": "2" },
    "b": { "url": "http://h/mcp", "oauth": { "clientId": "c", "note": "1", "note": "2" } },
    "c": { "type": "stdio", "command": "x", "headers": { "X": "1", "X": "2" } },
    "d": { "url": "http://h/mcp", "oauth": { "enabled": false, "clientId": "1", "clientId": "2" } },
    "e": { "command": "x", "meta": { "k": 1, "k": 2 }, "env": { "A": "1", "A": "2" } },
    "f": { "command": "x", "meta": [{ "k": 1, "k": 2 }], "args": [{ "k": 1, "k": 2 }] }
}}"#;
    let file = ConfigFile::parse_with(text, &vars).unwrap();
    let names: Vec<&str> = file.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c", "d"]);
    assert_eq!(stdio(server(&file, "a")).command, "x");
    let errors: Vec<String> = file.errors.iter().map(|e| e.to_string()).collect();
    // Found past the keys repeated where umcp does not read, at their place in the file.
    assert_eq!(
        errors,
        [
            "server `e`, field `env.A`: defined again at line 6 column 77",
            "server `f`, field `args[0].k`: defined again at line 7 column 79",
        ]
    );
}

#[test]
fn a_disabled_entry_is_not_broken_by_a_repeated_key() {
    let text = r#"{"mcpServers": {
    "off": { "command": "one", "command": "two", "disabled": true },
    "off-too": { "enabled": false, "command": "x", "env": { "A": "1", "A": "2" } },
    "unsure": { "command": "x", "disabled": true, "disabled": false },
    "unsure-too": { "command": "x", "env": { "A": "1", "A": "2" }, "enabled": false, "enabled": true }
}}"#;
    let file = ConfigFile::parse_with(text, &vars).unwrap();
    let names: Vec<&str> = file.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["off", "off-too"]);
    assert!(file.servers.iter().all(|s| s.disabled));
    // As serde_json reads such a key, as other tools do: the last one.
    assert_eq!(stdio(server(&file, "off")).command, "two");
    assert_eq!(stdio(server(&file, "off-too")).env, [pair("A", "2")]);
    // Whether an entry is disabled is no guess: a repeated `disabled` or `enabled` is an error.
    let errors: Vec<String> = file.errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        errors,
        [
            "server `unsure`, field `disabled`: defined again at line 4 column 60",
            "server `unsure-too`, field `env.A`: defined again at line 5 column 58",
        ]
    );
}

#[test]
fn a_repeated_key_is_found_in_every_section_whatever_their_order() {
    // `servers` comes first in the file but is read second.
    let text = "{\"servers\": {\"v\": {\"command\": \"x\", \"cwd\": \"/a\", \"cwd\": \"/b\"}},\n\
                /* a comment */ \"mcpServers\": {\"m\": {\"url\": \"http://h\",\n\"type\": \"http\", \"type\": \"sse\"}},\n\
                \"mcp\": {\"servers\": {\"n\": {\"command\": \"x\", \"args\": [{\"k\": 1, \"k\": 2}]}}}}";
    let file = ConfigFile::parse_with(text, &vars).unwrap();
    let errors: Vec<String> = file.errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        errors,
        [
            "server `m`, field `type`: defined again at line 3 column 22",
            "server `n`, field `args[0].k`: defined again at line 4 column 63",
            "server `v`, field `cwd`: defined again at line 1 column 53",
        ]
    );
}

#[test]
fn many_repeated_keys_load_in_linear_time() {
    let entries: Vec<String> = (0..40_000)
        .map(|i| format!("\"s{i}\": {{\"command\": \"x\",\n\"command\": \"y\"}}"))
        .collect();
    let text = format!("{{\"mcpServers\": {{\n{}}}}}", entries.join(",\n"));
    let start = Instant::now();
    let file = ConfigFile::parse_with(&text, &vars).unwrap();
    let took = start.elapsed();
    assert_eq!(file.errors.len(), 40_000);
    assert!(
        file.errors[0].to_string().ends_with("at line 3 column 9"),
        "{}",
        file.errors[0]
    );
    // Counting the lines from the start of the file for each entry would be quadratic.
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn a_repeated_key_among_many_loads_in_linear_time() {
    let keys: Vec<String> = (0..100_000).map(|i| format!("\"K{i}\": \"v\"")).collect();
    let env = format!(
        "{{\"servers\": {{\"a\": {{\"command\": \"x\", \"env\": {{{}, \"K0\": \"w\"}}}}}}}}",
        keys.join(", ")
    );
    let start = Instant::now();
    let one = ConfigFile::parse_with(&env, &vars).unwrap();
    let took = start.elapsed();
    assert_eq!(one.errors[0].field.as_deref(), Some("env.K0"));
    // Looking each key up among the earlier ones of its object would be quadratic.
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn many_keys_written_twice_where_umcp_does_not_read_load_in_linear_time() {
    // In a part umcp does not read, and in a disabled entry: walked to the end, not errors.
    let twice: Vec<String> = (0..20_000)
        .map(|i| format!("\"K{i}\": \"v\", \"K{i}\": \"w\""))
        .collect();
    let text = format!(
        "{{\"servers\": {{\"a\": {{\"command\": \"x\", \"meta\": {{{0}}}}}, \
         \"b\": {{\"command\": \"x\", \"disabled\": true, \"env\": {{{0}}}}}}}}}",
        twice.join(", ")
    );
    let start = Instant::now();
    let file = ConfigFile::parse_with(&text, &vars).unwrap();
    let took = start.elapsed();
    assert!(file.errors.is_empty(), "{:?}", file.errors);
    assert_eq!(stdio(server(&file, "b")).env.len(), 20_000);
    // Looking each key up among the earlier ones would be quadratic.
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn a_large_env_loads_in_linear_time() {
    let keys: Vec<String> = (0..100_000)
        .map(|i| format!("\"K{i}\": \"v{i}\""))
        .collect();
    let text = format!(
        "{{\"servers\": {{\"a\": {{\"command\": \"x\", \"env\": {{{}}}}}}}}}",
        keys.join(", ")
    );
    let start = Instant::now();
    let file = ConfigFile::parse_with(&text, &vars).unwrap();
    let took = start.elapsed();
    let env = stdio(&file.servers[0]).env;
    assert_eq!(env.len(), 100_000);
    assert!(env.contains(&pair("K99999", "v99999")));
    // Looking each variable up among the earlier ones took minutes here in a debug build.
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn a_file_larger_than_the_bound_is_refused_unread_and_nesting_is_bounded() {
    let dir = std::env::temp_dir().join(format!("umcp-config-cap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let huge = dir.join("huge.json");
    let padding = " ".repeat(16 << 20);
    std::fs::write(&huge, format!("{{\"mcpServers\": {{}}}}{padding}")).unwrap();
    let message = ConfigFile::load(&huge).unwrap_err().to_string();
    assert!(message.contains("larger than 16 MiB"), "{message}");
    #[cfg(unix)]
    {
        let endless = ConfigFile::load("/dev/zero").unwrap_err().to_string();
        assert!(endless.contains("larger than 16 MiB"), "{endless}");
    }
    // Nested past JSON's own bound: an error, not a stack overflow.
    let deep = dir.join("deep.json");
    let nested = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    std::fs::write(
        &deep,
        format!("{{\"mcpServers\": {{\"a\": {{\"args\": {nested}}}}}}}"),
    )
    .unwrap();
    let outcome = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || ConfigFile::load(&deep).map(drop))
        .unwrap()
        .join()
        .expect("no stack overflow");
    assert!(outcome.is_err());
    let _ = std::fs::remove_dir_all(&dir);
}
