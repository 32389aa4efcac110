//! The results that carry caching hints (`server/discover`, the four lists, `resources/read`):
//! whatever decodes encodes to text that decodes to the same result, and no hint, however odd
//! (of any size, negative, of another type, past any float), makes a result unreadable or
//! changes anything else in it. A `server/discover` result that read as unreadable would make
//! the client take a stateless server for a handshake-era one.

use std::fmt::Debug;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use umcp::types::{
    DiscoverResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, ReadResourceResult,
};

use super::engine::{Rng, Target};
use super::json;

const DICTIONARY: &[&[u8]] = &[
    b"\"ttlMs\":",
    b"\"cacheScope\":",
    b"\"instructions\":",
    b"\"_meta\":",
    b"\"supportedVersions\":[\"2026-07-28\"],",
    b"\"resultType\":\"complete\",",
    b"\"nextCursor\":",
    b"18446744073709551615",
    b"18446744073709551616",
    b"1e300",
    b"1e400",
    b"-1e400",
    b"-5",
    b"0.5",
    b"\"public\"",
    b"\"private\"",
    b"null",
    b"[",
    b"]",
    b"{",
    b"}",
    b",",
];

const WORDS: &[&str] = &[
    "ttlMs",
    "cacheScope",
    "supportedVersions",
    "capabilities",
    "instructions",
    "_meta",
    "resultType",
    "tools",
    "prompts",
    "resources",
    "resourceTemplates",
    "contents",
    "nextCursor",
    "name",
    "title",
    "uri",
    "uriTemplate",
    "inputSchema",
    "outputSchema",
    "arguments",
    "text",
    "blob",
    "mimeType",
    "2026-07-28",
    "public",
    "private",
    "complete",
];

/// Hint values of every shape, as the text a server writes.
const ODD: &[&str] = &[
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775808",
    "1e300",
    "1.7976931348623157e308",
    "1e400",
    "-1e400",
    "99999999999999999999999999999999999999999",
    "-5",
    "-0.0",
    "0",
    "0.5",
    "60000",
    "60000.0",
    "\"x\"",
    "\"NaN\"",
    "\"60000\"",
    "null",
    "true",
    "[]",
    "{}",
    "{\"a\":[1e400]}",
    "\"public\"",
    "\"private\"",
    "\"shared\"",
];

#[test]
fn results_with_any_hints_decode_and_round_trip() {
    Target {
        name: "results",
        dictionary: DICTIONARY,
        default_cases: 3000,
    }
    .run(check);
}

fn check(input: &[u8], rng: &mut Rng) {
    let text = String::from_utf8_lossy(input);
    each_type(&text);
    let Ok(mut value) = serde_json::from_str::<Value>(&text) else {
        return;
    };
    if rng.one_in(2) {
        json::mutate(&mut value, WORDS, rng);
    }
    if let Value::Object(mut object) = value {
        for member in ["ttlMs", "cacheScope", "instructions", "_meta"] {
            object.remove(member);
        }
        hints_change_nothing_else(&Value::Object(object).to_string(), rng);
    }
}

/// A result type with hints, as the checks need it.
trait Hinted: DeserializeOwned + Serialize + PartialEq + Debug {}

impl<T: DeserializeOwned + Serialize + PartialEq + Debug> Hinted for T {}

/// Decodes `text` as every result type, checking the round trip of each it is.
fn each_type(text: &str) {
    round_trip::<DiscoverResult>(text);
    round_trip::<ListToolsResult>(text);
    round_trip::<ListPromptsResult>(text);
    round_trip::<ListResourcesResult>(text);
    round_trip::<ListResourceTemplatesResult>(text);
    round_trip::<ReadResourceResult>(text);
}

/// `text` decoded as `T`, when it is one, checked to encode to text that decodes to the same.
fn round_trip<T: Hinted>(text: &str) -> Option<T> {
    let decoded: T = serde_json::from_str(text).ok()?;
    let written = serde_json::to_string(&decoded).expect("a decoded result encodes");
    let again: T = serde_json::from_str(&written)
        .unwrap_or_else(|e| panic!("{written} (from {text}) does not decode: {e}"));
    assert_eq!(again, decoded, "round trip through {written}");
    Some(decoded)
}

