//! Reading the fields of one configuration entry, with `${VAR}` expansion, and the error that
//! names the field at fault.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::time::Duration;

use serde_json::{Map, Value};

use super::vars::{expand, VarError};
pub(super) use crate::jsonrpc::value_kind as kind;
use crate::redact::clip;

/// Why one server entry of a configuration file could not be read.
///
/// See the example on [`ConfigFile`](super::ConfigFile).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerConfigError {
    /// The server's name (its key in the file).
    pub server: String,
    /// The offending field, e.g. `args[1]` or `env.API_KEY`, when one field is to blame.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ServerConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Names and keys are the user's text, quoted only in part when huge.
        write!(f, "server `{}`", clip(&self.server))?;
        if let Some(field) = &self.field {
            write!(f, ", field `{}`", clip(field))?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ServerConfigError {}

pub(super) fn entry_error(server: &str, field: Option<&str>, message: String) -> ServerConfigError {
    ServerConfigError {
        server: server.to_owned(),
        field: field.map(str::to_owned),
        message,
    }
}

/// What reading one entry looked at, for [`repeated`](super::repeated): a key written twice
/// is an error only where umcp reads, and not at all in a disabled entry.
#[derive(Default)]
pub(super) struct Trace {
    reads: RefCell<Vec<Read>>,
    disabled: Cell<bool>,
}

impl Trace {
    /// The fields read, in the order they were.
    pub(super) fn reads(&self) -> std::cell::Ref<'_, Vec<Read>> {
        self.reads.borrow()
    }

    /// Whether the entry is disabled.
    pub(super) fn disabled(&self) -> bool {
        self.disabled.get()
    }
}

/// One field that reading an entry looked at.
#[derive(Debug, Clone, Copy)]
pub(super) struct Read {
    /// The keys of the objects it is in, from the entry's own outwards in.
    pub(super) at: &'static [&'static str],
    pub(super) key: &'static str,
    /// Whether all of its value was read, or only the keys of it that were read in turn (of
    /// an object of settings), if any.
    pub(super) all: bool,
}

impl Read {
    /// The key `depth` objects in from the entry's own: one of `at`, then `key`.
    pub(super) fn key_at(&self, depth: usize) -> Option<&'static str> {
        match self.at.get(depth) {
            Some(key) => Some(key),
            None => (depth == self.at.len()).then_some(self.key),
        }
    }
}

/// Reads the fields of one entry (or of an object inside it), expanding variables as it goes.
pub(super) struct Entry<'a> {
    name: &'a str,
    /// Its fields: read them through [`Entry::get`] and [`Entry::object_at`], which trace them.
    object: &'a Map<String, Value>,
    lookup: &'a dyn Fn(&str) -> Option<String>,
    trace: &'a Trace,
    /// Disabled entries keep unexpandable strings as written instead of failing.
    pub(super) lenient: bool,
    /// The keys of the objects `object` is in, e.g. `oauth` inside `oauth`: the fields of
    /// messages start with them.
    at: &'static [&'static str],
}

impl<'a> Entry<'a> {
    /// A reader of the entry `name`, whose fields are `object`, noting what it reads in
    /// `trace`.
    pub(super) fn new(
        name: &'a str,
        object: &'a Map<String, Value>,
        lookup: &'a dyn Fn(&str) -> Option<String>,
        trace: &'a Trace,
    ) -> Entry<'a> {
        Entry {
            name,
            object,
            lookup,
            trace,
            lenient: false,
            at: &[],
        }
    }

    /// Marks the entry disabled, which makes it lenient.
    pub(super) fn disable(&mut self) {
        self.lenient = true;
        self.trace.disabled.set(true);
    }

    /// The value of `key`, all of which is read.
    pub(super) fn get(&self, key: &'static str) -> Option<&'a Value> {
        self.trace(key, true);
        self.object.get(key)
    }

    /// The value of `key` when only the keys of it read in turn (through
    /// [`nested`](Entry::nested)) are read: an object of settings.
    pub(super) fn object_at(&self, key: &'static str) -> Option<&'a Value> {
        self.trace(key, false);
        self.object.get(key)
    }

    /// Whether the entry has `key`, whose value is not read.
    pub(super) fn has(&self, key: &'static str) -> bool {
        self.trace(key, false);
        self.object.contains_key(key)
    }

    fn trace(&self, key: &'static str, all: bool) {
        let at = self.at;
        self.trace.reads.borrow_mut().push(Read { at, key, all });
    }

    /// A reader of the object `object` inside this entry, at the keys `at` (from the entry's
    /// own), which the fields of messages start with.
    pub(super) fn nested(
        &self,
        object: &'a Map<String, Value>,
        at: &'static [&'static str],
    ) -> Entry<'a> {
        Entry {
            name: self.name,
            object,
            lookup: self.lookup,
            trace: self.trace,
            lenient: self.lenient,
            at,
        }
    }

    pub(super) fn error(&self, field: &str, message: impl Into<String>) -> ServerConfigError {
        let mut name = String::new();
        for key in self.at {
            name.push_str(key);
            name.push('.');
        }
        name.push_str(field);
        entry_error(self.name, Some(&name), message.into())
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

    pub(super) fn string(&self, key: &'static str) -> Result<Option<String>, ServerConfigError> {
        match self.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => self.text(key, value).map(Some),
        }
    }

    pub(super) fn bool(&self, key: &'static str) -> Result<Option<bool>, ServerConfigError> {
        match self.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => {
                Err(self.error(key, format!("must be true or false, not {}", kind(other))))
            }
        }
    }

    pub(super) fn millis(&self, key: &'static str) -> Result<Option<Duration>, ServerConfigError> {
        match self.get(key) {
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

    pub(super) fn list(&self, key: &'static str) -> Result<Vec<String>, ServerConfigError> {
        let items = match self.get(key) {
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

    pub(super) fn map(
        &self,
        key: &'static str,
    ) -> Result<Vec<(String, String)>, ServerConfigError> {
        let entries = match self.get(key) {
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(Value::Object(entries)) => entries,
            Some(other) => {
                return Err(self.error(
                    key,
                    format!("must be an object of strings, not {}", kind(other)),
                ))
            }
        };
        // In name order: serde_json keeps the file's order only with `preserve_order`, which
        // any crate in the program may turn on, and the first bad entry is the one named.
        let mut entries: Vec<_> = entries.iter().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        entries
            .into_iter()
            .map(|(name, value)| {
                let text = match value {
                    // Hosts that run on Node (Claude Desktop, Cursor) pass `{"PORT": 3000}`
                    // on as "3000": a variable's value is text in any case.
                    Value::Number(n) if key == "env" => n.to_string(),
                    Value::Bool(b) if key == "env" => b.to_string(),
                    _ => self.text(&format!("{key}.{name}"), value)?,
                };
                Ok((name.clone(), text))
            })
            .collect()
    }
}
