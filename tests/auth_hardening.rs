//! OAuth under stress: tokens rotated by another process, a user who takes their time, a
//! redirect listener crowded by idle and trickling connections, `Duration::MAX` everywhere,
//! and metadata URLs or issuers that must not be trusted.
#![cfg(feature = "oauth")]

use umcp_test_support::auth_server;

#[path = "common/log_capture.rs"]
mod log_capture;

#[path = "common/oauth_client.rs"]
mod oauth_client;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use umcp::auth::{
    AuthorizationHandler, FileStore, HeadlessHandler, LoopbackHandler, MemoryStore, OAuthConfig,
    StoredCredentials, TokenSet, TokenStore, WorkloadIdentity,
};
use umcp::{AuthStep, Client, CredentialProvider, HttpConfig, Options, ProtocolMode};

use auth_server::{Prm, Setup};
use oauth_client::{auth_error, bearer, headless, provider, start, unauthorized, use_server};

#[test]
fn only_safe_resource_metadata_urls_are_followed() {
    let fixture = start(Setup::default());
    for advertised in [
        "http://metadata.attacker.example/prm",
        "ftp://localhost/prm",
        "file:///etc/passwd",
    ] {
        let oauth = provider(&fixture, headless());
        oauth
            .on_unauthorized(&unauthorized(&fixture, Some(advertised.into()), None))
            .unwrap_or_else(|e| panic!("{advertised} was not skipped: {e}"));
        assert!(bearer(&oauth, &fixture).is_some());
    }
    let fetched: Vec<String> = fixture
        .paths()
        .into_iter()
        .filter(|p| p.contains("protected-resource"))
        .collect();
    assert!(
        fetched
            .iter()
            .all(|p| p == "GET /.well-known/oauth-protected-resource/mcp"),
        "{fetched:?}"
    );
}

#[test]
fn the_2025_03_26_metadata_must_name_the_servers_origin_as_issuer() {
    let fixture = start(Setup {
        prm: Prm::Absent,
        metadata_issuer: Some("https://as.attacker.example".into()),
        ..Setup::default()
    });
    let error = auth_error(provider(&fixture, headless()).authorize());
    assert_eq!(error.step, AuthStep::Discovery);
    assert!(
        error.message.contains("as.attacker.example"),
        "{}",
        error.message
    );
    assert_eq!(fixture.count("GET", "/authorize"), 0);
    // With its own origin as issuer, the same server is fine.
    fixture.update(|s| s.metadata_issuer = None);
    provider(&fixture, headless())
        .authorize()
        .expect("authorized");
    // The metadata URL was built from the server's origin, not from an issuer the server
    // named: the two are compared as URLs. The issuer recorded for the `iss` check is the
    // metadata's, slash and all.
    let named = format!("{}/", fixture.base());
    fixture.update(|s| s.metadata_issuer = Some(named.clone()));
    provider(&fixture, OAuthConfig::new(WithIss(named)))
        .authorize()
        .expect("authorized");
}

#[test]
fn requests_wait_behind_a_user_step_only_until_their_deadline() {
    /// A user who takes their time: the redirect comes when the test says so.
    struct SlowUser {
        release: Mutex<std::sync::mpsc::Receiver<()>>,
        inner: HeadlessHandler,
    }
    impl AuthorizationHandler for SlowUser {
        fn redirect_uri(&self) -> umcp::Result<String> {
            AuthorizationHandler::redirect_uri(&self.inner)
        }
        fn authorize(&self, url: &str) -> umcp::Result<String> {
            let _ = self
                .release
                .lock()
                .unwrap()
                .recv_timeout(Duration::from_secs(30));
            AuthorizationHandler::authorize(&self.inner, url)
        }
    }
    let fixture = start(Setup::default());
    let (release, wait) = std::sync::mpsc::channel();
    let user = SlowUser {
        release: Mutex::new(wait),
        inner: HeadlessHandler::new().timeout(Duration::from_secs(5)),
    };
    let config = OAuthConfig::new(user).authorization_wait(Duration::from_millis(300));
    let oauth = provider(&fixture, config);
    std::thread::scope(|scope| {
        let interactive = scope.spawn(|| oauth.authorize());
        while fixture.count("GET", "/.well-known/oauth-protected-resource/mcp") == 0 {
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(100));
        // Another request meets a 401 meanwhile: it gives up at its wait, it is not held
        // until the user is done.
        let started = Instant::now();
        let error = auth_error(oauth.on_unauthorized(&unauthorized(&fixture, None, None)));
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        assert!(error.message.contains("still running"), "{}", error.message);
        // Sending headers never waits for the lock.
        oauth.headers(&fixture.mcp_url()).expect("headers");
        release.send(()).unwrap();
        interactive.join().unwrap().expect("the user finished");
    });
    assert!(bearer(&oauth, &fixture).is_some());
}

