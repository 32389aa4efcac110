//! The device authorization grant against the loopback fixture, composed with the rest of the
//! flow: the challenge's scopes, the RFC 8707 resource, step-up after 403, the code flow where
//! the server does not offer it, and a clear refusal where nothing else is configured.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use umcp::auth::{DeviceAuthorization, HeadlessHandler, OAuthConfig};

use crate::auth_server::Setup;
use crate::oauth_client::{auth_error, connect, provider, start, use_server};

/// A device configuration whose prompt records the codes shown.
fn device(shown: &Arc<Mutex<Vec<DeviceAuthorization>>>) -> OAuthConfig {
    let shown = Arc::clone(shown);
    OAuthConfig::device(move |device: &DeviceAuthorization| {
        shown.lock().unwrap().push(device.clone());
        Ok(())
    })
    .timeout(Duration::from_secs(5))
}

#[test]
fn the_device_grant_takes_the_challenges_scopes_the_resource_and_steps_up() {
    let fixture = start(Setup {
        device: true,
        challenge_scope: Some("read".into()),
        call_scope: Some("read write".into()),
        ..Setup::default()
    });
    let shown = Arc::new(Mutex::new(Vec::new()));
    let oauth = provider(&fixture, device(&shown));
    use_server(&fixture, &oauth).expect("signed in, then stepped up for the call");
    let requests = fixture.device_requests();
    assert_eq!(requests.len(), 2, "a sign-in and a step-up: {requests:?}");
    assert_eq!(requests[0]["scope"], "read");
    assert_eq!(requests[1]["scope"], "read write", "the union after 403");
    for request in &requests {
        assert_eq!(request["resource"], fixture.mcp_url());
    }
    let polls: Vec<_> = fixture
        .token_requests()
        .into_iter()
        .filter(|r| r.grant_type == "urn:ietf:params:oauth:grant-type:device_code")
        .collect();
    assert_eq!(polls.len(), 2);
    assert!(polls
        .iter()
        .all(|p| p.form["resource"] == fixture.mcp_url()));
    let shown = shown.lock().unwrap();
    assert_eq!(shown.len(), 2);
    assert_eq!(
        shown[0].verification_uri,
        format!("{}/device", fixture.issuer())
    );
    // Registered for the device grant: no redirect URI.
    let client = fixture.clients().into_values().next().unwrap();
    assert!(
        client.metadata.get("redirect_uris").is_none(),
        "{:?}",
        client.metadata
    );
    assert_eq!(
        client.metadata["grant_types"][0],
        "urn:ietf:params:oauth:grant-type:device_code"
    );
}

#[test]
fn a_device_prompt_is_preferred_where_offered_and_the_code_flow_kept_elsewhere() {
    let shown = Arc::new(Mutex::new(Vec::new()));
    let preferring = |shown: &Arc<Mutex<Vec<DeviceAuthorization>>>| {
        let shown = Arc::clone(shown);
        OAuthConfig::new(HeadlessHandler::new())
            .timeout(Duration::from_secs(5))
            .device_prompt(move |device: &DeviceAuthorization| {
                shown.lock().unwrap().push(device.clone());
                Ok(())
            })
    };
    let without = start(Setup::default());
    let oauth = provider(&without, preferring(&shown));
    use_server(&without, &oauth).expect("the code flow");
    assert_eq!(without.authorizations().len(), 1);
    assert!(shown.lock().unwrap().is_empty());

    let with = start(Setup {
        device: true,
        ..Setup::default()
    });
    let oauth = provider(&with, preferring(&shown));
    use_server(&with, &oauth).expect("the device grant");
    assert!(with.authorizations().is_empty(), "no browser step");
    assert_eq!(shown.lock().unwrap().len(), 1);
}

#[test]
fn a_device_only_configuration_fails_clearly_where_the_server_has_no_device_grant() {
    let fixture = start(Setup::default());
    let shown = Arc::new(Mutex::new(Vec::new()));
    let oauth = provider(&fixture, device(&shown));
    let error = auth_error(connect(&fixture, &oauth).map(drop));
    assert!(
        error.message.contains("device_authorization_endpoint"),
        "{error}"
    );
    assert!(fixture.clients().is_empty(), "nothing registered first");
    assert!(shown.lock().unwrap().is_empty());
}
