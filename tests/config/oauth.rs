//! OAuth settings in configuration files and in code: the shorthand, the object form, variables and
//! bad values.

use umcp::{ConfigFile, ServerConfig};

use crate::{pair, server};

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
