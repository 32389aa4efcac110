//! The terminal side of a call: progress on stderr while a tool runs, and the server's
//! questions (elicitation) asked on the terminal, or declined when stdin is not one.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use umcp::jsonrpc::{ErrorCode, ErrorObject};
use umcp::types::{ElicitForm, ElicitRequestParams, ElicitResult, FieldKind, FormField};
use umcp::RequestOptions;

use crate::output::warn;

/// How many times a field is asked again after an invalid answer, before giving up.
const ATTEMPTS: usize = 5;

const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// A progress line on stderr, drawn only when stderr is a terminal.
pub struct Progress {
    drawn: Arc<AtomicBool>,
}

impl Progress {
    /// Adds a progress callback to `options` when stderr is a terminal.
    pub fn attach(options: RequestOptions) -> (RequestOptions, Progress) {
        let drawn = Arc::new(AtomicBool::new(false));
        let progress = Progress {
            drawn: Arc::clone(&drawn),
        };
        if !std::io::stderr().is_terminal() {
            return (options, progress);
        }
        let frame = AtomicUsize::new(0);
        let options = options.with_progress(move |p| {
            let spin = SPINNER[frame.fetch_add(1, Ordering::Relaxed) % SPINNER.len()];
            let amount = match p.total {
                Some(total) => format!("{}/{}", p.progress, total),
                None => p.progress.to_string(),
            };
            let message = p.message.as_deref().unwrap_or("working");
            let mut err = std::io::stderr().lock();
            // Back to the start of the line and clear it, then draw the new state.
            let _ = write!(err, "\r\x1b[2K{spin} {message} ({amount})");
            let _ = err.flush();
            drawn.store(true, Ordering::Relaxed);
        });
        (options, progress)
    }

    /// Clears the progress line, if one was drawn.
    pub fn finish(&self) {
        if self.drawn.load(Ordering::Relaxed) {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
        }
    }
}

/// Answers the server's `elicitation/create`: on a terminal, asks the user; otherwise
/// declines, saying so on stderr.
pub fn elicit(params: ElicitRequestParams) -> Result<ElicitResult, ErrorObject> {
    if !std::io::stdin().is_terminal() {
        warn(&format!(
            "umcp: the server asks: {}\numcp: declined (stdin is not a terminal)",
            params.message()
        ));
        return Ok(ElicitResult::decline());
    }
    let mut input = std::io::stdin().lock();
    match params {
        ElicitRequestParams::Form(request) => {
            let form = ElicitForm::new(&request)
                .map_err(|e| ErrorObject::new(ErrorCode::INVALID_PARAMS, e.to_string()))?;
            Ok(ask_form(form, &mut input))
        }
        ElicitRequestParams::Url(request) => {
            warn(&format!(
                "The server asks: {}\nIt wants you to open: {}",
                request.message, request.url
            ));
            Ok(
                match ask(&mut input, "Open it yourself and continue? [y/N] ") {
                    Some(a) if a.eq_ignore_ascii_case("y") || a.eq_ignore_ascii_case("yes") => {
                        ElicitResult::new(umcp::types::ElicitAction::Accept)
                    }
                    Some(_) => ElicitResult::decline(),
                    None => ElicitResult::cancel(),
                },
            )
        }
    }
}

/// Asks each field of `form`, checking every answer; end of input cancels.
fn ask_form(mut form: ElicitForm, input: &mut impl BufRead) -> ElicitResult {
    warn(&format!("The server asks: {}", form.message()));
    match ask(input, "Answer? [Y]es, [n]o to decline, [c]ancel: ").as_deref() {
        None | Some("c" | "C" | "cancel") => return ElicitResult::cancel(),
        Some("n" | "N" | "no") => return ElicitResult::decline(),
        Some(_) => {}
    }
    form.fill_defaults();
    for field in form.fields().to_vec() {
        let mut attempts = 0;
        loop {
            let Some(answer) = ask(input, &question(&field, form.values().get(&field.name))) else {
                return ElicitResult::cancel();
            };
            // An empty answer keeps the default, if there is one.
            let result = match answer.is_empty() {
                true if form.values().contains_key(&field.name) => Ok(()),
                true if field.required => Err("is required".to_owned()),
                true => Ok(()),
                false => form
                    .set_text(&field.name, &answer)
                    .map_err(|e| e.to_string()),
            };
            match result {
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
            warn(&format!("umcp: {e}; cancelled"));
            ElicitResult::cancel()
        }
    }
}

/// The prompt for one field: its label, what it takes, and its current value.
fn question(field: &FormField, current: Option<&serde_json::Value>) -> String {
    let mut text = format!("  {}", field.label());
    if let Some(description) = &field.description {
        text += &format!(" ({description})");
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
                .map(|(i, c)| format!("{}={}", i + 1, c.title.as_deref().unwrap_or(&c.value)))
                .collect();
            text += &format!(" [{}]", listed.join(", "));
        }
        None => text += &format!(" [{}]", field.kind.describe()),
    }
    if field.required {
        text += " (required)";
    }
    if let Some(value) = current {
        text += &format!(" <{value}>");
    }
    text + ": "
}

/// Shows `prompt` on stderr and reads one line; `None` at the end of input.
fn ask(input: &mut impl BufRead, prompt: &str) -> Option<String> {
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{prompt}");
    let _ = err.flush();
    drop(err);
    let mut line = String::new();
    match input.read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim().to_owned()),
    }
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
        ask_form(form(), &mut typed.as_bytes())
    }

    #[test]
    fn invalid_answers_are_asked_again_and_empty_keeps_the_default() {
        let result = answer("y\nold\n\n2\nA\nAda\n");
        assert_eq!(result.action, ElicitAction::Accept);
        assert_eq!(
            serde_json::Value::Object(result.content.unwrap()),
            json!({"name": "Ada", "age": 7, "color": "blue"})
        );
    }

    #[test]
    fn no_declines_and_the_end_of_input_cancels() {
        assert_eq!(answer("n\n").action, ElicitAction::Decline);
        assert_eq!(answer("").action, ElicitAction::Cancel);
        assert_eq!(answer("y\nAda\n").action, ElicitAction::Cancel);
        assert_eq!(answer("y\n\n\n\n\n\n").action, ElicitAction::Cancel);
    }
}
