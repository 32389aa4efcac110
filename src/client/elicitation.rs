//! Elicitation modes (protocol 2025-11-25): the option that says which modes the handler takes,
//! the capability it declares, and the check that refuses a request of an undeclared mode.

use serde_json::{json, Map, Value};

use crate::error::{Error, Unsupported};
use crate::jsonrpc::{ErrorCode, ErrorObject};

use super::server_requests::Handlers;

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
    options: &Handlers,
    params: Option<&Value>,
) -> Result<(), ErrorObject> {
    let modes = options.elicitation_modes;
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

/// [`refuse_undeclared_mode`] for a stateless input request of any `method`, where there is no
/// request to answer with an error: the call fails instead. A client without an elicitation
/// handler is left to say that.
pub(crate) fn refuse_undeclared_mode_input(
    options: &Handlers,
    method: &str,
    params: &Value,
) -> crate::Result<()> {
    if method != "elicitation/create" || options.elicitation.is_none() {
        return Ok(());
    }
    refuse_undeclared_mode(options, Some(params)).map_err(|error| {
        Error::Unsupported(Unsupported::Feature(format!(
            "the server asked for `{method}` input, but {} (Options::with_elicitation_modes)",
            error.message
        )))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ElicitResult;
    use crate::Options;

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
        let form_only = Options::default().with_elicitation_modes(ElicitationModes::FORM);
        let url_only = Options::default().with_elicitation_modes(ElicitationModes::URL);
        let refused = refuse_undeclared_mode(&form_only.handlers, Some(&url)).unwrap_err();
        assert_eq!(refused.code, ErrorCode::INVALID_PARAMS);
        assert!(refused.message.contains("`url`"), "{}", refused.message);
        for params in [&form, &bare, &odd] {
            assert!(refuse_undeclared_mode(&form_only.handlers, Some(params)).is_ok());
        }
        for params in [&form, &bare] {
            assert!(refuse_undeclared_mode(&url_only.handlers, Some(params)).is_err());
        }
        assert!(
            refuse_undeclared_mode(&url_only.handlers, None).is_err(),
            "no params: form"
        );
        for params in [&url, &form, &bare] {
            assert!(refuse_undeclared_mode(&Options::default().handlers, Some(params)).is_ok());
        }
        // Input rounds: other methods, and a client without a handler, are not its business.
        assert!(refuse_undeclared_mode_input(&form_only.handlers, "roots/list", &url).is_ok());
        assert!(
            refuse_undeclared_mode_input(&form_only.handlers, "elicitation/create", &url).is_ok()
        );
        let handled = form_only.with_elicitation_handler(|_| Ok(ElicitResult::decline()));
        let refused = refuse_undeclared_mode_input(&handled.handlers, "elicitation/create", &url);
        assert!(matches!(refused, Err(Error::Unsupported(_))), "{refused:?}");
        assert!(
            refuse_undeclared_mode_input(&handled.handlers, "elicitation/create", &form).is_ok()
        );
    }
}
