//! A loopback MCP server protected by OAuth, and its authorization server, on one tiny_http
//! listener: protected resource metadata, authorization server metadata in the places the
//! spec allows, dynamic registration, the authorization endpoint (which redirects at once),
//! and the token endpoint (authorization code with PKCE, refresh, client credentials).
//!
//! Every secret it issues contains `SECRET`, so tests can check that none reaches a log, and
//! it never grants a scope whose name ends in `never`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::http_server::{serve, Seen, Server};

mod encoding;
mod endpoints;
mod token;

use encoding::base64url;
use endpoints::handle;

pub use encoding::{decode, decode_base64, params};

/// Where the protected resource metadata is published.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prm {
    /// `/.well-known/oauth-protected-resource/mcp`.
    PathBased,
    /// `/.well-known/oauth-protected-resource`.
    Root,
    /// `/custom/prm.json`, findable only through the challenge.
    Custom,
    /// Nowhere (a 2025-03-26 server).
    Absent,
}

/// Where the authorization server metadata is published.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metadata {
    /// RFC 8414 (path insertion for issuers with a path).
    OAuth,
    /// OpenID Connect discovery, path insertion.
    OpenIdInsert,
    /// OpenID Connect discovery, path appended.
    OpenIdAppend,
    /// Nowhere: clients fall back to `/authorize`, `/token`, `/register`.
    Absent,
}

/// How the MCP endpoint's 401 asks for its DPoP nonce (RFC 9449 §9, §7.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NonceChallenge {
    /// `WWW-Authenticate: DPoP error="use_dpop_nonce"` alone.
    Dpop,
    /// A `Bearer` challenge, then the `DPoP` one in a header of its own.
    BesideBearer,
    /// `Bearer …, DPoP error="use_dpop_nonce"` in one header value.
    BesideBearerInOneValue,
}

/// What the fixture does; tests change it with [`AuthServer::update`].
#[derive(Debug, Clone)]
pub struct Setup {
    pub prm: Prm,
    pub prm_in_challenge: bool,
    /// The PRM `resource` (default: the MCP endpoint URL).
    pub prm_resource: Option<String>,
    pub prm_scopes: Option<Vec<String>>,
    /// The PRM `authorization_servers` (default: the fixture's issuer alone).
    pub prm_authorization_servers: Option<Vec<String>>,
    pub challenge_scope: Option<String>,
    /// The issuer's path, e.g. `/tenant1`; the authorization server lives under it.
    pub issuer_path: String,
    pub metadata: Metadata,
    pub pkce_listed: bool,
    pub registration: bool,
    pub cimd: bool,
    pub auth_methods: Vec<String>,
    /// The `token_endpoint_auth_method` the registration response names.
    pub registered_method: Option<String>,
    pub issue_secret: bool,
    pub as_scopes: Option<Vec<String>>,
    pub grant_types: Vec<String>,
    pub expires_in: u64,
    pub issue_refresh: bool,
    /// Scopes `tools/call` needs (403 `insufficient_scope` otherwise).
    pub call_scope: Option<String>,
    /// An authorization endpoint to advertise instead of the real one.
    pub authorization_endpoint: Option<String>,
    /// How long the MCP endpoint takes to answer.
    pub mcp_delay: Duration,
    /// How long the token endpoint takes to answer.
    pub token_delay: Duration,
    /// Advertise ES256 DPoP proofs and bind tokens to the proof's key (RFC 9449).
    pub dpop: bool,
    /// Both servers demand their DPoP nonce (`AS_NONCE`, `RS_NONCE`).
    pub dpop_nonce: bool,
    /// The token endpoint demands a new nonce every time and never accepts one.
    pub dpop_nonce_never: bool,
    /// How the MCP endpoint asks for its nonce.
    pub nonce_challenge: NonceChallenge,
    /// The `issuer` the metadata claims, when not the real one.
    pub metadata_issuer: Option<String>,
    /// Offer the device authorization grant (RFC 8628) at `/device_authorization`; its codes
    /// are approved at once, as if the user had been quick.
    pub device: bool,
    /// Offer token revocation (RFC 7009) at `/revoke`.
    pub revocation: bool,
}

/// The token endpoint's DPoP nonce.
pub const AS_NONCE: &str = "as-nonce-1";
/// The MCP endpoint's DPoP nonce.
pub const RS_NONCE: &str = "rs-nonce-1";

