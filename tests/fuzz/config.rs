//! The configuration parser: every entry accounted for, names unique and sorted, variables
//! expanded once and never recursively, the same answer every time.

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use umcp::ConfigFile;

use super::engine::{Rng, Target};
use super::json;

const DICTIONARY: &[&[u8]] = &[
    b"\"mcpServers\":",
    b"\"servers\":",
    b"\"mcp\":{\"servers\":{}}",
    b"\"command\":\"npx\"",
    b"\"args\":[\"-y\",\"${HOME}\"]",
    b"\"url\":\"https://example.com/mcp\"",
    b"\"type\":\"sse\"",
    b"\"env\":{\"K\":\"${env:KEY}\"}",
    b"\"headers\":{\"Authorization\":\"Bearer ${TOKEN:-x}\"}",
    b"\"disabled\":true",
    b"\"startupTimeoutMs\":18446744073709551615",
    b"\"auth\":\"oauth\"",
    b"${",
    b"$${",
    b"}",
    b"${input:x}",
];

const WORDS: &[&str] = &[
    "mcpServers",
    "servers",
    "mcp",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "type",
    "stdio",
    "http",
    "streamable-http",
    "sse",
    "headers",
    "disabled",
    "enabled",
    "inheritEnv",
    "startupTimeoutMs",
    "requestTimeoutMs",
    "auth",
    "oauth",
    "clientId",
    "scopes",
    "redirectPort",
    "${HOME}",
    "${env:TOKEN}",
    "${MISSING:-fallback}",
    "${",
    "$${HOME}",
    "${input:key}",
    "${LOOP}",
];

#[test]
fn config_files_parse_consistently() {
    Target {
        name: "config",
        dictionary: DICTIONARY,
        default_cases: 2000,
    }
    .run(check);
}

/// Variables for the parser: some set, one that expands to a variable reference (which must
/// stay as written), one long.
fn lookup(name: &str) -> Option<String> {
    match name {
        "HOME" => Some("/home/fuzz".into()),
        "TOKEN" | "KEY" => Some("s3cret".into()),
        "LOOP" => Some("${LOOP}".into()),
        "LONG" => Some("x".repeat(1000)),
        _ => None,
    }
}

fn check(input: &[u8], rng: &mut Rng) {
    let text = String::from_utf8_lossy(input);
    parse_and_check(&text);
    if let Ok(mut value) = serde_json::from_str::<Value>(&text) {
        json::mutate(&mut value, WORDS, rng);
        parse_and_check(&value.to_string());
    }
}

fn parse_and_check(text: &str) {
    let Ok(file) = ConfigFile::parse_with(text, &lookup) else {
        return;
    };
    let again = ConfigFile::parse_with(text, &lookup).expect("parsed once");
    assert_eq!(
        format!("{file:?}"),
        format!("{again:?}"),
        "not deterministic"
    );

    // Every entry of every section is a server or an error, exactly once, a name written
    // twice included (the second is an error). Text that only the JSONC reading accepts
    // (comments, trailing commas) has no plain JSON form to count in.
    if let Ok(Sections(entries)) = serde_json::from_str::<Sections>(text) {
        assert_eq!(
            file.servers.len() + file.errors.len(),
            entries,
            "entries lost or invented"
        );
    }

    let names: Vec<&str> = file.servers.iter().map(|s| s.name.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(names, sorted, "server names unsorted or repeated");

    for server in &file.servers {
        // Expansion happens once: a value holding `${LOOP}` came from `${LOOP}` itself, and
        // nothing grows past what one substitution per reference can give.
        let shown = format!("{:?}", server.transport);
        assert!(shown.len() <= 64 + text.len() * 1000, "expansion blew up");
        assert!(!server.kind().is_empty());
    }
    for error in &file.errors {
        assert!(!error.to_string().is_empty());
    }
}

/// The number of entries in a file's server sections (`mcpServers`, `servers`,
/// `mcp.servers`) as written: serde_json's `Value` keeps only the last of a repeated name.
struct Sections(usize);

/// The number of members of an object as written, repeated names included; 0 for any other
/// value.
struct Entries(usize);

impl<'de> Deserialize<'de> for Sections {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Sections, D::Error> {
        deserializer
            .deserialize_any(Count(|name: &str| match name {
                "mcpServers" | "servers" => Member::Section,
                "mcp" => Member::Nested,
                _ => Member::Other,
            }))
            .map(Sections)
    }
}

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Entries, D::Error> {
        deserializer
            .deserialize_any(Count(|_: &str| Member::Counted))
            .map(Entries)
    }
}

/// What a member of an object is to the count.
enum Member {
    /// An entry: it counts one.
    Counted,
    /// A server section: its entries count.
    Section,
    /// `mcp`: its `servers` member is a section.
    Nested,
    Other,
}

/// Counts an object's members by what the function says of each name; any other value counts
/// nothing.
struct Count<F>(F);

/// `mcp`'s object: its `servers` is a section.
struct Mcp(usize);

impl<'de> Deserialize<'de> for Mcp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Mcp, D::Error> {
        deserializer
            .deserialize_any(Count(|name: &str| match name {
                "servers" => Member::Section,
                _ => Member::Other,
            }))
            .map(Mcp)
    }
}

impl<'de, F: Fn(&str) -> Member> Visitor<'de> for Count<F> {
    type Value = usize;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<usize, A::Error> {
        let mut count = 0;
        while let Some(name) = map.next_key::<String>()? {
            count += match (self.0)(&name) {
                Member::Counted => map.next_value::<IgnoredAny>().map(|_| 1)?,
                Member::Section => map.next_value::<Entries>()?.0,
                Member::Nested => map.next_value::<Mcp>()?.0,
                Member::Other => map.next_value::<IgnoredAny>().map(|_| 0)?,
            };
        }
        Ok(count)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(0)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<usize, E> {
        Ok(0)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<usize, E> {
        Ok(0)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<usize, E> {
        Ok(0)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<usize, E> {
        Ok(0)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<usize, E> {
        Ok(0)
    }

    fn visit_unit<E: de::Error>(self) -> Result<usize, E> {
        Ok(0)
    }
}
