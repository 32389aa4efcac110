//! Tests for reading server configuration files: every common format, and every way an entry
//! can be wrong.

use std::path::{Path, PathBuf};
use std::time::Duration;

use umcp::{ConfigFile, EnvPolicy, HttpKind, ProtocolMode, ServerConfig, ServerTransport};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/config")
        .join(name)
}

/// A fixed environment, so the tests do not depend on the machine's.
fn vars(name: &str) -> Option<String> {
    let value = match name {
        "HOME" => "/home/ada",
        "GITHUB_TOKEN" => "ghp_test",
        "TZ_NAME" => "Europe/Paris",
        "API_TOKEN" => "tok-123",
        "PROJECT_ROOT" => "/src/project",
        "API_KEY" => "key-456",
        _ => return None,
    };
    Some(value.to_owned())
}

fn parse(name: &str) -> ConfigFile {
    let text = std::fs::read_to_string(fixture(name)).expect("fixture");
    ConfigFile::parse_with(&text, &vars).expect("parses")
}

fn server<'a>(file: &'a ConfigFile, name: &str) -> &'a ServerConfig {
    file.servers
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no server `{name}` in {:?}", file.errors))
}

/// The fields of a stdio server.
struct Stdio<'a> {
    command: &'a str,
    args: &'a [String],
    env: &'a [(String, String)],
    cwd: Option<&'a Path>,
    policy: EnvPolicy,
}

fn stdio(config: &ServerConfig) -> Stdio<'_> {
    match &config.transport {
        ServerTransport::Stdio {
            command,
            args,
            env,
            cwd,
            env_policy,
            ..
        } => Stdio {
            command,
            args,
            env,
            cwd: cwd.as_deref(),
            policy: *env_policy,
        },
        other => panic!("`{}` is not stdio: {other:?}", config.name),
    }
}

/// (url, headers, kind) of an HTTP server.
fn http(config: &ServerConfig) -> (&str, &[(String, String)], HttpKind) {
    match &config.transport {
        ServerTransport::Http {
            url, headers, kind, ..
        } => (url, headers, *kind),
        other => panic!("`{}` is not HTTP: {other:?}", config.name),
    }
}

fn pair(k: &str, v: &str) -> (String, String) {
    (k.to_owned(), v.to_owned())
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
    assert_eq!(kind, HttpKind::Auto);
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
    assert_eq!(http(server(&file, "api")).2, HttpKind::Auto);
    assert_eq!(http(server(&file, "api")).1, [pair("X-Api-Key", "key-456")]);
    assert_eq!(http(server(&file, "streaming")).2, HttpKind::StreamableHttp);
    assert_eq!(http(server(&file, "legacy")).2, HttpKind::Sse);
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
    assert_eq!(http(server(&file, "events")).2, HttpKind::Sse);
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
        ("env-value", "server `env-value`, field `env.PORT`: must be a string, not a number"),
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
        "config: no `mcpServers` or `servers` object"
    );
    assert_eq!(
        err(r#"{"mcpServers": []}"#),
        "config: `mcpServers` must be an object of servers"
    );
    let missing = ConfigFile::load(&fixture("does-not-exist.json"))
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
    let file = ConfigFile::load(&fixture("vscode.json")).unwrap();
    assert_eq!(file.servers.len(), 2);
}

#[test]
fn connectors_follow_the_transport() {
    let stdio = ServerConfig::stdio("s", "my-server").with_args(["--flag"]);
    let connector = stdio.connector().expect("stdio always connects");
    assert!(
        connector.describe().contains("my-server"),
        "{}",
        connector.describe()
    );
    let web = ServerConfig::http("w", "http://127.0.0.1:9/mcp");
    #[cfg(feature = "http")]
    {
        let connector = web.connector().expect("http is built in");
        assert!(
            connector.describe().contains("127.0.0.1:9"),
            "{}",
            connector.describe()
        );
    }
    #[cfg(not(feature = "http"))]
    {
        let err = web.connector().err().expect("http is not built in");
        assert!(matches!(err, umcp::Error::Unsupported(_)), "{err}");
    }
}

/// The environment of the OAuth tests.
fn oauth_vars(name: &str) -> Option<String> {
    let value = match name {
        "CLIENT_ID" => "my-app",
        "CLIENT_SECRET" => "s3cret",
        "PORT" => "9000",
        _ => return None,
    };
    Some(value.to_owned())
}

fn parse_oauth(servers: serde_json::Value) -> ConfigFile {
    let text = serde_json::json!({ "mcpServers": servers }).to_string();
    ConfigFile::parse_with(&text, &oauth_vars).expect("parses")
}

