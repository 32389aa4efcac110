//! OAuth against a loopback MCP server and authorization server: each discovery variant,
//! each way to a client identity, each token endpoint authentication method, refresh,
//! step-up and its limit, the resource check, the handlers, and the file store.
#![cfg(feature = "oauth")]

#[path = "common/http_server.rs"]
mod http_server;

#[path = "common/auth_server.rs"]
mod auth_server;

#[path = "common/log_capture.rs"]
mod log_capture;

#[path = "common/oauth_client.rs"]
mod oauth_client;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use umcp::auth::{
    FileStore, LoopbackHandler, MemoryStore, OAuth, OAuthConfig, StoredCredentials, TokenSet,
    TokenStore,
};
use umcp::{AuthStep, Client, CredentialProvider, Error, HttpConfig, HttpError, Options};

use auth_server::{params, Metadata, Prm, Setup};
use log_capture::umcp_lines;
use oauth_client::{
    auth_error, bearer, connect, headless, provider, start, unauthorized, use_server,
};

const CIMD: &str = "https://client.example/metadata.json";

#[test]
fn path_based_metadata_from_the_challenge_and_the_whole_flow() {
    let fixture = start(Setup::default());
    let oauth = provider(&fixture, headless());
    use_server(&fixture, &oauth).expect("authorized use");
    let paths = fixture.paths();
    let position = |prefix: &str| {
        paths
            .iter()
            .position(|p| p.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} in {paths:?}"))
    };
    assert!(position("POST /mcp") < position("GET /.well-known/oauth-protected-resource/mcp"));
    assert!(
        position("GET /.well-known/oauth-protected-resource/mcp")
            < position("GET /.well-known/oauth-authorization-server")
    );
    assert!(position("POST /register") < position("GET /authorize"));
    assert!(position("GET /authorize") < position("POST /token"));
    assert_eq!(
        fixture.count("GET", "/.well-known/oauth-protected-resource"),
        0,
        "never the root PRM when the path-based one exists"
    );
    // The requests after authorization carry the token; nothing asked twice.
    assert_eq!(fixture.count("GET", "/authorize"), 1);
    let authorized = fixture
        .requests_to("/mcp")
        .into_iter()
        .filter(|s| s.header("authorization").is_some())
        .count();
    assert!(
        authorized >= 4,
        "initialize, initialized, tools/list, tools/call: {authorized}"
    );
    let query = &fixture.authorizations()[0];
    assert_eq!(query["code_challenge_method"], "S256");
    assert_eq!(query["resource"], fixture.mcp_url());
    assert_eq!(query["state"].len(), 43, "32 random bytes");
    assert!(!query.contains_key("scope"), "no scope anywhere: omitted");
    let token = &fixture.token_requests()[0];
    assert_eq!(token.form["resource"], fixture.mcp_url());
    assert_eq!(token.form["redirect_uri"], "http://127.0.0.1/callback");
}

#[test]
fn root_metadata_after_the_path_based_one_and_issuer_path_insertion() {
    let fixture = start(Setup {
        prm: Prm::Root,
        prm_in_challenge: false,
        issuer_path: "/tenant1".into(),
        ..Setup::default()
    });
    let oauth = provider(&fixture, headless());
    oauth
        .on_unauthorized(&unauthorized(&fixture, None, None))
        .expect("authorized");
    let discovery: Vec<String> = fixture
        .paths()
        .into_iter()
        .filter(|p| p.contains(".well-known"))
        .collect();
    assert_eq!(
        discovery,
        [
            "GET /.well-known/oauth-protected-resource/mcp",
            "GET /.well-known/oauth-protected-resource",
            "GET /.well-known/oauth-authorization-server/tenant1",
        ]
    );
    assert!(bearer(&oauth, &fixture).is_some());
}

#[test]
fn the_resource_is_sent_exactly_as_the_metadata_publishes_it() {
    // A pathless identifier must not gain a `/`, nor become the endpoint URL.
    let fixture = start(Setup::default());
    let origin = fixture.base();
    fixture.update(|s| s.prm_resource = Some(origin.clone()));
    let oauth = provider(&fixture, headless().offline_access(true));
    use_server(&fixture, &oauth).expect("authorized");
    let authorization = &fixture.authorizations()[0];
    assert_eq!(authorization["resource"], origin);
    let token = &fixture.token_requests()[0];
    assert_eq!(token.form["resource"], origin);
    // A refresh sends the same value.
    oauth
        .on_unauthorized(&unauthorized(&fixture, None, None))
        .expect("refreshed");
    let refresh = fixture.token_requests().pop().expect("a refresh");
    assert_eq!(refresh.grant_type, "refresh_token");
    assert_eq!(refresh.form["resource"], origin);
}

