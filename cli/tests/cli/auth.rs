//! `umcp auth` against a real authorization server, Authlib's, in front of the Python SDK's MCP
//! server (`tests/peers/oauth_peer.py`): a device sign-in approved through the server's own page,
//! the commands after it without a prompt, the status that says where tokens live and shows no
//! token, and the logout that revokes; the tokens in the Linux kernel keyring, no token file
//! written. Each test runs again in a kernel session keyring of its own, which
//! `tests/peers/keyring_session.py` starts, as a login session has one.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

use umcp::auth::{KeychainStore, TokenStore};
use umcp_test_support::installed::{stderr, stdout, umcp_in};
use umcp_test_support::peers::{self, oauth_authorization_server, oauth_mcp_server, HttpPeer};

/// Runs the test `name` again in a new session keyring; true in that run.
fn in_session_keyring(name: &str) -> bool {
    if std::env::var_os("UMCP_KEYRING_SESSION").is_some() {
        return true;
    }
    // One at a time: the runs share the user's persistent keyring, where each keeps the list of
    // its entries, and a test's own home (its own lock file) does not order them as one user's
    // processes are.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let helper = umcp_test_support::workspace_root().join("tests/peers/keyring_session.py");
    let status = Command::new("python3")
        .arg(helper)
        .arg(std::env::current_exe().unwrap())
        .args([name, "--exact", "--test-threads=1"])
        .stdout(Stdio::null())
        .status()
        .expect("python3 runs tests/peers/keyring_session.py");
    assert!(
        status.success(),
        "{name} in its own session keyring: {status}"
    );
    false
}

/// A fresh home for umcp's files.
fn home(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("umcp-cli-auth-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn umcp(home: &Path) -> Command {
    let mut command = umcp_in(home);
    command
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY");
    command
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

/// `umcp auth login URL` without a display, approved through the verification page the moment
/// the code shows; returns the finished run's stderr.
fn device_login(home: &Path, auth: &HttpPeer, url: &str, extra: &[&str]) -> (Option<i32>, String) {
    let mut login = umcp(home)
        .args(["auth", "login", url])
        .args(extra)
        .stderr(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("umcp auth login");
    let (lines, seen) = channel();
    let err = login.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = lines.send(line.clone());
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let until = Instant::now() + Duration::from_secs(60);
    while let Ok(line) = seen.recv_timeout(until.saturating_duration_since(Instant::now())) {
        if let Some(code) = line.split("enter the code ").nth(1) {
            ureq::post(&auth.url("/device"))
                .send_form([("user_code", code.trim()), ("action", "approve")])
                .expect("approved at the verification page");
            break;
        }
    }
    let status = login.wait().unwrap();
    (status.code(), reader.join().unwrap())
}

#[test]
fn a_device_login_lets_later_commands_in_and_status_and_logout_show_no_token() {
    if peers::skip_interop()
        || !in_session_keyring(
            "auth::a_device_login_lets_later_commands_in_and_status_and_logout_show_no_token",
        )
    {
        return;
    }
    let auth = oauth_authorization_server(&[]);
    let mcp = oauth_mcp_server(&auth.url(""));
    let url = mcp.url("/mcp");
    let home = home("device");
    let (code, err) = device_login(&home, &auth, &url, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("On any device, open"), "{err}");
    assert!(err.contains("kernel keyring"), "where tokens live: {err}");

    // No prompt later: stdin is closed, and nothing asks.
    let whoami = umcp(&home)
        .args(["--url", &url, "call", "whoami"])
        .output()
        .unwrap();
    assert_eq!(whoami.status.code(), Some(0), "{}", stderr(&whoami));
    assert!(
        stdout(&whoami).starts_with("alice via "),
        "{}",
        stdout(&whoami)
    );

    // The token is in the keychain, nowhere in a file, and never shown. The keyring is the
    // user's persistent one: only this server's entries are this run's.
    let keychain = KeychainStore::open("umcp", home.join("lock")).unwrap();
    let ours = |keychain: &KeychainStore| {
        let entries = keychain.entries().unwrap();
        entries
            .into_iter()
            .filter(|(key, _)| key.contains(&url))
            .collect::<Vec<_>>()
    };
    let entries = ours(&keychain);
    assert_eq!(
        entries.len(),
        1,
        "{:?}",
        entries.iter().map(|e| &e.0).collect::<Vec<_>>()
    );
    let token = entries[0].1.token.clone().expect("a token").access_token;
    for file in files(&home) {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(!text.contains(&token), "a token in {}", file.display());
    }
    let status = umcp(&home).args(["auth", "status"]).output().unwrap();
    let shown = stdout(&status);
    assert!(shown.contains("Linux kernel keyring"), "{shown}");
    assert!(
        shown.contains(&url) && shown.contains(&auth.url("")),
        "{shown}"
    );
    assert!(!shown.contains(&token) && !stderr(&status).contains(&token));

    let logout = umcp(&home).args(["auth", "logout", &url]).output().unwrap();
    assert_eq!(logout.status.code(), Some(0), "{}", stderr(&logout));
    assert!(stdout(&logout).contains("revoked"), "{}", stdout(&logout));
    let status = umcp(&home).args(["auth", "status"]).output().unwrap();
    let shown = stdout(&status);
    assert!(
        shown.contains("not signed in anywhere") || !shown.contains(&url),
        "{shown}"
    );
    assert!(ours(&keychain).is_empty());
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn a_login_nobody_finishes_ends_within_its_timeout() {
    if peers::skip_interop() {
        return;
    }
    let auth = oauth_authorization_server(&[]);
    let mcp = oauth_mcp_server(&auth.url(""));
    let home = home("timeout");
    let store = home.join("tokens.json");
    // Built first: the first command of a run installs umcp.
    let mut command = umcp(&home);
    let url = mcp.url("/mcp");
    command.args(["auth", "login", &url, "--flow", "device", "--timeout", "3"]);
    command.args(["--token-store", store.to_str().unwrap()]);
    let started = Instant::now();
    let login = command.output().unwrap();
    let took = started.elapsed();
    assert_eq!(login.status.code(), Some(4), "{}", stderr(&login));
    assert!(
        stderr(&login).contains("enter the code"),
        "{}",
        stderr(&login)
    );
    assert!(took < Duration::from_secs(12), "{took:?}");
    assert!(
        stderr(&login).contains("3.0s"),
        "the timeout named: {}",
        stderr(&login)
    );
    let _ = std::fs::remove_dir_all(&home);
}
