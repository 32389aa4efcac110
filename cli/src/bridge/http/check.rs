//! The checks a stateless-era request over HTTP must pass before its body is acted on: the
//! routing headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`) present and equal to
//! what the body says, a Base64-encoded value (`=?base64?…?=`) decoded first; a request that
//! fails is refused with 400 and `HeaderMismatch` (-32020). And who may ask at all: the
//! bearer token, and a web page's `Origin` (403 for one not allowed: DNS rebinding).

use serde_json::Value;
use umcp::jsonrpc::{ErrorCode, ErrorObject, Request};

use super::message;
use crate::bridge::wire::stated_version;

/// The methods whose `Mcp-Name` header names what they act on, and where in the params.
fn named_by(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    }
}

/// Checks a stateless-era request's headers against its body.
pub fn routing(http: &message::Request, request: &Request) -> Result<(), ErrorObject> {
    let params = request.params.as_ref();
    let stated = stated_version(params).unwrap_or_default();
    let mismatch = |what: String| ErrorObject::new(ErrorCode::HEADER_MISMATCH, what);
    match http.header("MCP-Protocol-Version") {
        Some(version) if version == stated => {}
        Some(version) => {
            return Err(mismatch(format!(
                "MCP-Protocol-Version {version} differs from the _meta's {stated}"
            )))
        }
        None => return Err(mismatch("no MCP-Protocol-Version header".into())),
    }
    match http.header("Mcp-Method") {
        Some(method) if method == request.method => {}
        Some(method) => {
            return Err(mismatch(format!(
                "Mcp-Method {method} differs from the body's {}",
                request.method
            )))
        }
        None => return Err(mismatch("no Mcp-Method header".into())),
    }
    let Some(key) = named_by(&request.method) else {
        return Ok(());
    };
    let body = params.and_then(|p| p.get(key)).and_then(Value::as_str);
    let header = http.header("Mcp-Name").map(decoded);
    match (header, body) {
        (Some(Some(header)), Some(body)) if header == body => Ok(()),
        (None, _) => Err(mismatch("no Mcp-Name header".into())),
        _ => Err(mismatch(format!(
            "Mcp-Name does not match the body's {key}"
        ))),
    }
}

/// A header value as it was meant: `=?base64?…?=` decoded; `None` for one that does not
/// decode to text.
fn decoded(value: &str) -> Option<String> {
    let Some(inner) = value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    else {
        return Some(value.to_owned());
    };
    String::from_utf8(base64(inner)?).ok()
}

/// Standard Base64 (padding optional).
fn base64(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let digits = text.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for group in digits.chunks(4) {
        if group.len() == 1 {
            return None;
        }
        let mut bits = 0u32;
        for (i, c) in group.iter().enumerate() {
            bits |= value(*c)? << (18 - 6 * i);
        }
        let bytes = bits.to_be_bytes();
        out.extend_from_slice(&bytes[1..group.len()]);
    }
    Some(out)
}

/// Whether a request from web page `origin` may come in: none (not a browser), a page of
/// this machine (`localhost`, `127.0.0.1`, `[::1]`, any port), or one of `allowed`.
pub fn origin_allowed(origin: Option<&str>, allowed: &[String]) -> bool {
    let Some(origin) = origin else {
        return true;
    };
    if allowed.iter().any(|a| a.trim_end_matches('/') == origin) {
        return true;
    }
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let host = match rest.strip_prefix('[') {
        Some(v6) => v6.split(']').next().map(|h| format!("[{h}]")),
        None => rest.split(':').next().map(str::to_owned),
    };
    matches!(host.as_deref(), Some("localhost" | "127.0.0.1" | "[::1]"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_sentinels_are_decoded() {
        assert_eq!(decoded("plain").as_deref(), Some("plain"));
        assert_eq!(
            decoded("=?base64?SGVsbG8sIOS4lueVjA==?=").as_deref(),
            Some("Hello, 世界")
        );
        assert_eq!(
            decoded("=?base64?IHBhZGRlZCA=?=").as_deref(),
            Some(" padded ")
        );
        assert_eq!(decoded("=?base64?*?="), None);
    }

    #[test]
    fn only_pages_of_this_machine_or_allowed_ones_come_in() {
        let allowed = vec!["https://app.example.com".to_owned()];
        assert!(origin_allowed(None, &allowed));
        assert!(origin_allowed(Some("http://localhost:6274"), &allowed));
        assert!(origin_allowed(Some("http://127.0.0.1"), &allowed));
        assert!(origin_allowed(Some("http://[::1]:8080"), &allowed));
        assert!(origin_allowed(Some("https://app.example.com"), &allowed));
        assert!(!origin_allowed(Some("http://localhost.evil.com"), &allowed));
        assert!(!origin_allowed(Some("http://evil.com"), &allowed));
        assert!(!origin_allowed(Some("null"), &allowed));
    }
}
