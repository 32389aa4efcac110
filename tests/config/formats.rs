//! Every common configuration file format read as written, and every way an entry or a whole file
//! can be wrong.

use std::path::{Path, PathBuf};
use std::time::Duration;

use umcp::{ConfigFile, EnvPolicy, HttpTransportKind};

use crate::{http, pair, server, stdio, vars};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/config")
        .join(name)
}

fn parse(name: &str) -> ConfigFile {
    let text = std::fs::read_to_string(fixture(name)).expect("fixture");
    ConfigFile::parse_with(&text, &vars).expect("parses")
}

#[test]
fn smoke_claude_desktop() {
    let file = parse("claude_desktop.json");
    assert!(file.errors.is_empty(), "{:?}", file.errors);
    let names: Vec<&str> = file.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["filesystem", "github"]);
    let filesystem = stdio(server(&file, "filesystem"));
    assert_eq!(filesystem.command, "npx");
    assert_eq!(
        filesystem.args[2..],
        ["/home/ada/Desktop", "/home/ada/Downloads"]
    );
    assert_eq!(filesystem.policy, EnvPolicy::AllowList);
    assert_eq!(
        stdio(server(&file, "github")).env,
        [pair("GITHUB_PERSONAL_ACCESS_TOKEN", "ghp_test")]
    );
}

#[test]
fn cursor_url_without_type_is_http_auto() {
    let file = parse("cursor.json");
    assert!(file.errors.is_empty(), "{:?}", file.errors);
    let time = stdio(server(&file, "time"));
    assert_eq!(
        time.args,
        ["mcp-server-time", "--local-timezone=Europe/Paris"]
    );
    assert_eq!(time.env, [pair("LOG_LEVEL", "debug")]);
    let (url, headers, kind) = http(server(&file, "remote"));
    assert_eq!(url, "https://mcp.example.com/mcp");
    assert_eq!(headers, [pair("Authorization", "Bearer tok-123")]);
    assert_eq!(kind, HttpTransportKind::Auto);
}

#[test]
fn mcp_json_types_cwd_defaults_and_umcp_keys() {
    let file = parse("mcp_json.json");
    assert!(file.errors.is_empty(), "{:?}", file.errors);
    let local = stdio(server(&file, "local"));
    assert_eq!(local.command, "/src/project/bin/server");
    assert_eq!(local.args, ["--verbose"]);
    assert_eq!(local.cwd, Some(Path::new("/src/project")));
    assert_eq!(
        local.env,
        [pair("CACHE", "/tmp/cache")],
        "the default applies to unset variables"
    );
    assert_eq!(http(server(&file, "api")).2, HttpTransportKind::Auto);
    assert_eq!(http(server(&file, "api")).1, [pair("X-Api-Key", "key-456")]);
    assert_eq!(
        http(server(&file, "streaming")).2,
        HttpTransportKind::StreamableHttp
    );
    assert_eq!(http(server(&file, "legacy")).2, HttpTransportKind::Sse);
    let tuned = server(&file, "tuned");
    assert_eq!(stdio(tuned).policy, EnvPolicy::InheritAll);
    assert_eq!(tuned.startup_timeout, Some(Duration::from_millis(2500)));
    assert_eq!(tuned.request_timeout, Some(Duration::from_secs(60)));
    assert_eq!(server(&file, "local").startup_timeout, None);
}

#[test]
fn vscode_servers_and_unsupported_input_variables() {
    let file = parse("vscode.json");
    let names: Vec<&str> = file.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["events", "fetch"]);
    assert_eq!(stdio(server(&file, "fetch")).args, ["mcp-server-fetch"]);
    assert_eq!(http(server(&file, "events")).2, HttpTransportKind::Sse);
    assert_eq!(file.errors.len(), 1);
    let error = &file.errors[0];
    assert_eq!(error.server, "remote");
    assert_eq!(error.field.as_deref(), Some("headers.Authorization"));
    assert_eq!(
        error.to_string(),
        "server `remote`, field `headers.Authorization`: unsupported variable `${input:token}`"
    );
}

