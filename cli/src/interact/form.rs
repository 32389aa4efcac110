//! A form-mode elicitation asked on the terminal: whether to answer at all, then each field,
//! with what it takes and the schema's limits, every answer checked before it is kept.

use std::io::BufRead;

use umcp::types::{ElicitForm, ElicitResult, FieldKind, FormField};

use super::ask;
use crate::output::warn;
use crate::shown;

/// How many times a question is asked again after an answer that does not do, before giving
/// up.
const ATTEMPTS: usize = 5;

/// Asks each field of `form`, checking every answer; end of input cancels.
pub(super) fn ask_form(
    label: &str,
    mut form: ElicitForm,
    input: &mut impl BufRead,
) -> ElicitResult {
    warn(&format!(
        "Server {label} asks: {}",
        shown::block(form.message())
    ));
    let mut attempts = 0;
    loop {
        let Some(answer) = ask(input, "Answer? [Y]es, [n]o to decline, [c]ancel: ") else {
            return ElicitResult::cancel();
        };
        match Intent::read(&answer) {
            Some(Intent::Accept) => break,
            Some(Intent::Decline) => return ElicitResult::decline(),
            Some(Intent::Cancel) => return ElicitResult::cancel(),
            // Anything else is asked again rather than taken for a yes: "nope" is no consent.
            None if attempts + 1 < ATTEMPTS => {
                attempts += 1;
                warn("  answer y (yes), n (no, decline) or c (cancel)");
            }
            None => {
                warn("  no answer understood; cancelled");
                return ElicitResult::cancel();
            }
        }
    }
    form.fill_defaults();
    for field in form.fields().to_vec() {
        let mut attempts = 0;
        loop {
            let Some(answer) = ask(input, &question(&field, form.values().get(&field.name))) else {
                return ElicitResult::cancel();
            };
            match take(&mut form, &field, &answer) {
                Ok(()) => break,
                Err(e) if attempts + 1 < ATTEMPTS => {
                    attempts += 1;
                    warn(&format!("  {e}"));
                }
                Err(e) => {
                    warn(&format!("  {e}; giving up"));
                    return ElicitResult::cancel();
                }
            }
        }
    }
    match form.accept() {
        Ok(result) => result,
        Err(e) => {
            warn(&format!("umcp: {}; cancelled", shown::line(&e.to_string())));
            ElicitResult::cancel()
        }
    }
}

/// Sets `field` from `answer`, or says what is wrong with it. An empty answer keeps the
/// default, if there is one.
fn take(form: &mut ElicitForm, field: &FormField, answer: &str) -> Result<(), String> {
    match answer.is_empty() {
        true if form.values().contains_key(&field.name) => Ok(()),
        true if field.required => Err(format!("`{}` is required", shown::line(field.label()))),
        true => Ok(()),
        false => form
            .set_text(&field.name, answer)
            .map_err(|e| shown::line(&e.to_string())),
    }
}

/// What the user answered to taking a form at all.
#[derive(Debug, PartialEq, Eq)]
enum Intent {
    Accept,
    Decline,
    Cancel,
}

impl Intent {
    /// The answer's meaning, in any case: empty (the default) or yes, no or decline, cancel;
    /// `None` for anything else.
    fn read(answer: &str) -> Option<Intent> {
        match answer.to_ascii_lowercase().as_str() {
            "" | "y" | "yes" | "accept" => Some(Intent::Accept),
            "n" | "no" | "decline" => Some(Intent::Decline),
            "c" | "cancel" => Some(Intent::Cancel),
            _ => None,
        }
    }
}

/// What a field takes, with the schema's limits, in words: `a string, at most 20
/// characters, an email address`.
fn hint(kind: &FieldKind) -> String {
    let mut parts = vec![match kind {
        // Typed as yes or no, as the answer is read (`true` and `false` work too).
        FieldKind::Boolean => "yes or no".to_owned(),
        other => other.describe().to_owned(),
    }];
    match kind {
        FieldKind::Text {
            min_length,
            max_length,
            format,
        } => {
            parts.extend(min_length.map(|n| format!("at least {n} characters")));
            parts.extend(max_length.map(|n| format!("at most {n} characters")));
            parts.extend(format.as_deref().map(|f| match f {
                "email" => "an email address".to_owned(),
                "uri" => "a URI".to_owned(),
                "date" => "a date (YYYY-MM-DD)".to_owned(),
                "date-time" => "a date and time (RFC 3339)".to_owned(),
                other => format!("format {}", shown::line(other)),
            }));
        }
        FieldKind::Number {
            minimum, maximum, ..
        } => {
            parts.extend(minimum.map(|n| format!("at least {n}")));
            parts.extend(maximum.map(|n| format!("at most {n}")));
        }
        FieldKind::MultiChoice {
            min_items,
            max_items,
            ..
        } => {
            parts.push("separated by commas".to_owned());
            parts.extend(min_items.map(|n| format!("at least {n}")));
            parts.extend(max_items.map(|n| format!("at most {n}")));
        }
        _ => {}
    }
    parts.join(", ")
}

