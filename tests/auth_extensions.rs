//! The authorization extensions against the loopback fixture: DPoP-bound tokens (proofs on
//! both servers, nonce challenges on both, the key kept across a store reload, nothing
//! secret in the log) and workload identity federation; and the credentials a `DELETE` on
//! close carries, Bearer or DPoP-bound (the token at hand, never refreshed).
#![cfg(feature = "oauth-jwt")]

use umcp_test_support::auth_server;

#[path = "common/log_capture.rs"]
mod log_capture;

#[path = "common/oauth_client.rs"]
mod oauth_client;

use std::sync::Arc;
use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, VerifyingKey};
use p256::EncodedPoint;
use umcp::auth::{FileStore, OAuth, OAuthConfig, WorkloadIdentity};
use umcp::{CredentialProvider, Error};

use auth_server::{AuthServer, NonceChallenge, Proof, Setup, AS_NONCE, RS_NONCE};
use log_capture::umcp_lines;
use oauth_client::{bearer, headless, provider, start, use_server};

fn dpop_setup() -> Setup {
    Setup {
        dpop: true,
        ..Setup::default()
    }
}

/// Verifies a proof's ES256 signature with the key in its header (RFC 9449 §4.3, step 7).
fn assert_signed(proof: &Proof) {
    let jwk = &proof.header["jwk"];
    assert!(jwk.get("d").is_none(), "no private key in a proof");
    let coordinate = |name: &str| URL_SAFE_NO_PAD.decode(jwk[name].as_str().unwrap()).unwrap();
    let point = EncodedPoint::from_affine_coordinates(
        coordinate("x").as_slice().into(),
        coordinate("y").as_slice().into(),
        false,
    );
    let key = VerifyingKey::from_encoded_point(&point).unwrap();
    let (input, signature) = proof.jwt.rsplit_once('.').unwrap();
    let signature = Signature::from_slice(&URL_SAFE_NO_PAD.decode(signature).unwrap()).unwrap();
    key.verify(input.as_bytes(), &signature)
        .expect("the proof verifies with its own key");
    assert_eq!(proof.header["alg"], "ES256");
    assert_eq!(proof.header["typ"], "dpop+jwt");
}

/// The access token the provider presents now.
fn presented(oauth: &OAuth, fixture: &AuthServer) -> Vec<(String, String)> {
    oauth
        .request_headers("POST", &fixture.mcp_url())
        .expect("headers")
}

#[test]
fn dpop_binds_the_token_and_proves_every_request() {
    let fixture = start(dpop_setup());
    let oauth = provider(&fixture, headless());
    use_server(&fixture, &oauth).expect("authorized");
    let proofs = fixture.proofs();
    let token_proofs: Vec<&Proof> = proofs.iter().filter(|p| p.at == "token").collect();
    let mcp_proofs: Vec<&Proof> = proofs.iter().filter(|p| p.at == "mcp").collect();
    assert_eq!(token_proofs.len(), 1, "one proof at the token endpoint");
    assert!(mcp_proofs.len() >= 3, "initialize, tools/list, tools/call");
    let thumbprint = token_proofs[0].thumbprint();
    let mut jtis = Vec::new();
    for proof in &proofs {
        assert_signed(proof);
        assert_eq!(proof.thumbprint(), thumbprint, "one key for the client");
        assert_eq!(proof.claims["htm"], "POST");
        let jti = proof.claims["jti"].as_str().unwrap().to_owned();
        assert!(!jtis.contains(&jti), "every proof has its own jti");
        jtis.push(jti);
    }
    assert!(token_proofs[0].claims.get("ath").is_none());
    let headers = presented(&oauth, &fixture);
    let token = headers[0].1.strip_prefix("DPoP ").expect("the DPoP scheme");
    assert_eq!(fixture.bound_key(token), Some(thumbprint));
    assert_eq!(headers[1].0, "DPoP");
    // A GET proves a GET, and the query never reaches `htu`.
    let get = oauth
        .request_headers("GET", &format!("{}?x=1", fixture.mcp_url()))
        .unwrap();
    let claims = Proof::decode("mcp", &get[1].1).claims;
    assert_eq!(claims["htm"], "GET");
    assert_eq!(claims["htu"], fixture.mcp_url());
}

