//! Reading the server sections of a configuration file straight from its text, so that a key
//! written twice is seen rather than lost.
//!
//! serde_json's `Value` keeps only the last of repeated object keys, so a server defined twice
//! in one section, or a second `mcpServers` object, would silently replace the first. These
//! visitors keep every entry of a section, in the file's order (with or without serde_json's
//! `preserve_order`), as its raw text, which [`repeated`](super::repeated) checks for keys
//! repeated inside it once the entry is read; a repeated section key is refused with the line
//! it is on.

use std::collections::HashSet;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;

use super::entry::{entry_error, Trace};
use super::repeated::{find, values, Lines};
use super::server::parse_server;
use super::{ServerConfig, ServerConfigError};
use crate::error::{Error, Result};
use crate::redact::clip;

/// The entries of one section, in the file's order, repeated names included, as their text.
type Entries<'a> = Vec<(String, &'a RawValue)>;

/// One section as found: `None` when absent, `Some(None)` when it is not an object.
type Section<'a> = Option<Option<Entries<'a>>>;

/// The sections of a file whose top level is an object, in the order they are read:
/// `mcpServers`, `servers`, `mcp.servers`, `context_servers`.
#[derive(Default)]
struct Root<'a> {
    mcp_servers: Section<'a>,
    servers: Section<'a>,
    nested: Section<'a>,
    context_servers: Section<'a>,
}

/// A section read from text: each entry's name, value and text (to find keys repeated in it).
pub(super) type Read<'a> = Option<Option<Vec<(String, Value, &'a RawValue)>>>;

/// Parses `text` (JSON, comments stripped) into its sections `mcpServers`, `servers`,
/// `mcp.servers` and `context_servers`: `None` when the top level is no object; a repeated
/// section is an error.
pub(super) fn parse(text: &str) -> Result<Option<[Read<'_>; 4]>> {
    let root = serde_json::from_str::<ObjectOr<Root<'_>>>(text).map_err(|e| {
        if e.classify() == serde_json::error::Category::Data {
            // A repeated section: the message (and its line) is the sections reader's.
            Error::Config(e.to_string())
        } else {
            Error::Config(format!("invalid JSON: {e}"))
        }
    })?;
    let Some(root) = root.0 else {
        return Ok(None);
    };
    let mut lines = Lines::new(text);
    Ok(Some([
        read(root.mcp_servers, &mut lines)?,
        read(root.servers, &mut lines)?,
        read(root.nested, &mut lines)?,
        read(root.context_servers, &mut lines)?,
    ]))
}

/// Reads the values of the entries of `section`.
fn read<'a>(section: Section<'a>, lines: &mut Lines<'_>) -> Result<Read<'a>> {
    let Some(Some(entries)) = section else {
        return Ok(section.map(|_| None));
    };
    let values = values(&entries, lines)?;
    let entries = entries.into_iter().zip(values);
    Ok(Some(Some(
        entries
            .map(|((name, raw), value)| (name, value, raw))
            .collect(),
    )))
}

/// What a type read from the entries of a JSON object implements.
trait FromEntries<'de>: Sized {
    fn read<A: MapAccess<'de>>(map: A) -> Result<Self, A::Error>;
}

/// `Some` when the value is an object, `None` for any other JSON value (which is skipped).
struct ObjectOr<T>(Option<T>);

impl<'de, T: FromEntries<'de>> Deserialize<'de> for ObjectOr<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(ObjectOrVisitor(PhantomData))
            .map(ObjectOr)
    }
}

struct ObjectOrVisitor<T>(PhantomData<T>);

impl<'de, T: FromEntries<'de>> Visitor<'de> for ObjectOrVisitor<T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::read(map).map(Some)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

/// Reads `section`, refusing it if it was already read. serde_json adds the line and column
/// of the repeated key to the error.
fn read_once<'de, A: MapAccess<'de>>(
    map: &mut A,
    section: &mut Section<'de>,
    name: &str,
) -> Result<(), A::Error> {
    if section.is_some() {
        return Err(de::Error::custom(format_args!("`{name}` defined again")));
    }
    *section = Some(map.next_value::<ObjectOr<Servers>>()?.0.map(|s| s.0));
    Ok(())
}

impl<'de> FromEntries<'de> for Root<'de> {
    fn read<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut root = Root::default();
        let mut mcp_seen = false;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "mcpServers" => read_once(&mut map, &mut root.mcp_servers, "mcpServers")?,
                "servers" => read_once(&mut map, &mut root.servers, "servers")?,
                // Zed's `settings.json`.
                "context_servers" => {
                    read_once(&mut map, &mut root.context_servers, "context_servers")?
                }
                "mcp" => {
                    if std::mem::replace(&mut mcp_seen, true) {
                        return Err(de::Error::custom("`mcp` defined again"));
                    }
                    if let Some(mcp) = map.next_value::<ObjectOr<Mcp>>()?.0 {
                        root.nested = mcp.0;
                    }
                }
                // Other keys (a VS Code `settings.json` has many) are not umcp's business.
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(root)
    }
}

