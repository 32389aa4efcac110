//! Tokens in use: refresh, 401 and 403 step-up with scopes, concurrent 401s, origins and slow
//! providers.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use umcp::{AuthStep, Client, CredentialProvider, HttpConfig, HttpError, Options};

use crate::auth_server::{AuthServer, Setup};
use crate::oauth_client::{
    auth_error, bearer, connect, headless, provider, start, unauthorized, use_server,
};

#[test]
fn tokens_are_refreshed_before_they_expire() {
    let fixture = start(Setup {
        expires_in: 30,
        ..Setup::default()
    });
    let oauth = provider(&fixture, headless().refresh_margin(Duration::from_secs(60)));
    oauth.authorize().expect("authorized");
    let first = bearer(&oauth, &fixture).expect("a token");
    let grants = grants(&fixture);
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
    let grants = grants(&fixture);
    assert_eq!(grants, ["authorization_code", "refresh_token"]);
    assert_eq!(fixture.count("GET", "/authorize"), 1);
    fixture.revoke_everything();
    use_server(&fixture, &oauth).expect("authorized again");
    assert_eq!(fixture.count("GET", "/authorize"), 2);
}

#[test]
fn a_token_refreshed_before_it_expired_is_refreshed_again_when_rejected() {
    let fixture = start(Setup {
        expires_in: 30,
        ..Setup::default()
    });
    let oauth = provider(&fixture, headless().refresh_margin(Duration::from_secs(60)));
    oauth.authorize().expect("authorized");
    // The next token lasts: one refresh before expiry, then requests go through.
    fixture.update(|setup| setup.expires_in = 3600);
    use_server(&fixture, &oauth).expect("refreshed before expiry");
    // That token is rejected later on: no rejected refresh preceded it, so the refresh token
    // is tried before the user is asked again.
    fixture.revoke_access_tokens();
    use_server(&fixture, &oauth).expect("refreshed after the 401");
    let grants = grants(&fixture);
    assert_eq!(
        grants,
        ["authorization_code", "refresh_token", "refresh_token"]
    );
    assert_eq!(
        fixture.count("GET", "/authorize"),
        1,
        "no new authorization"
    );
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
        .standalone_stream(false);
    let options = Options::default()
        .with_request_timeout(Duration::from_secs(1))
        .with_startup_timeout(Duration::from_secs(1));
    let client = Client::connect_with_options(config, options)
        .expect("initialize succeeds after the slow step");
    assert_eq!(client.server_info().name, "auth-fixture");
    client.close();
}

/// The grant types of the token requests so far, in order.
fn grants(fixture: &AuthServer) -> Vec<String> {
    fixture
        .token_requests()
        .into_iter()
        .map(|t| t.grant_type)
        .collect()
}
