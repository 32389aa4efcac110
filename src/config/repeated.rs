//! Finding a key written twice inside one server entry, and where in the file it is.
//!
//! serde_json's `Value` keeps only the last of repeated object keys, so `"command"` (or an
//! `env` variable, a header) written twice in one entry would silently take the second value.
//! Each entry is kept as its raw text while the file is read ([`RawValue`]), checked here for
//! repeated keys at every depth, and only then turned into a `Value`.

use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::error::{Error, Result};

/// A key written twice in one entry: the field a message names (`command`, `env.API_KEY`,
/// `args[0].k`) and where its second occurrence ends in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Repeated {
    pub(super) field: String,
    pub(super) line: usize,
    pub(super) column: usize,
}

/// One entry read from the file's text: its JSON, or the key that makes it ambiguous.
pub(super) type Checked = std::result::Result<Value, Repeated>;

/// Turns the raw entries of a section into values, in order. `lines` counts in the text they
/// were read from, so that a repeated key is reported at its line and column in the file.
///
/// # Errors
///
/// [`Error::Config`] for JSON that skipping over an entry accepted but reading it does not
/// (a number out of range), at its place in the file, as when the whole file was read at once.
pub(super) fn check(
    entries: &[(String, &RawValue)],
    lines: &mut Lines<'_>,
) -> Result<Vec<Checked>> {
    entries
        .iter()
        .map(|(_, raw)| {
            let mut trail = Trail::default();
            let seed = Keys { trail: &mut trail };
            let checked = seed.deserialize(&mut serde_json::Deserializer::from_str(raw.get()));
            let error = match checked.and_then(|()| serde_json::from_str(raw.get())) {
                Ok(value) => return Ok(Ok(value)),
                Err(error) => error,
            };
            // The error's place counts from the entry's first byte; the file's from its own.
            let (line, column) = lines.place(raw.get(), error.line(), error.column());
            if trail.repeated {
                return Ok(Err(Repeated {
                    field: trail.field(),
                    line,
                    column,
                }));
            }
            let shown = error.to_string();
            let suffix = format!(" at line {} column {}", error.line(), error.column());
            let message = shown.strip_suffix(&suffix).unwrap_or(&shown);
            Err(Error::Config(format!(
                "invalid JSON: {message} at line {line} column {column}"
            )))
        })
        .collect()
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

/// What the check leaves behind when it finds a repeated key: the path to it, innermost
/// first, filled in as the error passes back out through the enclosing objects and arrays.
#[derive(Default)]
struct Trail {
    repeated: bool,
    segments: Vec<Segment>,
}

enum Segment {
    Key(String),
    Index(usize),
}

impl Trail {
    /// The path as configuration errors name fields: `env.API_KEY`, `args[0].k`.
    fn field(&self) -> String {
        let mut field = String::new();
        for segment in self.segments.iter().rev() {
            match segment {
                Segment::Key(key) if field.is_empty() => field.push_str(key),
                Segment::Key(key) => {
                    field.push('.');
                    field.push_str(key);
                }
                Segment::Index(i) => field.push_str(&format!("[{i}]")),
            }
        }
        field
    }

    /// Adds the enclosing `segment` when the error on its way out is a repeated key.
    fn through<E>(&mut self, error: E, segment: impl FnOnce() -> Segment) -> E {
        if self.repeated {
            self.segments.push(segment());
        }
        error
    }
}

/// Walks a JSON value, failing at the first key its object already has. serde_json adds the
/// line and column where the key ends to the error.
struct Keys<'t> {
    trail: &'t mut Trail,
}

impl<'de> DeserializeSeed<'de> for Keys<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Keys<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        // A set, so that an object of many keys is checked in linear time.
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if seen.contains(&key) {
                self.trail.repeated = true;
                self.trail.segments.push(Segment::Key(key));
                return Err(de::Error::custom("a key defined again"));
            }
            if let Err(error) = map.next_value_seed(Keys {
                trail: &mut *self.trail,
            }) {
                return Err(self.trail.through(error, || Segment::Key(key)));
            }
            seen.insert(key);
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        loop {
            match seq.next_element_seed(Keys {
                trail: &mut *self.trail,
            }) {
                Ok(Some(())) => index += 1,
                Ok(None) => return Ok(()),
                Err(error) => return Err(self.trail.through(error, || Segment::Index(index))),
            }
        }
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