#[test]
fn gemini_cli_http_url_is_streamable_and_url_is_any_http() {
    let file = parse("gemini_settings.json");
    assert!(file.errors.is_empty(), "{:?}", file.errors);
    let github = stdio(server(&file, "github"));
    assert_eq!(github.command, "docker");
    assert_eq!(
        github.env,
        [pair("GITHUB_PERSONAL_ACCESS_TOKEN", "ghp_test")]
    );
    assert_eq!(github.cwd, Some(Path::new("/home/ada/work")));
    let (url, headers, kind) = http(server(&file, "docs"));
    assert_eq!(url, "https://docs.example.com/mcp");
    assert_eq!(headers, [pair("Authorization", "Bearer tok-123")]);
    assert_eq!(kind, HttpTransportKind::StreamableHttp);
    assert_eq!(http(server(&file, "events")).2, HttpTransportKind::Auto);
}

#[test]
fn windsurf_server_url_is_http() {
    let file = parse("windsurf_mcp_config.json");
    assert!(file.errors.is_empty(), "{:?}", file.errors);
    let (url, headers, kind) = http(server(&file, "figma"));
    assert_eq!(url, "https://mcp.figma.com/mcp");
    assert_eq!(headers, [pair("X-Figma-Token", "figd_test")]);
    assert_eq!(kind, HttpTransportKind::Auto);
    assert!(server(&file, "sequential-thinking").disabled);
    assert_eq!(stdio(server(&file, "time")).args, ["mcp-server-time"]);
}

#[test]
fn zed_context_servers_in_both_forms_and_extensions_named_as_errors() {
    let file = parse("zed_settings.json");
    let names: Vec<&str> = file.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["postgres", "remote", "time"]);
    assert_eq!(stdio(server(&file, "time")).command, "uvx");
    let postgres = stdio(server(&file, "postgres"));
    assert_eq!(postgres.command, "/usr/local/bin/postgres-mcp");
    assert_eq!(postgres.args, ["postgresql://localhost/app"]);
    assert_eq!(postgres.env, [pair("PGPASSWORD", "secret")]);
    assert_eq!(
        http(server(&file, "remote")).0,
        "https://mcp.example.com/mcp"
    );
    // A server a Zed extension starts has no command umcp could run.
    assert_eq!(file.errors.len(), 1, "{:?}", file.errors);
    assert_eq!(file.errors[0].server, "mcp-server-github");
    let bad = ConfigFile::parse_with(
        r#"{"context_servers": {"z": {"command": {"args": []}}}}"#,
        &vars,
    )
    .unwrap();
    assert_eq!(
        bad.errors[0].to_string(),
        "server `z`, field `command.path`: is missing (a stdio server needs one)"
    );
}

#[test]
fn claude_code_user_servers_are_read_from_its_state_file() {
    let file = parse("claude_code.json");
    assert!(file.errors.is_empty(), "{:?}", file.errors);
    let names: Vec<&str> = file.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["airtable", "sentry"],
        "projects' servers are not the user's"
    );
    assert_eq!(
        http(server(&file, "sentry")).0,
        "https://mcp.sentry.dev/mcp"
    );
}

#[test]
fn each_bad_entry_fails_alone_with_a_clear_message() {
    let file = parse("errors.json");
    let good: Vec<&str> = file.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(good, ["good", "off", "off-too"]);
    let expect = [
        ("args-item", "server `args-item`, field `args[1]`: must be a string, not a number"),
        ("args-not-array", "server `args-not-array`, field `args`: must be an array of strings, not a string"),
        ("bad-type", "server `bad-type`, field `type`: unknown type `websocket` (expected stdio, http, streamable-http or sse)"),
        ("both", "server `both`: has both `command` and `url`; add `type` to say which"),
        ("disabled-string", "server `disabled-string`, field `disabled`: must be true or false, not a string"),
        ("empty-command", "server `empty-command`, field `command`: is empty"),
        ("env-value", "server `env-value`, field `env.PORT`: must be a string, not an array"),
        ("headers-not-object", "server `headers-not-object`, field `headers`: must be an object of strings, not an array"),
        ("missing-var", "server `missing-var`, field `env.KEY`: environment variable `NOT_SET_ANYWHERE` is not set"),
        ("negative-timeout", "server `negative-timeout`, field `startupTimeoutMs`: must be a whole number of milliseconds, not a number"),
        ("neither", "server `neither`: needs `command` (a stdio server) or `url` (an HTTP server)"),
        ("no-command", "server `no-command`, field `command`: is missing (a stdio server needs one)"),
        ("no-url", "server `no-url`, field `url`: is missing (a `sse` server needs one)"),
        ("not-object", "server `not-object`: must be an object, not a string"),
        ("unterminated", "server `unterminated`, field `args[0]`: `${` without a closing `}`"),
    ];
    let mut errors: Vec<(String, String)> = file
        .errors
        .iter()
        .map(|e| (e.server.clone(), e.to_string()))
        .collect();
    errors.sort();
    let expect: Vec<(String, String)> = expect.iter().map(|(s, m)| pair(s, m)).collect();
    assert_eq!(errors, expect);
}

