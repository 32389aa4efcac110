//! The one-line summaries that error messages end with: a JSON-RPC error's `data`
//! ([`Error::Rpc`](crate::Error::Rpc)) and an HTTP error's body ([`HttpError`](crate::HttpError)).

use std::fmt::{self, Write as _};

/// How many characters of an error's `data` its message shows.
const DATA_SUMMARY_CHARS: usize = 240;

/// A JSON-RPC error's `data` as one line, cut at [`DATA_SUMMARY_CHARS`]. Keys are sorted here, not
/// by `serde_json`, whose maps keep the server's order in a build with `preserve_order` (which
/// any crate of a program may turn on): the message reads the same in every build.
pub(super) struct DataSummary<'a>(pub(super) &'a serde_json::Value);

impl fmt::Display for DataSummary<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut line = Bounded {
            f,
            left: DATA_SUMMARY_CHARS,
            cut: false,
        };
        let written = match self.0 {
            serde_json::Value::String(s) => line.write_str(s),
            other => compact(&mut line, other),
        };
        match written {
            Err(_) if line.cut => line.f.write_str("…"),
            written => written,
        }
    }
}

/// Writes `value` as compact JSON with sorted object keys: what `serde_json` writes without
/// `preserve_order`. Stops at the first error (the cut of [`Bounded`]).
fn compact(out: &mut impl fmt::Write, value: &serde_json::Value) -> fmt::Result {
    use serde_json::Value;
    match value {
        Value::Null => out.write_str("null"),
        Value::Bool(b) => write!(out, "{b}"),
        Value::Number(n) => write!(out, "{n}"),
        Value::String(s) => quoted(out, s),
        Value::Array(items) => {
            out.write_char('[')?;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.write_char(',')?;
                }
                compact(out, item)?;
            }
            out.write_char(']')
        }
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.write_char('{')?;
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.write_char(',')?;
                }
                quoted(out, key)?;
                out.write_char(':')?;
                compact(out, item)?;
            }
            out.write_char('}')
        }
    }
}

/// Writes `s` as a JSON string, escaped as `serde_json` escapes it.
fn quoted(out: &mut impl fmt::Write, s: &str) -> fmt::Result {
    out.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => out.write_str("\\\""),
            '\\' => out.write_str("\\\\"),
            '\n' => out.write_str("\\n"),
            '\r' => out.write_str("\\r"),
            '\t' => out.write_str("\\t"),
            '\u{8}' => out.write_str("\\b"),
            '\u{c}' => out.write_str("\\f"),
            c if c < ' ' => write!(out, "\\u{:04x}", c as u32),
            c => out.write_char(c),
        }?;
    }
    out.write_char('"')
}

/// A writer of at most [`DATA_SUMMARY_CHARS`] characters, controls as spaces; past that it
/// notes the cut and fails, which stops whatever is writing.
struct Bounded<'a, 'f> {
    f: &'a mut fmt::Formatter<'f>,
    left: usize,
    cut: bool,
}

impl fmt::Write for Bounded<'_, '_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for c in s.chars() {
            if self.left == 0 {
                self.cut = true;
                return Err(fmt::Error);
            }
            self.left -= 1;
            self.f.write_char(if c.is_control() { ' ' } else { c })?;
        }
        Ok(())
    }
}

/// An HTTP error body as one bounded line for the message (the error keeps the whole body): an
/// HTML page's text without its tags, as proxies answer with pages; empty if nothing is readable.
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
    fn data_is_written_with_sorted_keys_whatever_the_map_order() {
        use serde_json::{json, Map, Value};
        // Keys inserted out of order: a map that keeps insertion order (`preserve_order`)
        // holds them so, a sorted one does not; the summary is the same for both.
        let mut inner = Map::new();
        inner.insert("z".into(), json!(1));
        inner.insert(
            "a".into(),
            json!([true, null, 2.5, "q\"\\\n\t\u{1}\u{8}\u{c}\r"]),
        );
        let mut outer = Map::new();
        outer.insert("m".into(), Value::Object(inner));
        outer.insert("b".into(), json!({}));
        outer.insert("é".into(), json!(-7));
        let data = Value::Object(outer);
        assert_eq!(
            DataSummary(&data).to_string(),
            r#"{"b":{},"m":{"a":[true,null,2.5,"q\"\\\n\t\u0001\b\f\r"],"z":1},"é":-7}"#
        );
        // The same as serde_json's own compact text of the value with its keys sorted.
        fn sorted(value: &Value) -> Value {
            match value {
                Value::Object(map) => {
                    let mut keys: Vec<_> = map.keys().collect();
                    keys.sort();
                    Value::Object(
                        keys.into_iter()
                            .map(|k| (k.clone(), sorted(&map[k])))
                            .collect(),
                    )
                }
                Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
                other => other.clone(),
            }
        }
        for value in [
            data,
            json!([]),
            json!(null),
            json!(u64::MAX),
            json!(-0.5e-9),
        ] {
            assert_eq!(DataSummary(&value).to_string(), sorted(&value).to_string());
        }
        // A long value is cut after the bound, wherever the cut falls.
        let long = json!({"k": vec![12345; 1000]});
        let shown = DataSummary(&long).to_string();
        assert_eq!(shown.chars().count(), DATA_SUMMARY_CHARS + 1, "{shown}");
        assert!(
            shown.starts_with("{\"k\":[12345,") && shown.ends_with('…'),
            "{shown}"
        );
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