#[test]
fn openid_configuration_with_path_insertion_then_appending() {
    for (metadata, tried) in [(Metadata::OpenIdInsert, 2), (Metadata::OpenIdAppend, 3)] {
        let fixture = start(Setup {
            prm: Prm::Custom,
            issuer_path: "/tenant1".into(),
            metadata,
            ..Setup::default()
        });
        let oauth = provider(&fixture, headless());
        let advertised = Some(format!("{}/custom/prm.json", fixture.base()));
        oauth
            .on_unauthorized(&unauthorized(&fixture, advertised, None))
            .expect("authorized");
        let discovery: Vec<String> = fixture
            .paths()
            .into_iter()
            .filter(|p| p.contains(".well-known") || p.contains("custom"))
            .collect();
        let expected = [
            "GET /custom/prm.json",
            "GET /.well-known/oauth-authorization-server/tenant1",
            "GET /.well-known/openid-configuration/tenant1",
            "GET /tenant1/.well-known/openid-configuration",
        ];
        assert_eq!(discovery, expected[..=tried], "{metadata:?}");
        assert_eq!(fixture.count("GET", "/tenant1/authorize"), 1);
    }
}

#[test]
fn openid_configuration_for_an_issuer_without_path() {
    let fixture = start(Setup {
        prm_in_challenge: false,
        metadata: Metadata::OpenIdInsert,
        ..Setup::default()
    });
    let oauth = provider(&fixture, headless());
    oauth.authorize().expect("authorized");
    let discovery: Vec<String> = fixture
        .paths()
        .into_iter()
        .filter(|p| p.contains(".well-known"))
        .collect();
    assert_eq!(
        discovery,
        [
            "GET /.well-known/oauth-protected-resource/mcp",
            "GET /.well-known/oauth-authorization-server",
            "GET /.well-known/openid-configuration",
        ]
    );
}

#[test]
fn servers_of_2025_03_26_use_origin_metadata_or_default_endpoints() {
    for metadata in [Metadata::OAuth, Metadata::Absent] {
        let fixture = start(Setup {
            prm: Prm::Absent,
            metadata,
            issue_secret: true,
            auth_methods: vec!["client_secret_basic".into()],
            ..Setup::default()
        });
        let oauth = provider(&fixture, headless());
        use_server(&fixture, &oauth).unwrap_or_else(|e| panic!("{metadata:?}: {e}"));
        assert_eq!(
            fixture.count("GET", "/.well-known/oauth-authorization-server"),
            1
        );
        assert_eq!(fixture.count("POST", "/register"), 1, "{metadata:?}");
        assert_eq!(fixture.count("GET", "/authorize"), 1, "{metadata:?}");
        assert_eq!(
            fixture.token_requests()[0].auth_method,
            "client_secret_basic"
        );
    }
}

#[test]
fn a_foreign_resource_is_refused_before_any_authorization() {
    let fixture = start(Setup {
        prm_resource: Some("https://evil.example.com/mcp".into()),
        ..Setup::default()
    });
    let oauth = provider(&fixture, headless());
    let error = auth_error(connect(&fixture, &oauth));
    assert_eq!(error.step, AuthStep::Discovery);
    assert!(
        error.message.contains("evil.example.com"),
        "{}",
        error.message
    );
    assert_eq!(fixture.count("POST", "/register"), 0);
    assert_eq!(fixture.count("GET", "/authorize"), 0);
}

#[test]
fn no_pkce_capability_and_plain_http_endpoints_are_refused() {
    let fixture = start(Setup {
        pkce_listed: false,
        ..Setup::default()
    });
    let error = auth_error(provider(&fixture, headless()).authorize());
    assert_eq!(error.step, AuthStep::Authorization);
    assert!(
        error.message.contains("code_challenge_methods_supported"),
        "{}",
        error.message
    );
    assert_eq!(fixture.count("GET", "/authorize"), 0);

    let fixture = start(Setup {
        authorization_endpoint: Some("http://auth.example.com/authorize".into()),
        ..Setup::default()
    });
    let error = auth_error(provider(&fixture, headless()).authorize());
    assert_eq!(error.step, AuthStep::Authorization);
    assert!(error.message.contains("https"), "{}", error.message);
}

