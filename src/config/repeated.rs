//! Finding a key written twice inside one server entry, and where in the file it is.
//!
//! serde_json's `Value` keeps only the last of repeated object keys, so `"command"` (or an
//! `env` variable, a header) written twice in one entry would silently take the second value.
//! Each entry is kept as its raw text while the file is read ([`RawValue`]) and, once the entry
//! is read, walked here for repeated keys at every depth. One where umcp read the entry (see
//! [`Trace`]) is an error for that entry, at its place in the file. One where it did not (a
//! key it ignores, or inside one) is not: which of the two values counts makes no difference
//! to umcp. Nor is one in a disabled entry, which never starts and keeps the last value, as
//! serde_json does; but `disabled` and `enabled` are checked there too, since they say
//! whether the entry is disabled. Those passed over are logged at debug level.

use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;

use super::entry::{Read, Trace};
use crate::error::{Error, Result};

/// A key written twice in one entry: the field a message names (`command`, `env.API_KEY`,
/// `args[0].k`) and where its second occurrence ends in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Repeated {
    pub(super) field: String,
    pub(super) line: usize,
    pub(super) column: usize,
}

/// Turns a section's raw entries into values, in order (a repeated key keeps its last); `lines`
/// puts an error at its place in the file, as when the whole file was read at once.
pub(super) fn values(entries: &[(String, &RawValue)], lines: &mut Lines<'_>) -> Result<Vec<Value>> {
    entries
        .iter()
        .map(|(_, raw)| {
            serde_json::from_str(raw.get()).map_err(|error| {
                // The error's place counts from the entry's first byte; the file's from its own.
                let (line, column) = lines.place(raw.get(), error.line(), error.column());
                let shown = error.to_string();
                let suffix = format!(" at line {} column {}", error.line(), error.column());
                let message = shown.strip_suffix(&suffix).unwrap_or(&shown);
                Error::Config(format!(
                    "invalid JSON: {message} at line {line} column {column}"
                ))
            })
        })
        .collect()
}

/// What walking an entry found.
pub(super) struct Found {
    /// The first key written twice where umcp read the entry, which makes it an error.
    pub(super) repeated: Option<Repeated>,
    /// How many keys written twice were passed over before it (or in all, without one).
    pub(super) passed: usize,
    /// The field of the first of those.
    pub(super) first_passed: Option<String>,
}

/// Walks `raw`, the text of an entry that was read as `trace` says, for keys written twice.
/// `lines` counts in the text `raw` is part of.
pub(super) fn find(raw: &RawValue, trace: &Trace, lines: &mut Lines<'_>) -> Found {
    let disabled = trace.disabled();
    // In a disabled entry, only what says that it is.
    let reads: Vec<Read> = trace
        .reads()
        .iter()
        .filter(|read| {
            !disabled || (read.at.is_empty() && ["disabled", "enabled"].contains(&read.key))
        })
        .copied()
        .collect();
    let mut walker = Walker::default();
    let seed = Keys {
        walker: &mut walker,
        reads: &reads,
        scope: Scope::Keys,
    };
    let walked = seed.deserialize(&mut serde_json::Deserializer::from_str(raw.get()));
    // The walk fails only at a repeated key: the entry was read as JSON already.
    let repeated = match (walked, walker.repeated) {
        (Err(error), Some(field)) => {
            let (line, column) = lines.place(raw.get(), error.line(), error.column());
            Some(Repeated {
                field,
                line,
                column,
            })
        }
        _ => None,
    };
    Found {
        repeated,
        passed: walker.passed,
        first_passed: walker.first_passed,
    }
}

/// Line numbers of byte offsets, counted onwards from the last offset asked about, so that
/// the entries of a section, asked about in the file's order, cost one pass over the file.
pub(super) struct Lines<'t> {
    text: &'t [u8],
    /// The offset counted up to, the line it is on (from 1) and where that line starts.
    at: usize,
    line: usize,
    line_start: usize,
}