/// A DPoP proof the fixture received, decoded (signatures are the tests' business).
#[derive(Debug, Clone)]
pub struct Proof {
    /// `token` or `mcp`.
    pub at: &'static str,
    pub jwt: String,
    pub header: Value,
    pub claims: Value,
}

impl Proof {
    pub fn decode(at: &'static str, jwt: &str) -> Proof {
        let part = |i: usize| {
            jwt.split('.')
                .nth(i)
                .and_then(|p| serde_json::from_slice(&decode_base64(p)).ok())
                .unwrap_or(Value::Null)
        };
        Proof {
            at,
            jwt: jwt.to_owned(),
            header: part(0),
            claims: part(1),
        }
    }

    /// The RFC 7638 thumbprint of the proof's key.
    pub fn thumbprint(&self) -> String {
        let jwk = &self.header["jwk"];
        let canonical = format!(
            r#"{{"crv":"{}","kty":"{}","x":"{}","y":"{}"}}"#,
            jwk["crv"].as_str().unwrap_or_default(),
            jwk["kty"].as_str().unwrap_or_default(),
            jwk["x"].as_str().unwrap_or_default(),
            jwk["y"].as_str().unwrap_or_default()
        );
        base64url(&Sha256::digest(canonical.as_bytes()))
    }
}

impl Default for Setup {
    fn default() -> Setup {
        Setup {
            prm: Prm::PathBased,
            prm_in_challenge: true,
            prm_resource: None,
            prm_scopes: None,
            prm_authorization_servers: None,
            challenge_scope: None,
            issuer_path: String::new(),
            metadata: Metadata::OAuth,
            pkce_listed: true,
            registration: true,
            cimd: false,
            auth_methods: vec!["none".into()],
            registered_method: None,
            issue_secret: false,
            as_scopes: None,
            grant_types: vec!["authorization_code".into(), "refresh_token".into()],
            expires_in: 3600,
            issue_refresh: true,
            call_scope: None,
            authorization_endpoint: None,
            mcp_delay: Duration::ZERO,
            token_delay: Duration::ZERO,
            dpop: false,
            dpop_nonce: false,
            dpop_nonce_never: false,
            nonce_challenge: NonceChallenge::Dpop,
            metadata_issuer: None,
            device: false,
            revocation: false,
        }
    }
}

/// A registered (or pre-registered) client.
#[derive(Debug, Clone)]
pub struct RegisteredClient {
    pub secret: Option<String>,
    pub method: String,
    pub metadata: Value,
}

/// A pending authorization code.
#[derive(Debug, Clone)]
struct Code {
    client_id: String,
    challenge: String,
    redirect_uri: String,
    scope: Vec<String>,
}

/// What a token request looked like.
#[derive(Debug, Clone)]
pub struct TokenRequest {
    pub grant_type: String,
    /// `client_secret_basic`, `client_secret_post`, `private_key_jwt` or `none`.
    pub auth_method: String,
    pub client_id: String,
    pub form: HashMap<String, String>,
}

#[derive(Default)]
struct Inner {
    setup: Setup,
    counter: u64,
    clients: HashMap<String, RegisteredClient>,
    codes: HashMap<String, Code>,
    tokens: HashMap<String, Vec<String>>,
    refresh_tokens: HashMap<String, (String, Vec<String>)>,
    requests: Vec<Seen>,
    token_requests: Vec<TokenRequest>,
    /// Requests that reached the token endpoint, answered or not (counted before its delay).
    token_arrivals: usize,
    /// `(state, code_challenge)` of every authorization request.
    authorizations: Vec<HashMap<String, String>>,
    /// DPoP-bound access tokens and the thumbprint of their key.
    dpop_tokens: HashMap<String, String>,
    proofs: Vec<Proof>,
    /// Device codes issued: `(client_id, scopes)`.
    devices: HashMap<String, (String, Vec<String>)>,
    /// The form of every device authorization request.
    device_requests: Vec<HashMap<String, String>>,
    /// The `token_type_hint` of every revocation request.
    revocations: Vec<String>,
}

/// The running fixture.
pub struct AuthServer {
    server: Server,
    inner: Arc<Mutex<Inner>>,
}

