//! The terminal side of a call: progress on stderr while a tool runs, and the server's
//! questions (elicitation) asked on the terminal, or declined when stdin is not one.

use std::collections::HashMap;
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use umcp::jsonrpc::{ErrorCode, ErrorObject};
use umcp::types::{ElicitForm, ElicitRequestParams, ElicitResult, FieldKind, FormField};
use umcp::{RequestOptions, ServerConfig, ServerTransport};

use crate::output::warn;
use crate::shown;

/// How many times a field is asked again after an invalid answer, before giving up.
const ATTEMPTS: usize = 5;

/// How much of a `--stdio` command line names its server in a question.
const LABEL_CHARS: usize = 60;

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

/// The elicitation handler for `servers`, naming the server that asks in every question.
/// `from_command_line`: the one server of `--stdio` or `--url`, named after its program or host.
pub fn handler(
    servers: &[ServerConfig],
    from_command_line: bool,
) -> impl Fn(&str, ElicitRequestParams) -> Result<ElicitResult, ErrorObject> + Send + Sync + 'static
{
    let labels: HashMap<String, String> = servers
        .iter()
        .map(|s| (s.name.clone(), label(s, from_command_line)))
        .collect();
    move |server, params| {
        let label = labels
            .get(server)
            .cloned()
            .unwrap_or_else(|| format!("`{}`", shown::line(server)));
        elicit(&label, params)
    }
}

/// How the user knows a server: its name in the configuration file, or for a server given on
/// the command line, its command or its URL's host. Quoted, and safe to print.
fn label(server: &ServerConfig, from_command_line: bool) -> String {
    let known = match &server.transport {
        _ if !from_command_line => server.name.clone(),
        ServerTransport::Stdio { command, args, .. } => {
            let program = Path::new(command).file_name().map_or_else(
                || command.clone(),
                |name| name.to_string_lossy().into_owned(),
            );
            let line = std::iter::once(program).chain(args.iter().cloned());
            let line = line.collect::<Vec<_>>().join(" ");
            match line.char_indices().nth(LABEL_CHARS) {
                Some((cut, _)) => format!("{}…", &line[..cut]),
                None => line,
            }
        }
        ServerTransport::Http { url, .. } => shown::host(url).unwrap_or(url).to_owned(),
        _ => server.name.clone(),
    };
    format!("`{}`", shown::line(&known))
}

/// Answers the server's `elicitation/create`, naming the server (`label`): on a terminal,
/// asks the user; otherwise declines, saying so on stderr. Every text the server wrote is
/// escaped before it is shown.
fn elicit(label: &str, params: ElicitRequestParams) -> Result<ElicitResult, ErrorObject> {
    if !std::io::stdin().is_terminal() {
        warn(&format!(
            "umcp: server {label} asks: {}\numcp: declined (stdin is not a terminal)",
            shown::block(params.message())
        ));
        return Ok(ElicitResult::decline());
    }
    let mut input = std::io::stdin().lock();
    match params {
        ElicitRequestParams::Form(request) => {
            let form = ElicitForm::new(&request)
                .map_err(|e| ErrorObject::new(ErrorCode::INVALID_PARAMS, e.to_string()))?;
            Ok(ask_form(label, form, &mut input))
        }
        ElicitRequestParams::Url(request) => {
            warn(&page(label, &request.message, &request.url));
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

/// What a URL-mode request is shown as: who asks and why, the host the page is on, on a line
/// of its own, and then the whole URL (the spec asks for both, so the host cannot hide in a
/// long URL).
fn page(label: &str, message: &str, url: &str) -> String {
    let mut text = format!("Server {label} asks: {}\n", shown::block(message));
    match shown::host(url) {
        Some(host) => {
            text += &format!("It wants you to open a page on {}:\n", shown::line(host));
            if let Some(warning) = shown::host_warning(host) {
                text += &format!("  (that host is {warning})\n");
            }
        }
        None => text += "It wants you to open this, which names no web host:\n",
    }
    text + "  " + &shown::line(url)
}

/// Asks each field of `form`, checking every answer; end of input cancels.
fn ask_form(label: &str, mut form: ElicitForm, input: &mut impl BufRead) -> ElicitResult {
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
        ask_form("`demo`", form(), &mut typed.as_bytes())
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
    fn a_page_names_the_server_and_the_host_and_escapes_the_rest() {
        let text = page(
            "`demo`",
            "Sign in\n\x1b[2Kumcp: all fine",
            "https://bank.com@evil.com/\u{202e}x",
        );
        assert_eq!(
            text,
            "Server `demo` asks: Sign in\n  \\u{1b}[2Kumcp: all fine\n\
             It wants you to open a page on evil.com:\n  https://bank.com@evil.com/\\u{202e}x"
        );
        let text = page("`demo`", "m", "https://xn--pple-43d.com/");
        assert!(
            text.contains("on xn--pple-43d.com:\n  (that host is an intern"),
            "{text}"
        );
        assert!(page("`demo`", "m", "javascript:alert(1)").contains("names no web host"));
    }

    #[test]
    fn servers_are_named_as_the_user_knows_them() {
        let file = ServerConfig::stdio("files", "/usr/bin/npx").with_args(["-y", "fs\x1b"]);
        assert_eq!(label(&file, false), "`files`");
        assert_eq!(label(&file, true), "`npx -y fs\\u{1b}`");
        let remote = ServerConfig::http("server", "https://user@mcp.example.com:8443/mcp");
        assert_eq!(label(&remote, true), "`mcp.example.com`");
        let long = ServerConfig::stdio("server", "x").with_args(["a".repeat(100)]);
        assert_eq!(label(&long, true).chars().count(), LABEL_CHARS + 3);
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
            let result = answer(&format!("{typed}\n\n\nAda\n"));
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
                "  age [an integer, at least 0, at most 150]: ",
                "  E-mail [a string, at least 3 characters, at most 40 characters, \
                 an email address] (required): ",
                "  ok [yes or no]: ",
                "  ratio [a number, at least 0.5]: ",
                "  tags [1=a, 2=b, 3=c] (a list of choices, separated by commas, at least 1, \
                 at most 2): ",
            ]
        );
        let email = form.fields()[1].clone();
        assert_eq!(
            take(&mut form, &email, ""),
            Err("`E-mail` is required".into())
        );
        let ok = form.fields()[2].clone();
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