#[test]
fn a_device_grant_binds_its_tokens_to_the_dpop_key() {
    let fixture = start(Setup {
        device: true,
        ..dpop_setup()
    });
    let config = OAuthConfig::device(|_: &umcp::auth::DeviceAuthorization| Ok(()))
        .timeout(Duration::from_secs(5));
    let oauth = provider(&fixture, config);
    use_server(&fixture, &oauth).expect("signed in with a device code");
    let polls: Vec<Proof> = fixture
        .proofs()
        .into_iter()
        .filter(|p| p.at == "token")
        .collect();
    assert_eq!(
        polls.len(),
        1,
        "the poll that got the tokens carried a proof"
    );
    assert_signed(&polls[0]);
    let headers = presented(&oauth, &fixture);
    let token = headers[0].1.strip_prefix("DPoP ").expect("a bound token");
    assert_eq!(fixture.bound_key(token), Some(polls[0].thumbprint()));
}

#[test]
fn a_bound_token_is_refreshed_with_a_proof_of_its_key() {
    let fixture = start(Setup {
        expires_in: 10,
        ..dpop_setup()
    });
    let oauth = provider(&fixture, headless().refresh_margin(Duration::from_secs(60)));
    use_server(&fixture, &oauth).expect("authorized, then refreshed before expiry");
    let refresh = fixture
        .token_requests()
        .into_iter()
        .position(|r| r.grant_type == "refresh_token")
        .expect("a refresh");
    let token_proofs: Vec<Proof> = fixture
        .proofs()
        .into_iter()
        .filter(|p| p.at == "token")
        .collect();
    assert!(token_proofs.len() > refresh, "the refresh carried a proof");
    assert_eq!(
        token_proofs[refresh].thumbprint(),
        token_proofs[0].thumbprint(),
        "with the key the token is bound to"
    );
    let headers = presented(&oauth, &fixture);
    let token = headers[0].1.strip_prefix("DPoP ").expect("still bound");
    assert_eq!(fixture.bound_key(token), Some(token_proofs[0].thumbprint()));
}

#[test]
fn the_headers_for_closing_present_the_token_at_hand_without_refreshing() {
    // Tokens expire within the refresh margin at once: every ordinary request refreshes.
    let fixture = start(Setup {
        expires_in: 10,
        ..Setup::default()
    });
    let oauth = provider(&fixture, headless());
    oauth.authorize().expect("authorized");
    let held = bearer(&oauth, &fixture).expect("a token");
    let refreshes = fixture.token_requests().len();
    let url = fixture.mcp_url();
    let cached = oauth.cached_headers("DELETE", &url).expect("headers");
    assert_eq!(cached, [("Authorization".to_owned(), held.clone())]);
    assert_eq!(
        fixture.token_requests().len(),
        refreshes,
        "no refresh for the headers at hand"
    );
    // Another origin gets no token, as with every request.
    let elsewhere = url.replace("127.0.0.1", "localhost");
    assert!(oauth.cached_headers("GET", &elsewhere).unwrap().is_empty());
    // The ordinary headers refresh the same token: the difference is the point.
    let fresh = oauth.request_headers("POST", &url).expect("headers");
    assert_eq!(fixture.token_requests().len(), refreshes + 1);
    assert_ne!(fresh[0].1, held);
    // Without any token, there is nothing to send and nothing is obtained.
    let none = provider(&fixture, headless()).cached_headers("DELETE", &url);
    assert!(none.unwrap().is_empty());
    assert_eq!(fixture.count("GET", "/authorize"), 1);
}

#[test]
fn the_headers_for_closing_prove_a_delete_with_the_bound_key() {
    let fixture = start(dpop_setup());
    let oauth = provider(&fixture, headless());
    oauth.authorize().expect("authorized");
    let held = presented(&oauth, &fixture);
    let cached = oauth
        .cached_headers("DELETE", &fixture.mcp_url())
        .expect("headers");
    assert_eq!(cached[0], held[0], "the same bound token");
    assert_eq!(cached[1].0, "DPoP");
    let proof = Proof::decode("mcp", &cached[1].1);
    assert_signed(&proof);
    assert_eq!(proof.claims["htm"], "DELETE");
    let token = held[0].1.strip_prefix("DPoP ").expect("the DPoP scheme");
    assert_eq!(fixture.bound_key(token), Some(proof.thumbprint()));
}

