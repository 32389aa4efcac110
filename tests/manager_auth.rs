//! The manager with OAuth-protected HTTP servers, against a loopback MCP server that is its
//! own authorization server: needing authorization, authorizing, sharing a token store,
//! refreshing without the user, the manager's own user step, step-ups, and failures.
#![cfg(feature = "oauth")]

use umcp_test_support::auth_server;

#[path = "common/status.rs"]
mod status;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use status::wait_for;
use umcp::auth::{AuthorizationHandler, FileStore, HeadlessHandler, MemoryStore, TokenStore};
use umcp::{
    AuthStep, ConfigFile, Error, Manager, ManagerOptions, OAuthSettings, ServerConfig, ServerStatus,
};

use auth_server::{AuthServer, Setup};

/// Generous bound for anything that should be quick: proves "does not hang", not speed.
const BOUND: Duration = Duration::from_secs(30);

fn headless() -> Arc<dyn AuthorizationHandler> {
    Arc::new(HeadlessHandler::new().timeout(Duration::from_secs(5)))
}

fn options(store: Arc<dyn TokenStore>) -> ManagerOptions {
    ManagerOptions::default()
        .without_cache()
        .with_reconnect_attempts(1)
        .with_reconnect_delay(Duration::from_millis(50), Duration::from_millis(200))
        .with_startup_timeout(Duration::from_secs(10))
        .with_token_store(store)
}

fn secure(name: &str, fixture: &AuthServer) -> ServerConfig {
    ServerConfig::http(name, fixture.mcp_url()).with_oauth(OAuthSettings::new())
}

/// A fresh token file under the system's temporary directory.
fn token_file() -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("umcp-manager-auth-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir.join("tokens.json")
}

fn needs_authorization(status: &ServerStatus) -> bool {
    matches!(status, ServerStatus::NeedsAuthorization { .. })
}

fn call_echo(manager: &Manager, tool: &str) -> String {
    manager
        .call_tool(tool, json!({}))
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
        .text()
}