#[test]
fn oauth_settings_shorthand_object_and_variables() {
    let file = parse_oauth(serde_json::json!({
        "short": { "url": "https://a.example/mcp", "auth": "oauth" },
        "full": {
            "type": "http",
            "url": "https://b.example/mcp",
            "oauth": {
                "clientId": "${CLIENT_ID}",
                "clientSecret": "${CLIENT_SECRET}",
                "scopes": ["files:read", "files:write"],
                "clientMetadataUrl": "https://agent.example/client.json",
                "clientName": "my agent",
                "redirectPort": 8765,
            },
        },
        "strings": {
            "url": "https://c.example/mcp",
            "oauth": { "scopes": " read  write ", "redirectPort": "${PORT}" },
        },
        "off": { "url": "https://d.example/mcp", "oauth": { "enabled": false, "clientId": "x" } },
        "plain": { "url": "https://e.example/mcp" },
        "local": { "command": "server", "auth": "oauth" },
        "later": {
            "url": "https://f.example/mcp",
            "disabled": true,
            "oauth": { "clientSecret": "${NOT_SET}", "clientId": "y", "redirectPort": "${NOT_SET}" },
        },
    }));
    assert!(file.errors.is_empty(), "{:?}", file.errors);
    assert_eq!(
        server(&file, "short").oauth(),
        Some(&umcp::OAuthSettings::default())
    );
    let full = server(&file, "full").oauth().expect("settings");
    let expected = umcp::OAuthSettings::new()
        .with_client_id("my-app")
        .with_client_secret("s3cret")
        .with_scopes(["files:read", "files:write"])
        .with_client_metadata_url("https://agent.example/client.json")
        .with_client_name("my agent")
        .with_redirect_port(8765);
    assert_eq!(full, &expected);
    let strings = server(&file, "strings").oauth().expect("settings");
    assert_eq!(
        strings.scopes.as_deref(),
        Some(&["read".to_owned(), "write".to_owned()][..])
    );
    assert_eq!(strings.redirect_port, Some(9000));
    assert_eq!(server(&file, "off").oauth(), None);
    assert_eq!(server(&file, "plain").oauth(), None);
    assert_eq!(
        server(&file, "local").oauth(),
        None,
        "stdio servers ignore it"
    );
    let later = server(&file, "later").oauth().expect("settings");
    assert_eq!(later.client_secret.as_deref(), Some("${NOT_SET}"));
    // The secret never shows in debug output.
    let shown = format!("{:?}", server(&file, "full"));
    assert!(
        !shown.contains("s3cret") && shown.contains("my-app"),
        "{shown}"
    );
}