#[test]
fn duration_max_means_no_limit_for_every_oauth_timeout() {
    let fixture = start(Setup {
        expires_in: 10,
        ..Setup::default()
    });
    let config = OAuthConfig::new(HeadlessHandler::new().timeout(Duration::MAX))
        .timeout(Duration::MAX)
        .authorization_wait(Duration::MAX)
        .refresh_margin(Duration::MAX);
    let oauth = provider(&fixture, config);
    use_server(&fixture, &oauth).expect("authorized without overflowing");
}

/// Runs a loopback authorization whose "browser" first opens `idle` connections that send
/// nothing (preconnects) and one that trickles a request byte by byte, then follows the
/// redirect; returns how long the handler took and what it returned.
fn loopback_past_stragglers(timeout: Duration, idle: usize) -> (Duration, umcp::Result<String>) {
    use std::io::Write;
    use std::net::TcpStream;
    let handler = Arc::new(LoopbackHandler::new(|_: &str| Ok(())).timeout(timeout));
    let redirect = handler.redirect_uri().expect("a redirect URI");
    let address = redirect
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let browser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        let held: Vec<TcpStream> = (0..idle)
            .map(|_| TcpStream::connect(&address).unwrap())
            .collect();
        let mut trickler = TcpStream::connect(&address).unwrap();
        for byte in b"GET /callback?state=s1" {
            trickler.write_all(&[*byte]).unwrap();
            std::thread::sleep(Duration::from_millis(20));
        }
        let page = ureq::get(&format!("{redirect}?code=c1&state=s1"))
            .call()
            .map(|r| r.into_body().read_to_string().unwrap_or_default());
        drop((held, trickler));
        page
    });
    let started = Instant::now();
    let result = handler.authorize("https://as.example/authorize?state=s1");
    let elapsed = started.elapsed();
    let page = browser.join().unwrap().expect("the browser gets its page");
    assert!(page.contains("Authorization complete"), "{page}");
    (elapsed, result)
}

#[test]
fn the_loopback_listener_is_not_held_by_preconnects_or_tricklers() {
    // Served one at a time with 10 s per read, the idle connections alone held it 10 s each.
    let (elapsed, result) = loopback_past_stragglers(Duration::from_secs(60), 3);
    let target = result.expect("the redirect is taken");
    assert!(target.ends_with("/callback?code=c1&state=s1"), "{target}");
    assert!(elapsed < Duration::from_secs(9), "took {elapsed:?}");
    // More stragglers than the listener keeps: the oldest are dropped, the redirect served.
    let (_, result) = loopback_past_stragglers(Duration::from_secs(60), 40);
    result.expect("the redirect is taken past 40 idle connections");
}

#[test]
fn the_loopback_handler_takes_duration_max_as_no_limit() {
    let (_, result) = loopback_past_stragglers(Duration::MAX, 1);
    result.expect("no overflow, and the redirect is taken");
}

