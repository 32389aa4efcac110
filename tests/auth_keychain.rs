//! Tokens in the operating system's keychain, here the Linux kernel keyring: an OAuth flow
//! keeps its tokens there and writes no token file, the store lists its sign-ins, and a second
//! store on the same keychain (another process's) reads what the first saved.
//!
//! Each test runs again in a session keyring of its own, which `tests/peers/keyring_session.py`
//! starts, as a login session has one (a test run may have none).
#![cfg(all(feature = "keychain", target_os = "linux"))]

use umcp_test_support::auth_server;

#[path = "common/log_capture.rs"]
mod log_capture;

#[path = "common/oauth_client.rs"]
mod oauth_client;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use umcp::auth::{KeychainStore, SignIn, StoredCredentials, TokenStore};

use auth_server::Setup;
use oauth_client::{headless, provider, start, use_server};

/// Runs the test `name` again in a new session keyring and checks that it passed; true in that
/// run, which does the test's work.
fn in_session_keyring(name: &str) -> bool {
    if std::env::var_os("UMCP_KEYRING_SESSION").is_some() {
        return true;
    }
    let helper = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/keyring_session.py");
    let status = Command::new("python3")
        .arg(helper)
        .arg(std::env::current_exe().unwrap())
        .args([name, "--exact", "--test-threads=1"])
        .status()
        .expect("python3 runs tests/peers/keyring_session.py");
    assert!(
        status.success(),
        "{name} in its own session keyring: {status}"
    );
    false
}

/// A fresh directory for the lock file, and a service name no other run uses.
fn place(name: &str) -> (PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("umcp-keychain-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    (dir, format!("umcp-test-{}-{name}", std::process::id()))
}

/// Every file under `dir`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[test]
fn an_oauth_sign_in_keeps_its_tokens_in_the_kernel_keyring_and_writes_no_token_file() {
    if !in_session_keyring(
        "an_oauth_sign_in_keeps_its_tokens_in_the_kernel_keyring_and_writes_no_token_file",
    ) {
        return;
    }
    let (dir, service) = place("flow");
    let store = KeychainStore::open(&service, dir.join("keychain.lock"))
        .expect("the kernel keyring takes an item (keyutils)");
    assert!(
        store.location().contains("kernel keyring"),
        "{}",
        store.location()
    );
    let store: Arc<dyn TokenStore> = Arc::new(store);
    let fixture = start(Setup::default());
    let oauth = provider(&fixture, headless().token_store(Arc::clone(&store)));
    use_server(&fixture, &oauth).expect("authorized");

    // Another store on the same keychain, as another process would open it, has the tokens.
    let other = KeychainStore::open(&service, dir.join("keychain.lock")).unwrap();
    let signed_in = SignIn::list(&other).unwrap();
    assert_eq!(signed_in.len(), 1, "{signed_in:?}");
    assert_eq!(signed_in[0].server, fixture.mcp_url());
    assert_eq!(signed_in[0].issuer, fixture.issuer());
    assert!(signed_in[0].has_token && signed_in[0].refreshable);
    let held = other.load(&fixture.mcp_url(), None).unwrap().unwrap();
    let token = held.token.expect("a token").access_token;
    assert!(!token.is_empty());

    // Nothing under the directory but the (empty) lock files.
    for file in files(&dir) {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(!text.contains(&token), "a token in {}", file.display());
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("keychain.lock"),
            "unexpected {}",
            file.display()
        );
        assert_eq!(
            std::fs::metadata(&file).unwrap().len(),
            0,
            "a lock holds nothing"
        );
    }

    // Signing out empties the keychain of this server.
    oauth.logout().unwrap();
    assert!(other.load(&fixture.mcp_url(), None).unwrap().is_none());
    assert!(SignIn::list(&other).unwrap().is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_keychain_store_keeps_issuers_and_keys_apart() {
    if !in_session_keyring("the_keychain_store_keeps_issuers_and_keys_apart") {
        return;
    }
    let (dir, service) = place("entries");
    let store = KeychainStore::open(&service, dir.join("keychain.lock")).unwrap();
    let server = "https://mcp.example/mcp";
    let profile = format!("{server}#work");
    store
        .save(server, &StoredCredentials::new("https://a.example"))
        .unwrap();
    store
        .save(server, &StoredCredentials::new("https://b.example"))
        .unwrap();
    store
        .save(&profile, &StoredCredentials::new("https://a.example"))
        .unwrap();
    let last = store.load(server, None).unwrap().unwrap();
    assert_eq!(last.issuer, "https://b.example", "the last saved");
    let first = store.load(server, Some("https://a.example")).unwrap();
    assert_eq!(first.unwrap().issuer, "https://a.example");
    let keys: Vec<String> = store
        .entries()
        .unwrap()
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(keys, [server, server, profile.as_str()]);
    let profiles: Vec<Option<String>> = SignIn::list(&store)
        .unwrap()
        .into_iter()
        .map(|s| s.profile)
        .collect();
    assert_eq!(profiles, [None, None, Some("work".to_owned())]);
    store.remove(server, Some("https://b.example")).unwrap();
    assert_eq!(
        store.load(server, None).unwrap().unwrap().issuer,
        "https://a.example"
    );
    store.remove(server, None).unwrap();
    store.remove(&profile, None).unwrap();
    assert!(store.entries().unwrap().is_empty());
    // The lock is the one file, and other processes take turns on it.
    let held = store.lock(std::time::Duration::from_secs(1)).unwrap();
    assert!(held.is_some());
    assert!(dir.join("keychain.lock").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs the test `name` again with a Secret Service of its own (GNOME Keyring on a private D-Bus
/// session bus, which `tests/peers/secret_service.sh` starts); true in that run.
#[cfg(feature = "keychain-secret-service")]
fn with_secret_service(name: &str) -> bool {
    if std::env::var_os("UMCP_SECRET_SERVICE").is_some() {
        return true;
    }
    let helper = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/secret_service.sh");
    let status = Command::new("sh")
        .arg(helper)
        .arg(std::env::current_exe().unwrap())
        .args([name, "--exact", "--test-threads=1"])
        .status()
        .expect("sh runs tests/peers/secret_service.sh (needs dbus-run-session, gnome-keyring)");
    assert!(
        status.success(),
        "{name} with its own Secret Service: {status}"
    );
    false
}

#[cfg(feature = "keychain-secret-service")]
#[test]
fn the_desktop_secret_service_is_preferred_and_holds_the_tokens() {
    if !with_secret_service("the_desktop_secret_service_is_preferred_and_holds_the_tokens") {
        return;
    }
    let (dir, service) = place("secret-service");
    let store = KeychainStore::open(&service, dir.join("keychain.lock")).unwrap();
    assert_eq!(store.backend(), "Secret Service (D-Bus)");
    assert!(
        store.location().contains("Secret Service"),
        "{}",
        store.location()
    );
    let store: Arc<dyn TokenStore> = Arc::new(store);
    let fixture = start(Setup::default());
    let oauth = provider(&fixture, headless().token_store(Arc::clone(&store)));
    use_server(&fixture, &oauth).expect("authorized");
    let other = KeychainStore::open(&service, dir.join("keychain.lock")).unwrap();
    let token = other
        .load(&fixture.mcp_url(), None)
        .unwrap()
        .and_then(|c| c.token)
        .expect("the tokens, read back through the Secret Service")
        .access_token;
    for file in files(&dir) {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(!text.contains(&token), "a token in {}", file.display());
    }
    oauth.logout().unwrap();
    assert!(SignIn::list(&other).unwrap().is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}