/// VS Code's `settings.json` object `mcp`, of which only `servers` matters.
struct Mcp<'a>(Section<'a>);

impl<'de> FromEntries<'de> for Mcp<'de> {
    fn read<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut servers = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == "servers" {
                read_once(&mut map, &mut servers, "mcp.servers")?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(Mcp(servers))
    }
}

/// The entries of a servers section, every one kept.
struct Servers<'a>(Entries<'a>);

impl<'de> FromEntries<'de> for Servers<'de> {
    fn read<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some((name, value)) = map.next_entry::<String, &'de RawValue>()? {
            entries.push((name, value));
        }
        Ok(Servers(entries))
    }
}

/// A section's entries by reference: `None` when absent, `Some(None)` when not an object;
/// an entry read from text has its text.
pub(super) type Borrowed<'a> = Option<Option<Vec<(&'a str, &'a Value, Option<&'a RawValue>)>>>;

/// Reads the servers of the sections, named by their keys, in order: a name already taken,
/// in the same section or an earlier one, is an error for that entry. `lines` counts in the
/// text the entries were read from, if they were. The valid servers and the errors come back
/// each sorted by name.
pub(super) fn read_sections(
    sections: [(&str, Borrowed<'_>); 4],
    lookup: &dyn Fn(&str) -> Option<String>,
    mut lines: Option<&mut Lines<'_>>,
) -> Result<(Vec<ServerConfig>, Vec<ServerConfigError>)> {
    let (mut servers, mut errors) = (Vec::new(), Vec::new());
    // Names seen so far, valid or not: a set, so a file of many servers loads in linear time.
    let mut taken = HashSet::new();
    let mut found = false;
    for (key, section) in sections {
        let Some(section) = section else { continue };
        let entries = section
            .ok_or_else(|| Error::Config(format!("`{key}` must be an object of servers")))?;
        found = true;
        for (name, value, raw) in entries {
            let parsed = if !taken.insert(name) {
                Err(entry_error(name, None, format!("defined again in `{key}`")))
            } else {
                let text = raw.zip(lines.as_deref_mut());
                read_entry(name, value, text, lookup)
            };
            match parsed {
                Ok(server) => servers.push(server),
                Err(err) => errors.push(err),
            }
        }
    }
    if !found {
        return Err(Error::Config(
            "no `mcpServers`, `servers` or `context_servers` object".into(),
        ));
    }
    servers.sort_by(|a: &ServerConfig, b| a.name.cmp(&b.name));
    // Sorted (stably) as well, so their order does not depend on whether serde_json keeps
    // objects in file order (`preserve_order`, which any crate of a program may turn on).
    errors.sort_by(|a: &ServerConfigError, b| a.server.cmp(&b.server));
    Ok((servers, errors))
}

/// Reads the entry `name`. One read from `text` (its own, and the file's lines) is an error
/// for a key written twice where umcp read it, unless it is disabled; the others are logged.
fn read_entry(
    name: &str,
    value: &Value,
    text: Option<(&RawValue, &mut Lines<'_>)>,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> std::result::Result<ServerConfig, ServerConfigError> {
    let trace = Trace::default();
    let parsed = parse_server(name, value, lookup, &trace);
    let Some((raw, lines)) = text else {
        return parsed;
    };
    let found = find(raw, &trace, lines);
    if let Some(first) = found.first_passed {
        let why = match trace.disabled() {
            true => "the server is disabled, and keeps the last value of each",
            false => "umcp does not read them",
        };
        log::debug!(
            "server `{}`: {} key(s) written twice (the first `{}`) are no error: {why}",
            clip(name),
            found.passed,
            clip(&first)
        );
    }
    match found.repeated {
        Some(repeated) => Err(entry_error(
            name,
            Some(&repeated.field),
            format!(
                "defined again at line {} column {}",
                repeated.line, repeated.column
            ),
        )),
        None => parsed,
    }
}

/// A section read by [`parse`], by reference.
pub(super) fn entries<'a>(section: &'a Read<'a>) -> Borrowed<'a> {
    section.as_ref().map(|entries| {
        entries.as_ref().map(|e| {
            e.iter()
                .map(|(n, v, raw)| (n.as_str(), v, Some(*raw)))
                .collect()
        })
    })
}

/// A section of already parsed JSON, by reference.
pub(super) fn of_value(section: Option<&Value>) -> Borrowed<'_> {
    section.map(|value| {
        value
            .as_object()
            .map(|e| e.iter().map(|(n, v)| (n.as_str(), v, None)).collect())
    })
}