#[test]
fn a_refresh_never_clobbers_tokens_another_process_rotated() {
    let fixture = start(Setup::default());
    let dir = std::env::temp_dir().join(format!("umcp-store-{}-{}", std::process::id(), line!()));
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("tokens.json");
    let store = || headless().token_store(Arc::new(FileStore::new(&path)));
    let first = provider(&fixture, store());
    use_server(&fixture, &first).expect("authorized");
    // A second process loads the same tokens.
    let second = provider(&fixture, store());
    assert!(second.has_token().unwrap());
    let old = bearer(&second, &fixture).unwrap();
    // The first process refreshes: the old refresh token is spent, new tokens are saved.
    first
        .on_unauthorized(&unauthorized(&fixture, None, None))
        .expect("refreshed");
    let rotated = bearer(&first, &fixture).unwrap();
    assert_ne!(rotated, old);
    let saved = std::fs::read_to_string(&path).unwrap();
    // The second process meets a 401 with its old token: it takes the rotated tokens
    // from the store instead of spending (or erasing) anything.
    let before = fixture.token_requests().len();
    second
        .on_unauthorized(&unauthorized(&fixture, None, None))
        .expect("recovered");
    assert_eq!(bearer(&second, &fixture).unwrap(), rotated);
    assert_eq!(
        fixture.token_requests().len(),
        before,
        "no refresh was needed"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), saved);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_refused_refresh_rereads_the_store_before_deciding() {
    /// A store another process writes to: armed, the second load after arming finds that
    /// process's rotation (the first is the check before refreshing).
    #[derive(Default)]
    struct SharedStore {
        inner: MemoryStore,
        rotation: Mutex<Option<(String, StoredCredentials)>>,
        loads: std::sync::atomic::AtomicUsize,
    }
    impl TokenStore for SharedStore {
        fn load(
            &self,
            server: &str,
            issuer: Option<&str>,
        ) -> umcp::Result<Option<StoredCredentials>> {
            let n = self.loads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if n == 1 {
                if let Some((server, credentials)) = self.rotation.lock().unwrap().take() {
                    self.inner.save(&server, &credentials)?;
                }
            }
            self.inner.load(server, issuer)
        }
        fn save(&self, server: &str, credentials: &StoredCredentials) -> umcp::Result<()> {
            self.inner.save(server, credentials)
        }
        fn remove(&self, server: &str, issuer: Option<&str>) -> umcp::Result<()> {
            self.inner.remove(server, issuer)
        }
    }
    let fixture = start(Setup::default());
    let store = Arc::new(SharedStore::default());
    let oauth = provider(
        &fixture,
        headless().token_store(Arc::clone(&store) as Arc<dyn TokenStore>),
    );
    use_server(&fixture, &oauth).expect("authorized");
    let resource = oauth.resource().to_owned();
    let mut rotated = store.inner.load(&resource, None).unwrap().unwrap();
    let mut token = TokenSet::default();
    token.access_token = "at-from-the-other-process".into();
    token.refresh_token = Some("rt-from-the-other-process".into());
    rotated.token = Some(token.clone());
    // The other process spent our refresh token at the server and saves its tokens while
    // our refresh is being refused.
    fixture.revoke_everything();
    *store.rotation.lock().unwrap() = Some((resource.clone(), rotated));
    store.loads.store(0, std::sync::atomic::Ordering::SeqCst);
    oauth
        .on_unauthorized(&unauthorized(&fixture, None, None))
        .ok();
    assert_eq!(
        bearer(&oauth, &fixture).as_deref(),
        Some("Bearer at-from-the-other-process")
    );
    let kept = store.inner.load(&resource, None).unwrap().unwrap();
    assert_eq!(kept.token, Some(token), "the rotation is left as it was");
}

#[test]
fn an_issuer_differing_only_by_a_trailing_slash_is_refused() {
    let fixture = start(Setup {
        issuer_path: "/tenant1".into(),
        ..Setup::default()
    });
    let named = format!("{}/", fixture.issuer());
    fixture.update(|s| s.metadata_issuer = Some(named.clone()));
    let error = auth_error(provider(&fixture, headless()).authorize());
    assert_eq!(error.step, AuthStep::Discovery);
    assert!(error.message.contains(&named), "{}", error.message);
    assert!(
        error.message.contains("trailing slash"),
        "{}",
        error.message
    );
    assert_eq!(
        error.url,
        Some(fixture.base() + "/.well-known/oauth-authorization-server/tenant1")
    );
    assert_eq!(
        fixture.count("GET", "/tenant1/authorize"),
        0,
        "metadata unused"
    );
    assert!(fixture.token_requests().is_empty());
}

/// A user's browser whose redirect carries `iss` (RFC 9207), as the fixture's authorization
/// endpoint does not add one.
struct WithIss(String);

impl AuthorizationHandler for WithIss {
    fn redirect_uri(&self) -> umcp::Result<String> {
        AuthorizationHandler::redirect_uri(&HeadlessHandler::new())
    }

    fn authorize(&self, url: &str) -> umcp::Result<String> {
        let redirect = AuthorizationHandler::authorize(&HeadlessHandler::new(), url)?;
        let iss = self.0.replace(':', "%3A").replace('/', "%2F");
        Ok(format!("{redirect}&iss={iss}"))
    }
}

