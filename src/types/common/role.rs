//! [`Role`], the speaker of a message, read as any string so that a role a newer server
//! invents does not make a whole prompt, listing or sampling request unreadable.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// The sender or recipient of a message in a conversation.
///
/// A role the specification does not name (a server writing `"system"`) is kept as
/// [`Role::Unknown`] and written back as it came.
///
/// ```
/// use umcp::types::Role;
///
/// let role: Role = serde_json::from_str(r#""system""#)?;
/// assert_eq!(role, Role::Unknown("system".into()));
/// assert_eq!(role.as_str(), "system");
/// assert_eq!(serde_json::to_string(&Role::Assistant)?, r#""assistant""#);
/// # Ok::<(), serde_json::Error>(())
/// ```
///
/// See also the example on [`Client::get_prompt`](crate::Client::get_prompt).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Role {
    /// The human side of the conversation.
    User,
    /// The model side of the conversation.
    Assistant,
    /// A role this version of umcp does not know, with its wire name.
    Unknown(String),
}

impl Role {
    /// The wire name: `user`, `assistant`, or the unknown role's own name.
    ///
    /// ```
    /// assert_eq!(umcp::types::Role::Assistant.as_str(), "assistant");
    /// ```
    pub fn as_str(&self) -> &str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Unknown(name) => name,
        }
    }

    fn from_name(name: &str) -> Role {
        match name {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            other => Role::Unknown(other.to_owned()),
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Role {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Role {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Role, D::Error> {
        struct RoleVisitor;
        impl Visitor<'_> for RoleVisitor {
            type Value = Role;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a role name")
            }

            fn visit_str<E: de::Error>(self, name: &str) -> Result<Role, E> {
                Ok(Role::from_name(name))
            }
        }
        deserializer.deserialize_str(RoleVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn known_and_unknown_roles_round_trip() {
        for (wire, role) in [
            ("user", Role::User),
            ("assistant", Role::Assistant),
            ("system", Role::Unknown("system".into())),
        ] {
            assert_eq!(serde_json::from_value::<Role>(json!(wire)).unwrap(), role);
            assert_eq!(serde_json::to_value(&role).unwrap(), json!(wire));
            assert_eq!(role.to_string(), wire);
        }
        assert!(serde_json::from_value::<Role>(json!(null)).is_err());
    }
}