#[test]
fn pre_registered_credentials_come_first() {
    let fixture = start(Setup {
        registration: false,
        cimd: true,
        auth_methods: vec!["client_secret_basic".into()],
        ..Setup::default()
    });
    fixture.preregister("pre-id", Some("pre-SECRET"), "client_secret_basic");
    let config = headless()
        .client_id("pre-id")
        .client_secret("pre-SECRET")
        .client_metadata_url(CIMD);
    use_server(&fixture, &provider(&fixture, config)).expect("authorized");
    assert_eq!(fixture.count("POST", "/register"), 0);
    assert_eq!(fixture.authorizations()[0]["client_id"], "pre-id");
    let token = &fixture.token_requests()[0];
    assert_eq!(
        (token.auth_method.as_str(), token.client_id.as_str()),
        ("client_secret_basic", "pre-id")
    );
}

#[test]
fn a_client_id_metadata_document_replaces_registration_when_supported() {
    let fixture = start(Setup {
        cimd: true,
        ..Setup::default()
    });
    use_server(
        &fixture,
        &provider(&fixture, headless().client_metadata_url(CIMD)),
    )
    .expect("authorized");
    assert_eq!(fixture.count("POST", "/register"), 0);
    assert_eq!(fixture.authorizations()[0]["client_id"], CIMD);

    // Without the server's support, the same configuration registers.
    let fixture = start(Setup::default());
    use_server(
        &fixture,
        &provider(&fixture, headless().client_metadata_url(CIMD)),
    )
    .expect("authorized");
    assert_eq!(fixture.count("POST", "/register"), 1);
    assert!(OAuth::new(
        fixture.mcp_url(),
        headless().client_metadata_url("http://client.example/m.json")
    )
    .is_err());
}

#[test]
fn dynamic_registration_describes_a_native_client() {
    for (offline, grant_types) in [
        (true, vec!["authorization_code", "refresh_token"]),
        (false, vec!["authorization_code"]),
    ] {
        let fixture = start(Setup {
            grant_types: if offline {
                vec!["authorization_code".into(), "refresh_token".into()]
            } else {
                vec!["authorization_code".into()]
            },
            ..Setup::default()
        });
        provider(&fixture, headless().client_name("fixture-test"))
            .authorize()
            .expect("authorized");
        let clients = fixture.clients();
        let body = &clients.values().next().expect("one client").metadata;
        assert_eq!(body["application_type"], "native");
        assert_eq!(body["client_name"], "fixture-test");
        assert_eq!(
            body["redirect_uris"],
            serde_json::json!(["http://127.0.0.1/callback"])
        );
        assert_eq!(body["grant_types"], serde_json::json!(grant_types));
        assert_eq!(body["token_endpoint_auth_method"], "none");
    }
}

#[test]
fn registrations_and_tokens_are_reused_from_the_store() {
    let fixture = start(Setup::default());
    let store: Arc<dyn TokenStore> = Arc::new(MemoryStore::new());
    let first = provider(&fixture, headless().token_store(Arc::clone(&store)));
    use_server(&fixture, &first).expect("authorized");
    let second = provider(&fixture, headless().token_store(Arc::clone(&store)));
    assert!(second.has_token().unwrap());
    use_server(&fixture, &second).expect("the stored token works");
    assert_eq!(fixture.count("GET", "/authorize"), 1);
    fixture.revoke_everything();
    use_server(&fixture, &second).expect("authorized again");
    assert_eq!(
        fixture.count("POST", "/register"),
        1,
        "the registration is reused"
    );
    assert_eq!(fixture.count("GET", "/authorize"), 2);
    second.logout().unwrap();
    assert!(!second.has_token().unwrap());
    assert!(store.load(second.resource(), None).unwrap().is_none());
}

