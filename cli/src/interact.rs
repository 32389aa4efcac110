//! The terminal side of a call: progress on stderr while a tool runs, and the server's
//! questions (elicitation) asked on the terminal, or declined when stdin or stderr is not one.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use umcp::jsonrpc::{ErrorCode, ErrorObject};
use umcp::types::{ElicitForm, ElicitRequestParams, ElicitResult};
use umcp::{RequestOptions, ServerConfig, ServerTransport};

use crate::console::{self, Stream};
use crate::output::warn;
use crate::shown;

mod form;

use form::ask_form;

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
        if !console::is_terminal(Stream::Stderr) {
            return (options, progress);
        }
        let frame = AtomicUsize::new(0);
        // The callback runs on a client thread: it draws on the console of the command.
        let console = console::inherited();
        let options = options.with_progress(move |p| {
            let _console = console::redirect_thread(console.clone());
            let spin = SPINNER[frame.fetch_add(1, Ordering::Relaxed) % SPINNER.len()];
            let amount = match p.total {
                Some(total) => format!("{}/{}", p.progress, total),
                None => p.progress.to_string(),
            };
            let message = shown::line(p.message.as_deref().unwrap_or("working"));
            // Back to the start of the line and clear it, then draw the new state.
            console::err(&format!("\r\x1b[2K{spin} {message} ({amount})"));
            drawn.store(true, Ordering::Relaxed);
        });
        (options, progress)
    }

    /// Clears the progress line, if one was drawn.
    pub fn finish(&self) {
        if self.drawn.load(Ordering::Relaxed) {
            console::err("\r\x1b[2K");
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
        ServerTransport::Stdio(stdio) => {
            let command = stdio.get_command();
            let program = Path::new(command).file_name().map_or_else(
                || command.to_owned(),
                |name| name.to_string_lossy().into_owned(),
            );
            let line = std::iter::once(program).chain(stdio.get_args().iter().cloned());
            let line = line.collect::<Vec<_>>().join(" ");
            match line.char_indices().nth(LABEL_CHARS) {
                Some((cut, _)) => format!("{}…", &line[..cut]),
                None => line,
            }
        }
        ServerTransport::Http(http, _) => {
            let url = http.get_url();
            shown::host(url).unwrap_or(url).to_owned()
        }
        _ => server.name.clone(),
    };
    format!("`{}`", shown::line(&known))
}

/// Answers the server's `elicitation/create`, naming the server (`label`): on a terminal,
/// asks the user; otherwise declines, saying so on stderr. Every text the server wrote is
/// escaped before it is shown.
fn elicit(label: &str, params: ElicitRequestParams) -> Result<ElicitResult, ErrorObject> {
    // The question is read on stdin and shown on stderr: both must be the user's terminal,
    // or the user would be waited for on a question they cannot see, or cannot answer.
    let not_terminal = match (
        console::is_terminal(Stream::Stdin),
        console::is_terminal(Stream::Stderr),
    ) {
        (false, _) => Some("stdin"),
        (true, false) => Some("stderr"),
        (true, true) => None,
    };
    if let Some(which) = not_terminal {
        warn(&format!(
            "umcp: server {label} asks: {}\numcp: declined ({which} is not a terminal)",
            shown::block(params.message())
        ));
        return Ok(ElicitResult::decline());
    }
    // The user's time answering does not count against the command's `--timeout`.
    crate::deadline::asking(|| {
        let mut input = console::input();
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
    })
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

/// Shows `prompt` on stderr and reads one line; `None` at the end of input.
fn ask(input: &mut impl BufRead, prompt: &str) -> Option<String> {
    console::err(prompt);
    let mut line = String::new();
    match input.read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim().to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let npx = umcp::StdioConfig::new("/usr/bin/npx").args(["-y", "fs\x1b"]);
        let file = ServerConfig::new("files", npx);
        assert_eq!(label(&file, false), "`files`");
        assert_eq!(label(&file, true), "`npx -y fs\\u{1b}`");
        let remote = ServerConfig::http("server", "https://user@mcp.example.com:8443/mcp");
        assert_eq!(label(&remote, true), "`mcp.example.com`");
        let long = ServerConfig::new("server", umcp::StdioConfig::new("x").arg("a".repeat(100)));
        assert_eq!(label(&long, true).chars().count(), LABEL_CHARS + 3);
    }
}
