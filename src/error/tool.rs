//! Why a tool is not offered: a filter leaves it out, or it is not the tool a lock pinned.

use std::fmt;

use crate::redact::clip;

/// A tool that a client or manager does not offer, and why: the payload of
/// [`Error::ToolHidden`](crate::Error::ToolHidden).
///
/// A hidden tool is not listed, and a call to it is refused before anything is sent: the
/// server never hears of it.
///
/// ```
/// use umcp::{Error, Hidden, HiddenTool, ToolField};
///
/// let error = Error::ToolHidden(Box::new(HiddenTool::new(
///     Some("files"),
///     "read_file",
///     Hidden::Changed(vec![ToolField::Description]),
/// )));
/// let hidden = error.hidden_tool().expect("a hidden tool");
/// assert_eq!(hidden.why, Hidden::Changed(vec![ToolField::Description]));
/// assert_eq!(
///     error.to_string(),
///     "tool `read_file` of server `files` differs from the lock: its description changed; \
///      it is refused until it is locked again"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HiddenTool {
    /// The server's name, when the manager or the lock knows it.
    pub server: Option<String>,
    /// The tool's name, as the server lists it.
    pub tool: String,
    /// Why it is hidden.
    pub why: Hidden,
}

/// Why a tool is hidden.
///
/// See the example on [`HiddenTool`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Hidden {
    /// The server's tool filter leaves it out ([`ToolFilter`](crate::ToolFilter): the
    /// allowed and excluded tools of its configuration).
    Filtered,
    /// The lock does not have it: the server added it since the lock was made. Lock again to
    /// accept it.
    NotLocked,
    /// Its definition differs from the one locked; the fields that changed, in the order of
    /// [`ToolField`] (empty when only the digests are known to differ).
    Changed(Vec<ToolField>),
    /// The lock (or typed bindings made from it) has it, and the server does not list it.
    Missing,
}

/// A field of a tool's locked definition.
///
/// See the example on [`HiddenTool`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ToolField {
    /// `annotations`: the behaviour hints.
    Annotations,
    /// `description`.
    Description,
    /// `inputSchema`: the arguments' schema.
    InputSchema,
    /// `name`.
    Name,
    /// `outputSchema`: the structured result's schema.
    OutputSchema,
    /// `title`.
    Title,
}

impl HiddenTool {
    /// A hidden tool of `server` (if known), named `tool`, hidden for `why`.
    ///
    /// See the example on [`HiddenTool`].
    pub fn new(server: Option<&str>, tool: impl Into<String>, why: Hidden) -> HiddenTool {
        HiddenTool {
            server: server.map(str::to_owned),
            tool: tool.into(),
            why,
        }
    }
}

impl ToolField {
    /// Every field, in the order of the definition's keys.
    ///
    /// See the example on [`ToolField::from_key`].
    pub const ALL: [ToolField; 6] = [
        ToolField::Annotations,
        ToolField::Description,
        ToolField::InputSchema,
        ToolField::Name,
        ToolField::OutputSchema,
        ToolField::Title,
    ];

    /// The field's key in a tool's definition, such as `inputSchema`.
    ///
    /// ```
    /// assert_eq!(umcp::ToolField::InputSchema.as_str(), "inputSchema");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            ToolField::Annotations => "annotations",
            ToolField::Description => "description",
            ToolField::InputSchema => "inputSchema",
            ToolField::Name => "name",
            ToolField::OutputSchema => "outputSchema",
            ToolField::Title => "title",
        }
    }

    /// The field whose key is `key`.
    ///
    /// ```
    /// use umcp::ToolField;
    ///
    /// assert_eq!(ToolField::from_key("outputSchema"), Some(ToolField::OutputSchema));
    /// assert_eq!(ToolField::from_key("icons"), None);
    /// let keys: Vec<&str> = ToolField::ALL.iter().map(|field| field.as_str()).collect();
    /// assert_eq!(keys[0], "annotations");
    /// ```
    pub fn from_key(key: &str) -> Option<ToolField> {
        ToolField::ALL
            .into_iter()
            .find(|field| field.as_str() == key)
    }
}

impl fmt::Display for ToolField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for HiddenTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Both names may come from a server: quoted in part when huge.
        write!(f, "tool `{}`", clip(&self.tool))?;
        if let Some(server) = &self.server {
            write!(f, " of server `{}`", clip(server))?;
        }
        match &self.why {
            Hidden::Filtered => f.write_str(
                " is filtered out by the server's allowed and excluded tools; it is not called",
            ),
            Hidden::NotLocked => f.write_str(
                " is not in the lock (the server added it since); it is refused until it is \
                 locked",
            ),
            Hidden::Changed(fields) if fields.is_empty() => {
                f.write_str(" differs from the lock; it is refused until it is locked again")
            }
            Hidden::Changed(fields) => {
                let names: Vec<&str> = fields.iter().map(|field| field.as_str()).collect();
                let what = match names.as_slice() {
                    [one] => format!("its {one} changed"),
                    [init @ .., last] => format!("its {} and {last} changed", init.join(", ")),
                    [] => String::new(),
                };
                write!(
                    f,
                    " differs from the lock: {what}; it is refused until it is locked again"
                )
            }
            Hidden::Missing => f.write_str(" is locked, but the server does not list it"),
        }
    }
}
