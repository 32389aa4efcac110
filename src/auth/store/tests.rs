//! Tests of `auth::store`.

use super::*;

fn credentials(issuer: &str, token: &str) -> StoredCredentials {
    StoredCredentials {
        token: Some(TokenSet {
            access_token: token.into(),
            ..TokenSet::default()
        }),
        ..StoredCredentials::new(issuer)
    }
}

#[test]
fn memory_store_keys_by_server_and_issuer() {
    let store = MemoryStore::new();
    store.save("s1", &credentials("a", "t1")).unwrap();
    store.save("s1", &credentials("b", "t2")).unwrap();
    store.save("s2", &credentials("a", "t3")).unwrap();
    let token = |s, i| {
        store
            .load(s, i)
            .unwrap()
            .and_then(|c| c.token)
            .map(|t| t.access_token)
    };
    assert_eq!(token("s1", Some("a")).as_deref(), Some("t1"));
    assert_eq!(token("s1", None).as_deref(), Some("t2"), "the last saved");
    store.save("s1", &credentials("a", "t4")).unwrap();
    assert_eq!(token("s1", None).as_deref(), Some("t4"));
    store.remove("s1", Some("a")).unwrap();
    assert_eq!(token("s1", None).as_deref(), Some("t2"));
    store.remove("s1", None).unwrap();
    assert_eq!(token("s1", None), None);
    assert_eq!(token("s2", Some("a")).as_deref(), Some("t3"));
}

#[test]
fn debug_never_shows_secrets() {
    let stored = StoredCredentials {
        client: Some(ClientRegistration::new("id", Some("s3cret".into()))),
        token: Some(TokenSet {
            access_token: "acc3ss".into(),
            refresh_token: Some("r3fresh".into()),
            ..TokenSet::default()
        }),
        ..StoredCredentials::new("https://as")
    };
    let shown = format!("{stored:?}");
    for secret in ["s3cret", "acc3ss", "r3fresh"] {
        assert!(!shown.contains(secret), "{shown}");
    }
    assert!(shown.contains("\"id\""));
}

#[test]
fn expiry_is_judged_with_a_margin() {
    let token = TokenSet {
        expires_at: Some(unix_now() + 30),
        ..TokenSet::default()
    };
    assert!(token.expires_within(Duration::from_secs(60)));
    assert!(!token.expires_within(Duration::from_secs(5)));
    assert!(!TokenSet::default().expires_within(Duration::from_secs(60)));
}
