//! A loopback MCP server protected by OAuth, and its authorization server, on one tiny_http
//! listener: protected resource metadata, authorization server metadata in the places the
//! spec allows, dynamic registration, the authorization endpoint (which redirects at once),
//! and the token endpoint (authorization code with PKCE, refresh, client credentials).
//!
//! Every secret it issues contains `SECRET`, so tests can check that none reaches a log, and
//! it never grants a scope whose name ends in `never`.

#![allow(dead_code)] // Each test uses a different part of this module.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::http_server::{serve, Reply, Seen, Server};

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

/// What the fixture does; tests change it with [`AuthServer::update`].
#[derive(Debug, Clone)]
pub struct Setup {
    pub prm: Prm,
    pub prm_in_challenge: bool,
    /// The PRM `resource` (default: the MCP endpoint URL).
    pub prm_resource: Option<String>,
    pub prm_scopes: Option<Vec<String>>,
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
    /// Advertise ES256 DPoP proofs and bind tokens to the proof's key (RFC 9449).
    pub dpop: bool,
    /// Both servers demand their DPoP nonce (`AS_NONCE`, `RS_NONCE`).
    pub dpop_nonce: bool,
    /// The token endpoint demands a new nonce every time and never accepts one.
    pub dpop_nonce_never: bool,
    /// The `issuer` the metadata claims, when not the real one.
    pub metadata_issuer: Option<String>,
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
            dpop: false,
            dpop_nonce: false,
            dpop_nonce_never: false,
            metadata_issuer: None,
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
    /// `(state, code_challenge)` of every authorization request.
    authorizations: Vec<HashMap<String, String>>,
    /// DPoP-bound access tokens and the thumbprint of their key.
    dpop_tokens: HashMap<String, String>,
    proofs: Vec<Proof>,
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

