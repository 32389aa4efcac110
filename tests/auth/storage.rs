//! Keeping secrets: none in the log or debug output, and the file token store's permissions and
//! persistence.

use std::sync::Arc;

use umcp::auth::{FileStore, StoredCredentials, TokenSet, TokenStore};
use umcp::Error;

use crate::auth_server::Setup;
use crate::log_capture::umcp_lines;
use crate::oauth_client::{bearer, headless, provider, start, use_server};

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
    let mut entries: Vec<String> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    // The store and the (empty) lock its saves take turns by; no temporary file.
    assert_eq!(
        entries,
        ["tokens.json", "tokens.json.write-lock"],
        "no temporary file is left behind"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let lock = path.with_file_name("tokens.json.write-lock");
        let mode = std::fs::metadata(&lock).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(std::fs::read(&lock).unwrap(), b"", "the lock holds nothing");
    }
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

#[test]
fn two_profiles_keep_two_sign_ins_to_one_server_apart() {
    let dir = std::env::temp_dir().join(format!("umcp-store-{}-{}", std::process::id(), line!()));
    let _ = std::fs::remove_dir_all(&dir);
    let store: Arc<dyn TokenStore> = Arc::new(FileStore::new(dir.join("tokens.json")));
    let fixture = start(Setup::default());
    let signed_in = |profile: &str| {
        let config = headless().profile(profile).token_store(Arc::clone(&store));
        let oauth = provider(&fixture, config);
        use_server(&fixture, &oauth).expect("authorized");
        oauth
    };
    let work = signed_in("work");
    let home = signed_in("home@example");
    assert_eq!(
        fixture.token_requests().len(),
        2,
        "two sign-ins, not one shared"
    );
    let listed = umcp::auth::SignIn::list(store.as_ref()).unwrap();
    let mut profiles: Vec<_> = listed.iter().map(|s| s.profile.clone().unwrap()).collect();
    profiles.sort();
    assert_eq!(profiles, ["home@example", "work"]);
    assert!(listed
        .iter()
        .all(|s| s.server == fixture.mcp_url() && s.has_token));
    assert_ne!(bearer(&work, &fixture), bearer(&home, &fixture));
    // Signing out of one keeps the other; this server offers no revocation.
    let revocation = work.logout().unwrap();
    assert!(
        matches!(revocation, umcp::auth::Revocation::NotOffered),
        "{revocation:?}"
    );
    let listed = umcp::auth::SignIn::list(store.as_ref()).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].profile.as_deref(), Some("home@example"));
    assert!(home.has_token().unwrap());
    for bad in ["", "two words", "a/b", &"x".repeat(65)] {
        let refused = umcp::auth::OAuth::new(fixture.mcp_url(), headless().profile(bad));
        assert!(matches!(refused, Err(Error::Config(_))), "{bad:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