impl<'t> Lines<'t> {
    pub(super) fn new(text: &'t str) -> Lines<'t> {
        Lines {
            text: text.as_bytes(),
            at: 0,
            line: 1,
            line_start: 0,
        }
    }

    /// The line and column in the file of serde_json's `line` and `column` (columns count
    /// bytes, as serde_json's do) inside `part`, a slice of the file's text.
    pub(super) fn place(&mut self, part: &str, line: usize, column: usize) -> (usize, usize) {
        // `part` is always a slice of the text; were it not, the start of the file is shown.
        let end = (part.as_ptr() as usize)
            .checked_sub(self.text.as_ptr() as usize)
            .filter(|offset| offset + part.len() <= self.text.len())
            .unwrap_or(0);
        if end < self.at {
            // The sections are read in a fixed order, not the file's: at most a restart each.
            (self.at, self.line, self.line_start) = (0, 1, 0);
        }
        for (i, byte) in self.text[self.at..end].iter().enumerate() {
            if *byte == b'\n' {
                self.line += 1;
                self.line_start = self.at + i + 1;
            }
        }
        self.at = end;
        match line {
            1 => (self.line, end - self.line_start + column),
            _ => (self.line + line - 1, column),
        }
    }
}

/// What umcp reads of the part of an entry being walked.
#[derive(Clone, Copy)]
enum Scope {
    /// All of it.
    All,
    /// None of it.
    Nothing,
    /// Some of its keys: the fields read under the keys that lead here (the walk's path,
    /// which holds only keys there), if any.
    Keys,
}

impl Scope {
    /// What is read of the value of `key` here, at `path`, and whether `key` itself is.
    fn key(self, reads: &[Read], path: &[Segment], key: &str) -> (Scope, bool) {
        if !matches!(self, Scope::Keys) {
            return (self, matches!(self, Scope::All));
        }
        let depth = path.len();
        let leads_here = |read: &&Read| {
            path.iter().enumerate().all(|(i, segment)| {
                matches!(segment, Segment::Key(k) if read.key_at(i) == Some(k.as_str()))
            })
        };
        let (mut under, mut all) = (false, false);
        for read in reads.iter().filter(leads_here) {
            if read.key_at(depth) == Some(key) {
                under = true;
                all |= read.all && read.at.len() == depth;
            }
        }
        match (under, all) {
            (false, _) => (Scope::Nothing, false),
            (true, true) => (Scope::All, true),
            (true, false) => (Scope::Keys, true),
        }
    }

    /// What is read of the elements of an array here: umcp reads arrays whole or not at all.
    fn element(self) -> Scope {
        match self {
            Scope::All => Scope::All,
            Scope::Nothing | Scope::Keys => Scope::Nothing,
        }
    }
}

/// What the walk keeps track of: where it is, and what it found.
#[derive(Default)]
struct Walker {
    /// The keys and indices leading to the value being walked.
    path: Vec<Segment>,
    /// The field of the repeated key that is an error, once found.
    repeated: Option<String>,
    passed: usize,
    first_passed: Option<String>,
}

enum Segment {
    Key(String),
    Index(usize),
}

impl Walker {
    /// The field of `key` where the walk is, as configuration errors name fields:
    /// `env.API_KEY`, `args[0].k`.
    fn field(&self, key: &str) -> String {
        let mut field = String::new();
        for segment in &self.path {
            match segment {
                Segment::Key(key) => {
                    if !field.is_empty() {
                        field.push('.');
                    }
                    field.push_str(key);
                }
                Segment::Index(i) => field.push_str(&format!("[{i}]")),
            }
        }
        if !field.is_empty() {
            field.push('.');
        }
        field.push_str(key);
        field
    }
}

/// Walks a JSON value, failing at the first key its object already has where umcp reads, and
/// counting the others. serde_json adds the line and column where the key ends to the error.
struct Keys<'w, 'r> {
    walker: &'w mut Walker,
    /// The fields the entry's reading looked at.
    reads: &'r [Read],
    scope: Scope,
}

impl<'de> DeserializeSeed<'de> for Keys<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Keys<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        // A set, so that an object of many keys is checked in linear time.
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let (scope, read) = self.scope.key(self.reads, &self.walker.path, &key);
            if seen.contains(&key) {
                let walker = &mut *self.walker;
                if read {
                    walker.repeated = Some(walker.field(&key));
                    return Err(de::Error::custom("a key defined again"));
                }
                walker.passed += 1;
                if walker.first_passed.is_none() {
                    walker.first_passed = Some(walker.field(&key));
                }
            }
            self.walker.path.push(Segment::Key(key));
            map.next_value_seed(Keys {
                walker: &mut *self.walker,
                reads: self.reads,
                scope,
            })?;
            if let Some(Segment::Key(key)) = self.walker.path.pop() {
                seen.insert(key);
            }
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        for index in 0.. {
            self.walker.path.push(Segment::Index(index));
            let element = seq.next_element_seed(Keys {
                walker: &mut *self.walker,
                reads: self.reads,
                scope: self.scope.element(),
            })?;
            self.walker.path.pop();
            if element.is_none() {
                break;
            }
        }
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
}