#[test]
fn the_iss_of_the_authorization_response_must_be_the_metadata_issuer_exactly() {
    let fixture = start(Setup {
        issuer_path: "/tenant1".into(),
        ..Setup::default()
    });
    let issuer = fixture.issuer();
    let accepted = provider(&fixture, OAuthConfig::new(WithIss(issuer.clone())));
    accepted
        .authorize()
        .expect("the metadata's issuer is accepted");
    assert_eq!(fixture.token_requests().len(), 1);
    for other in [format!("{issuer}/"), issuer.replace("http:", "HTTP:")] {
        let oauth = provider(&fixture, OAuthConfig::new(WithIss(other.clone())));
        let error = auth_error(oauth.authorize());
        assert_eq!(error.step, AuthStep::Authorization, "{other}");
        assert!(error.message.contains(&other), "{}", error.message);
    }
    assert_eq!(fixture.token_requests().len(), 1, "no code was exchanged");
}

#[test]
fn the_2025_03_26_metadata_request_names_the_sessions_protocol_version() {
    let fixture = start(Setup {
        prm: Prm::Absent,
        ..Setup::default()
    });
    let metadata = "/.well-known/oauth-authorization-server";
    let oauth = provider(&fixture, headless());
    let config = HttpConfig::new(fixture.mcp_url())
        .credentials(Arc::clone(&oauth) as Arc<dyn CredentialProvider>)
        .standalone_stream(false);
    let options = Options::default().with_protocol_mode(ProtocolMode::Legacy);
    let client =
        Client::connect_with_options(config, options).expect("authorized at the first 401");
    // That 401 answered `initialize`: no version was agreed on yet.
    let first = fixture.requests_to(metadata);
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].header("mcp-protocol-version"), None);
    // Mid-session every token is gone: the 401 is met with a new discovery.
    fixture.revoke_everything();
    client.list_all_tools().expect("authorized again");
    let again = fixture.requests_to(metadata);
    assert_eq!(again.len(), 2);
    assert_eq!(again[1].header("mcp-protocol-version"), Some("2025-11-25"));
    client.close();
}

/// The OAuth requests made for a call (or a connect) end by its deadline, however long the
/// provider's own timeout: a token endpoint that hangs costs the call its timeout, not 30 s.
#[test]
fn oauth_requests_made_for_a_call_end_by_its_deadline() {
    let fixture = start(Setup::default());
    let config = headless().timeout(Duration::from_secs(30));
    let oauth = provider(&fixture, config);
    let client = oauth_client::connect(&fixture, &oauth).expect("connect");
    client.list_all_tools().expect("authorized");
    // The token is revoked and the token endpoint hangs: the call meets a 401, the provider
    // asks for a new token.
    fixture.update(|setup| setup.token_delay = Duration::from_secs(8));
    fixture.revoke_everything();
    let options = umcp::RequestOptions::default().with_timeout(Duration::from_secs(1));
    let started = Instant::now();
    let outcome = client
        .with(&options)
        .call_tool("echo", serde_json::json!({}));
    let took = started.elapsed();
    assert!(outcome.is_err(), "{outcome:?}");
    assert!(took < Duration::from_secs(5), "the call took {took:?}");

    // Connecting: the start-up deadline bounds the token request as well.
    let oauth = provider(&fixture, headless().timeout(Duration::from_secs(30)));
    let config = HttpConfig::new(fixture.mcp_url())
        .credentials(Arc::clone(&oauth) as Arc<dyn CredentialProvider>)
        .standalone_stream(false);
    let options = Options::default()
        .with_protocol_mode(ProtocolMode::Legacy)
        .with_startup_timeout(Duration::from_secs(1));
    let started = Instant::now();
    let outcome = Client::connect_with_options(config, options);
    let took = started.elapsed();
    assert!(outcome.is_err(), "{:?}", outcome.map(|_| ()));
    assert!(took < Duration::from_secs(5), "connecting took {took:?}");
}

