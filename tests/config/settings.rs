//! Per-server settings beyond the command or URL: the connector each transport gets, the protocol
//! key and env files.

use umcp::{ConfigFile, ProtocolMode, ServerConfig, ServerTransport, StdioConfig};

use crate::{server, vars};

#[test]
fn connectors_follow_the_transport() {
    let stdio = ServerConfig::new("s", StdioConfig::new("my-server").args(["--flag"]));
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
        // The configuration is there in every build; connecting it says what is missing.
        let err = umcp::Client::connect(umcp::HttpConfig::new("http://127.0.0.1:9/mcp"))
            .expect_err("http is not built in");
        assert!(
            matches!(err, umcp::Error::Unsupported(_)) && err.to_string().contains("`http`"),
            "{err}"
        );
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
    let ServerTransport::Stdio(stdio) = &server(&file, "vscode").transport else {
        panic!("a stdio server");
    };
    let env = stdio.get_envs();
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
