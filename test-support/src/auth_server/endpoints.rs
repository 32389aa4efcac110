//! The fixture's request router and its endpoints other than the token endpoint: the MCP endpoint,
//! registration and authorization.

use std::sync::Mutex;

use serde_json::json;
use sha2::{Digest, Sha256};

use super::encoding::{base64url, encode, params};
use super::token::token;
use super::{Code, Inner, Metadata, NonceChallenge, Prm, Proof, RegisteredClient, Setup, RS_NONCE};
use crate::http_server::{Reply, Seen};

pub(super) fn handle(inner: &Mutex<Inner>, base: &str, seen: Seen, reply: Reply) {
    let (delay, token_delay) = {
        let mut inner = inner.lock().unwrap();
        if seen.path.ends_with("/token") {
            inner.token_arrivals += 1;
        }
        (inner.setup.mcp_delay, inner.setup.token_delay)
    };
    if seen.path == "/mcp" {
        std::thread::sleep(delay);
    }
    if seen.path.ends_with("/token") {
        std::thread::sleep(token_delay);
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
            let servers = setup
                .prm_authorization_servers
                .clone()
                .unwrap_or_else(|| vec![issuer.clone()]);
            let mut prm = json!({"resource": resource, "authorization_servers": servers});
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
            if setup.device {
                doc["device_authorization_endpoint"] =
                    json!(format!("{issuer}/device_authorization"));
            }
            if setup.revocation {
                doc["revocation_endpoint"] = json!(format!("{issuer}/revoke"));
            }
            reply.json(200, &[], &doc.to_string());
        }
        ("POST", p) if setup.registration && p == format!("{ip}/register") => {
            register(&mut inner, &setup, &seen, reply)
        }
        ("GET", p) if p == format!("{ip}/authorize") => authorize(&mut inner, &seen, reply),
        ("POST", p) if setup.revocation && p == format!("{ip}/revoke") => {
            // RFC 7009 §2.2: the token is gone, whatever it was.
            let form = params(&seen.body);
            let token = form.get("token").cloned().unwrap_or_default();
            inner.tokens.remove(&token);
            inner.refresh_tokens.remove(&token);
            let hint = form.get("token_type_hint").cloned().unwrap_or_default();
            inner.revocations.push(hint);
            reply.status(200, &[])
        }
        ("POST", p) if setup.device && p == format!("{ip}/device_authorization") => {
            device_authorization(&mut inner, &issuer, &seen, reply)
        }
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
            let dpop = "DPoP error=\"use_dpop_nonce\", algs=\"ES256\"";
            let bearer = format!("Bearer {}", hints.join(", "));
            let both = format!("{bearer}, {dpop}");
            let challenges: Vec<(&str, &str)> = match setup.nonce_challenge {
                NonceChallenge::Dpop => vec![("WWW-Authenticate", dpop)],
                NonceChallenge::BesideBearer => {
                    vec![("WWW-Authenticate", &bearer), ("WWW-Authenticate", dpop)]
                }
                NonceChallenge::BesideBearerInOneValue => vec![("WWW-Authenticate", &both)],
            };
            let headers: Vec<(&str, &str)> = challenges
                .into_iter()
                .chain([("DPoP-Nonce", RS_NONCE)])
                .collect();
            return reply.json(401, &headers, r#"{"error":"use_dpop_nonce"}"#);
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
    let scope = granted(query.get("scope"));
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

/// The scopes granted of those `asked`: all but those ending in `never`, which are never
/// granted, for tests of endless step-ups.
fn granted(asked: Option<&String>) -> Vec<String> {
    asked.map_or_else(Vec::new, |s| {
        s.split(' ')
            .filter(|s| !s.ends_with("never"))
            .map(str::to_owned)
            .collect()
    })
}

/// The device authorization endpoint (RFC 8628 §3.1): a code for any known client, polled at
/// one-second intervals, and approved at once.
fn device_authorization(inner: &mut Inner, issuer: &str, seen: &Seen, reply: Reply) {
    let form = params(&seen.body);
    inner.device_requests.push(form.clone());
    let client_id = form.get("client_id").cloned().unwrap_or_default();
    if !inner.clients.contains_key(&client_id) {
        return reply.json(401, &[], r#"{"error":"invalid_client"}"#);
    }
    inner.counter += 1;
    let device_code = format!("dc-SECRET-{}", inner.counter);
    let scopes = granted(form.get("scope"));
    inner
        .devices
        .insert(device_code.clone(), (client_id, scopes));
    let answer = json!({
        "device_code": device_code,
        "user_code": format!("USER-{}", inner.counter),
        "verification_uri": format!("{issuer}/device"),
        "expires_in": 60,
        "interval": 1,
    });
    reply.json(200, &[], &answer.to_string());
}