/// A workload's platform token is bound to the authorization server it was minted for: an
/// MCP server that names another one (its own, here) gets an error, and that server's token
/// endpoint never sees the token.
#[test]
fn a_workload_token_goes_only_to_its_own_authorization_server() {
    let trusted = start(Setup {
        registration: false,
        ..Setup::default()
    });
    let rogue = start(Setup {
        registration: false,
        ..Setup::default()
    });
    for fixture in [&trusted, &rogue] {
        fixture.preregister("workload", None, "none");
    }
    let dir = std::env::temp_dir().join(format!("umcp-wif-{}-{}", std::process::id(), line!()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("token.jwt");
    std::fs::write(&path, "platform.jwt.SECRET").unwrap();
    let identity = WorkloadIdentity::token_file(trusted.issuer(), &path);
    let config = || OAuthConfig::workload_identity("workload", identity.clone());

    let error = auth_error(use_server(&rogue, &provider(&rogue, config())));
    assert_eq!(error.step, AuthStep::Discovery);
    for issuer in [trusted.issuer(), rogue.issuer()] {
        assert!(
            error.message.contains(&issuer),
            "{issuer}: {}",
            error.message
        );
    }
    assert!(
        rogue.token_requests().is_empty(),
        "nothing reached the rogue's token endpoint"
    );
    assert_eq!(rogue.count("POST", "/token"), 0);

    // The server its authorization server protects gets the token, the issuer written with
    // a trailing slash or not.
    use_server(&trusted, &provider(&trusted, config())).expect("authorized");
    let slashed = WorkloadIdentity::token_file(format!("{}/", trusted.issuer()), &path);
    let config = OAuthConfig::workload_identity("workload", slashed);
    use_server(&trusted, &provider(&trusted, config)).expect("authorized again");
    // A resource protected by several authorization servers: the workload's own is taken,
    // wherever the metadata lists it.
    let listed = vec![rogue.issuer(), trusted.issuer()];
    trusted.update(|s| s.prm_authorization_servers = Some(listed));
    let config = OAuthConfig::workload_identity("workload", identity.clone());
    use_server(&trusted, &provider(&trusted, config)).expect("authorized by the listed one");
    assert!(rogue.token_requests().is_empty());
    let requests = trusted.token_requests();
    assert_eq!(requests.len(), 3);
    assert!(requests
        .iter()
        .all(|r| r.form["assertion"] == "platform.jwt.SECRET"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A client secret bound with `OAuthConfig::issuer` is refused to another authorization
/// server, before discovery's end: no registration, no token request there. Credentials
/// kept in the store from such a server are not refreshed there either.
#[test]
fn a_client_secret_bound_to_its_issuer_is_sent_nowhere_else() {
    let setup = || Setup {
        auth_methods: vec!["client_secret_basic".into()],
        grant_types: vec!["client_credentials".into(), "refresh_token".into()],
        ..Setup::default()
    };
    let trusted = start(setup());
    let rogue = start(setup());
    for fixture in [&trusted, &rogue] {
        fixture.preregister("machine", Some("m-SECRET"), "client_secret_basic");
    }
    let config = || {
        OAuthConfig::client_credentials("machine")
            .client_secret("m-SECRET")
            .issuer(trusted.issuer())
    };
    let error = auth_error(use_server(&rogue, &provider(&rogue, config())));
    assert_eq!(error.step, AuthStep::Discovery);
    assert!(
        error.message.contains(&trusted.issuer()) && error.message.contains(&rogue.issuer()),
        "{}",
        error.message
    );
    assert!(rogue.token_requests().is_empty());
    use_server(&trusted, &provider(&trusted, config())).expect("authorized");

    // Tokens the rogue issued earlier, kept in the store, about to expire: the refresh that
    // would carry the secret to the rogue's token endpoint does not happen.
    let unbound = OAuthConfig::client_credentials("machine").client_secret("m-SECRET");
    let store: Arc<dyn TokenStore> = Arc::new(MemoryStore::new());
    let earlier = provider(&rogue, unbound.token_store(Arc::clone(&store)));
    use_server(&rogue, &earlier).expect("authorized before the binding");
    let resource = earlier.resource().to_owned();
    let mut kept = store.load(&resource, None).unwrap().expect("kept");
    if let Some(token) = kept.token.as_mut() {
        token.refresh_token = Some("rt-from-the-rogue".into());
        token.expires_at = Some(0);
    }
    store.save(&resource, &kept).unwrap();
    let before = rogue.token_requests().len();
    let bound = provider(&rogue, config().token_store(Arc::clone(&store)));
    let _ = bound.headers(&rogue.mcp_url());
    let _ = bound.on_unauthorized(&unauthorized(&rogue, None, None));
    assert_eq!(
        rogue.token_requests().len(),
        before,
        "no refresh at the rogue"
    );
}