#[test]
fn dpop_can_be_turned_off() {
    let fixture = start(dpop_setup());
    let oauth = provider(&fixture, headless().dpop(false));
    use_server(&fixture, &oauth).expect("authorized");
    assert!(fixture.proofs().is_empty());
    assert!(presented(&oauth, &fixture)[0].1.starts_with("Bearer "));
}

#[test]
fn nonce_challenges_are_answered_once_on_both_servers() {
    let fixture = start(Setup {
        dpop_nonce: true,
        ..dpop_setup()
    });
    let oauth = provider(&fixture, headless());
    use_server(&fixture, &oauth).expect("authorized");
    let proofs = fixture.proofs();
    let at = |at: &str| -> Vec<Option<String>> {
        proofs
            .iter()
            .filter(|p| p.at == at)
            .map(|p| p.claims["nonce"].as_str().map(str::to_owned))
            .collect()
    };
    // The authorization server: without a nonce, then once with its nonce.
    assert_eq!(at("token"), [None, Some(AS_NONCE.to_owned())]);
    // The MCP server: the first request is challenged (the fixture serves both servers on
    // one origin, so it carries the nonce last seen there, the token endpoint's) and
    // repeated with the server's nonce, and every later request carries that nonce.
    let mcp = at("mcp");
    assert_ne!(mcp[0].as_deref(), Some(RS_NONCE));
    assert!(mcp[1..].iter().all(|n| n.as_deref() == Some(RS_NONCE)));
    assert!(mcp.len() >= 4);
}

/// A server may offer Bearer and DPoP at once (RFC 9449 §7.1): its nonce challenge, in a
/// header of its own or in one value with the Bearer challenge, is answered with the nonce,
/// not with a refresh or a new authorization.
#[test]
fn a_nonce_challenge_beside_a_bearer_challenge_is_answered_with_the_nonce() {
    for challenge in [
        NonceChallenge::BesideBearer,
        NonceChallenge::BesideBearerInOneValue,
    ] {
        let fixture = start(Setup {
            dpop_nonce: true,
            nonce_challenge: challenge,
            ..dpop_setup()
        });
        let oauth = provider(&fixture, headless());
        use_server(&fixture, &oauth).unwrap_or_else(|e| panic!("{challenge:?}: {e}"));
        let grants: Vec<String> = fixture
            .token_requests()
            .into_iter()
            .map(|r| r.grant_type)
            .collect();
        // The code's redemption, once without and once with the token endpoint's nonce.
        assert_eq!(
            grants,
            ["authorization_code", "authorization_code"],
            "{challenge:?}: no refresh"
        );
        assert_eq!(fixture.authorizations().len(), 1, "{challenge:?}");
        let mcp: Vec<Proof> = fixture
            .proofs()
            .into_iter()
            .filter(|p| p.at == "mcp")
            .collect();
        assert_ne!(mcp[0].claims["nonce"], RS_NONCE, "{challenge:?}");
        assert!(
            mcp[1..].iter().all(|p| p.claims["nonce"] == RS_NONCE),
            "{challenge:?}: repeated with the server's nonce"
        );
    }
}

#[test]
fn an_authorization_server_that_keeps_asking_for_nonces_gets_one_retry() {
    let fixture = start(Setup {
        dpop_nonce_never: true,
        ..dpop_setup()
    });
    let oauth = provider(&fixture, headless());
    let err = use_server(&fixture, &oauth).expect_err("never satisfied");
    assert!(matches!(err, Error::Auth(_)), "{err:?}");
    let token_proofs = fixture
        .proofs()
        .into_iter()
        .filter(|p| p.at == "token")
        .count();
    assert_eq!(
        token_proofs, 2,
        "the first attempt and one retry with the nonce"
    );
}