#[test]
fn each_token_endpoint_authentication_method_as_advertised() {
    for method in ["client_secret_basic", "client_secret_post", "none"] {
        let fixture = start(Setup {
            auth_methods: vec![method.into()],
            registered_method: Some(method.into()),
            issue_secret: method != "none",
            ..Setup::default()
        });
        use_server(&fixture, &provider(&fixture, headless()))
            .unwrap_or_else(|e| panic!("{method}: {e}"));
        let token = &fixture.token_requests()[0];
        assert_eq!(token.auth_method, method);
        assert_eq!(
            token.form.contains_key("client_secret"),
            method == "client_secret_post"
        );
        assert_eq!(token.form.get("resource"), Some(&fixture.mcp_url()));
    }
}

#[test]
fn tokens_are_refreshed_before_they_expire() {
    let fixture = start(Setup {
        expires_in: 30,
        ..Setup::default()
    });
    let oauth = provider(&fixture, headless().refresh_margin(Duration::from_secs(60)));
    oauth.authorize().expect("authorized");
    let first = bearer(&oauth, &fixture).expect("a token");
    let grants: Vec<String> = fixture
        .token_requests()
        .into_iter()
        .map(|t| t.grant_type)
        .collect();
    assert_eq!(
        grants,
        ["authorization_code", "refresh_token"],
        "the token expires within the margin"
    );
    assert_eq!(
        fixture.token_requests()[1].form["resource"],
        fixture.mcp_url()
    );
    let second = bearer(&oauth, &fixture).expect("a token");
    assert_ne!(first, second);
    assert_eq!(fixture.count("GET", "/authorize"), 1);
}

#[test]
fn a_401_refreshes_and_a_refused_refresh_reauthorizes() {
    let fixture = start(Setup::default());
    let oauth = provider(&fixture, headless());
    use_server(&fixture, &oauth).expect("authorized");
    fixture.revoke_access_tokens();
    use_server(&fixture, &oauth).expect("refreshed");
    let grants: Vec<String> = fixture
        .token_requests()
        .into_iter()
        .map(|t| t.grant_type)
        .collect();
    assert_eq!(grants, ["authorization_code", "refresh_token"]);
    assert_eq!(fixture.count("GET", "/authorize"), 1);
    fixture.revoke_everything();
    use_server(&fixture, &oauth).expect("authorized again");
    assert_eq!(fixture.count("GET", "/authorize"), 2);
}

#[test]
fn credentials_are_bound_to_the_issuer_and_registered_anew_when_it_changes() {
    let fixture = start(Setup {
        issuer_path: "/a".into(),
        ..Setup::default()
    });
    let store = Arc::new(MemoryStore::new());
    let oauth = provider(&fixture, headless().token_store(store.clone()));
    use_server(&fixture, &oauth).expect("authorized at /a");
    fixture.update(|s| s.issuer_path = "/b".into());
    fixture.revoke_everything();
    use_server(&fixture, &oauth).expect("authorized at /b");
    assert_eq!(fixture.count("POST", "/a/register"), 1);
    assert_eq!(fixture.count("POST", "/b/register"), 1);
    let issuer_a = format!("{}/a", fixture.base());
    let kept = store
        .load(oauth.resource(), Some(&issuer_a))
        .unwrap()
        .expect("the /a entry is kept");
    assert_eq!(kept.issuer, issuer_a);
    let last = store
        .load(oauth.resource(), None)
        .unwrap()
        .expect("an entry");
    assert_eq!(last.issuer, format!("{}/b", fixture.base()));
}

#[test]
fn scopes_come_from_the_challenge_then_the_resource_metadata() {
    let fixture = start(Setup {
        challenge_scope: Some("mcp:basic".into()),
        prm_scopes: Some(vec!["mcp:basic".into(), "mcp:read".into()]),
        as_scopes: Some(vec!["mcp:basic".into(), "offline_access".into()]),
        ..Setup::default()
    });
    use_server(&fixture, &provider(&fixture, headless())).expect("authorized");
    assert_eq!(
        fixture.authorizations()[0]["scope"],
        "mcp:basic offline_access"
    );

    let fixture = start(Setup {
        prm_scopes: Some(vec!["mcp:basic".into(), "mcp:read".into()]),
        as_scopes: Some(vec!["mcp:basic".into()]),
        ..Setup::default()
    });
    use_server(&fixture, &provider(&fixture, headless())).expect("authorized");
    assert_eq!(fixture.authorizations()[0]["scope"], "mcp:basic mcp:read");
}

