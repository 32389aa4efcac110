//! Readers for members that real servers send in shapes the schema does not allow but whose
//! meaning is plain: `null` for an empty list, a whole float where an integer is due, and
//! optional hints of any shape.
//!
//! Go servers write a nil slice as `null` (`"tools": null`) and Python ones a computed size as
//! `12.0`; failing the whole result for that would hide everything else it carries. A hint
//! (`ttlMs`, `cacheScope`, a discover result's `instructions`) only ever adds to a result, so
//! one that cannot be read is left out and logged: a `server/discover` result that failed to
//! read for its hint would make a stateless server look like a handshake-era one.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Number, Value};

use super::raw::{text_or_value, TextOrValue};

/// Reads `null` as the type's default (an empty list, an empty object).
pub(super) fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// Reads an optional count: an integer, or a float without a fraction (`12.0`).
pub(super) fn opt_u64<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    match Option::<Number>::deserialize(deserializer)? {
        None => Ok(None),
        Some(n) => whole_u64(&n)
            .map(Some)
            .ok_or_else(|| not_whole::<D>(&n, "non-negative ")),
    }
}

/// Reads a required count like [`opt_u64`].
pub(super) fn u64<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    let n = Number::deserialize(deserializer)?;
    whole_u64(&n).ok_or_else(|| not_whole::<D>(&n, "non-negative "))
}

/// Reads an optional cache lifetime in milliseconds (`ttlMs`) as [`ttl_millis`] reads it;
/// a number too large for any float (`1e400`) reads as `u64::MAX` as well.
pub(super) fn ttl_ms<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    Ok(match hint(deserializer)? {
        Hint::Value(Value::Null) => None,
        Hint::Value(value) => {
            let ms = ttl_millis(&value);
            if ms.is_none() {
                ignored("ttlMs", &Hint::Value(value), "a non-negative number");
            }
            ms
        }
        Hint::OutOfRange { negative: false } => Some(u64::MAX),
        other => {
            ignored("ttlMs", &other, "a non-negative number");
            None
        }
    })
}

/// A cache lifetime in milliseconds: any non-negative number (a fraction rounded down, past
/// `u64::MAX` capped there); `None` for a negative one (the spec reads it as 0) and non-numbers.
pub(crate) fn ttl_millis(value: &Value) -> Option<u64> {
    let Value::Number(n) = value else {
        return None;
    };
    if let Some(ms) = n.as_u64() {
        return Some(ms);
    }
    // Not a `u64`: negative, or a float. `as` saturates, and NaN cannot come from JSON.
    let f = n.as_f64()?;
    (f >= 0.0).then_some(f as u64)
}

/// Reads an optional string hint (`cacheScope`, a discover result's `instructions`): any
/// other type reads as absent, and is logged.
pub(super) fn opt_string<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    Ok(match hint(deserializer)? {
        Hint::Value(Value::String(s)) => Some(s),
        Hint::Value(Value::Null) => None,
        other => {
            ignored("a hint", &other, "a string");
            None
        }
    })
}

/// Reads an optional object (a discover result's `_meta`): any other type reads as absent,
/// and is logged.
pub(super) fn opt_object<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Map<String, Value>>, D::Error> {
    Ok(match hint(deserializer)? {
        Hint::Value(Value::Object(map)) => Some(map),
        Hint::Value(Value::Null) => None,
        other => {
            ignored("_meta", &other, "an object");
            None
        }
    })
}

/// An optional member as read for a hint.
enum Hint {
    Value(Value),
    /// A number past the range of a float (`1e400`): serde_json holds no value for it (and
    /// would fail the whole result reading one), but its sign is plain.
    OutOfRange {
        negative: bool,
    },
    /// A value holding such a number deeper inside.
    Unreadable,
}

/// Reads the member from its text where serde_json offers it, so that no value of it, however
/// odd, fails the result it is in.
fn hint<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Hint, D::Error> {
    let text = match text_or_value(deserializer)? {
        TextOrValue::Value(value) => return Ok(Hint::Value(value)),
        TextOrValue::Text(text) => text,
    };
    Ok(match serde_json::from_str(&text) {
        Ok(value) => Hint::Value(value),
        Err(_) => {
            // The text is valid JSON (serde_json checked it), so one that starts like a
            // number is a number, and one that does not parse is out of range.
            let text = text.trim_start();
            let digits = text.strip_prefix('-').unwrap_or(text);
            match digits.starts_with(|c: char| c.is_ascii_digit()) {
                true => Hint::OutOfRange {
                    negative: text.starts_with('-'),
                },
                false => Hint::Unreadable,
            }
        }
    })
}

/// Logs a hint left out: what it was (a number's value; a string's text is the server's, and
/// stays out of the log).
fn ignored(member: &str, found: &Hint, expected: &str) {
    match found {
        Hint::Value(Value::Number(n)) => log::debug!("ignored {member} {n}: not {expected}"),
        Hint::Value(value) => {
            let kind = crate::jsonrpc::value_kind(value);
            log::debug!("ignored {member}: {kind}, not {expected}");
        }
        Hint::OutOfRange { .. } => log::debug!("ignored {member}: a number out of range"),
        Hint::Unreadable => {
            log::debug!("ignored {member}: a value with a number out of range inside")
        }
    }
}

