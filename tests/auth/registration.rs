//! Client registration: pre-registered credentials, client ID metadata documents, dynamic
//! registration, reuse and token endpoint authentication.

use std::sync::Arc;

use umcp::auth::{MemoryStore, OAuth, TokenStore};
use umcp::CredentialProvider;

use crate::auth_server::Setup;
use crate::oauth_client::{headless, provider, start, use_server};

const CIMD: &str = "https://client.example/metadata.json";

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
    // Tokens from the store are the same identity's: the client's private cache stays.
    let stored = second.authorization_context();
    fixture.revoke_everything();
    use_server(&fixture, &second).expect("authorized again");
    // A new grant may be another subject's, and so may whatever follows a logout.
    let granted = second.authorization_context();
    assert_ne!(granted, stored);
    assert_eq!(
        fixture.count("POST", "/register"),
        1,
        "the registration is reused"
    );
    assert_eq!(fixture.count("GET", "/authorize"), 2);
    second.logout().unwrap();
    assert_ne!(second.authorization_context(), granted);
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
