//! [`RequestId`], the id that pairs a request with its response.

use std::cmp::Ordering;
use std::fmt;

use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Value;

/// A request id: an integer or a string, never null.
///
/// umcp sends increasing integers; servers may use either form, and any integer from
/// `i64::MIN` to `u64::MAX` (an id beyond `i64::MAX` is given back as the server sent it).
/// `Display` quotes string ids so `7` and `"7"` never look alike in logs.
///
/// An integer beyond those is no id umcp serves a request with, but the `-32600` reply to
/// such a request ([`InvalidRequest::reply`](super::InvalidRequest::reply)) carries it, with
/// the server's digits: it is written back exactly as it came, while
/// [`to_value`](RequestId::to_value) gives only the nearest number a `serde_json::Value`
/// holds.
///
/// ```
/// use umcp::jsonrpc::RequestId;
///
/// let (number, text) = (RequestId::from(7), RequestId::from("7"));
/// assert_eq!((number.as_i64(), number.as_str()), (Some(7), None));
/// assert_eq!((text.as_i64(), text.as_str()), (None, Some("7")));
/// assert_eq!(text.to_value(), serde_json::json!("7"));
/// assert_eq!(format!("{number} {text}"), r#"7 "7""#);
///
/// // Beyond `i64`: an integer all the same, with one form whichever way it was made.
/// let big = RequestId::from(u64::MAX);
/// assert_eq!((big.as_i64(), big.as_u64()), (None, Some(u64::MAX)));
/// assert_eq!(big.to_value(), serde_json::json!(u64::MAX));
/// assert_eq!(RequestId::from(7_u64), number);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RequestId(IdRepr);

/// The forms of an id. An integer is `Int` whenever it fits, then `Big`, and `Wide` only
/// beyond both, so each id has one form (and equal ids compare equal).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
enum IdRepr {
    Int(i64),
    /// An integer beyond `i64::MAX`, which servers counting in unsigned 64 bits reach.
    Big(u64),
    Str(String),
    /// An integer beyond 64 bits. Read only from a message's text (a `Value` has lost its
    /// digits), never as an id a request can be served with.
    #[serde(skip_deserializing)]
    Wide(Wide),
}

/// The digits of an integer beyond 64 bits, as the server wrote them: an optional `-` and
/// digits without leading zeros, which is the one way JSON writes an integer.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Wide(Box<str>);

impl Wide {
    fn is_negative(&self) -> bool {
        self.0.starts_with('-')
    }

    /// The size of the integer, in an order that compares it: without leading zeros, more
    /// digits make a larger one.
    fn magnitude(&self) -> (usize, &str) {
        let digits = self.0.trim_start_matches('-');
        (digits.len(), digits)
    }
}

impl Ord for Wide {
    /// In numeric order.
    fn cmp(&self, other: &Wide) -> Ordering {
        match (self.is_negative(), other.is_negative()) {
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) => self.magnitude().cmp(&other.magnitude()),
            (true, true) => other.magnitude().cmp(&self.magnitude()),
        }
    }
}

impl PartialOrd for Wide {
    fn partial_cmp(&self, other: &Wide) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Serialize for Wide {
    /// As the number it is, digit for digit: no integer type of serde holds it all.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        RawValue::from_string(self.0.to_string())
            .map_err(serde::ser::Error::custom)?
            .serialize(serializer)
    }
}

impl IdRepr {
    /// Where the form comes in the order of ids: integers in numeric order, then strings.
    fn rank(&self) -> u8 {
        match self {
            IdRepr::Wide(w) if w.is_negative() => 0,
            IdRepr::Int(_) => 1,
            IdRepr::Big(_) => 2,
            IdRepr::Wide(_) => 3,
            IdRepr::Str(_) => 4,
        }
    }
}

impl Ord for IdRepr {
    fn cmp(&self, other: &IdRepr) -> Ordering {
        let by_value = || match (self, other) {
            (IdRepr::Int(a), IdRepr::Int(b)) => a.cmp(b),
            (IdRepr::Big(a), IdRepr::Big(b)) => a.cmp(b),
            (IdRepr::Wide(a), IdRepr::Wide(b)) => a.cmp(b),
            (IdRepr::Str(a), IdRepr::Str(b)) => a.cmp(b),
            // Forms of different ranks never get here.
            _ => Ordering::Equal,
        };
        self.rank().cmp(&other.rank()).then_with(by_value)
    }
}

impl PartialOrd for IdRepr {
    fn partial_cmp(&self, other: &IdRepr) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl RequestId {
    /// The integer value, if this id is an integer that fits an `i64`.
    ///
    /// See the example on [`RequestId`].
    pub fn as_i64(&self) -> Option<i64> {
        match &self.0 {
            IdRepr::Int(n) => Some(*n),
            IdRepr::Big(_) | IdRepr::Str(_) | IdRepr::Wide(_) => None,
        }
    }

    /// The integer value, if this id is an integer that fits a `u64`.
    ///
    /// See the example on [`RequestId`].
    pub fn as_u64(&self) -> Option<u64> {
        match &self.0 {
            IdRepr::Int(n) => u64::try_from(*n).ok(),
            IdRepr::Big(n) => Some(*n),
            IdRepr::Str(_) | IdRepr::Wide(_) => None,
        }
    }

    /// The string value, if this id is a string.
    ///
    /// See the example on [`RequestId`].
    pub fn as_str(&self) -> Option<&str> {
        match &self.0 {
            IdRepr::Int(_) | IdRepr::Big(_) | IdRepr::Wide(_) => None,
            IdRepr::Str(s) => Some(s),
        }
    }

    /// The id as a JSON value; for an integer beyond 64 bits, the nearest number a `Value`
    /// holds.
    ///
    /// See the example on [`RequestId`].
    pub fn to_value(&self) -> Value {
        match &self.0 {
            IdRepr::Int(n) => Value::from(*n),
            IdRepr::Big(n) => Value::from(*n),
            IdRepr::Str(s) => Value::from(s.as_str()),
            IdRepr::Wide(w) => serde_json::from_str(&w.0).unwrap_or_default(),
        }
    }

    /// The id `text` writes, when it is an integer beyond 64 bits: `None` for any other text.
    pub(super) fn wide(text: &str) -> Option<RequestId> {
        let digits = text.strip_prefix('-').unwrap_or(text);
        let integer = !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && !(digits.starts_with('0') && digits.len() > 1);
        let fits = text.parse::<i64>().is_ok() || text.parse::<u64>().is_ok();
        (integer && !fits).then(|| RequestId(IdRepr::Wide(Wide(text.into()))))
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> RequestId {
        RequestId(IdRepr::Int(n))
    }
}

impl From<u64> for RequestId {
    fn from(n: u64) -> RequestId {
        match i64::try_from(n) {
            Ok(n) => RequestId(IdRepr::Int(n)),
            Err(_) => RequestId(IdRepr::Big(n)),
        }
    }
}

impl From<i32> for RequestId {
    fn from(n: i32) -> RequestId {
        RequestId(IdRepr::Int(n.into()))
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> RequestId {
        RequestId(IdRepr::Str(s))
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> RequestId {
        RequestId(IdRepr::Str(s.to_owned()))
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            IdRepr::Int(n) => write!(f, "{n}"),
            IdRepr::Big(n) => write!(f, "{n}"),
            IdRepr::Wide(w) => f.write_str(&w.0),
            IdRepr::Str(s) => write!(f, "{s:?}"),
        }
    }
}
