//! The fixture's token endpoint: authorization codes with PKCE, refresh tokens, client credentials
//! and DPoP.

use serde_json::json;
use sha2::{Digest, Sha256};

use super::encoding::{base64url, decode, decode_base64, params};
use super::{Inner, Proof, Setup, TokenRequest, AS_NONCE};
use crate::http_server::{Reply, Seen};

pub(super) fn token(inner: &mut Inner, setup: &Setup, issuer: &str, seen: &Seen, reply: Reply) {
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
        "urn:ietf:params:oauth:grant-type:device_code" => {
            match inner.devices.remove(&field("device_code")) {
                Some((owner, scopes)) if owner == client_id => scopes,
                _ => return reply.json(400, &[], r#"{"error":"invalid_grant"}"#),
            }
        }
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
    let user_grant = matches!(
        grant_type.as_str(),
        "authorization_code" | "refresh_token" | "urn:ietf:params:oauth:grant-type:device_code"
    );
    if setup.issue_refresh && user_grant {
        let refresh = format!("rt-SECRET-{}", inner.counter);
        inner
            .refresh_tokens
            .insert(refresh.clone(), (client_id, scopes));
        answer["refresh_token"] = json!(refresh);
    }
    reply.json(200, &[], &answer.to_string());
}
