//! The loopback and headless authorization handlers, and the client-credentials grant with a secret
//! or a private key JWT.

use std::sync::Arc;
use std::time::{Duration, Instant};

use umcp::auth::{AuthorizationHandler, LoopbackHandler, OAuthConfig};
use umcp::AuthStep;

#[cfg(feature = "oauth-jwt")]
use crate::auth_server;
use crate::auth_server::{params, Setup};
use crate::oauth_client::{auth_error, connect, headless, provider, start, use_server};

#[test]
fn the_loopback_handler_takes_the_browser_redirect() {
    let fixture = start(Setup::default());
    // The "browser" visits the authorization URL and follows the redirect to the listener,
    // after a stray request that must be ignored.
    let browser = |url: &str| -> std::io::Result<()> {
        let url = url.to_owned();
        std::thread::spawn(move || {
            let query = params(url.split_once('?').map(|(_, q)| q).unwrap_or_default());
            let redirect = &query["redirect_uri"];
            let stray = ureq::get(&format!("{redirect}?code=forged&state=wrong")).call();
            assert!(stray.is_err(), "a wrong state gets an error page");
            let page = ureq::get(&url)
                .call()
                .expect("the browser lands on the page")
                .into_body()
                .read_to_string()
                .unwrap();
            assert!(page.contains("Authorization complete"), "{page}");
        });
        Ok(())
    };
    let handler = LoopbackHandler::new(browser).timeout(Duration::from_secs(10));
    let oauth = provider(&fixture, OAuthConfig::new(handler));
    let started = Instant::now();
    use_server(&fixture, &oauth).expect("authorized through the browser");
    assert!(started.elapsed() < Duration::from_secs(10));
    let redirect_uri = &fixture.authorizations()[0]["redirect_uri"];
    assert!(
        redirect_uri.starts_with("http://127.0.0.1:") && redirect_uri.ends_with("/callback"),
        "{redirect_uri}"
    );
    assert_eq!(
        &fixture.token_requests()[0].form["redirect_uri"],
        redirect_uri
    );
}

/// A redirect whose `iss` is not the authorization server's may come from anyone: the page
/// the browser gets shows none of its error text, and the flow fails without taking the
/// error fields up.
#[test]
fn the_redirect_page_shows_nothing_of_an_unchecked_response() {
    let fixture = start(Setup::default());
    let (pages, landed) = std::sync::mpsc::channel();
    let browser = move |url: &str| -> std::io::Result<()> {
        let query = params(url.split_once('?').map(|(_, q)| q).unwrap_or_default());
        let forged = format!(
            "{}?error=access_denied&error_description=Call%20support%20at%20%2B1-555-0100\
             &error_uri=https%3A%2F%2Fphish.example%2Fhelp&state={}\
             &iss=https%3A%2F%2Fphish.example",
            query["redirect_uri"], query["state"]
        );
        let pages = pages.clone();
        std::thread::spawn(move || {
            let page = ureq::get(&forged)
                .call()
                .map(|r| r.into_body().read_to_string());
            let _ = pages.send(format!("{page:?}"));
        });
        Ok(())
    };
    let handler = LoopbackHandler::new(browser).timeout(Duration::from_secs(10));
    let error = auth_error(provider(&fixture, OAuthConfig::new(handler)).authorize());
    assert_eq!(error.step, AuthStep::Authorization);
    assert!(error.message.contains("issuer"), "{}", error.message);
    assert_eq!((error.error, error.error_description), (None, None));
    let page = landed
        .recv_timeout(Duration::from_secs(10))
        .expect("the browser got a page");
    assert!(page.contains("Authorization complete"), "{page}");
    for text in ["access_denied", "555-0100", "support", "phish"] {
        assert!(!page.contains(text), "{text} on the page: {page}");
    }
    assert!(fixture.token_requests().is_empty());
}

#[test]
fn the_loopback_handler_gives_up_at_its_deadline() {
    let fixture = start(Setup::default());
    let handler = LoopbackHandler::new(|_: &str| Ok(())).timeout(Duration::from_millis(300));
    let started = Instant::now();
    let error = auth_error(provider(&fixture, OAuthConfig::new(handler)).authorize());
    assert_eq!(error.step, AuthStep::Authorization);
    assert!(started.elapsed() < Duration::from_secs(5));
    let failing = LoopbackHandler::new(|_: &str| Err(std::io::Error::other("no browser")));
    let error = auth_error(provider(&fixture, OAuthConfig::new(failing)).authorize());
    assert!(error.message.contains("no browser"), "{}", error.message);
}

#[test]
fn the_headless_handler_needs_a_redirect() {
    let fixture = start(Setup {
        authorization_endpoint: Some(format!("{}/nowhere", "http://127.0.0.1:1")),
        ..Setup::default()
    });
    let error = auth_error(provider(&fixture, headless()).authorize());
    assert_eq!(error.step, AuthStep::Authorization);
    // A page instead of a redirect.
    let fixture = start(Setup::default());
    let endpoint = format!("{}/mcp", fixture.base());
    fixture.update(|s| s.authorization_endpoint = Some(endpoint));
    let error = auth_error(provider(&fixture, headless()).authorize());
    assert!(
        error.message.contains("did not redirect"),
        "{}",
        error.message
    );
}

