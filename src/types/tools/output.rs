//! Checking a tool's `structuredContent` against its `outputSchema` (JSON Schema 2020-12),
//! with the `output-validation` feature.
//!
//! The validator is [boon](https://docs.rs/boon): of the 2020-12 validators it has the
//! smallest dependency tree (56 crates against 78 for `jsonschema` without default features;
//! both mostly the `url`/`idna` stack) and passes the official JSON-Schema-Test-Suite for
//! 2020-12. References are resolved only inside the schema (`$ref` to `$defs`, `$anchor`s,
//! and the bundled meta-schemas): a loader that refuses everything replaces boon's default
//! one, so nothing is ever fetched or read from disk.

use std::error::Error as StdError;

use serde_json::Value;

use crate::error::{Error, Result};

use super::{CallToolResult, Tool};

/// Where the schema is placed for the compiler; relative references resolve against it and
/// then fail to load, as they should.
const SCHEMA_URL: &str = "urn:umcp:tool-output-schema";

/// The longest validation message kept in an error, in characters.
const MESSAGE_CHARS: usize = 600;

/// Refuses every document that is not part of the schema itself.
struct NoFetch;

impl boon::UrlLoader for NoFetch {
    fn load(&self, url: &str) -> std::result::Result<Value, Box<dyn StdError>> {
        Err(format!("{url} is outside the schema, and schemas are never fetched").into())
    }
}

impl Tool {
    /// Checks a result of this tool against its `outputSchema`, as the MCP specification asks
    /// clients to: a successful result must carry `structuredContent` that matches it.
    ///
    /// A tool without an `outputSchema`, and a result with `isError`, pass unchecked. The
    /// schema is read as JSON Schema 2020-12 unless its `$schema` names another draft.
    ///
    /// `$ref`, `$defs` and `$anchor` resolve inside the schema (and the bundled meta-schemas)
    /// only: nothing is fetched or read from disk. Before the check runs, the work it could
    /// take is estimated (every branch of `anyOf`, `oneOf` and `allOf`, through references,
    /// against the members of the result), and a schema that would take more than 100,000
    /// steps is refused: a few lines of nested `anyOf` can otherwise take hours.
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::types::{CallToolResult, Tool};
    ///
    /// let tool = Tool::new("add", json!({"type": "object"})).with_output_schema(json!({
    ///     "type": "object",
    ///     "properties": {"sum": {"$ref": "#/$defs/number"}},
    ///     "required": ["sum"],
    ///     "$defs": {"number": {"type": "number"}}
    /// }));
    /// let good: CallToolResult = serde_json::from_value(json!({
    ///     "content": [], "structuredContent": {"sum": 5}
    /// }))?;
    /// assert!(tool.validate_output(&good).is_ok());
    /// let bad: CallToolResult = serde_json::from_value(json!({
    ///     "content": [], "structuredContent": {"sum": "five"}
    /// }))?;
    /// assert!(tool.validate_output(&bad).is_err());
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Protocol`] naming the tool when the content is missing or does not match,
    /// with the validator's account of where; or when the `outputSchema` is not a schema
    /// this validator can compile (including one that refers to anything outside itself); or
    /// when checking this result could take more than 100,000 steps (branches such as `anyOf`
    /// nested through references, which can take exponential time), which is refused rather
    /// than run.
    pub fn validate_output(&self, result: &CallToolResult) -> Result<()> {
        let Some(schema) = &self.output_schema else {
            return Ok(());
        };
        if result.is_error() {
            return Ok(());
        }
        let name = &self.name;
        let content = result.structured_content.as_ref().ok_or_else(|| {
            Error::Protocol(format!(
                "tool `{name}` declares an outputSchema but returned no structuredContent"
            ))
        })?;
        if super::complexity::too_complex(schema.as_value(), content) {
            return Err(Error::Protocol(format!(
                "the outputSchema of tool `{name}` is too complex to check this result against \
                 (more than {} steps)",
                super::complexity::MAX_STEPS
            )));
        }
        let mut compiler = boon::Compiler::new();
        compiler.set_default_draft(boon::Draft::V2020_12);
        compiler.use_loader(Box::new(NoFetch));
        let mut schemas = boon::Schemas::new();
        let not_compiled = |e: boon::CompileError| {
            Error::Protocol(format!(
                "the outputSchema of tool `{name}` does not compile: {}",
                one_line(&format!("{e:#}"))
            ))
        };
        compiler
            .add_resource(SCHEMA_URL, schema.as_value().clone())
            .map_err(not_compiled)?;
        let index = compiler
            .compile(SCHEMA_URL, &mut schemas)
            .map_err(not_compiled)?;
        schemas.validate(content, index).map_err(|e| {
            Error::Protocol(format!(
                "the structuredContent of tool `{name}` does not match its outputSchema: {}",
                one_line(&format!("{e:#}"))
            ))
        })
    }
}

/// `text` on one line, whitespace runs as one space, cut at [`MESSAGE_CHARS`].
fn one_line(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match joined.char_indices().nth(MESSAGE_CHARS) {
        Some((cut, _)) => format!("{}…", &joined[..cut]),
        None => joined,
    }
}