#[test]
fn the_dpop_key_survives_a_store_reload() {
    let fixture = start(dpop_setup());
    let dir = std::env::temp_dir().join(format!("umcp-dpop-{}-{}", std::process::id(), line!()));
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("tokens.json");
    let first = provider(
        &fixture,
        headless().token_store(Arc::new(FileStore::new(&path))),
    );
    use_server(&fixture, &first).expect("authorized");
    let thumbprint = fixture.proofs()[0].thumbprint();
    let stored = std::fs::read_to_string(&path).unwrap();
    assert!(
        stored.contains("dpop_key"),
        "the key is kept with the tokens"
    );
    drop(first);
    // A new process: a new provider and a new store on the same file.
    let second = provider(
        &fixture,
        headless().token_store(Arc::new(FileStore::new(&path))),
    );
    let before = fixture.token_requests().len();
    use_server(&fixture, &second).expect("the saved, bound token still works");
    assert_eq!(fixture.token_requests().len(), before, "no new token");
    let last = fixture.proofs().pop().unwrap();
    assert_eq!(
        last.thumbprint(),
        thumbprint,
        "the same key after the reload"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn no_key_material_or_proof_reaches_the_log() {
    let fixture = start(Setup {
        dpop_nonce: true,
        ..dpop_setup()
    });
    let dir = std::env::temp_dir().join(format!("umcp-dpop-{}-{}", std::process::id(), line!()));
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("tokens.json");
    let oauth = provider(
        &fixture,
        headless().token_store(Arc::new(FileStore::new(&path))),
    );
    use_server(&fixture, &oauth).expect("authorized");
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let pem = stored.to_string();
    let pem = pem
        .split("dpop_key\":\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a stored key")
        .replace("\\n", "\n");
    let key_body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    assert!(key_body.len() > 40);
    let secrets: Vec<String> = fixture
        .proofs()
        .iter()
        .flat_map(|p| {
            let mut parts: Vec<String> = p.jwt.split('.').map(str::to_owned).collect();
            parts.push(p.jwt.clone());
            parts
        })
        .chain(key_body.lines().map(str::to_owned))
        .chain([key_body.clone(), "PRIVATE KEY".to_owned()])
        .collect();
    // umcp's own lines at every level; ureq's trace dumps raw bytes and stays off in
    // production.
    let lines = umcp_lines();
    assert!(
        lines.iter().any(|l| l.contains("DPoP")),
        "the flow was logged"
    );
    for line in &lines {
        for secret in &secrets {
            assert!(!line.contains(secret.as_str()), "secret in the log: {line}");
        }
    }
    assert!(!format!("{oauth:?}").contains(&key_body));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn workload_identity_presents_the_current_platform_token() {
    let fixture = start(Setup {
        registration: false,
        expires_in: 1,
        ..Setup::default()
    });
    fixture.preregister("workload", None, "none");
    let dir = std::env::temp_dir().join(format!("umcp-wif-{}-{}", std::process::id(), line!()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("token.jwt");
    std::fs::write(&path, "platform.jwt.one\n").unwrap();
    let config = OAuthConfig::workload_identity(
        "workload",
        WorkloadIdentity::token_file(fixture.issuer(), &path),
    )
    .refresh_margin(Duration::ZERO);
    let oauth = provider(&fixture, config);
    use_server(&fixture, &oauth).expect("authorized");
    let first = fixture.token_requests()[0].clone();
    assert_eq!(
        first.form["grant_type"],
        "urn:ietf:params:oauth:grant-type:jwt-bearer"
    );
    assert_eq!(first.form["assertion"], "platform.jwt.one");
    assert_eq!(first.form["resource"], fixture.mcp_url());
    assert_eq!(first.auth_method, "none");
    assert!(fixture.authorizations().is_empty(), "no browser");
    // The platform rotates the token; the next exchange reads the new one.
    std::fs::write(&path, "platform.jwt.two").unwrap();
    fixture.revoke_access_tokens();
    use_server(&fixture, &oauth).expect("authorized again");
    let last = fixture.token_requests().pop().unwrap();
    assert_eq!(last.form["assertion"], "platform.jwt.two");
    // A refused assertion is reported, not retried with another grant.
    std::fs::write(&path, "expired").unwrap();
    fixture.revoke_access_tokens();
    let before = fixture.token_requests().len();
    let err = use_server(&fixture, &oauth).expect_err("refused");
    assert!(matches!(err, Error::Auth(_)), "{err:?}");
    assert_eq!(fixture.token_requests().len(), before + 1, "one attempt");
    let _ = std::fs::remove_dir_all(&dir);
}