    /// The query parameters of each authorization request.
    pub fn authorizations(&self) -> Vec<HashMap<String, String>> {
        self.inner.lock().unwrap().authorizations.clone()
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

fn handle(inner: &Mutex<Inner>, base: &str, seen: Seen, reply: Reply) {
    let delay = inner.lock().unwrap().setup.mcp_delay;
    if seen.path == "/mcp" {
        std::thread::sleep(delay);
    }
    let mut inner = inner.lock().unwrap();
    inner.requests.push(seen.clone());
    let setup = inner.setup.clone();
    let path = seen.path.split('?').next().unwrap_or_default().to_owned();
    let issuer = format!("{base}{}", setup.issuer_path);
    let ip = &setup.issuer_path;
    let prm_url = match setup.prm {
        Prm::PathBased => Some(format!("{base}/.well-known/oauth-protected-resource/mcp")),
        Prm::Root => Some(format!("{base}/.well-known/oauth-protected-resource")),
        Prm::Custom => Some(format!("{base}/custom/prm.json")),
        Prm::Absent => None,
    };
    let metadata_path = match (setup.metadata, ip.is_empty()) {
        (Metadata::OAuth, _) => Some(format!("/.well-known/oauth-authorization-server{ip}")),
        (Metadata::OpenIdInsert, _) => Some(format!("/.well-known/openid-configuration{ip}")),
        (Metadata::OpenIdAppend, _) => Some(format!("{ip}/.well-known/openid-configuration")),
        (Metadata::Absent, _) => None,
    };
    match (seen.method.as_str(), path.as_str()) {
        ("POST", "/mcp") => mcp(&mut inner, &setup, prm_url.as_deref(), base, &seen, reply),
        ("GET" | "DELETE", "/mcp") => reply.status(405, &[]),
        ("GET", p) if prm_url.as_deref() == Some(&format!("{base}{p}")) => {
            let resource = setup.prm_resource.clone().unwrap_or_else(|| {
                if setup.prm == Prm::Root {
                    base.to_owned()
                } else {
                    format!("{base}/mcp")
                }
            });
            let mut prm = json!({"resource": resource, "authorization_servers": [issuer]});
            if let Some(scopes) = &setup.prm_scopes {
                prm["scopes_supported"] = json!(scopes);
            }
            reply.json(200, &[], &prm.to_string());
        }
        ("GET", p) if metadata_path.as_deref() == Some(p) => {
            let mut doc = json!({
                "issuer": setup.metadata_issuer.clone().unwrap_or_else(|| issuer.clone()),
                "authorization_endpoint": setup.authorization_endpoint.clone()
                    .unwrap_or_else(|| format!("{issuer}/authorize")),
                "token_endpoint": format!("{issuer}/token"),
                "response_types_supported": ["code"],
                "grant_types_supported": setup.grant_types,
                "token_endpoint_auth_methods_supported": setup.auth_methods,
            });
            if setup.registration {
                doc["registration_endpoint"] = json!(format!("{issuer}/register"));
            }
            if setup.pkce_listed {
                doc["code_challenge_methods_supported"] = json!(["S256"]);
            }
            if setup.cimd {
                doc["client_id_metadata_document_supported"] = json!(true);
            }
            if let Some(scopes) = &setup.as_scopes {
                doc["scopes_supported"] = json!(scopes);
            }
            if setup.dpop {
                doc["dpop_signing_alg_values_supported"] = json!(["ES256"]);
            }
            reply.json(200, &[], &doc.to_string());
        }
        ("POST", p) if p == format!("{ip}/register") => register(&mut inner, &setup, &seen, reply),
        ("GET", p) if p == format!("{ip}/authorize") => authorize(&mut inner, &seen, reply),
        ("POST", p) if p == format!("{ip}/token") => {
            token(&mut inner, &setup, &issuer, &seen, reply)
        }
        _ => reply.json(404, &[], r#"{"error":"not_found"}"#),
    }
}

fn mcp(
    inner: &mut Inner,
    setup: &Setup,
    prm_url: Option<&str>,
    base: &str,
    seen: &Seen,
    reply: Reply,
) {
    let authorization = seen.header("authorization").unwrap_or_default();
    let (scheme, token) = authorization.split_once(' ').unwrap_or_default();
    let mut hints = Vec::new();
    if let (Some(url), true) = (prm_url, setup.prm_in_challenge || setup.prm == Prm::Custom) {
        hints.push(format!("resource_metadata=\"{url}\""));
    }
    if let Some(jkt) = inner.dpop_tokens.get(token).cloned() {
        // RFC 9449 §7: the DPoP scheme and a proof by the bound key for this request.
        let proof = seen.header("dpop").map(|p| Proof::decode("mcp", p));
        let valid = proof.as_ref().is_some_and(|p| {
            scheme == "DPoP"
                && p.header["typ"] == "dpop+jwt"
                && p.thumbprint() == jkt
                && p.claims["htm"] == seen.method.as_str()
                && p.claims["htu"] == format!("{base}/mcp").as_str()
                && p.claims["ath"] == base64url(&Sha256::digest(token.as_bytes())).as_str()
        });
        let nonce_ok = !setup.dpop_nonce
            || proof
                .as_ref()
                .is_some_and(|p| p.claims["nonce"] == RS_NONCE);
        inner.proofs.extend(proof);
        if !valid {
            return reply.json(
                401,
                &[("WWW-Authenticate", "DPoP error=\"invalid_token\"")],
                r#"{"error":"invalid_token"}"#,
            );
        }
        if !nonce_ok {
            return reply.json(
                401,
                &[
                    ("WWW-Authenticate", "DPoP error=\"use_dpop_nonce\""),
                    ("DPoP-Nonce", RS_NONCE),
                ],
                r#"{"error":"use_dpop_nonce"}"#,
            );
        }
    } else if scheme != "Bearer" {
        inner
            .proofs
            .extend(seen.header("dpop").map(|p| Proof::decode("mcp", p)));
    }
    let Some(scopes) = inner.tokens.get(token).cloned() else {
        if let Some(scope) = &setup.challenge_scope {
            hints.push(format!("scope=\"{scope}\""));
        }
        let challenge = format!("Bearer {}", hints.join(", "));
        return reply.json(
            401,
            &[("WWW-Authenticate", &challenge)],
            r#"{"error":"invalid_token"}"#,
        );
    };
    let method = seen.rpc_method().unwrap_or_default();
    if let (Some(needed), "tools/call") = (&setup.call_scope, method.as_str()) {
        if !needed.split(' ').all(|s| scopes.iter().any(|x| x == s)) {
            hints.push(format!("scope=\"{needed}\""));
            hints.push("error=\"insufficient_scope\"".into());
            let challenge = format!("Bearer {}", hints.join(", "));
            return reply.json(
                403,
                &[("WWW-Authenticate", &challenge)],
                r#"{"error":"insufficient_scope"}"#,
            );
        }
    }
    let id = seen.rpc_id();
    let result = match method.as_str() {
        "initialize" => json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "auth-fixture", "version": "1"}
        }),
        "tools/list" => json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}),
        "tools/call" => json!({"content": [{"type": "text", "text": "ok"}]}),
        m if m.starts_with("notifications/") => return reply.status(202, &[]),
        _ => json!({}),
    };
    reply.json(
        200,
        &[],
        &json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
    );
}

