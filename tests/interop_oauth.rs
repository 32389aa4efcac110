//! Signing in against a real authorization server, Authlib's (Flask), in front of a real MCP
//! server, the Python SDK 2.3 checking every token at the server's introspection endpoint (both
//! in `tests/peers/oauth_peer.py`): the device authorization grant approved, refused, slowed down
//! and expired as RFC 8628 says, within the caller's deadline and cancel handle; a code flow whose
//! browser ran elsewhere finished by a pasted address, which is refused with another `state` or
//! `iss`; signing out revokes (RFC 7009); and processes sharing a token store refresh an expired
//! token once. The user's side goes through the authorization server's own pages.
#![cfg(feature = "oauth")]

#[path = "common/mod.rs"]
mod common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use common::peers::{self, oauth_authorization_server, oauth_mcp_server, HttpPeer};
use umcp::auth::{
    DeviceAuthorization, FileStore, OAuth, OAuthConfig, PasteHandler, PastePrompt, Revocation,
    SignIn, TokenStore,
};
use umcp::{CancelHandle, Client, CredentialProvider, Error, HttpConfig};

/// The authorization server and the MCP server it protects.
struct Servers {
    auth: HttpPeer,
    mcp: HttpPeer,
}

impl Servers {
    fn start(auth_args: &[&str]) -> Servers {
        let auth = oauth_authorization_server(auth_args);
        let mcp = oauth_mcp_server(&auth.url(""));
        Servers { auth, mcp }
    }

    fn mcp_url(&self) -> String {
        self.mcp.url("/mcp")
    }

    /// What the token endpoint saw.
    fn stats(&self) -> Value {
        let mut answer = ureq::get(&self.auth.url("/stats")).call().expect("stats");
        let text = answer.body_mut().read_to_string().expect("stats");
        serde_json::from_str(&text).expect("stats JSON")
    }

    /// The user's decision on the verification page.
    fn decide(&self, user_code: &str, approve: bool) {
        let action = if approve { "approve" } else { "deny" };
        ureq::post(&self.auth.url("/device"))
            .send_form([("user_code", user_code), ("action", action)])
            .expect("the verification page takes the decision");
    }
}