impl AuthServer {
    /// Starts the fixture with `setup`.
    pub fn start(setup: Setup) -> AuthServer {
        let inner = Arc::new(Mutex::new(Inner {
            setup,
            ..Inner::default()
        }));
        let base = Arc::new(Mutex::new(String::new()));
        let server = {
            let inner = Arc::clone(&inner);
            let base = Arc::clone(&base);
            serve(move |seen, reply| {
                let base = base.lock().unwrap().clone();
                handle(&inner, &base, seen, reply);
            })
        };
        *base.lock().unwrap() = server.base.clone();
        AuthServer { server, inner }
    }

    /// The MCP endpoint.
    pub fn mcp_url(&self) -> String {
        self.server.url("/mcp")
    }

    /// The base URL.
    pub fn base(&self) -> String {
        self.server.base.clone()
    }

    /// The issuer.
    pub fn issuer(&self) -> String {
        format!(
            "{}{}",
            self.server.base,
            self.inner.lock().unwrap().setup.issuer_path
        )
    }

    /// Changes the setup.
    pub fn update(&self, change: impl FnOnce(&mut Setup)) {
        change(&mut self.inner.lock().unwrap().setup);
    }

    /// Adds a pre-registered client.
    pub fn preregister(&self, client_id: &str, secret: Option<&str>, method: &str) {
        self.inner.lock().unwrap().clients.insert(
            client_id.into(),
            RegisteredClient {
                secret: secret.map(str::to_owned),
                method: method.into(),
                metadata: Value::Null,
            },
        );
    }

    /// Makes every access token invalid (refresh tokens stay valid).
    pub fn revoke_access_tokens(&self) {
        self.inner.lock().unwrap().tokens.clear();
    }

    /// Makes every token invalid, refresh tokens too.
    pub fn revoke_everything(&self) {
        let mut inner = self.inner.lock().unwrap();
        inner.tokens.clear();
        inner.refresh_tokens.clear();
    }

    /// The paths (with queries) requested so far, in order.
    pub fn paths(&self) -> Vec<String> {
        let inner = self.inner.lock().unwrap();
        inner
            .requests
            .iter()
            .map(|s| format!("{} {}", s.method, s.path))
            .collect()
    }

    /// How many requests went to `path` (query ignored).
    pub fn count(&self, method: &str, path: &str) -> usize {
        let inner = self.inner.lock().unwrap();
        inner
            .requests
            .iter()
            .filter(|s| s.method == method && s.path.split('?').next() == Some(path))
            .count()
    }

    /// The requests to `path` (query ignored).
    pub fn requests_to(&self, path: &str) -> Vec<Seen> {
        let inner = self.inner.lock().unwrap();
        inner
            .requests
            .iter()
            .filter(|s| s.path.split('?').next() == Some(path))
            .cloned()
            .collect()
    }

    /// The token requests so far.
    pub fn token_requests(&self) -> Vec<TokenRequest> {
        self.inner.lock().unwrap().token_requests.clone()
    }

    /// How many requests reached the token endpoint, including those it has not answered yet.
    pub fn token_arrivals(&self) -> usize {
        self.inner.lock().unwrap().token_arrivals
    }

    /// The query parameters of each authorization request.
    pub fn authorizations(&self) -> Vec<HashMap<String, String>> {
        self.inner.lock().unwrap().authorizations.clone()
    }

    /// The `token_type_hint` of each revocation request, in order.
    pub fn revocations(&self) -> Vec<String> {
        self.inner.lock().unwrap().revocations.clone()
    }

    /// The form of each device authorization request.
    pub fn device_requests(&self) -> Vec<HashMap<String, String>> {
        self.inner.lock().unwrap().device_requests.clone()
    }

    /// The registered clients.
    pub fn clients(&self) -> HashMap<String, RegisteredClient> {
        self.inner.lock().unwrap().clients.clone()
    }

    /// The DPoP proofs received, in order.
    pub fn proofs(&self) -> Vec<Proof> {
        self.inner.lock().unwrap().proofs.clone()
    }

    /// The thumbprint of the key `access_token` is bound to.
    pub fn bound_key(&self, access_token: &str) -> Option<String> {
        self.inner
            .lock()
            .unwrap()
            .dpop_tokens
            .get(access_token)
            .cloned()
    }
}