#[test]
fn client_credentials_with_a_secret() {
    let fixture = start(Setup {
        auth_methods: vec!["client_secret_basic".into()],
        grant_types: vec!["client_credentials".into()],
        ..Setup::default()
    });
    fixture.preregister("machine", Some("m-SECRET"), "client_secret_basic");
    let config = OAuthConfig::client_credentials("machine")
        .client_secret("m-SECRET")
        .scopes(["jobs"]);
    use_server(&fixture, &provider(&fixture, config)).expect("authorized");
    let token = &fixture.token_requests()[0];
    assert_eq!(
        (token.grant_type.as_str(), token.auth_method.as_str()),
        ("client_credentials", "client_secret_basic")
    );
    assert_eq!(token.form["scope"], "jobs");
    assert_eq!(token.form["resource"], fixture.mcp_url());
    assert_eq!(fixture.count("GET", "/authorize"), 0);
}

#[cfg(feature = "oauth-jwt")]
#[test]
fn client_credentials_with_a_private_key_jwt() {
    use p256::pkcs8::{EncodePrivateKey, LineEnding};
    let fixture = start(Setup {
        auth_methods: vec!["private_key_jwt".into()],
        grant_types: vec!["client_credentials".into()],
        ..Setup::default()
    });
    fixture.preregister("machine", None, "private_key_jwt");
    let key = p256::ecdsa::SigningKey::from_bytes(&[9u8; 32].into()).unwrap();
    let pem = key.to_pkcs8_pem(LineEnding::LF).unwrap();
    let config = OAuthConfig::client_credentials("machine").private_key_pem(pem.as_str());
    use_server(&fixture, &provider(&fixture, config)).expect("authorized");
    let token = &fixture.token_requests()[0];
    assert_eq!(
        token.form["client_assertion_type"],
        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    );
    let claims = token.form["client_assertion"]
        .split('.')
        .nth(1)
        .unwrap()
        .to_owned();
    let claims: serde_json::Value =
        serde_json::from_slice(&auth_server::decode_base64(&claims)).unwrap();
    assert_eq!(
        (claims["iss"].as_str(), claims["sub"].as_str()),
        (Some("machine"), Some("machine"))
    );
    assert_eq!(claims["aud"], fixture.issuer());
}

#[test]
fn a_loopback_handler_waiting_for_one_user_still_serves_the_next() {
    let (opened, urls) = std::sync::mpsc::sync_channel::<String>(4);
    let handler = Arc::new(
        LoopbackHandler::new(move |url: &str| {
            let _ = opened.try_send(url.to_owned());
            Ok(())
        })
        .timeout(Duration::from_secs(30)),
    );
    let redirect = handler.redirect_uri().expect("bound");
    let authorize = |state: &'static str| {
        let handler = Arc::clone(&handler);
        std::thread::spawn(move || {
            handler.authorize(&format!("https://as.example/authorize?state={state}"))
        })
    };
    let first = authorize("first");
    urls.recv_timeout(Duration::from_secs(10))
        .expect("the first user is at the page");
    // While that user takes their time, another server's flow asks for the redirect URI:
    // it is known, nothing waits for the user.
    let (named, name) = std::sync::mpsc::channel();
    let asking = Arc::clone(&handler);
    std::thread::spawn(move || named.send(asking.redirect_uri()));
    let again = name
        .recv_timeout(Duration::from_secs(5))
        .expect("the redirect URI comes without waiting for the pending user");
    assert_eq!(again.expect("a redirect URI"), redirect);
    // The next authorization waits its turn, then takes its own redirect.
    let second = authorize("second");
    ureq::get(&format!("{redirect}?code=c1&state=first"))
        .call()
        .expect("the first redirect is taken");
    assert!(first
        .join()
        .unwrap()
        .expect("first")
        .ends_with("state=first"));
    urls.recv_timeout(Duration::from_secs(10))
        .expect("the second user is at the page");
    ureq::get(&format!("{redirect}?code=c2&state=second"))
        .call()
        .expect("the second redirect is taken");
    assert!(second
        .join()
        .unwrap()
        .expect("second")
        .ends_with("state=second"));
}

#[test]
fn closing_ends_the_wait_for_a_loopback_handler_another_user_holds() {
    let fixture = start(Setup::default());
    let (opened, urls) = std::sync::mpsc::sync_channel::<String>(4);
    let handler = Arc::new(
        LoopbackHandler::new(move |url: &str| {
            let _ = opened.try_send(url.to_owned());
            Ok(())
        })
        .timeout(Duration::from_secs(30)),
    );
    let config = || OAuthConfig::with_handler(Arc::clone(&handler) as _);
    // The first server's user goes through the browser at once.
    let oauth = provider(&fixture, config());
    let client = std::thread::scope(|scope| {
        let connecting = scope.spawn(|| connect(&fixture, &oauth));
        let url = urls.recv_timeout(Duration::from_secs(10)).expect("asked");
        ureq::get(&url)
            .call()
            .expect("the browser follows the redirect");
        connecting.join().unwrap().expect("connected")
    });
    // Another server's user takes their time with the same handler.
    let other = provider(&fixture, config());
    let pending = std::thread::spawn(move || other.authorize());
    let other_url = urls
        .recv_timeout(Duration::from_secs(10))
        .expect("the other user is at the page");
    // The first server now needs its user again, who must wait their turn; the client closes.
    fixture.revoke_everything();
    std::thread::scope(|scope| {
        let call = scope.spawn(|| {
            let started = Instant::now();
            (client.list_all_tools(), started.elapsed())
        });
        // Its flow is past discovery (the third), at the handler.
        while fixture.count("GET", "/.well-known/oauth-authorization-server") < 3 {
            std::thread::sleep(Duration::from_millis(10));
        }
        client.close();
        let (result, took) = call.join().unwrap();
        assert!(result.is_err(), "{result:?}");
        assert!(took < Duration::from_secs(10), "took {took:?}");
    });
    // The other user finishes, undisturbed.
    ureq::get(&other_url)
        .call()
        .expect("the other browser follows");
    pending
        .join()
        .unwrap()
        .expect("the other server is authorized");
}