#[test]
fn disabled_servers_are_kept_with_their_strings_as_written() {
    let file = parse("errors.json");
    let off = server(&file, "off");
    assert!(off.disabled);
    assert_eq!(stdio(off).env, [pair("KEY", "${NOT_SET_ANYWHERE}")]);
    assert!(
        server(&file, "off-too").disabled,
        "`enabled: false` disables too"
    );
    assert!(!server(&file, "good").disabled);
}

#[test]
fn whole_file_errors() {
    let err = |text: &str| ConfigFile::parse_with(text, &vars).unwrap_err().to_string();
    assert!(
        err("{ not json").starts_with("config: invalid JSON"),
        "{}",
        err("{ not json")
    );
    assert_eq!(err("[]"), "config: the top level must be a JSON object");
    assert_eq!(
        err(r#"{"other": {}}"#),
        "config: no `mcpServers`, `servers` or `context_servers` object"
    );
    assert_eq!(
        err(r#"{"mcpServers": []}"#),
        "config: `mcpServers` must be an object of servers"
    );
    let missing = ConfigFile::load(fixture("does-not-exist.json"))
        .unwrap_err()
        .to_string();
    assert!(missing.contains("does-not-exist.json"), "{missing}");
}

#[test]
fn vscode_settings_nesting_and_duplicates_across_sections() {
    let text = r#"{
        "mcpServers": { "a": { "command": "one" } },
        "mcp": { "servers": { "a": { "command": "two" }, "b": { "url": "http://h/mcp" } } }
    }"#;
    let file = ConfigFile::parse_with(text, &vars).unwrap();
    let names: Vec<&str> = file.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(stdio(&file.servers[0]).command, "one");
    assert_eq!(
        file.errors[0].to_string(),
        "server `a`: defined again in `mcp.servers`"
    );
}

#[test]
fn load_reads_a_file_from_disk() {
    // No variables in this fixture, so the real environment does not matter.
    // Any path-like value will do: a `PathBuf`, a `&str`.
    let file = ConfigFile::load(fixture("vscode.json")).unwrap();
    let text = fixture("vscode.json").to_string_lossy().into_owned();
    assert_eq!(
        ConfigFile::load(text.as_str()).unwrap().servers.len(),
        file.servers.len()
    );
    assert_eq!(file.servers.len(), 2);
}

/// VS Code's files are JSONC: comments and trailing commas are read, and a JSON error still
/// points at the line and column of the file as written.
#[test]
fn vscode_comments_and_trailing_commas() {
    let text = r#"{
    // Servers for this workspace.
    "servers": {
        /* A stdio server,
           with a block comment */
        "fetch": {
            "command": "uvx", // the runner
            "args": ["mcp-server-fetch", "https://x.example/a//b",],
        },
        "events": { "type": "sse", "url": "http://localhost:8080/sse", },
    },
}"#;
    let file = ConfigFile::parse_with(text, &vars).expect("JSONC parses");
    assert!(file.errors.is_empty(), "{:?}", file.errors);
    let names: Vec<&str> = file.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["events", "fetch"]);
    assert_eq!(
        stdio(server(&file, "fetch")).args,
        ["mcp-server-fetch", "https://x.example/a//b"]
    );
    let broken = "{\n  /* two\n     lines */ \"servers\": {\n    \"a\": ?\n  }\n}";
    let err = ConfigFile::parse_with(broken, &vars)
        .unwrap_err()
        .to_string();
    assert!(err.ends_with("at line 4 column 10"), "{err}");
}