/// The prompt for one field: its label, what it takes, and its current value, each on the
/// one line (the server's words escaped).
fn question(field: &FormField, current: Option<&serde_json::Value>) -> String {
    let mut text = format!("  {}", shown::line(field.label()));
    if let Some(description) = &field.description {
        text += &format!(" ({})", shown::line(description));
    }
    let choices = match &field.kind {
        FieldKind::Choice(c) => Some(c),
        FieldKind::MultiChoice { choices, .. } => Some(choices),
        _ => None,
    };
    match choices {
        Some(choices) => {
            let listed: Vec<String> = choices
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let title = c.title.as_deref().unwrap_or(&c.value);
                    format!("{}={}", i + 1, shown::line(title))
                })
                .collect();
            text += &format!(" [{}]", listed.join(", "));
            if let FieldKind::MultiChoice { .. } = field.kind {
                text += &format!(" ({})", hint(&field.kind));
            }
        }
        None => text += &format!(" [{}]", hint(&field.kind)),
    }
    if field.required {
        text += " (required)";
    }
    if let Some(value) = current {
        text += &format!(" <{}>", shown::line(&value.to_string()));
    }
    text + ": "
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use umcp::types::{ElicitAction, ElicitRequestFormParams};

    fn form() -> ElicitForm {
        ElicitForm::new(&ElicitRequestFormParams::new(
            "Who?",
            json!({"type": "object", "properties": {
                "name": {"type": "string", "minLength": 2},
                "age": {"type": "integer", "default": 7},
                "color": {"type": "string", "enum": ["red", "blue"]}
            }, "required": ["name"]}),
        ))
        .unwrap()
    }

    fn answer(typed: &str) -> ElicitResult {
        ask_form("`demo`", form(), &mut typed.as_bytes())
    }

    #[test]
    fn invalid_answers_are_asked_again_and_empty_keeps_the_default() {
        let result = answer("y\nA\nAda\nold\n\n2\n");
        assert_eq!(result.action, ElicitAction::Accept);
        assert_eq!(
            serde_json::Value::Object(result.content.unwrap()),
            json!({"name": "Ada", "age": 7, "color": "blue"})
        );
    }

    #[test]
    fn field_questions_escape_the_server_text() {
        let request = ElicitRequestFormParams::new(
            "m",
            json!({"type": "object", "properties": {"pick": {"type": "string",
                "title": "Pick\u{1b}[31m", "description": "one\nline",
                "oneOf": [{"const": "a", "title": "A\u{202e}"}]}}}),
        );
        let form = ElicitForm::new(&request).unwrap();
        assert_eq!(
            question(&form.fields()[0], Some(&json!("\u{9b}"))),
            "  Pick\\u{1b}[31m (one\\u{a}line) [1=A\\u{202e}] <\"\\u{9b}\">: "
        );
    }

    #[test]
    fn the_first_answer_is_read_in_any_case_and_never_guessed() {
        for typed in ["n", "N", "no", "No", "NO", "decline", "Decline", "DECLINE"] {
            let result = answer(&format!("{typed}\n"));
            assert_eq!(result.action, ElicitAction::Decline, "{typed}");
        }
        for typed in ["c", "C", "cancel", "Cancel", "CANCEL"] {
            let result = answer(&format!("{typed}\n"));
            assert_eq!(result.action, ElicitAction::Cancel, "{typed}");
        }
        for typed in ["y", "Y", "Yes", "YES", "accept", ""] {
            let result = answer(&format!("{typed}\nAda\n\n\n"));
            assert_eq!(result.action, ElicitAction::Accept, "{typed:?}");
        }
        // Not understood: asked again, and after a few tries cancelled, never taken as yes.
        let result = answer("nope\nmaybe\nNo\n");
        assert_eq!(result.action, ElicitAction::Decline);
        let result = answer("nope\nnah\nsure?\nok\nyess\nAda\n\n\n");
        assert_eq!(result.action, ElicitAction::Cancel);
    }

    #[test]
    fn hints_give_the_limits_and_an_empty_required_answer_names_the_field() {
        let request = ElicitRequestFormParams::new(
            "m",
            json!({"type": "object", "properties": {
                "email": {"type": "string", "title": "E-mail", "format": "email",
                          "minLength": 3, "maxLength": 40},
                "age": {"type": "integer", "minimum": 0, "maximum": 150},
                "ratio": {"type": "number", "minimum": 0.5},
                "ok": {"type": "boolean"},
                "tags": {"type": "array", "minItems": 1, "maxItems": 2,
                         "items": {"type": "string", "enum": ["a", "b", "c"]}}
            }, "required": ["email"]}),
        );
        let mut form = ElicitForm::new(&request).unwrap();
        let questions: Vec<String> = form.fields().iter().map(|f| question(f, None)).collect();
        assert_eq!(
            questions,
            [
                "  E-mail [a string, at least 3 characters, at most 40 characters, \
                 an email address] (required): ",
                "  age [an integer, at least 0, at most 150]: ",
                "  ratio [a number, at least 0.5]: ",
                "  ok [yes or no]: ",
                "  tags [1=a, 2=b, 3=c] (a list of choices, separated by commas, at least 1, \
                 at most 2): ",
            ]
        );
        let email = form.fields()[0].clone();
        assert_eq!(
            take(&mut form, &email, ""),
            Err("`E-mail` is required".into())
        );
        let ok = form.fields()[3].clone();
        let wrong = take(&mut form, &ok, "maybe").unwrap_err();
        assert!(wrong.contains("yes or no"), "{wrong}");
        assert_eq!(take(&mut form, &ok, "Yes"), Ok(()));
    }

    #[test]
    fn no_declines_and_the_end_of_input_cancels() {
        assert_eq!(answer("n\n").action, ElicitAction::Decline);
        assert_eq!(answer("").action, ElicitAction::Cancel);
        assert_eq!(answer("y\nAda\n").action, ElicitAction::Cancel);
        assert_eq!(answer("y\n\n\n\n\n\n").action, ElicitAction::Cancel);
    }
}