fn register(inner: &mut Inner, setup: &Setup, seen: &Seen, reply: Reply) {
    inner.counter += 1;
    let client_id = format!("client-{}", inner.counter);
    let body = seen.json();
    let secret = setup
        .issue_secret
        .then(|| format!("cs-SECRET-{}", inner.counter));
    let method = setup
        .registered_method
        .clone()
        .or_else(|| {
            body["token_endpoint_auth_method"]
                .as_str()
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "client_secret_basic".into());
    let mut answer = json!({"client_id": client_id, "redirect_uris": body["redirect_uris"]});
    if let Some(secret) = &secret {
        answer["client_secret"] = json!(secret);
    }
    if setup.registered_method.is_some() {
        answer["token_endpoint_auth_method"] = json!(method);
    }
    inner.clients.insert(
        client_id,
        RegisteredClient {
            secret,
            method,
            metadata: body,
        },
    );
    reply.json(201, &[], &answer.to_string());
}

fn authorize(inner: &mut Inner, seen: &Seen, reply: Reply) {
    let query = params(
        seen.path
            .split_once('?')
            .map(|(_, q)| q)
            .unwrap_or_default(),
    );
    inner.authorizations.push(query.clone());
    let client_id = query.get("client_id").cloned().unwrap_or_default();
    let known = inner.clients.contains_key(&client_id) || client_id.starts_with("https://");
    let Some(redirect_uri) = query.get("redirect_uri").filter(|_| known) else {
        return reply.json(400, &[], r#"{"error":"invalid_request"}"#);
    };
    inner.counter += 1;
    let code = format!("code-SECRET-{}", inner.counter);
    // Scopes ending in `never` are never granted, for tests of endless step-ups.
    let scope = query
        .get("scope")
        .map(|s| {
            s.split(' ')
                .filter(|s| !s.ends_with("never"))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    inner.codes.insert(
        code.clone(),
        Code {
            client_id,
            challenge: query.get("code_challenge").cloned().unwrap_or_default(),
            redirect_uri: redirect_uri.clone(),
            scope,
        },
    );
    let state = query.get("state").cloned().unwrap_or_default();
    let location = format!("{redirect_uri}?code={code}&state={}", encode(&state));
    reply.status(302, &[("Location", &location)]);
}

fn token(inner: &mut Inner, setup: &Setup, issuer: &str, seen: &Seen, reply: Reply) {
    let form = params(&seen.body);
    let field = |name: &str| form.get(name).cloned().unwrap_or_default();
    let (auth_method, client_id, secret) = match seen
        .header("authorization")
        .and_then(|v| v.strip_prefix("Basic "))
    {
        Some(basic) => {
            let decoded = String::from_utf8(decode_base64(basic)).unwrap_or_default();
            let (id, secret) = decoded.split_once(':').unwrap_or_default();
            ("client_secret_basic", decode(id), Some(decode(secret)))
        }
        None if form.contains_key("client_assertion") => {
            ("private_key_jwt", field("client_id"), None)
        }
        None if form.contains_key("client_secret") => (
            "client_secret_post",
            field("client_id"),
            Some(field("client_secret")),
        ),
        None => ("none", field("client_id"), None),
    };
    let grant_type = field("grant_type");
    inner.token_requests.push(TokenRequest {
        grant_type: grant_type.clone(),
        auth_method: auth_method.into(),
        client_id: client_id.clone(),
        form: form.clone(),
    });
    let authenticated = match inner.clients.get(&client_id) {
        Some(client) => {
            client.method == auth_method && (client.secret.is_none() || client.secret == secret)
        }
        None => client_id.starts_with("https://") && auth_method == "none",
    };
    if !authenticated {
        return reply.json(
            401,
            &[],
            r#"{"error":"invalid_client","error_description":"bad client"}"#,
        );
    }
    let mut jkt = None;
    if let Some(proof) = seen.header("dpop").map(|p| Proof::decode("token", p)) {
        inner.proofs.push(proof.clone());
        let valid = proof.header["typ"] == "dpop+jwt"
            && proof.claims["htm"] == "POST"
            && proof.claims["htu"] == format!("{issuer}/token").as_str();
        if !setup.dpop || !valid {
            return reply.json(400, &[], r#"{"error":"invalid_dpop_proof"}"#);
        }
        let nonce_ok = !setup.dpop_nonce || proof.claims["nonce"] == AS_NONCE;
        if setup.dpop_nonce_never || !nonce_ok {
            inner.counter += 1;
            let nonce = if setup.dpop_nonce_never {
                format!("as-nonce-fresh-{}", inner.counter)
            } else {
                AS_NONCE.to_owned()
            };
            return reply.json(
                400,
                &[("DPoP-Nonce", &nonce)],
                r#"{"error":"use_dpop_nonce"}"#,
            );
        }
        jkt = Some(proof.thumbprint());
    }
    let scopes = match grant_type.as_str() {
        "authorization_code" => {
            let Some(code) = inner.codes.remove(&field("code")) else {
                return reply.json(400, &[], r#"{"error":"invalid_grant"}"#);
            };
            let challenge = base64url(&Sha256::digest(field("code_verifier").as_bytes()));
            if code.client_id != client_id
                || code.challenge != challenge
                || code.redirect_uri != field("redirect_uri")
            {
                return reply.json(
                    400,
                    &[],
                    r#"{"error":"invalid_grant","error_description":"pkce"}"#,
                );
            }
            code.scope
        }
        "refresh_token" => match inner.refresh_tokens.remove(&field("refresh_token")) {
            Some((owner, scopes)) if owner == client_id => scopes,
            _ => {
                return reply.json(
                    400,
                    &[],
                    r#"{"error":"invalid_grant","error_description":"expired"}"#,
                )
            }
        },
        "urn:ietf:params:oauth:grant-type:jwt-bearer" if field("assertion") == "expired" => {
            return reply.json(400, &[], r#"{"error":"invalid_grant"}"#)
        }
        "client_credentials" | "urn:ietf:params:oauth:grant-type:jwt-bearer" => form
            .get("scope")
            .map(|s| s.split(' ').map(str::to_owned).collect())
            .unwrap_or_default(),
        _ => return reply.json(400, &[], r#"{"error":"unsupported_grant_type"}"#),
    };
    inner.counter += 1;
    let access = format!("at-SECRET-{}", inner.counter);
    inner.tokens.insert(access.clone(), scopes.clone());
    if let Some(jkt) = &jkt {
        inner.dpop_tokens.insert(access.clone(), jkt.clone());
    }
    let mut answer = json!({
        "access_token": access,
        "token_type": if jkt.is_some() { "DPoP" } else { "Bearer" },
        "expires_in": setup.expires_in,
        "scope": scopes.join(" "),
    });
    if setup.issue_refresh && matches!(grant_type.as_str(), "authorization_code" | "refresh_token")
    {
        let refresh = format!("rt-SECRET-{}", inner.counter);
        inner
            .refresh_tokens
            .insert(refresh.clone(), (client_id, scopes));
        answer["refresh_token"] = json!(refresh);
    }
    reply.json(200, &[], &answer.to_string());
}

/// Form or query parameters.
pub fn params(text: &str) -> HashMap<String, String> {
    text.split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(n, v)| (decode(n), decode(v)))
        .collect()
}

/// Percent-decoding (with `+` as a space).
pub fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                out.push(u8::from_str_radix(hex, 16).unwrap_or(b'?'));
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard or URL-safe base64, with or without padding.
pub fn decode_base64(text: &str) -> Vec<u8> {
    let mut bits = 0u32;
    let mut count = 0;
    let mut out = Vec::new();
    for c in text.bytes() {
        let c = match c {
            b'-' => b'+',
            b'_' => b'/',
            b'=' => break,
            c => c,
        };
        let Some(value) = ALPHABET.iter().position(|&a| a == c) else {
            continue;
        };
        bits = bits << 6 | value as u32;
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
        }
    }
    out
}

fn base64url(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n =
            chunk.iter().fold(0u32, |acc, &b| acc << 8 | u32::from(b)) << (8 * (3 - chunk.len()));
        for i in 0..=chunk.len() {
            let index = (n >> (18 - 6 * i)) & 63;
            out.push(char::from(
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[index as usize],
            ));
        }
    }
    out
}