#[test]
fn a_403_insufficient_scope_steps_up_with_the_union_of_scopes() {
    let fixture = start(Setup {
        challenge_scope: Some("mcp:basic".into()),
        call_scope: Some("mcp:basic mcp:write".into()),
        ..Setup::default()
    });
    use_server(&fixture, &provider(&fixture, headless())).expect("stepped up");
    let scopes: Vec<String> = fixture
        .authorizations()
        .iter()
        .map(|a| a["scope"].clone())
        .collect();
    assert_eq!(scopes, ["mcp:basic", "mcp:basic mcp:write"]);
}

#[test]
fn step_up_gives_up_after_the_configured_attempts() {
    for attempts in [3, 1] {
        // The fixture never grants `mcp:never`, so every step-up falls short.
        let fixture = start(Setup {
            call_scope: Some("mcp:admin mcp:never".into()),
            ..Setup::default()
        });
        let oauth = provider(&fixture, headless().max_authorization_attempts(attempts));
        let client = connect(&fixture, &oauth).expect("connected");
        let error = auth_error(client.call_tool("echo", serde_json::json!({})));
        assert_eq!(error.step, AuthStep::Authorization);
        assert_eq!(error.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(error.status, Some(403));
        // One authorization at connect, then `attempts` step-ups for the call.
        assert_eq!(
            fixture.count("GET", "/authorize"),
            1 + attempts as usize,
            "limit {attempts}"
        );
        client.close();
    }
}

#[test]
fn concurrent_401s_run_one_authorization() {
    let fixture = start(Setup::default());
    let oauth = provider(&fixture, headless());
    let error = unauthorized(
        &fixture,
        Some(format!(
            "{}/.well-known/oauth-protected-resource/mcp",
            fixture.base()
        )),
        None,
    );
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                // Each thread sent the empty credentials, then got a 401.
                let _ = oauth.headers(&fixture.mcp_url()).unwrap();
                assert!(oauth.on_unauthorized(&error).unwrap());
            });
        }
    });
    assert_eq!(
        fixture.count("GET", "/authorize"),
        1,
        "{:?}",
        fixture.paths()
    );
}

#[test]
fn tokens_never_go_to_another_origin() {
    let fixture = start(Setup::default());
    let oauth = provider(&fixture, headless());
    oauth.authorize().expect("authorized");
    assert!(bearer(&oauth, &fixture).is_some());
    assert!(oauth.headers("http://127.0.0.2:1/mcp").unwrap().is_empty());
}

#[test]
fn the_loopback_handler_takes_the_browser_redirect() {
    let fixture = start(Setup::default());
    // The "browser" visits the authorization URL and follows the redirect to the listener,
    // after a stray request that must be ignored.
    let browser = |url: &str| -> std::io::Result<()> {
        let url = url.to_owned();
        std::thread::spawn(move || {
            let query = params(url.split_once('?').map(|(_, q)| q).unwrap_or_default());
            let redirect = &query["redirect_uri"];
            let stray = ureq::get(&format!("{redirect}?code=forged&state=wrong")).call();
            assert!(stray.is_err(), "a wrong state gets an error page");
            let page = ureq::get(&url)
                .call()
                .expect("the browser lands on the page")
                .into_body()
                .read_to_string()
                .unwrap();
            assert!(page.contains("Authorization complete"), "{page}");
        });
        Ok(())
    };
    let handler = LoopbackHandler::new(browser).timeout(Duration::from_secs(10));
    let oauth = provider(&fixture, OAuthConfig::new(handler));
    let started = Instant::now();
    use_server(&fixture, &oauth).expect("authorized through the browser");
    assert!(started.elapsed() < Duration::from_secs(10));
    let redirect_uri = &fixture.authorizations()[0]["redirect_uri"];
    assert!(
        redirect_uri.starts_with("http://127.0.0.1:") && redirect_uri.ends_with("/callback"),
        "{redirect_uri}"
    );
    assert_eq!(
        &fixture.token_requests()[0].form["redirect_uri"],
        redirect_uri
    );
}

