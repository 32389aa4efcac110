//! Reading the fields of one configuration entry, with `${VAR}` expansion and messages that
//! name the field.

use std::time::Duration;

use serde_json::{Map, Value};

use super::parse::ServerConfigError;
use super::vars::{expand, VarError};
pub(super) use crate::jsonrpc::value_kind as kind;

pub(super) fn entry_error(server: &str, field: Option<&str>, message: String) -> ServerConfigError {
    ServerConfigError {
        server: server.to_owned(),
        field: field.map(str::to_owned),
        message,
    }
}

/// Reads the fields of one entry (or of an object inside it), expanding variables as it goes.
pub(super) struct Entry<'a> {
    name: &'a str,
    pub(super) object: &'a Map<String, Value>,
    lookup: &'a dyn Fn(&str) -> Option<String>,
    /// Disabled entries keep unexpandable strings as written instead of failing.
    pub(super) lenient: bool,
    /// What field names are prefixed with in messages, e.g. `oauth.` inside `oauth`.
    prefix: &'a str,
}

impl<'a> Entry<'a> {
    /// A reader of the entry `name`, whose fields are `object`.
    pub(super) fn new(
        name: &'a str,
        object: &'a Map<String, Value>,
        lookup: &'a dyn Fn(&str) -> Option<String>,
    ) -> Entry<'a> {
        Entry {
            name,
            object,
            lookup,
            lenient: false,
            prefix: "",
        }
    }

    /// A reader of the object `object` inside this entry, whose fields are named
    /// `prefix` + key in messages.
    pub(super) fn nested(&self, object: &'a Map<String, Value>, prefix: &'a str) -> Entry<'a> {
        Entry {
            name: self.name,
            object,
            lookup: self.lookup,
            lenient: self.lenient,
            prefix,
        }
    }

    pub(super) fn error(&self, field: &str, message: impl Into<String>) -> ServerConfigError {
        let field = format!("{}{field}", self.prefix);
        entry_error(self.name, Some(&field), message.into())
    }

    pub(super) fn expand(&self, field: &str, text: &str) -> Result<String, ServerConfigError> {
        match expand(text, self.lookup) {
            Ok(value) => Ok(value),
            Err(VarError::Missing(_)) if self.lenient => Ok(text.to_owned()),
            Err(err) => Err(self.error(field, err.to_string())),
        }
    }

    /// `value`, which `field` names in messages, as an expanded string.
    fn text(&self, field: &str, value: &Value) -> Result<String, ServerConfigError> {
        match value {
            Value::String(s) => self.expand(field, s),
            other => Err(self.error(field, format!("must be a string, not {}", kind(other)))),
        }
    }

    pub(super) fn string(&self, key: &str) -> Result<Option<String>, ServerConfigError> {
        match self.object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => self.text(key, value).map(Some),
        }
    }

    pub(super) fn bool(&self, key: &str) -> Result<Option<bool>, ServerConfigError> {
        match self.object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => {
                Err(self.error(key, format!("must be true or false, not {}", kind(other))))
            }
        }
    }

    pub(super) fn millis(&self, key: &str) -> Result<Option<Duration>, ServerConfigError> {
        match self.object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => value
                .as_u64()
                .map(|ms| Some(Duration::from_millis(ms)))
                .ok_or_else(|| {
                    self.error(
                        key,
                        format!(
                            "must be a whole number of milliseconds, not {}",
                            kind(value)
                        ),
                    )
                }),
        }
    }

    pub(super) fn list(&self, key: &str) -> Result<Vec<String>, ServerConfigError> {
        let items = match self.object.get(key) {
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(Value::Array(items)) => items,
            Some(other) => {
                return Err(self.error(
                    key,
                    format!("must be an array of strings, not {}", kind(other)),
                ))
            }
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| self.text(&format!("{key}[{i}]"), item))
            .collect()
    }

    pub(super) fn map(&self, key: &str) -> Result<Vec<(String, String)>, ServerConfigError> {
        let entries = match self.object.get(key) {
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(Value::Object(entries)) => entries,
            Some(other) => {
                return Err(self.error(
                    key,
                    format!("must be an object of strings, not {}", kind(other)),
                ))
            }
        };
        entries
            .iter()
            .map(|(name, value)| Ok((name.clone(), self.text(&format!("{key}.{name}"), value)?)))
            .collect()
    }
}
