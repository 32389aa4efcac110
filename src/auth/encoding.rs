//! The encodings OAuth needs (percent-encoding, forms, base64) and the redaction of secrets
//! in what is logged.

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use serde_json::Value;

/// Parameter and member names whose values are secrets: never logged.
const SENSITIVE: [&str; 15] = [
    "access_token",
    "refresh_token",
    "id_token",
    "code",
    "code_verifier",
    "client_secret",
    "client_assertion",
    "assertion",
    "subject_token",
    "actor_token",
    "state",
    "registration_access_token",
    "password",
    // The device code polls for the tokens (RFC 8628); `token` is what RFC 7009 revokes.
    "device_code",
    "token",
];

/// Base64url without padding (RFC 4648 §5), as PKCE and JWTs use it.
pub(crate) fn base64url(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Standard base64 with padding (RFC 4648 §4), as HTTP Basic uses it.
pub(crate) fn base64(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// Percent-encodes everything but the unreserved characters of RFC 3986.
pub(crate) fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Decodes `%XX` escapes and, as forms and queries do, `+` as a space. Malformed escapes are
/// kept as they are.
pub(crate) fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(high), Some(low)) => {
                    out.push(high << 4 | low);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The value of one hexadecimal digit.
fn hex(digit: u8) -> Option<u8> {
    char::from(digit)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

/// An `application/x-www-form-urlencoded` body (or query string) of `params`.
pub(crate) fn form(params: &[(&str, &str)]) -> String {
    params
        .iter()
        .map(|(name, value)| format!("{}={}", percent_encode(name), percent_encode(value)))
        .collect::<Vec<_>>()
        .join("&")
}

/// The name/value pairs of a query string or form body (without the leading `?`).
pub(crate) fn parse_query(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| match pair.split_once('=') {
            Some((name, value)) => (percent_decode(name), percent_decode(value)),
            None => (percent_decode(pair), String::new()),
        })
        .collect()
}

/// The `Authorization` value of HTTP Basic client authentication: id and secret are
/// form-encoded first (RFC 6749 §2.3.1).
pub(crate) fn basic_auth(client_id: &str, client_secret: &str) -> String {
    let pair = format!(
        "{}:{}",
        percent_encode(client_id),
        percent_encode(client_secret)
    );
    format!("Basic {}", base64(pair.as_bytes()))
}

/// True for the names of parameters and members that hold secrets.
pub(crate) fn is_sensitive(name: &str) -> bool {
    SENSITIVE.contains(&name)
}

/// A form for the log: secret values replaced by `<redacted>`.
pub(crate) fn redact_form(params: &[(&str, &str)]) -> String {
    params
        .iter()
        .map(|(name, value)| {
            if is_sensitive(name) {
                format!("{name}=<redacted>")
            } else {
                format!("{name}={value}")
            }
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// A URL for the log: the values of secret query parameters replaced by `<redacted>`.
pub(crate) fn redact_url(url: &str) -> String {
    let Some((base, query)) = url.split_once('?') else {
        return url.to_owned();
    };
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if is_sensitive(&percent_decode(name)) => {
                format!("{name}=<redacted>")
            }
            _ => pair.to_owned(),
        })
        .collect();
    format!("{base}?{}", pairs.join("&"))
}

/// A JSON document for the log: the values of secret members replaced by `<redacted>`, at
/// any depth.
pub(crate) fn redact_json(value: &Value) -> Value {
    match value {
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(name, member)| {
                    let shown = if is_sensitive(name) {
                        Value::String("<redacted>".into())
                    } else {
                        redact_json(member)
                    };
                    (name.clone(), shown)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redact_json).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn base64_variants_match_rfc4648() {
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
    }

    #[test]
    fn percent_encoding_round_trips() {
        let text = "a b+c/d?e=f&g~h.i_j-k é";
        let encoded = percent_encode(text);
        assert_eq!(encoded, "a%20b%2Bc%2Fd%3Fe%3Df%26g~h.i_j-k%20%C3%A9");
        assert_eq!(percent_decode(&encoded), text);
        assert_eq!(percent_decode("a+b%2"), "a b%2");
        assert_eq!(percent_decode("%zz%41"), "%zzA");
        assert_eq!(percent_decode("100%"), "100%");
    }

    #[test]
    fn queries_parse_into_pairs() {
        let pairs = parse_query("code=abc%2Fd&state=x+y&flag&&empty=");
        assert_eq!(
            pairs,
            vec![
                ("code".into(), "abc/d".into()),
                ("state".into(), "x y".into()),
                ("flag".into(), String::new()),
                ("empty".into(), String::new()),
            ]
        );
    }

    #[test]
    fn basic_auth_encodes_id_and_secret_first() {
        assert_eq!(
            basic_auth("id", "s:cret"),
            format!("Basic {}", base64(b"id:s%3Acret"))
        );
    }

    #[test]
    fn redaction_hides_secrets_only() {
        let shown = redact_form(&[("grant_type", "authorization_code"), ("code", "c0de")]);
        assert_eq!(shown, "grant_type=authorization_code&code=<redacted>");
        let shown = redact_url("http://h/cb?code=c0de&state=s7&iss=x");
        assert_eq!(shown, "http://h/cb?code=<redacted>&state=<redacted>&iss=x");
        let shown = redact_json(&json!({
            "access_token": "t0k", "expires_in": 3600, "nested": [{"refresh_token": "r"}]
        }));
        assert_eq!(
            shown,
            json!({"access_token": "<redacted>", "expires_in": 3600,
                   "nested": [{"refresh_token": "<redacted>"}]})
        );
    }
}
