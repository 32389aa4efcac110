//! The one-line summaries that error messages end with: a JSON-RPC error's `data`
//! ([`Error::Rpc`](crate::Error::Rpc)) and an HTTP error's body ([`HttpError`](crate::HttpError)).

use std::fmt;

/// How many characters of an error's `data` its message shows.
const DATA_SUMMARY_CHARS: usize = 240;

/// A JSON-RPC error's `data` as one bounded line: compact JSON (a string as its text), cut
/// at [`DATA_SUMMARY_CHARS`] characters, line breaks and controls shown as spaces.
pub(super) struct DataSummary<'a>(pub(super) &'a serde_json::Value);

impl fmt::Display for DataSummary<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            serde_json::Value::String(s) => bounded(f, s.chars()),
            other => bounded(f, other.to_string().chars()),
        }
    }
}

/// An HTTP error body as one bounded line, for the message only (the whole body stays in
/// [`HttpError::body`](crate::HttpError::body)): an HTML page's text without its tags (proxies
/// and web frameworks answer errors with pages), runs of white space as one space, cut at
/// [`DATA_SUMMARY_CHARS`] characters with `…`. Empty when nothing readable is left.
pub(super) fn body_summary(body: &str) -> String {
    let body = body.trim();
    let html = body.starts_with('<');
    let mut in_tag = false;
    let mut text = String::with_capacity(body.len());
    for c in body.chars() {
        let tag = html && (c == '<' || in_tag);
        if tag {
            in_tag = c != '>';
        }
        // A tag separates words (`</title><pre>`), as white space does.
        text.push(if tag || c.is_control() { ' ' } else { c });
    }
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut chars = words.chars();
    let mut line: String = chars.by_ref().take(DATA_SUMMARY_CHARS).collect();
    if chars.next().is_some() {
        line.truncate(line.trim_end().len());
        line.push('…');
    }
    line
}

/// Writes at most [`DATA_SUMMARY_CHARS`] of `chars`, controls as spaces, and `…` when cut.
fn bounded(f: &mut fmt::Formatter<'_>, mut chars: impl Iterator<Item = char>) -> fmt::Result {
    for c in chars.by_ref().take(DATA_SUMMARY_CHARS) {
        let c = if c.is_control() { ' ' } else { c };
        write!(f, "{c}")?;
    }
    if chars.next().is_some() {
        f.write_str("…")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::Error;
    use super::*;

    #[test]
    fn rpc_display_summarises_data_on_one_bounded_line() {
        use crate::jsonrpc::{ErrorCode, ErrorObject};
        use serde_json::json;
        let plain = Error::Rpc(ErrorObject::new(ErrorCode(-32601), "Method not found"));
        assert_eq!(plain.to_string(), "server error -32601: Method not found");
        let versions = Error::Rpc(
            ErrorObject::new(ErrorCode(-32022), "Unsupported protocol version")
                .with_data(json!({"supported": ["2025-06-18"], "requested": "1999-01-01"})),
        );
        assert_eq!(
            versions.to_string(),
            "server error -32022: Unsupported protocol version \
             (data: {\"requested\":\"1999-01-01\",\"supported\":[\"2025-06-18\"]})"
        );
        let text = Error::Rpc(
            ErrorObject::new(ErrorCode(-32602), "Invalid params")
                .with_data(json!("line one\nline two")),
        );
        assert_eq!(
            text.to_string(),
            "server error -32602: Invalid params (data: line one line two)"
        );
        let huge = Error::Rpc(
            ErrorObject::new(ErrorCode(-32603), "boom").with_data(json!("é".repeat(10_000))),
        );
        let shown = huge.to_string();
        assert!(!shown.contains('\n'));
        assert!(shown.ends_with("…)"), "{shown}");
        assert_eq!(shown.matches('é').count(), DATA_SUMMARY_CHARS);
    }

    #[test]
    fn http_display_shows_the_body_on_one_bounded_line() {
        let error = |body: &str| {
            crate::HttpError {
                status: 404,
                url: "http://h/mcp".into(),
                body: body.into(),
                ..crate::HttpError::default()
            }
            .to_string()
        };
        let page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<title>Error</title>\n</head>\n\
                    <body>\n<pre>Cannot GET /mcp</pre>\n</body>\n</html>\n";
        assert_eq!(
            error(page),
            "HTTP 404 from http://h/mcp: Error Cannot GET /mcp"
        );
        assert_eq!(
            error("  Session not found\r\n\tretry  "),
            "HTTP 404 from http://h/mcp: Session not found retry"
        );
        assert_eq!(
            error("a < b and c > d"),
            "HTTP 404 from http://h/mcp: a < b and c > d"
        );
        assert_eq!(error(" \n "), "HTTP 404 from http://h/mcp");
        let long = error(&"word ".repeat(1_000));
        assert!(long.ends_with("word…"), "{long}");
        assert!(long.len() < 300, "{long}");
    }
}
