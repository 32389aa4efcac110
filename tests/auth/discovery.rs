//! Discovery of the protected resource and authorization server metadata, and the refusals that
//! come before any authorization.

use umcp::{AuthStep, CredentialProvider};

use crate::auth_server::{Metadata, Prm, Setup};
use crate::oauth_client::{
    auth_error, bearer, connect, headless, provider, start, unauthorized, use_server,
};

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
fn a_server_without_any_metadata_is_said_to_publish_none() {
    let fixture = start(Setup {
        prm: Prm::Absent,
        metadata: Metadata::Absent,
        registration: false,
        ..Setup::default()
    });
    let error = provider(&fixture, headless()).authorize().unwrap_err();
    let message = error.to_string();
    assert!(message.contains("registration was refused"), "{message}");
    assert!(message.contains("publishes no OAuth metadata"), "{message}");
    // With metadata published, a refused registration is only that.
    let fixture = start(Setup {
        prm: Prm::Absent,
        registration: false,
        ..Setup::default()
    });
    let message = provider(&fixture, headless())
        .authorize()
        .unwrap_err()
        .to_string();
    assert!(
        !message.contains("publishes no OAuth metadata"),
        "{message}"
    );
}