/// Bound for floats: every integer below 2^53 has an exact float, so the cast keeps its value.
const EXACT: f64 = 9_007_199_254_740_992.0;

fn whole_u64(n: &Number) -> Option<u64> {
    n.as_u64().or_else(|| {
        let f = n.as_f64()?;
        (f.fract() == 0.0 && (0.0..EXACT).contains(&f)).then_some(f as u64)
    })
}

fn not_whole<'de, D: Deserializer<'de>>(n: &Number, sign: &str) -> D::Error {
    D::Error::custom(format!("expected a {sign}whole number, not {n}"))
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::{json, Map, Value};

    #[derive(Debug, Default, Deserialize)]
    struct Probe {
        #[serde(default, deserialize_with = "super::null_as_default")]
        list: Vec<u8>,
        #[serde(default, deserialize_with = "super::opt_u64")]
        size: Option<u64>,
        #[serde(default, deserialize_with = "super::ttl_ms")]
        ttl: Option<u64>,
        #[serde(default, deserialize_with = "super::opt_string")]
        scope: Option<String>,
        #[serde(default, deserialize_with = "super::opt_object")]
        meta: Option<Map<String, Value>>,
    }

    fn probe(text: &str) -> Result<Probe, serde_json::Error> {
        serde_json::from_str(text)
    }

    fn json(v: Value) -> Result<Probe, serde_json::Error> {
        probe(&v.to_string())
    }

    #[test]
    fn null_and_missing_read_as_empty() {
        assert!(json(json!({"list": null})).unwrap().list.is_empty());
        assert!(json(json!({})).unwrap().list.is_empty());
        assert_eq!(json(json!({"list": [1, 2]})).unwrap().list, [1, 2]);
        assert!(json(json!({"list": "x"})).is_err());
    }

    #[test]
    fn whole_floats_read_as_integers_and_fractions_do_not() {
        let p = json(json!({"size": 12.0})).unwrap();
        assert_eq!(p.size, Some(12));
        let p = json(json!({"size": 12, "list": []})).unwrap();
        assert_eq!(p.size, Some(12));
        let p = json(json!({"size": null})).unwrap();
        assert_eq!(p.size, None);
        let p = json(json!({"size": u64::MAX})).unwrap();
        assert_eq!(p.size, Some(u64::MAX));
        for bad in [
            json!({"size": 1.5}),
            json!({"size": -1}),
            json!({"size": 1e300}),
            json!({"size": "12"}),
        ] {
            assert!(json(bad.clone()).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_ttl_of_any_size_reads_as_a_lifetime_and_anything_else_as_none() {
        let ttl = |text: &str| probe(&format!(r#"{{"ttl": {text}}}"#)).unwrap().ttl;
        assert_eq!(ttl("300000"), Some(300_000));
        assert_eq!(ttl("60000.0"), Some(60_000));
        assert_eq!(ttl("1500.9"), Some(1500));
        assert_eq!(ttl("0"), Some(0));
        assert_eq!(ttl("-0.0"), Some(0));
        assert_eq!(ttl("18446744073709551615"), Some(u64::MAX));
        assert_eq!(ttl("18446744073709551616"), Some(u64::MAX));
        assert_eq!(ttl("1e300"), Some(u64::MAX));
        assert_eq!(ttl("1.7976931348623157e308"), Some(u64::MAX));
        // Past any float: serde_json reads no number from it, yet it is plainly a long time.
        assert_eq!(ttl("1e400"), Some(u64::MAX));
        assert_eq!(ttl(&"9".repeat(400)), Some(u64::MAX));
        for ignored in [
            "null",
            "-5",
            "-1e300",
            "-0.5",
            "-1e400",
            "[1e400]",
            "\"60000\"",
            "\"NaN\"",
            "true",
            "{}",
            "{\"ms\": [1, {\"x\": null}]}",
            "[1]",
        ] {
            assert_eq!(ttl(ignored), None, "{ignored}");
        }
        assert_eq!(probe("{}").unwrap().ttl, None);
    }

    #[test]
    fn string_and_object_hints_of_another_type_read_as_absent() {
        let p = json(json!({"scope": "private", "meta": {"k": 1}})).unwrap();
        assert_eq!(p.scope.as_deref(), Some("private"));
        assert_eq!(p.meta.unwrap()["k"], 1);
        for odd in [
            json!(5),
            json!(true),
            json!(["public"]),
            json!({"a": 1}),
            json!(null),
        ] {
            let p = json(json!({"scope": odd.clone(), "meta": odd.clone()})).unwrap();
            assert_eq!(p.scope, None, "{odd}");
            assert_eq!(p.meta.is_some(), odd.is_object(), "{odd}");
        }
        let p = json(json!({"meta": "x", "size": 3})).unwrap();
        assert_eq!((p.meta, p.size), (None, Some(3)));
        // A number out of any float's range inside a hint leaves out the hint alone.
        let p = probe(r#"{"meta": {"n": 1e400}, "scope": 1e999, "size": 3}"#).unwrap();
        assert_eq!((p.meta, p.scope, p.size), (None, None, Some(3)));
    }
}
