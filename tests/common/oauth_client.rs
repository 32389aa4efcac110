//! The client side of the OAuth tests: a provider against the fixture, connecting through
//! it, and a 401 as the transport reports it. Its binaries include `common/log_capture.rs`
//! too, as `log_capture`, which captures their log lines from the fixture's start.

#![allow(dead_code)] // Each test binary uses a different part of this module.

use std::sync::Arc;
use std::time::Duration;

use umcp::auth::{HeadlessHandler, OAuth, OAuthConfig};
use umcp::{
    AuthError, Client, CredentialProvider, Error, HttpConfig, HttpError, Options, WwwAuthenticate,
};

use super::auth_server::{AuthServer, Setup};
use super::log_capture::capture_logs;

pub fn start(setup: Setup) -> AuthServer {
    capture_logs();
    AuthServer::start(setup)
}

pub fn headless() -> OAuthConfig {
    OAuthConfig::new(HeadlessHandler::new()).timeout(Duration::from_secs(5))
}

pub fn provider(fixture: &AuthServer, config: OAuthConfig) -> Arc<OAuth> {
    Arc::new(OAuth::new(fixture.mcp_url(), config).expect("a valid server URL"))
}

pub fn connect(fixture: &AuthServer, oauth: &Arc<OAuth>) -> umcp::Result<Client> {
    let config = HttpConfig::new(fixture.mcp_url())
        .credentials(Arc::clone(oauth) as Arc<dyn CredentialProvider>)
        .standalone_stream(false);
    Client::connect_with_options(
        config,
        Options::default().with_request_timeout(Duration::from_secs(10)),
    )
}

/// Connects, lists the tools and calls one.
pub fn use_server(fixture: &AuthServer, oauth: &Arc<OAuth>) -> umcp::Result<()> {
    let client = connect(fixture, oauth)?;
    let tools = client.list_all_tools()?;
    assert_eq!(tools.len(), 1);
    client.call_tool("echo", serde_json::json!({}))?;
    client.close();
    Ok(())
}

pub fn auth_error(result: umcp::Result<impl std::fmt::Debug>) -> AuthError {
    match result {
        Err(Error::Auth(e)) => *e,
        other => panic!("expected an authorization error, got {other:?}"),
    }
}

/// A 401 as the transport reports it, with a challenge.
pub fn unauthorized(
    fixture: &AuthServer,
    resource_metadata: Option<String>,
    scope: Option<&str>,
) -> HttpError {
    HttpError {
        status: 401,
        url: fixture.mcp_url(),
        www_authenticate: Some(WwwAuthenticate {
            scheme: "Bearer".into(),
            resource_metadata,
            scope: scope.map(str::to_owned),
            ..WwwAuthenticate::default()
        }),
        ..HttpError::default()
    }
}

pub fn bearer(oauth: &OAuth, fixture: &AuthServer) -> Option<String> {
    let headers = oauth.headers(&fixture.mcp_url()).expect("headers");
    headers
        .into_iter()
        .find(|(n, _)| n == "Authorization")
        .map(|(_, v)| v)
}