#[test]
fn smoke_needs_authorization_then_authorize_and_share_the_store() {
    let fixture = AuthServer::start(Setup::default());
    let path = token_file();
    let store: Arc<dyn TokenStore> = Arc::new(FileStore::new(&path));
    let manager = Manager::start(vec![secure("secure", &fixture)], options(store.clone()));
    let events = manager.status_events();

    // No token and nobody to ask: the server's own 401 is reported, with its hints, and
    // nothing is registered on the way.
    let status = wait_for(&events, "secure", needs_authorization);
    let ServerStatus::NeedsAuthorization { hints } = status else {
        unreachable!()
    };
    assert_eq!(hints.status, 401);
    let challenge = hints.www_authenticate.expect("the challenge");
    assert!(challenge
        .resource_metadata
        .is_some_and(|m| m.ends_with("/.well-known/oauth-protected-resource/mcp")));
    assert_eq!(fixture.count("POST", "/register"), 0);
    assert_eq!(fixture.count("GET", "/authorize"), 0);
    assert!(manager.known_tools().is_empty());
    let err = manager.client("secure").unwrap_err();
    assert!(err.needs_authorization(), "{err}");

    // Authorizing reconnects the server; its tools are there and callable.
    manager
        .authorize("secure", headless())
        .expect("authorized and connected");
    assert!(manager.status("secure").unwrap().is_connected());
    let names: Vec<String> = manager.known_tools().into_iter().map(|e| e.name).collect();
    assert_eq!(names, ["secure__echo"]);
    assert_eq!(call_echo(&manager, "secure__echo"), "ok");
    assert_eq!(fixture.count("GET", "/authorize"), 1);
    manager.close();

    // The store is keyed by server name and URL: a later manager connects the same server
    // without any user step, and another server at the same URL still needs its own.
    let text = std::fs::read_to_string(&path).expect("the token file");
    assert!(
        text.contains(&format!("secure {}", fixture.mcp_url())),
        "{text}"
    );
    let later = Manager::start(
        vec![secure("secure", &fixture), secure("other", &fixture)],
        options(Arc::new(FileStore::new(&path))),
    );
    assert!(later.wait_ready(BOUND));
    assert!(later.status("secure").unwrap().is_connected());
    assert!(needs_authorization(&later.status("other").unwrap()));
    assert_eq!(call_echo(&later, "secure__echo"), "ok");
    assert_eq!(
        fixture.count("GET", "/authorize"),
        1,
        "no second authorization"
    );
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[test]
fn revoked_access_tokens_are_refreshed_without_the_user() {
    let fixture = AuthServer::start(Setup::default());
    let store: Arc<dyn TokenStore> = Arc::new(MemoryStore::new());
    let first = Manager::start(vec![secure("s", &fixture)], options(store.clone()));
    assert!(first.wait_ready(BOUND));
    first.authorize("s", headless()).expect("authorized");
    first.close();

    // Nobody to ask this time: the rejected access token is refreshed.
    fixture.revoke_access_tokens();
    let second = Manager::start(vec![secure("s", &fixture)], options(store));
    assert!(second.wait_ready(BOUND));
    assert!(second.status("s").unwrap().is_connected());
    assert_eq!(call_echo(&second, "s__echo"), "ok");
    let grants: Vec<String> = fixture
        .token_requests()
        .into_iter()
        .map(|r| r.grant_type)
        .collect();
    assert_eq!(grants, ["authorization_code", "refresh_token"]);
    assert_eq!(fixture.count("GET", "/authorize"), 1);
}

#[test]
fn with_a_handler_the_manager_asks_the_user_itself() {
    let fixture = AuthServer::start(Setup::default());
    let manager = Manager::start(
        vec![secure("s", &fixture)],
        options(Arc::new(MemoryStore::new())).with_authorization_handler(headless()),
    );
    let events = manager.status_events();
    let status = wait_for(&events, "s", |s| s.is_settled());
    assert!(status.is_connected(), "{status}");
    assert_eq!(call_echo(&manager, "s__echo"), "ok");
    assert_eq!(fixture.count("GET", "/authorize"), 1);

    // When everything is revoked, a restart asks the user again, with no detour through
    // `NeedsAuthorization`.
    fixture.revoke_everything();
    manager.restart("s").unwrap();
    let status = wait_for(&events, "s", |s| s.is_settled());
    assert!(status.is_connected(), "{status}");
    assert_eq!(fixture.count("GET", "/authorize"), 2);
}

#[test]
fn a_step_up_during_the_session_reaches_the_handler() {
    let fixture = AuthServer::start(Setup {
        call_scope: Some("tools:call".into()),
        ..Setup::default()
    });
    // Without a handler the call is refused with the server's 403.
    let manager = Manager::start(
        vec![secure("s", &fixture)],
        options(Arc::new(MemoryStore::new())),
    );
    assert!(manager.wait_ready(BOUND));
    manager.authorize("s", headless()).expect("authorized");
    let err = manager.call_tool("s__echo", json!({})).unwrap_err();
    assert!(
        matches!(&err, Error::Forbidden(e) if e.status == 403),
        "{err}"
    );
    manager.close();

    // With one, the connected server's provider steps up in the call.
    let manager = Manager::start(
        vec![secure("s", &fixture)],
        options(Arc::new(MemoryStore::new())).with_authorization_handler(headless()),
    );
    assert!(manager.wait_ready(BOUND));
    assert_eq!(call_echo(&manager, "s__echo"), "ok");
    let last = fixture.authorizations().pop().expect("an authorization");
    assert!(
        last["scope"].split(' ').any(|s| s == "tools:call"),
        "{last:?}"
    );
}

#[test]
fn failed_authorizations_end_in_failed_with_the_step_and_are_not_retried() {
    let fixture = AuthServer::start(Setup::default());
    // The authorization endpoint shows a page instead of redirecting: it needs a person.
    let page = format!("{}/mcp", fixture.base());
    fixture.update(|s| s.authorization_endpoint = Some(page));
    let manager = Manager::start(
        vec![secure("s", &fixture)],
        options(Arc::new(MemoryStore::new())).with_authorization_handler(headless()),
    );
    let events = manager.status_events();
    let status = wait_for(&events, "s", |s| s.is_settled());
    match &status {
        ServerStatus::Failed {
            error: Error::Auth(e),
            next_attempt: None,
            ..
        } => assert_eq!(e.step, AuthStep::Authorization),
        other => panic!("{other}"),
    }
    assert!(
        status
            .to_string()
            .contains("authorization failed at authorization"),
        "{status}"
    );

    // `authorize` reports the flow's error and leaves the server as it was.
    let err = manager.authorize("s", headless()).unwrap_err();
    assert!(
        matches!(&err, Error::Auth(e) if e.step == AuthStep::Authorization),
        "{err}"
    );
    assert!(matches!(
        manager.status("s"),
        Some(ServerStatus::Failed { .. })
    ));
    let err = manager.authorize("nobody", headless()).unwrap_err();
    assert_eq!(err.to_string(), "config: no server named `nobody`");
}

#[test]
fn authorize_needs_oauth_settings() {
    let fixture = AuthServer::start(Setup::default());
    let manager = Manager::start(
        vec![ServerConfig::http("plain", fixture.mcp_url())],
        options(Arc::new(MemoryStore::new())),
    );
    let events = manager.status_events();
    wait_for(&events, "plain", needs_authorization);
    let err = manager.authorize("plain", headless()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "config: server `plain` has no OAuth settings"
    );
}

#[test]
fn a_config_entry_with_a_pre_registered_client_and_scopes() {
    let fixture = AuthServer::start(Setup {
        auth_methods: vec!["client_secret_basic".into()],
        ..Setup::default()
    });
    fixture.preregister("my-app", Some("app-SECRET"), "client_secret_basic");
    let text = json!({
        "mcpServers": {
            "secure": {
                "url": fixture.mcp_url(),
                "oauth": {
                    "clientId": "my-app",
                    "clientSecret": "${APP_SECRET}",
                    "scopes": "tools:read tools:call",
                },
            },
        }
    })
    .to_string();
    let vars = |name: &str| (name == "APP_SECRET").then(|| "app-SECRET".to_owned());
    let file = ConfigFile::parse_with(&text, &vars).unwrap();
    assert!(file.errors.is_empty(), "{:?}", file.errors);
    let manager = Manager::start(
        file.servers,
        options(Arc::new(MemoryStore::new())).with_authorization_handler(headless()),
    );
    assert!(manager.wait_ready(BOUND));
    assert_eq!(call_echo(&manager, "secure__echo"), "ok");
    assert_eq!(fixture.count("POST", "/register"), 0);
    let request = &fixture.token_requests()[0];
    assert_eq!(
        (request.client_id.as_str(), request.auth_method.as_str()),
        ("my-app", "client_secret_basic")
    );
    let scope = &fixture.authorizations()[0]["scope"];
    assert!(scope.starts_with("tools:read tools:call"), "{scope}");
}

#[test]
fn a_config_entry_with_workload_identity_needs_no_user() {
    let fixture = AuthServer::start(Setup {
        registration: false,
        ..Setup::default()
    });
    fixture.preregister("build-agent", None, "none");
    let path = token_file();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let jwt = path.with_file_name("platform.jwt");
    std::fs::write(&jwt, "platform-issued.jwt\n").unwrap();
    let issuer = fixture.issuer();
    let text = json!({
        "mcpServers": {
            "workload": {
                "url": fixture.mcp_url(),
                "oauth": {
                    "clientId": "build-agent",
                    "workloadIdentity": {
                        "issuer": issuer,
                        "tokenFile": "${TOKEN_DIR}/platform.jwt",
                    },
                },
            },
            // Bound to another authorization server than the one this server names.
            "elsewhere": {
                "url": fixture.mcp_url(),
                "oauth": {
                    "clientId": "build-agent",
                    "workloadIdentity": {
                        "issuer": "https://auth.example.com",
                        "tokenFile": "${TOKEN_DIR}/platform.jwt",
                    },
                },
            },
            "no-client": {
                "url": fixture.mcp_url(),
                "oauth": { "workloadIdentity": { "issuer": issuer, "tokenEnv": "T" } },
            },
            "both": {
                "url": fixture.mcp_url(),
                "oauth": {
                    "clientId": "x",
                    "workloadIdentity": { "issuer": issuer, "tokenEnv": "T", "tokenFile": "/t" },
                },
            },
            "no-issuer": {
                "url": fixture.mcp_url(),
                "oauth": { "clientId": "x", "workloadIdentity": { "tokenEnv": "T" } },
            },
            "not-a-url": {
                "url": fixture.mcp_url(),
                "oauth": {
                    "clientId": "x",
                    "workloadIdentity": { "issuer": "auth.example.com", "tokenEnv": "T" },
                },
            },
        }
    })
    .to_string();
    let dir = path.parent().unwrap().to_string_lossy().into_owned();
    let vars = move |name: &str| (name == "TOKEN_DIR").then(|| dir.clone());
    let file = ConfigFile::parse_with(&text, &vars).unwrap();
    let mut errors: Vec<String> = file.errors.iter().map(|e| e.to_string()).collect();
    errors.sort();
    assert_eq!(errors.len(), 4, "{errors:?}");
    assert!(errors[0].contains("exactly one of"), "{errors:?}");
    assert!(errors[1].contains("needs `clientId`"), "{errors:?}");
    assert!(errors[2].contains("needs `issuer`"), "{errors:?}");
    assert!(
        errors[3].contains("workloadIdentity.issuer") && errors[3].contains("http(s) URL"),
        "{errors:?}"
    );
    let settings = file.servers[1].oauth().unwrap();
    assert_eq!(file.servers[1].name, "workload");
    assert_eq!(
        settings.workload_token_file.as_deref(),
        Some(jwt.to_string_lossy().as_ref())
    );
    assert_eq!(settings.workload_issuer.as_deref(), Some(issuer.as_str()));
    // No authorization handler at all: the workload needs none.
    let manager = Manager::start(file.servers, options(Arc::new(MemoryStore::new())));
    assert!(manager.wait_ready(BOUND));
    assert_eq!(call_echo(&manager, "workload__echo"), "ok");
    // The server bound elsewhere never gets the platform's token: its connect fails,
    // naming both authorization servers.
    let deadline = Instant::now() + BOUND;
    let elsewhere = loop {
        let status = manager.status("elsewhere").expect("a status");
        if status.error().is_some() || Instant::now() > deadline {
            break status;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let shown = elsewhere
        .error()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(
        shown.contains("https://auth.example.com") && shown.contains(&issuer),
        "{elsewhere}"
    );
    assert_eq!(
        fixture.token_requests().len(),
        1,
        "one token request, for `workload`"
    );
    let request = &fixture.token_requests()[0];
    assert_eq!(
        request.grant_type,
        "urn:ietf:params:oauth:grant-type:jwt-bearer"
    );
    assert_eq!(request.form["assertion"], "platform-issued.jwt");
    assert!(fixture.authorizations().is_empty());
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

/// A user's step that panics: shows the server the panic as a failed attempt, retried as
/// any other, instead of leaving it "connecting" for good with its supervisor gone.
#[test]
fn a_user_step_that_panics_fails_the_attempt_and_is_retried() {
    struct PanicsOnce {
        calls: AtomicUsize,
        then: Arc<dyn AuthorizationHandler>,
    }
    impl AuthorizationHandler for PanicsOnce {
        fn redirect_uri(&self) -> umcp::Result<String> {
            self.then.redirect_uri()
        }
        fn authorize(&self, authorization_url: &str) -> umcp::Result<String> {
            if self.calls.fetch_add(1, Ordering::SeqCst) == 0 {
                panic!("the browser went away");
            }
            self.then.authorize(authorization_url)
        }
    }
    let fixture = AuthServer::start(Setup::default());
    let handler = Arc::new(PanicsOnce {
        calls: AtomicUsize::new(0),
        then: headless(),
    });
    let manager = Manager::start(
        vec![secure("s", &fixture)],
        options(Arc::new(MemoryStore::new())).with_authorization_handler(handler),
    );
    let events = manager.status_events();
    let failed = wait_for(&events, "s", |s| s.is_settled());
    let error = failed.error().map(ToString::to_string).unwrap_or_default();
    assert!(error.contains("panicked"), "{failed}");
    wait_for(&events, "s", ServerStatus::is_connected);
    assert_eq!(call_echo(&manager, "s__echo"), "ok");
}

#[test]
fn a_device_prompt_signs_in_between_attempts_and_the_profile_keeps_its_own_tokens() {
    let fixture = AuthServer::start(Setup {
        device: true,
        ..Setup::default()
    });
    let shown = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&shown);
    let store: Arc<dyn TokenStore> = Arc::new(MemoryStore::new());
    let work = ServerConfig::http("work", fixture.mcp_url())
        .with_oauth(OAuthSettings::new().with_profile("work"));
    let manager = Manager::start(
        vec![work],
        options(Arc::clone(&store))
            .with_authorization_handler(headless())
            .with_device_authorization(move |server, device| {
                seen.lock()
                    .unwrap()
                    .push((server.to_owned(), device.user_code.clone()));
                Ok(())
            }),
    );
    assert!(manager.wait_ready(BOUND));
    assert_eq!(call_echo(&manager, "work__echo"), "ok");
    let shown = shown.lock().unwrap().clone();
    assert_eq!(shown.len(), 1, "asked once, between attempts: {shown:?}");
    assert_eq!(shown[0].0, "work");
    assert!(
        fixture.authorizations().is_empty(),
        "the device grant, no browser"
    );
    let keys: Vec<String> = store
        .entries()
        .unwrap()
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(keys, [format!("work {}#work", fixture.mcp_url())]);
}

#[test]
fn signing_out_revokes_forgets_and_restarts_the_server() {
    let fixture = AuthServer::start(Setup {
        revocation: true,
        ..Setup::default()
    });
    let store: Arc<dyn TokenStore> = Arc::new(MemoryStore::new());
    let signed_in = Manager::start(
        vec![secure("s", &fixture)],
        options(Arc::clone(&store)).with_authorization_handler(headless()),
    );
    assert!(signed_in.wait_ready(BOUND));
    signed_in.close();
    assert_eq!(store.entries().unwrap().len(), 1);

    // A later run without a user signs out: revoked at the server, forgotten, and restarted.
    let manager = Manager::start(vec![secure("s", &fixture)], options(Arc::clone(&store)));
    let events = manager.status_events();
    assert!(manager.wait_ready(BOUND));
    let revocation = manager.sign_out("s").unwrap();
    assert!(revocation.is_revoked(), "{revocation}");
    assert_eq!(fixture.revocations(), ["refresh_token", "access_token"]);
    assert!(store.entries().unwrap().is_empty());
    let status = wait_for(&events, "s", needs_authorization);
    assert!(needs_authorization(&status), "{status}");
    let unknown = manager.sign_out("nope");
    assert!(matches!(unknown, Err(Error::Config(_))), "{unknown:?}");
}

#[test]
fn signing_in_ahead_of_time_keeps_a_deadline_and_a_cancel_handle() {
    let fixture = AuthServer::start(Setup::default());
    let store: Arc<dyn TokenStore> = Arc::new(MemoryStore::new());
    let manager = Manager::start(vec![secure("s", &fixture)], options(Arc::clone(&store)));
    let events = manager.status_events();
    wait_for(&events, "s", needs_authorization);
    let cancel = umcp::CancelHandle::new();
    manager
        .sign_in("s", headless(), Duration::from_secs(20), &cancel)
        .expect("signed in and reconnected");
    assert!(manager.statuses()[0].1.is_connected());
    assert_eq!(call_echo(&manager, "s__echo"), "ok");
    assert_eq!(store.entries().unwrap().len(), 1);

    // A cancelled sign-in is refused before anything is asked.
    cancel.cancel();
    let before = fixture.count("GET", "/authorize");
    let cancelled = manager.sign_in("s", headless(), Duration::from_secs(20), &cancel);
    assert!(
        matches!(cancelled, Err(Error::Cancelled { .. })),
        "{cancelled:?}"
    );
    assert_eq!(fixture.count("GET", "/authorize"), before);
}