#[test]
fn the_loopback_handler_gives_up_at_its_deadline() {
    let fixture = start(Setup::default());
    let handler = LoopbackHandler::new(|_: &str| Ok(())).timeout(Duration::from_millis(300));
    let started = Instant::now();
    let error = auth_error(provider(&fixture, OAuthConfig::new(handler)).authorize());
    assert_eq!(error.step, AuthStep::Authorization);
    assert!(started.elapsed() < Duration::from_secs(5));
    let failing = LoopbackHandler::new(|_: &str| Err(std::io::Error::other("no browser")));
    let error = auth_error(provider(&fixture, OAuthConfig::new(failing)).authorize());
    assert!(error.message.contains("no browser"), "{}", error.message);
}

#[test]
fn the_headless_handler_needs_a_redirect() {
    let fixture = start(Setup {
        authorization_endpoint: Some(format!("{}/nowhere", "http://127.0.0.1:1")),
        ..Setup::default()
    });
    let error = auth_error(provider(&fixture, headless()).authorize());
    assert_eq!(error.step, AuthStep::Authorization);
    // A page instead of a redirect.
    let fixture = start(Setup::default());
    let endpoint = format!("{}/mcp", fixture.base());
    fixture.update(|s| s.authorization_endpoint = Some(endpoint));
    let error = auth_error(provider(&fixture, headless()).authorize());
    assert!(
        error.message.contains("did not redirect"),
        "{}",
        error.message
    );
}

#[test]
fn client_credentials_with_a_secret() {
    let fixture = start(Setup {
        auth_methods: vec!["client_secret_basic".into()],
        grant_types: vec!["client_credentials".into()],
        ..Setup::default()
    });
    fixture.preregister("machine", Some("m-SECRET"), "client_secret_basic");
    let config = OAuthConfig::client_credentials("machine")
        .client_secret("m-SECRET")
        .scopes(["jobs"]);
    use_server(&fixture, &provider(&fixture, config)).expect("authorized");
    let token = &fixture.token_requests()[0];
    assert_eq!(
        (token.grant_type.as_str(), token.auth_method.as_str()),
        ("client_credentials", "client_secret_basic")
    );
    assert_eq!(token.form["scope"], "jobs");
    assert_eq!(token.form["resource"], fixture.mcp_url());
    assert_eq!(fixture.count("GET", "/authorize"), 0);
}

#[cfg(feature = "oauth-jwt")]
#[test]
fn client_credentials_with_a_private_key_jwt() {
    use p256::pkcs8::{EncodePrivateKey, LineEnding};
    let fixture = start(Setup {
        auth_methods: vec!["private_key_jwt".into()],
        grant_types: vec!["client_credentials".into()],
        ..Setup::default()
    });
    fixture.preregister("machine", None, "private_key_jwt");
    let key = p256::ecdsa::SigningKey::from_bytes(&[9u8; 32].into()).unwrap();
    let pem = key.to_pkcs8_pem(LineEnding::LF).unwrap();
    let config = OAuthConfig::client_credentials("machine").private_key_pem(pem.as_str());
    use_server(&fixture, &provider(&fixture, config)).expect("authorized");
    let token = &fixture.token_requests()[0];
    assert_eq!(
        token.form["client_assertion_type"],
        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    );
    let claims = token.form["client_assertion"]
        .split('.')
        .nth(1)
        .unwrap()
        .to_owned();
    let claims: serde_json::Value =
        serde_json::from_slice(&auth_server::decode_base64(&claims)).unwrap();
    assert_eq!(
        (claims["iss"].as_str(), claims["sub"].as_str()),
        (Some("machine"), Some("machine"))
    );
    assert_eq!(claims["aud"], fixture.issuer());
}

#[test]
fn secrets_never_reach_the_log_or_debug_output() {
    let fixture = start(Setup {
        expires_in: 10,
        issue_secret: true,
        auth_methods: vec!["client_secret_post".into()],
        ..Setup::default()
    });
    let oauth = provider(
        &fixture,
        headless().client_id("pre").client_secret("cfg-SECRET"),
    );
    fixture.preregister("pre", Some("cfg-SECRET"), "client_secret_post");
    use_server(&fixture, &oauth).expect("authorized");
    let verifier = fixture.token_requests()[0].form["code_verifier"].clone();
    let state = fixture.authorizations()[0]["state"].clone();
    // umcp's own lines; ureq's trace dumps raw bytes and is not meant for production.
    let lines = umcp_lines();
    assert!(
        lines.iter().any(|l| l.contains("oauth >")),
        "trace lines were captured"
    );
    for line in &lines {
        assert!(!line.contains("SECRET"), "a secret in the log: {line}");
        assert!(
            !line.contains(&verifier) && !line.contains(&state),
            "a flow secret in the log: {line}"
        );
    }
    let shown = format!("{oauth:?}");
    assert!(!shown.contains("SECRET"), "{shown}");
}