/// A token store in a fresh directory.
fn store(name: &str) -> (PathBuf, Arc<FileStore>) {
    let dir = std::env::temp_dir().join(format!("umcp-oauth-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("tokens.json");
    (dir, Arc::new(FileStore::new(path)))
}

/// A device sign-in whose prompt hands what the user is shown to the test.
fn device_config(shown: Sender<DeviceAuthorization>, store: &Arc<FileStore>) -> OAuthConfig {
    let shown = Mutex::new(shown);
    OAuthConfig::device(move |device: &DeviceAuthorization| {
        let _ = shown.lock().unwrap().send(device.clone());
        Ok(())
    })
    .token_store(Arc::clone(store) as Arc<dyn TokenStore>)
    .client_name("umcp interop")
}

fn whoami(servers: &Servers, oauth: &Arc<OAuth>) -> String {
    let config = HttpConfig::new(servers.mcp_url())
        .credentials(Arc::clone(oauth) as Arc<dyn CredentialProvider>);
    let client = Client::connect(config).expect("connected with the token");
    let result = client.call_tool("whoami", json!({})).expect("whoami");
    client.close();
    result.content[0].as_text().expect("text").to_owned()
}

fn auth_error(result: umcp::Result<()>) -> umcp::AuthError {
    match result {
        Err(Error::Auth(e)) => *e,
        other => panic!("expected an authorization error, got {other:?}"),
    }
}

#[test]
fn a_device_sign_in_approved_at_the_server_lets_the_client_in_and_sign_out_revokes() {
    if peers::skip_interop() {
        return;
    }
    let servers = Servers::start(&[]);
    let (dir, store) = store("device");
    let (shown, seen) = channel();
    let oauth = Arc::new(OAuth::new(servers.mcp_url(), device_config(shown, &store)).unwrap());
    let approver = {
        let auth = servers.auth.url("");
        std::thread::spawn(move || {
            let device = seen
                .recv_timeout(Duration::from_secs(30))
                .expect("a code shown");
            // The user opens the page and enters the code there.
            ureq::post(&format!("{auth}/device"))
                .send_form([
                    ("user_code", device.user_code.as_str()),
                    ("action", "approve"),
                ])
                .expect("approved");
            device
        })
    };
    oauth
        .authorize_within(Duration::from_secs(60), &CancelHandle::new())
        .expect("signed in");
    let device = approver.join().unwrap();
    assert_eq!(device.verification_uri, servers.auth.url("/device"));
    let complete = device.verification_uri_complete.as_deref().unwrap();
    assert!(complete.contains(&device.user_code), "{complete}");

    // The MCP server took the token: a bearer of the scopes the resource asked for.
    let who = whoami(&servers, &oauth);
    assert!(who.starts_with("alice via "), "{who}");
    assert!(who.contains("mcp:tools"), "{who}");
    let stats = servers.stats();
    let polls = &stats["grants"]["urn:ietf:params:oauth:grant-type:device_code"];
    assert!(polls.as_u64().is_some_and(|n| n >= 1), "{stats}");
    assert_eq!(
        stats["registered"],
        json!(1),
        "dynamic registration for the device grant"
    );

    // A new program with the same store needs no prompt.
    let (unused, _never) = channel();
    let again = Arc::new(OAuth::new(servers.mcp_url(), device_config(unused, &store)).unwrap());
    assert!(again.has_token().unwrap());
    assert_eq!(whoami(&servers, &again), who);
    let listed = SignIn::list(store.as_ref()).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].issuer, servers.auth.url(""));
    assert!(listed[0].refreshable);
    let text = std::fs::read_to_string(store.path()).unwrap();
    let token = store
        .load(&servers.mcp_url(), None)
        .unwrap()
        .unwrap()
        .token
        .unwrap();
    assert!(!format!("{listed:?}").contains(&token.access_token));
    assert!(
        text.contains(&token.access_token),
        "the file store holds it"
    );

    // Signing out revokes the refresh and the access token there, and forgets them here.
    let revocation = again.logout().unwrap();
    assert!(matches!(revocation, Revocation::Revoked), "{revocation:?}");
    assert_eq!(
        servers.stats()["revocations"],
        json!(["refresh_token", "access_token"])
    );
    assert!(SignIn::list(store.as_ref()).unwrap().is_empty());
    let config = HttpConfig::new(servers.mcp_url())
        .header("Authorization", format!("Bearer {}", token.access_token));
    assert!(
        matches!(Client::connect(config), Err(Error::Unauthorized(_))),
        "the revoked token is refused"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_refused_device_sign_in_ends_with_access_denied() {
    if peers::skip_interop() {
        return;
    }
    let servers = Servers::start(&[]);
    let (dir, store) = store("denied");
    let (shown, seen) = channel();
    let oauth = OAuth::new(servers.mcp_url(), device_config(shown, &store)).unwrap();
    let started = Instant::now();
    let decider = std::thread::scope(|scope| {
        let servers = &servers;
        let refuse = scope.spawn(move || {
            let device = seen.recv_timeout(Duration::from_secs(30)).expect("a code");
            servers.decide(&device.user_code, false);
        });
        let result = oauth.authorize_within(Duration::from_secs(60), &CancelHandle::new());
        refuse.join().unwrap();
        result
    });
    let error = auth_error(decider);
    assert_eq!(error.error.as_deref(), Some("access_denied"), "{error}");
    assert!(error.message.contains("refused"), "{error}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert!(!oauth.has_token().unwrap());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn slow_down_adds_five_seconds_to_the_interval() {
    if peers::skip_interop() {
        return;
    }
    // The server advertises one second but wants three between polls.
    let servers = Servers::start(&["--interval", "1", "--enforced-interval", "3"]);
    let (dir, store) = store("slow");
    let (shown, seen) = channel();
    let oauth = OAuth::new(servers.mcp_url(), device_config(shown, &store)).unwrap();
    let result = std::thread::scope(|scope| {
        let servers = &servers;
        scope.spawn(move || {
            let device = seen.recv_timeout(Duration::from_secs(30)).expect("a code");
            // Approved once the server has answered slow_down (the second poll, a second in).
            let until = Instant::now() + Duration::from_secs(20);
            while servers.stats()["polls"].as_array().unwrap().len() < 2 && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(100));
            }
            servers.decide(&device.user_code, true);
        });
        oauth.authorize_within(Duration::from_secs(60), &CancelHandle::new())
    });
    result.expect("signed in after slowing down");
    let polls: Vec<f64> = servers.stats()["polls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_f64().unwrap())
        .collect();
    assert_eq!(polls.len(), 3, "pending, slow_down, tokens: {polls:?}");
    let (first, slowed) = (polls[1] - polls[0], polls[2] - polls[1]);
    assert!(
        (0.8..2.5).contains(&first),
        "the advertised interval first: {polls:?}"
    );
    assert!(slowed >= 5.8, "six seconds after slow_down: {polls:?}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_expired_device_code_ends_the_wait_and_so_do_the_deadline_and_cancel() {
    if peers::skip_interop() {
        return;
    }
    // Codes live two seconds, though the server advertises ten minutes.
    let servers = Servers::start(&["--device-lifetime", "2"]);
    let (dir, store) = store("expired");
    let (shown, _seen) = channel();
    let oauth = OAuth::new(servers.mcp_url(), device_config(shown, &store)).unwrap();
    let started = Instant::now();
    let expired = oauth.authorize_within(Duration::from_secs(60), &CancelHandle::new());
    let error = auth_error(expired);
    assert_eq!(error.error.as_deref(), Some("expired_token"), "{error}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );

    // Nobody approves: the caller's deadline ends the polling.
    let servers = Servers::start(&[]);
    let (shown, _seen) = channel();
    let oauth = OAuth::new(servers.mcp_url(), device_config(shown, &store)).unwrap();
    let started = Instant::now();
    let late = oauth.authorize_within(Duration::from_secs(3), &CancelHandle::new());
    assert!(matches!(late, Err(Error::Timeout { .. })), "{late:?}");
    let took = started.elapsed();
    assert!(
        (Duration::from_secs(3)..Duration::from_secs(6)).contains(&took),
        "{took:?}"
    );

    // And a cancel, at once.
    let cancel = CancelHandle::new();
    let (shown, seen) = channel();
    let oauth = OAuth::new(servers.mcp_url(), device_config(shown, &store)).unwrap();
    let stopper = cancel.clone();
    std::thread::spawn(move || {
        let _ = seen.recv_timeout(Duration::from_secs(30));
        std::thread::sleep(Duration::from_millis(300));
        stopper.cancel();
    });
    let started = Instant::now();
    let cancelled = oauth.authorize_within(Duration::from_secs(60), &cancel);
    assert!(
        matches!(cancelled, Err(Error::Cancelled { .. })),
        "{cancelled:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// The browser elsewhere: approves the authorization URL at the server's consent page, and
/// returns the address it was redirected to, changed by `tamper`.
fn browse(auth: &str, url: &str, tamper: impl Fn(String) -> String) -> String {
    let page = ureq::get(url).call().expect("the consent page");
    assert_eq!(page.status(), 200);
    let query = url.split_once('?').map(|(_, q)| q).unwrap_or_default();
    let agent = ureq::Agent::config_builder()
        .max_redirects(0)
        .http_status_as_error(false)
        .build()
        .new_agent();
    let answer = agent
        .post(&format!("{auth}/authorize?{query}"))
        .send_form([("action", "approve")])
        .expect("approved");
    assert_eq!(answer.status(), 302);
    let location = answer.headers()["location"].to_str().unwrap().to_owned();
    tamper(location)
}

/// A code flow through a [`PasteHandler`] whose user pastes what `browse` returns.
fn paste_sign_in(servers: &Servers, tamper: fn(String) -> String) -> umcp::Result<Arc<OAuth>> {
    let (reader, writer) = std::io::pipe().unwrap();
    let writer = Mutex::new(writer);
    let auth = servers.auth.url("");
    let handler = PasteHandler::new(move |prompt: PastePrompt<'_>| {
        if let PastePrompt::Open { url, .. } = prompt {
            let pasted = browse(&auth, url, tamper);
            writeln!(writer.lock().unwrap(), "{pasted}")?;
        }
        Ok(())
    })
    .input(std::io::BufReader::new(reader))
    .redirect_uri("http://127.0.0.1:1/callback");
    let oauth = Arc::new(OAuth::new(servers.mcp_url(), OAuthConfig::new(handler))?);
    oauth.authorize_within(Duration::from_secs(60), &CancelHandle::new())?;
    Ok(oauth)
}

#[test]
fn a_pasted_redirect_finishes_a_code_flow_and_another_state_or_issuer_is_refused() {
    if peers::skip_interop() {
        return;
    }
    let servers = Servers::start(&[]);
    let oauth = paste_sign_in(&servers, |location| location).expect("signed in by pasting");
    assert!(whoami(&servers, &oauth).starts_with("alice via "));
    assert_eq!(servers.stats()["grants"]["authorization_code"], json!(1));

    let other_state = paste_sign_in(&servers, |location| {
        location.replace("state=", "state=forged")
    });
    let error = auth_error(other_state.map(drop));
    assert!(error.message.contains("state"), "{error}");
    let other_issuer = paste_sign_in(&servers, |location| {
        location.replace("iss=http", "iss=https")
    });
    let error = auth_error(other_issuer.map(drop));
    assert!(error.message.contains("issuer"), "{error}");
    assert_eq!(
        servers.stats()["grants"]["authorization_code"],
        json!(1),
        "neither code was redeemed"
    );
}

/// Run as a child process by the next test: refreshes the expired token of the store at
/// `UMCP_REFRESH_STORE` for `UMCP_REFRESH_SERVER`, then uses it.
#[test]
fn refresh_child() {
    let (Ok(path), Ok(server)) = (
        std::env::var("UMCP_REFRESH_STORE"),
        std::env::var("UMCP_REFRESH_SERVER"),
    ) else {
        return;
    };
    let store = Arc::new(FileStore::new(path));
    let config = OAuthConfig::device(|_: &DeviceAuthorization| panic!("no prompt: a refresh"))
        .token_store(store)
        .refresh_margin(Duration::ZERO);
    let oauth = Arc::new(OAuth::new(&server, config).unwrap());
    let headers = oauth.headers(&server).expect("refreshed");
    assert!(!headers.is_empty());
    let client = Client::connect(
        HttpConfig::new(&server).credentials(Arc::clone(&oauth) as Arc<dyn CredentialProvider>),
    )
    .expect("connected with the refreshed token");
    client.call_tool("whoami", json!({})).expect("whoami");
    client.close();
}

#[test]
fn two_processes_refreshing_one_expired_token_make_one_refresh_request() {
    if peers::skip_interop() {
        return;
    }
    let servers = Servers::start(&["--access-token-ttl", "2"]);
    let (dir, store) = store("refresh");
    let (shown, seen) = channel();
    let config = device_config(shown, &store).refresh_margin(Duration::ZERO);
    let oauth = Arc::new(OAuth::new(servers.mcp_url(), config).unwrap());
    std::thread::scope(|scope| {
        let servers = &servers;
        scope.spawn(move || {
            let device = seen.recv_timeout(Duration::from_secs(30)).expect("a code");
            servers.decide(&device.user_code, true);
        });
        oauth
            .authorize_within(Duration::from_secs(60), &CancelHandle::new())
            .expect("signed in");
    });
    let before = store
        .load(&servers.mcp_url(), None)
        .unwrap()
        .unwrap()
        .token
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    let child = || {
        Command::new(std::env::current_exe().unwrap())
            .args(["refresh_child", "--exact", "--nocapture"])
            .env("UMCP_REFRESH_STORE", store.path())
            .env("UMCP_REFRESH_SERVER", servers.mcp_url())
            // Captured: the child's own `test result` line is not this run's.
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("a child")
    };
    let passed = |child: std::process::Child| {
        let output = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "a child failed:\n{text}");
    };
    let (first, second) = (child(), child());
    passed(first);
    passed(second);
    let stats = servers.stats();
    assert_eq!(
        stats["grants"]["refresh_token"],
        json!(1),
        "one refresh: {stats}"
    );
    // The rotated refresh token is the one kept, and it works.
    let after = store
        .load(&servers.mcp_url(), None)
        .unwrap()
        .unwrap()
        .token
        .unwrap();
    assert_ne!(after.refresh_token, before.refresh_token);
    std::thread::sleep(Duration::from_millis(2500));
    let mut third = child();
    assert!(
        third.wait().unwrap().success(),
        "a later refresh with the rotated token"
    );
    assert_eq!(servers.stats()["grants"]["refresh_token"], json!(2));
    let _ = std::fs::remove_dir_all(dir);
}
