//! The one-line summary of a JSON-RPC error's `data` that [`Error::Rpc`](crate::Error::Rpc)'s message ends with.

use std::fmt;

/// How many characters of an error's `data` its message shows.
const DATA_SUMMARY_CHARS: usize = 240;

/// A JSON-RPC error's `data` as one bounded line: compact JSON (a string as its text), cut
/// at [`DATA_SUMMARY_CHARS`] characters, line breaks and controls shown as spaces.
pub(super) struct DataSummary<'a>(pub(super) &'a serde_json::Value);

impl fmt::Display for DataSummary<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self.0 {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let mut chars = text.chars();
        for c in chars.by_ref().take(DATA_SUMMARY_CHARS) {
            let c = if c.is_control() { ' ' } else { c };
            write!(f, "{c}")?;
        }
        if chars.next().is_some() {
            f.write_str("…")?;
        }
        Ok(())
    }
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
}
