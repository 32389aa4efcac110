//! OAuth flows seen from concurrent calls: closing the client ends the calls inside a flow,
//! and callers waiting behind a flow that fails share its failure when it is the
//! authorization server's answer, and run their own flow when it is not.
#![cfg(feature = "oauth")]

use umcp_test_support::auth_server;

#[path = "common/log_capture.rs"]
mod log_capture;

#[path = "common/oauth_client.rs"]
mod oauth_client;

use std::time::{Duration, Instant};

use umcp::auth::OAuthConfig;
use umcp::{AuthError, AuthStep, Client, Error, RequestOptions};

use auth_server::Setup;
use oauth_client::{auth_error, connect, headless, provider, start};

/// Waits (at most 10 s) until `ready` holds.
fn wait_until(what: &str, ready: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ready() {
        assert!(Instant::now() < deadline, "{what} did not happen in 10 s");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// `tools/list`, uncached, with a timeout far longer than the test.
fn list_tools(client: &Client) -> umcp::Result<serde_json::Value> {
    list_tools_within(client, Duration::from_secs(30))
}

/// `tools/list`, uncached, with `timeout`.
fn list_tools_within(client: &Client, timeout: Duration) -> umcp::Result<serde_json::Value> {
    let options = RequestOptions::default().with_timeout(timeout);
    client.with(&options).request_raw("tools/list", None)
}

/// A call refreshing its token at an endpoint that hangs, and one waiting behind that
/// refresh, both end with `Error::Closed` as soon as the client closes.
#[test]
fn close_ends_calls_inside_the_oauth_flow_at_once() {
    let fixture = start(Setup::default());
    let oauth = provider(&fixture, headless().timeout(Duration::from_secs(60)));
    let client = connect(&fixture, &oauth).expect("connect");
    list_tools(&client).expect("authorized");
    let posts = fixture.count("POST", "/mcp");
    fixture.update(|setup| setup.token_delay = Duration::from_secs(20));
    fixture.revoke_access_tokens();
    let (refreshing, waiting, closed_in) = std::thread::scope(|scope| {
        let refreshing = scope.spawn(|| list_tools(&client));
        wait_until("the refresh", || fixture.token_arrivals() == 2);
        let waiting = scope.spawn(|| list_tools(&client));
        wait_until("the second 401", || {
            fixture.count("POST", "/mcp") == posts + 2
        });
        let started = Instant::now();
        client.close();
        let (refreshing, waiting) = (refreshing.join().unwrap(), waiting.join().unwrap());
        (refreshing, waiting, started.elapsed())
    });
    assert!(
        matches!(refreshing, Err(Error::Closed(_))),
        "{refreshing:?}"
    );
    assert!(matches!(waiting, Err(Error::Closed(_))), "{waiting:?}");
    assert!(
        closed_in < Duration::from_secs(2),
        "the calls ended {closed_in:?} after close"
    );
    assert_eq!(fixture.token_arrivals(), 2, "nothing more was asked for");
}

/// Callers that meet a 401 together run one flow: when its token request fails, every one
/// of them gets that failure. A caller coming after it tries again.
#[test]
fn callers_waiting_behind_a_failed_flow_share_its_failure() {
    const CALLERS: usize = 4;
    let fixture = start(Setup {
        auth_methods: vec!["client_secret_basic".into()],
        grant_types: vec!["client_credentials".into()],
        ..Setup::default()
    });
    fixture.preregister("machine", Some("m-SECRET"), "client_secret_basic");
    let config = OAuthConfig::client_credentials("machine")
        .client_secret("m-SECRET")
        .timeout(Duration::from_secs(10));
    let oauth = provider(&fixture, config);
    let client = connect(&fixture, &oauth).expect("connect");
    list_tools(&client).expect("authorized");
    assert_eq!(fixture.token_requests().len(), 1);
    // The token is revoked and the server no longer knows the client's secret: every token
    // request fails, after a while, so that the callers pile up behind the first flow.
    fixture.preregister("machine", Some("rotated-SECRET"), "client_secret_basic");
    fixture.revoke_everything();
    fixture.update(|setup| setup.token_delay = Duration::from_millis(800));
    let posts = fixture.count("POST", "/mcp");
    let errors: Vec<AuthError> = std::thread::scope(|scope| {
        // One caller at a time meets its 401 (the fixture's listener takes new connections
        // best one by one), all while the first flow's token request is being answered.
        let callers: Vec<_> = (0..CALLERS)
            .map(|n| {
                let caller = scope.spawn(|| auth_error(list_tools(&client)));
                wait_until("the 401", || fixture.count("POST", "/mcp") == posts + n + 1);
                if n == 0 {
                    wait_until("the first flow", || fixture.token_arrivals() == 2);
                }
                caller
            })
            .collect();
        callers.into_iter().map(|c| c.join().unwrap()).collect()
    });
    assert_eq!(errors.len(), CALLERS);
    assert_eq!(
        fixture.token_requests().len(),
        2,
        "{CALLERS} callers made one token request"
    );
    for error in &errors {
        assert_eq!(error.step, AuthStep::Token, "{error}");
        assert_eq!(error.status, Some(401), "{error}");
        assert_eq!(error.error.as_deref(), Some("invalid_client"), "{error}");
    }
    // The failure was reported: the next caller runs a flow of its own.
    fixture.update(|setup| setup.token_delay = Duration::ZERO);
    let again = auth_error(list_tools(&client));
    assert_eq!(again.error.as_deref(), Some("invalid_client"));
    assert_eq!(fixture.token_requests().len(), 3);
    client.close();
}

/// A flow that fails because the call it ran for ran out of time is that call's failure
/// alone: a caller with time to spare that waited behind it runs a flow of its own.
#[test]
fn a_waiter_does_not_share_a_failure_cut_by_the_deadline_of_the_flow_holder() {
    let fixture = start(Setup {
        auth_methods: vec!["client_secret_basic".into()],
        grant_types: vec!["client_credentials".into()],
        ..Setup::default()
    });
    fixture.preregister("machine", Some("m-SECRET"), "client_secret_basic");
    let config = OAuthConfig::client_credentials("machine")
        .client_secret("m-SECRET")
        .timeout(Duration::from_secs(10));
    let oauth = provider(&fixture, config);
    let client = connect(&fixture, &oauth).expect("connect");
    list_tools(&client).expect("authorized");
    fixture.revoke_access_tokens();
    // Longer than the hurried caller's timeout, well within the patient one's.
    fixture.update(|setup| setup.token_delay = Duration::from_millis(2500));
    let posts = fixture.count("POST", "/mcp");
    let (hurried, patient) = std::thread::scope(|scope| {
        let hurried = scope.spawn(|| list_tools_within(&client, Duration::from_millis(1500)));
        wait_until("the first flow's token request", || {
            fixture.token_arrivals() == 2
        });
        let patient = scope.spawn(|| list_tools(&client));
        wait_until("the second 401", || {
            fixture.count("POST", "/mcp") == posts + 2
        });
        (hurried.join().unwrap(), patient.join().unwrap())
    });
    assert!(hurried.is_err(), "{hurried:?}");
    assert!(
        patient.is_ok(),
        "the 30 s caller got the failure of the 1.5 s one: {patient:?}"
    );
    assert_eq!(
        fixture.token_arrivals(),
        3,
        "the patient caller asked itself"
    );
    client.close();
}