#[test]
fn user_home_and_the_workspace_folder_of_a_vscode_file() {
    let text = r#"{ "servers": { "local": {
        "command": "${userHome}/bin/server",
        "args": ["${workspaceFolder}/data", "${workspaceFolderBasename}"]
    } } }"#;
    let dir = std::env::temp_dir().join(format!("umcp-config-ws-{}", std::process::id()));
    let workspace = dir.join("project");
    std::fs::create_dir_all(workspace.join(".vscode")).unwrap();
    let in_vscode = workspace.join(".vscode/mcp.json");
    std::fs::write(&in_vscode, text).unwrap();
    let elsewhere = workspace.join("mcp.json");
    std::fs::write(&elsewhere, text).unwrap();

    let file = ConfigFile::load(&in_vscode).unwrap();
    assert!(file.errors.is_empty(), "{:?}", file.errors);
    let local = stdio(server(&file, "local"));
    let home = std::env::var("HOME")
        .or_else(|_| std::env::var("USERPROFILE"))
        .expect("a home directory");
    assert_eq!(local.command, format!("{home}/bin/server"));
    let expected = format!("{}/data", workspace.display());
    assert_eq!(local.args, [expected.as_str(), "project"]);

    // Outside a `.vscode` folder, and in parsed text, there is no workspace folder.
    let file = ConfigFile::load(&elsewhere).unwrap();
    assert_eq!(file.errors.len(), 1, "{:?}", file.errors);
    let error = file.errors[0].to_string();
    assert!(
        error.contains("`${workspaceFolder}`") && error.contains(".vscode/mcp.json"),
        "{error}"
    );
    let file = ConfigFile::parse_with(text, &vars).unwrap();
    assert_eq!(file.errors.len(), 1, "{:?}", file.errors);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn env_numbers_and_booleans_are_taken_as_their_text() {
    // As hosts running on Node take them; headers and arguments stay strings only.
    let text = r#"{"mcpServers": {"a": {"command": "x", "env": {"PORT": 3000, "DEBUG": true, "RATIO": 0.5}}}}"#;
    let file = umcp::ConfigFile::parse(text).expect("parsed");
    assert!(file.errors.is_empty(), "{:?}", file.errors);
    assert_eq!(
        stdio(server(&file, "a")).env,
        [
            pair("DEBUG", "true"),
            pair("PORT", "3000"),
            pair("RATIO", "0.5")
        ]
    );
    let headers =
        r#"{"mcpServers": {"h": {"url": "http://localhost/mcp", "headers": {"X-N": 1}}}}"#;
    let file = umcp::ConfigFile::parse(headers).expect("parsed");
    assert_eq!(
        file.errors[0].to_string(),
        "server `h`, field `headers.X-N`: must be a string, not a number"
    );
}

#[test]
fn env_and_headers_are_read_in_name_order_whatever_the_file_order() {
    // serde_json keeps an object's order only with `preserve_order`, which any crate in a
    // program may turn on: the order, and which bad entry is named, must not depend on it.
    let text = r#"{"mcpServers": {
        "h": {"url": "http://localhost/mcp", "headers": {"X-Z": "1", "X-A": "2"}},
        "s": {"command": "x", "env": {"ZED": "1", "ALPHA": "2", "MID": "3"}},
        "bad": {"url": "http://localhost/mcp", "headers": {"X-Z": 1, "X-A": 2}}
    }}"#;
    let file = umcp::ConfigFile::parse(text).expect("parsed");
    assert_eq!(
        http(server(&file, "h")).1,
        [pair("X-A", "2"), pair("X-Z", "1")]
    );
    assert_eq!(
        stdio(server(&file, "s")).env,
        [pair("ALPHA", "2"), pair("MID", "3"), pair("ZED", "1")]
    );
    assert_eq!(
        file.errors[0].to_string(),
        "server `bad`, field `headers.X-A`: must be a string, not a number"
    );
}