#[test]
fn the_file_store_writes_atomically_with_owner_only_permissions() {
    let dir = std::env::temp_dir().join(format!("umcp-store-{}-{}", std::process::id(), line!()));
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("nested").join("tokens.json");
    let store = FileStore::new(&path);
    assert!(
        store.load("s", None).unwrap().is_none(),
        "a missing file is an empty store"
    );
    let mut credentials = StoredCredentials::new("https://as.example");
    let mut token = TokenSet::default();
    token.access_token = "at-1".into();
    credentials.token = Some(token);
    store.save("https://mcp.example/mcp", &credentials).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().unwrap()), 0o700);
        // A file made readable by others is replaced by a private one on the next save.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        store.save("https://mcp.example/mcp", &credentials).unwrap();
        assert_eq!(mode(&path), 0o600);
    }
    let entries: Vec<String> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(entries, ["tokens.json"], "no temporary file is left behind");
    let reopened = FileStore::new(&path);
    let loaded = reopened
        .load("https://mcp.example/mcp", Some("https://as.example"))
        .unwrap()
        .unwrap();
    assert_eq!(loaded, credentials);
    reopened.remove("https://mcp.example/mcp", None).unwrap();
    assert!(store
        .load("https://mcp.example/mcp", None)
        .unwrap()
        .is_none());
    std::fs::write(&path, "{ not json").unwrap();
    assert!(
        matches!(store.load("s", None), Err(Error::Io(_))),
        "a corrupt file is an error, not an empty store"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_file_store_carries_authorization_across_providers() {
    let fixture = start(Setup::default());
    let dir = std::env::temp_dir().join(format!("umcp-store-{}-{}", std::process::id(), line!()));
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("tokens.json");
    let first = provider(
        &fixture,
        headless().token_store(Arc::new(FileStore::new(&path))),
    );
    use_server(&fixture, &first).expect("authorized");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(&fixture.mcp_url()) && text.contains("access_token"));
    let second = provider(
        &fixture,
        headless().token_store(Arc::new(FileStore::new(&path))),
    );
    use_server(&fixture, &second).expect("the saved token works");
    assert_eq!(fixture.count("GET", "/authorize"), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A provider that takes a while to come up with credentials, as a user in a browser does.
struct SlowProvider {
    token: Mutex<Option<String>>,
    fixture_token: String,
    delay: Duration,
}

impl CredentialProvider for SlowProvider {
    fn headers(&self, _url: &str) -> umcp::Result<Vec<(String, String)>> {
        let token = self.token.lock().unwrap().clone();
        Ok(token
            .map(|t| vec![("Authorization".into(), format!("Bearer {t}"))])
            .unwrap_or_default())
    }

    fn on_unauthorized(&self, _error: &HttpError) -> umcp::Result<bool> {
        std::thread::sleep(self.delay);
        *self.token.lock().unwrap() = Some(self.fixture_token.clone());
        Ok(true)
    }
}

#[test]
fn a_request_repeated_after_slow_credentials_gets_its_time_budget_anew() {
    // The server takes 300 ms per answer: a repeated request without a new budget would
    // time out at once.
    let fixture = start(Setup {
        mcp_delay: Duration::from_millis(300),
        ..Setup::default()
    });
    // Obtain a valid token from the fixture first, then forget it in a slow provider.
    let oauth = provider(&fixture, headless());
    oauth.authorize().unwrap();
    let token = bearer(&oauth, &fixture)
        .unwrap()
        .trim_start_matches("Bearer ")
        .to_owned();
    let slow = Arc::new(SlowProvider {
        token: Mutex::new(None),
        fixture_token: token,
        delay: Duration::from_millis(1500),
    });
    let config = HttpConfig::new(fixture.mcp_url())
        .credentials(slow)
        .get_stream(false);
    let options = Options::default()
        .with_request_timeout(Duration::from_secs(1))
        .with_init_timeout(Duration::from_secs(1));
    let client =
        Client::connect_with(config, options).expect("initialize succeeds after the slow step");
    assert_eq!(client.server_info().name, "auth-fixture");
    client.close();
}
