//! Elicitation modes (protocol 2025-11-25): which modes the handler takes, the capability
//! that declares them, and the check that refuses a request of an undeclared mode.

use serde_json::{json, Map, Value};

use crate::jsonrpc::{ErrorCode, ErrorObject};

/// The elicitation modes a client's handler takes: form mode, URL mode, or both (the default).
///
/// Declared in the `elicitation` capability; a request of a mode not declared is refused
/// before the handler sees it.
///
/// See the example on [`Options::with_elicitation_modes`](crate::Options::with_elicitation_modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ElicitationModes {
    form: bool,
    url: bool,
}

impl ElicitationModes {
    /// Form and URL mode (the default).
    ///
    /// See the example on
    /// [`Options::with_elicitation_modes`](crate::Options::with_elicitation_modes).
    pub const ALL: ElicitationModes = ElicitationModes {
        form: true,
        url: true,
    };
    /// Form mode only: the handler fills in forms and never sends the user to a URL.
    ///
    /// See the example on
    /// [`Options::with_elicitation_modes`](crate::Options::with_elicitation_modes).
    pub const FORM: ElicitationModes = ElicitationModes {
        form: true,
        url: false,
    };
    /// URL mode only: the handler sends the user to pages and takes no form.
    ///
    /// See the example on
    /// [`Options::with_elicitation_modes`](crate::Options::with_elicitation_modes).
    pub const URL: ElicitationModes = ElicitationModes {
        form: false,
        url: true,
    };

    /// Whether form mode is declared.
    ///
    /// See the example on
    /// [`Options::with_elicitation_modes`](crate::Options::with_elicitation_modes).
    pub fn form(self) -> bool {
        self.form
    }

    /// Whether URL mode is declared.
    ///
    /// See the example on
    /// [`Options::with_elicitation_modes`](crate::Options::with_elicitation_modes).
    pub fn url(self) -> bool {
        self.url
    }

    /// The `elicitation` capability object: one empty member per declared mode. Never `{}`,
    /// which the spec reads as form mode only.
    pub(crate) fn capability(self) -> Value {
        let mut modes = Map::new();
        if self.form {
            modes.insert("form".into(), json!({}));
        }
        if self.url {
            modes.insert("url".into(), json!({}));
        }
        Value::Object(modes)
    }
}

impl Default for ElicitationModes {
    fn default() -> ElicitationModes {
        ElicitationModes::ALL
    }
}

/// Refuses the params of an `elicitation/create` whose mode the client did not declare: the
/// spec has the client answer `-32602` for one. A mode neither form nor URL is left to the
/// decoder, which refuses it the same way.
pub(crate) fn refuse_undeclared_mode(
    modes: ElicitationModes,
    params: Option<&Value>,
) -> Result<(), ErrorObject> {
    let mode = match params.and_then(|p| p.get("mode")) {
        None | Some(Value::Null) => "form",
        Some(Value::String(mode)) => mode.as_str(),
        Some(_) => return Ok(()),
    };
    let declared = match mode {
        "form" => modes.form,
        "url" => modes.url,
        _ => return Ok(()),
    };
    if declared {
        return Ok(());
    }
    log::debug!("refusing a {mode}-mode elicitation: the mode was not declared");
    Err(ErrorObject::new(
        ErrorCode::INVALID_PARAMS,
        format!(
            "the client did not declare the elicitation mode `{mode}`, so it takes no \
             elicitation request of that mode"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_capability_names_the_declared_modes() {
        assert_eq!(
            ElicitationModes::default().capability(),
            json!({"form": {}, "url": {}})
        );
        assert_eq!(ElicitationModes::FORM.capability(), json!({"form": {}}));
        assert_eq!(ElicitationModes::URL.capability(), json!({"url": {}}));
    }

    #[test]
    fn only_undeclared_modes_are_refused() {
        let url = json!({"mode": "url", "message": "m", "url": "https://x", "elicitationId": "e"});
        let form = json!({"mode": "form", "message": "m", "requestedSchema": {}});
        let bare = json!({"message": "m", "requestedSchema": {}});
        let odd = json!({"mode": "voice", "message": "m"});
        let form_only = ElicitationModes::FORM;
        let url_only = ElicitationModes::URL;
        let refused = refuse_undeclared_mode(form_only, Some(&url)).unwrap_err();
        assert_eq!(refused.code, ErrorCode::INVALID_PARAMS);
        assert!(refused.message.contains("`url`"), "{}", refused.message);
        for params in [&form, &bare, &odd] {
            assert!(refuse_undeclared_mode(form_only, Some(params)).is_ok());
        }
        for params in [&form, &bare] {
            assert!(refuse_undeclared_mode(url_only, Some(params)).is_err());
        }
        assert!(
            refuse_undeclared_mode(url_only, None).is_err(),
            "no params: form"
        );
        for params in [&url, &form, &bare] {
            assert!(refuse_undeclared_mode(ElicitationModes::ALL, Some(params)).is_ok());
        }
    }
}