/// The hints added to a result: their members, and the text of each value.
struct Hints<'a> {
    ttl: &'a str,
    scope: &'a str,
    /// `instructions` and `_meta`, which a discover result reads like hints.
    discover: Option<(&'a str, &'a str)>,
}

impl Hints<'_> {
    /// `base`, an object's text without these members, with them.
    fn added_to(&self, base: &str) -> String {
        let mut added = format!(r#""ttlMs":{},"cacheScope":{}"#, self.ttl, self.scope);
        if let Some((instructions, meta)) = self.discover {
            added.push_str(&format!(r#","instructions":{instructions},"_meta":{meta}"#));
        }
        match base.strip_prefix('{').expect("an object's text") {
            "}" => format!("{{{added}}}"),
            body => format!("{{{added},{body}"),
        }
    }
}

/// `base`, an object without hints, with odd hints added: it decodes as every type it decoded
/// as without them, to the same result but for the hints, which read as the rules say.
fn hints_change_nothing_else(base: &str, rng: &mut Rng) {
    let hints = Hints {
        ttl: odd(rng),
        scope: odd(rng),
        discover: None,
    };
    same_but_hints::<ListToolsResult>(base, &hints);
    same_but_hints::<ListPromptsResult>(base, &hints);
    same_but_hints::<ListResourcesResult>(base, &hints);
    same_but_hints::<ListResourceTemplatesResult>(base, &hints);
    same_but_hints::<ReadResourceResult>(base, &hints);
    let discover = Hints {
        discover: Some((odd(rng), odd(rng))),
        ..hints
    };
    same_but_hints::<DiscoverResult>(base, &discover);
}

/// See [`hints_change_nothing_else`].
fn same_but_hints<T: Hinted>(base: &str, hints: &Hints<'_>) {
    let Ok(plain) = serde_json::from_str::<T>(base) else {
        return;
    };
    let text = hints.added_to(base);
    let hinted = round_trip::<T>(&text)
        .unwrap_or_else(|| panic!("hints made {} unreadable: {text}", type_name::<T>()));
    let (mut hinted, mut plain) = (value(&hinted), value(&plain));
    assert_eq!(
        hinted.get("ttlMs").and_then(Value::as_u64),
        expected_ttl(hints.ttl),
        "{text}"
    );
    let string = |text: &str| match serde_json::from_str(text) {
        Ok(Value::String(s)) => Some(s),
        _ => None,
    };
    assert_eq!(
        hinted.get("cacheScope").and_then(Value::as_str),
        string(hints.scope).as_deref(),
        "{text}"
    );
    if let Some((instructions, meta)) = hints.discover {
        assert_eq!(
            hinted.get("instructions").and_then(Value::as_str),
            string(instructions).as_deref(),
            "{text}"
        );
        let object = serde_json::from_str::<Value>(meta)
            .ok()
            .filter(Value::is_object);
        assert_eq!(hinted.get("_meta"), object.as_ref(), "{text}");
    }
    for member in ["ttlMs", "cacheScope", "instructions", "_meta"] {
        hinted.remove(member);
        plain.remove(member);
    }
    assert_eq!(hinted, plain, "hints changed more than the hints: {text}");
}

/// A result as the object it encodes to.
fn value<T: Hinted>(result: &T) -> serde_json::Map<String, Value> {
    match serde_json::to_value(result) {
        Ok(Value::Object(object)) => object,
        other => panic!("{} encodes to {other:?}", type_name::<T>()),
    }
}

fn type_name<T>() -> &'static str {
    std::any::type_name::<T>()
}

/// What a `ttlMs` written as `text` means: a non-negative number of any size (zero written
/// `-0` too), in whole milliseconds up to `u64::MAX`; nothing otherwise.
fn expected_ttl(text: &str) -> Option<u64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if !digits.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if let Ok(n) = text.parse::<u64>() {
        return Some(n);
    }
    // With a fraction or an exponent, or past `u64`: as a float, and past any float, the
    // most there is.
    let f = text.parse::<f64>().ok()?;
    if f < 0.0 {
        return None;
    }
    Some(f as u64)
}

/// One of [`ODD`].
fn odd(rng: &mut Rng) -> &'static str {
    ODD[rng.below(ODD.len())]
}