#[test]
fn each_bad_oauth_value_fails_its_server_naming_the_field() {
    let file = parse_oauth(serde_json::json!({
        "good": { "url": "https://g.example/mcp", "auth": "oauth" },
        "not-object": { "url": "https://h/mcp", "oauth": "yes" },
        "auth-value": { "url": "https://h/mcp", "auth": "basic" },
        "id-number": { "url": "https://h/mcp", "oauth": { "clientId": 42 } },
        "id-empty": { "url": "https://h/mcp", "oauth": { "clientId": " " } },
        "scope-item": { "url": "https://h/mcp", "oauth": { "scopes": ["a", 1] } },
        "scopes-number": { "url": "https://h/mcp", "oauth": { "scopes": 5 } },
        "port-range": { "url": "https://h/mcp", "oauth": { "redirectPort": 70000 } },
        "port-text": { "url": "https://h/mcp", "oauth": { "redirectPort": "eighty" } },
        "secret-alone": { "url": "https://h/mcp", "oauth": { "clientSecret": "x" } },
        "cimd-http": { "url": "https://h/mcp", "oauth": { "clientMetadataUrl": "http://h/c.json" } },
        "missing-var": { "url": "https://h/mcp", "oauth": { "clientId": "a", "clientSecret": "${NOPE}" } },
        "enabled-text": { "url": "https://h/mcp", "oauth": { "enabled": "no" } },
    }));
    let good: Vec<&str> = file.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(good, ["good"]);
    let expect = [
        ("auth-value", "server `auth-value`, field `auth`: unknown value `basic` (expected `oauth`)"),
        ("cimd-http", "server `cimd-http`, field `oauth.clientMetadataUrl`: must be an https URL"),
        ("enabled-text", "server `enabled-text`, field `oauth.enabled`: must be true or false, not a string"),
        ("id-empty", "server `id-empty`, field `oauth.clientId`: is empty"),
        ("id-number", "server `id-number`, field `oauth.clientId`: must be a string, not a number"),
        ("missing-var", "server `missing-var`, field `oauth.clientSecret`: environment variable `NOPE` is not set"),
        ("not-object", "server `not-object`, field `oauth`: must be an object, not a string"),
        ("port-range", "server `port-range`, field `oauth.redirectPort`: must be a port number (0 to 65535), not 70000"),
        ("port-text", "server `port-text`, field `oauth.redirectPort`: must be a port number (0 to 65535), not `eighty`"),
        ("scope-item", "server `scope-item`, field `oauth.scopes[1]`: must be a string, not a number"),
        ("scopes-number", "server `scopes-number`, field `oauth.scopes`: must be an array of strings or a space-separated string, not a number"),
        ("secret-alone", "server `secret-alone`, field `oauth.clientSecret`: needs `clientId` (the client it belongs to)"),
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
fn oauth_settings_in_code_and_the_connector() {
    let settings = umcp::OAuthSettings::new().with_client_id("app");
    let web = ServerConfig::http("w", "http://127.0.0.1:9/mcp").with_oauth(settings.clone());
    assert_eq!(web.oauth(), Some(&settings));
    let local = ServerConfig::stdio("l", "server").with_oauth(settings);
    assert_eq!(local.oauth(), None, "stdio servers ignore it");
    let result = web.connector();
    #[cfg(feature = "oauth")]
    assert!(result.is_ok(), "the settings are the manager's business");
    #[cfg(not(feature = "oauth"))]
    {
        let err = result.err().expect("OAuth is not built in");
        assert!(
            matches!(
                &err,
                umcp::Error::Unsupported(umcp::Unsupported::Feature(_))
            ),
            "{err}"
        );
        assert!(err.to_string().contains("127.0.0.1:9"), "{err}");
    }
}

#[test]
fn a_servers_protocol_key_pins_its_era() {
    let text = r#"{ "mcpServers": {
        "old": { "command": "a", "protocol": "legacy" },
        "new": { "command": "b", "protocol": "2026-07-28" },
        "any": { "command": "c", "protocol": "auto" },
        "unset": { "command": "d" },
        "typo": { "command": "e", "protocol": "2025-06-18" },
        "wrong": { "command": "f", "protocol": 3 }
    } }"#;
    let file = ConfigFile::parse_with(text, &vars).unwrap();
    let protocol = |name: &str| server(&file, name).protocol.clone();
    assert_eq!(protocol("old"), Some(ProtocolMode::Legacy));
    assert_eq!(
        protocol("new"),
        Some(ProtocolMode::Pinned("2026-07-28".into()))
    );
    assert_eq!(protocol("any"), Some(ProtocolMode::Auto));
    assert_eq!(protocol("unset"), None);
    // A handshake-era version is not a mode: only the stateless era is pinned by version.
    let errors: Vec<String> = file.errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].contains("typo") && errors[0].contains("protocol"),
        "{errors:?}"
    );
    assert!(errors[0].contains("2025-06-18"), "{errors:?}");
    assert!(
        errors[1].contains("wrong") && errors[1].contains("protocol"),
        "{errors:?}"
    );
}

#[test]
fn an_env_file_is_read_under_env() {
    let dir = std::env::temp_dir().join(format!("umcp-env-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let env_file = dir.join("server.env");
    std::fs::write(&env_file, "# secrets\nAPI_KEY=from-file\nREGION='eu'\n").unwrap();
    std::fs::write(dir.join("broken.env"), "API_KEY=x\nnot a variable\n").unwrap();
    let text = serde_json::json!({ "servers": {
        "vscode": { "command": "a", "envFile": env_file, "env": { "API_KEY": "from-env" } },
        "missing": { "command": "b", "envFile": dir.join("nowhere.env") },
        "broken": { "command": "c", "envFile": dir.join("broken.env") },
        "off": { "command": "d", "envFile": dir.join("nowhere.env"), "disabled": true }
    } })
    .to_string();
    let file = ConfigFile::parse_with(&text, &vars).unwrap();
    let ServerTransport::Stdio { env, .. } = &server(&file, "vscode").transport else {
        panic!("a stdio server");
    };
    let get = |k: &str| {
        env.iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(get("API_KEY"), Some("from-env"), "`env` wins: {env:?}");
    assert_eq!(get("REGION"), Some("eu"));
    assert_eq!(env.len(), 2, "{env:?}");
    assert!(server(&file, "off").disabled);
    let errors: Vec<String> = file.errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].contains("`broken`") && errors[0].contains("line 2"),
        "{errors:?}"
    );
    assert!(
        errors[1].contains("`missing`")
            && errors[1].contains("envFile")
            && errors[1].contains("nowhere.env"),
        "{errors:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
