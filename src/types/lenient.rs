//! Readers for members that real servers send in shapes the schema does not allow but whose
//! meaning is plain: `null` for an empty list, a whole float where an integer is due.
//!
//! Go servers write a nil slice as `null` (`"tools": null`) and Python ones a computed size as
//! `12.0`; failing the whole result for that would hide everything else it carries.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::Number;

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

/// Reads an optional signed integer (a duration in milliseconds) like [`opt_u64`].
pub(super) fn opt_i64<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<i64>, D::Error> {
    match Option::<Number>::deserialize(deserializer)? {
        None => Ok(None),
        Some(n) => whole_i64(&n)
            .map(Some)
            .ok_or_else(|| not_whole::<D>(&n, "")),
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

/// `n` as an integer: an integer, or a float without a fraction within the exact range.
pub(crate) fn whole_i64(n: &Number) -> Option<i64> {
    n.as_i64().or_else(|| {
        let f = n.as_f64()?;
        (f.fract() == 0.0 && f.abs() < EXACT).then_some(f as i64)
    })
}

fn not_whole<'de, D: Deserializer<'de>>(n: &Number, sign: &str) -> D::Error {
    D::Error::custom(format!("expected a {sign}whole number, not {n}"))
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Default, Deserialize)]
    struct Probe {
        #[serde(default, deserialize_with = "super::null_as_default")]
        list: Vec<u8>,
        #[serde(default, deserialize_with = "super::opt_u64")]
        size: Option<u64>,
        #[serde(default, deserialize_with = "super::opt_i64")]
        ttl: Option<i64>,
    }

    fn probe(v: serde_json::Value) -> Result<Probe, serde_json::Error> {
        serde_json::from_str(&v.to_string())
    }

    #[test]
    fn null_and_missing_read_as_empty() {
        assert!(probe(json!({"list": null})).unwrap().list.is_empty());
        assert!(probe(json!({})).unwrap().list.is_empty());
        assert_eq!(probe(json!({"list": [1, 2]})).unwrap().list, [1, 2]);
        assert!(probe(json!({"list": "x"})).is_err());
    }

    #[test]
    fn whole_floats_read_as_integers_and_fractions_do_not() {
        let p = probe(json!({"size": 12.0, "ttl": -1.0})).unwrap();
        assert_eq!((p.size, p.ttl), (Some(12), Some(-1)));
        let p = probe(json!({"size": 12, "ttl": 300000, "list": []})).unwrap();
        assert_eq!((p.size, p.ttl), (Some(12), Some(300_000)));
        let p = probe(json!({"size": null, "ttl": null})).unwrap();
        assert_eq!((p.size, p.ttl), (None, None));
        let p = probe(json!({"size": u64::MAX})).unwrap();
        assert_eq!(p.size, Some(u64::MAX));
        for bad in [
            json!({"size": 1.5}),
            json!({"size": -1}),
            json!({"size": 1e300}),
            json!({"ttl": 0.5}),
            json!({"size": "12"}),
        ] {
            assert!(probe(bad.clone()).is_err(), "{bad}");
        }
    }
}
