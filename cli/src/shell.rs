//! `umcp shell`: one connection, many commands. Each line is a command as `umcp` takes it
//! (`call add a=2 b=3`, `--json tools`), run with the same code a command run on its own
//! does, over servers connected once (or through a session).
//!
//! On a terminal, lines are edited with rustyline: history kept in the state directory, and
//! Tab completing commands, tool, prompt and resource names and a tool's argument names from
//! its input schema. Ctrl-C at the prompt clears the line; while a command runs, it stops the
//! command (its requests are cancelled, a `watch` ends), not the shell. Without a terminal,
//! lines are read from stdin as they come, and the exit code is the last command's.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;
use umcp::{Manager, RequestOptions, StdioConfig};

use crate::args::{self, Args};
use crate::arguments::Stdin;
use crate::console::{Console, Local, Stream};
use crate::deadline::Interrupt;
use crate::exit::Exit;
use crate::output::{say, warn};
use crate::shown;
use crate::signals::Shutdown;
use crate::spec::{self, COMMANDS};

mod complete;
mod history;

use complete::{Helper, Names};

/// The commands that need no server, which a shell does not run.
const NOT_IN_SHELL: [&str; 5] = ["completions", "man", "session", "servers", "shell"];

/// The signal a terminal's Ctrl-C sends.
const SIGINT: u8 = 2;

/// The most lines of history kept.
const HISTORY: usize = 1000;

/// How long the listings behind Tab completion may take.
const NAMES_TIMEOUT: Duration = Duration::from_secs(5);

/// What runs the shell's commands: servers connected here, or a session.
pub trait Backend {
    /// Runs one command line (`umcp`'s arguments), printing as the command does; its exit
    /// code.
    fn run(&self, words: Vec<String>) -> u8;
    /// The names Tab completes, as the servers list them now.
    fn names(&self) -> Names;
}

/// The shell over the servers `manager` connected.
pub fn run(manager: &Manager, args: &Args, shutdown: &Shutdown) -> Result<(), Exit> {
    let running: Arc<Mutex<Option<Interrupt>>> = Arc::default();
    let interrupting = Arc::clone(&running);
    let typed = Local.is_terminal(Stream::Stdin);
    let before = shutdown.intercept(move |signal| {
        let running = interrupting.lock().unwrap_or_else(PoisonError::into_inner);
        match (signal, running.as_ref()) {
            (SIGINT, Some(command)) => {
                command.interrupt();
                true
            }
            // Between a line read and its command started (or after it ended), Ctrl-C on a
            // terminal stops nothing, as at the prompt.
            (SIGINT, None) => typed,
            _ => false,
        }
    });
    let backend = Direct { manager, running };
    let result = repl(&backend, args, "umcp> ");
    // Once the shell has ended, Ctrl-C may cut its servers' close short again.
    shutdown.restore(before);
    result
}

/// The shell over session `name`: each line is sent to it.
#[cfg(unix)]
pub fn run_through(name: &str, args: &Args, shutdown: &Shutdown) -> Result<(), Exit> {
    // Ctrl-C on a terminal stops the command running, never the shell (see `run`).
    let typed = Local.is_terminal(Stream::Stdin);
    let before = typed.then(|| shutdown.intercept(|signal| signal == SIGINT));
    let backend = Through { name, shutdown };
    let result = repl(&backend, args, &format!("umcp {name}> "));
    if let Some(before) = before {
        shutdown.restore(before);
    }
    result
}

/// Reads and runs lines until `exit` or the end of input.
fn repl(backend: &dyn Backend, args: &Args, prompt: &str) -> Result<(), Exit> {
    // The shell's own options apply to every line, which may give them again.
    let mut defaults = vec![
        "--timeout".to_owned(),
        args.timeout.as_secs_f64().to_string(),
    ];
    if args.json {
        defaults.push("--json".to_owned());
    }
    // The exit code of the line, none for a blank one; `None` to leave.
    let run = |line: &str| -> Option<Option<u8>> {
        match words(line) {
            Line::Leave => None,
            Line::Blank => Some(None),
            Line::Unsplit => Some(Some(2)),
            Line::Help => {
                say(&help());
                Some(Some(0))
            }
            Line::Command(words) => {
                let all = defaults.iter().cloned().chain(words).collect();
                Some(Some(backend.run(all)))
            }
        }
    };
    if !Local.is_terminal(Stream::Stdin) {
        let mut last = 0;
        while let Some(line) = Local.read_line() {
            match run(&line) {
                Some(code) => last = code.unwrap_or(last),
                None => break,
            }
        }
        return match last {
            0 => Ok(()),
            code => Err(Exit(code, String::new())),
        };
    }
    edit(backend, prompt, run)
}

/// What a line asks for.
enum Line {
    Leave,
    Help,
    /// Nothing: blank, or a comment.
    Blank,
    /// Quotes that do not close (said on stderr).
    Unsplit,
    Command(Vec<String>),
}

/// A line's words, split as a shell would.
fn words(line: &str) -> Line {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Line::Blank;
    }
    let split = match StdioConfig::from_command_line(line) {
        Ok(split) => split,
        Err(e) => {
            warn(&format!("umcp: {e}"));
            return Line::Unsplit;
        }
    };
    let mut words = vec![split.get_command().to_owned()];
    words.extend(split.get_args().iter().cloned());
    match words.as_slice() {
        [only] if only == "exit" || only == "quit" => Line::Leave,
        [only] if only == "help" => Line::Help,
        _ => Line::Command(words),
    }
}

/// The help of the shell: its commands, from the command table.
fn help() -> String {
    let mut text = String::from(
        "Each line is a umcp command (umcp COMMAND --help, or help COMMAND, for one):\n",
    );
    for cmd in shell_commands() {
        let head = format!("{} {}", cmd.name, cmd.args);
        text += &format!("  {head:<44} {}\n", cmd.help);
    }
    text += &format!("  {:<44} {}\n", "exit", "leave the shell (Ctrl-D too)");
    text += "Options such as --json and --timeout SECS may start a line.";
    text
}

/// The commands a shell runs.
fn shell_commands() -> impl Iterator<Item = &'static spec::Cmd> {
    COMMANDS.iter().filter(|c| !NOT_IN_SHELL.contains(&c.name))
}

/// The line editor's loop.
fn edit(
    backend: &dyn Backend,
    prompt: &str,
    run: impl Fn(&str) -> Option<Option<u8>>,
) -> Result<(), Exit> {
    use rustyline::error::ReadlineError;
    use rustyline::{CompletionType, Config, Editor};

    let config = Config::builder()
        .max_history_size(HISTORY)
        .and_then(|c| c.history_ignore_dups(true))
        .map(|c| {
            c.completion_type(CompletionType::List)
                .auto_add_history(false)
                .build()
        })
        .map_err(|e| Exit(1, format!("the line editor: {e}")))?;
    let mut editor: Editor<Helper<'_>, _> =
        Editor::with_config(config).map_err(|e| Exit(1, format!("the line editor: {e}")))?;
    let names: Box<dyn Fn() -> Names + '_> = Box::new(|| backend.names());
    editor.set_helper(Some(Helper::new(names)));
    let history = history_file();
    if let Some(path) = &history {
        let _ = editor.load_history(path);
    }
    loop {
        match editor.readline(prompt) {
            Ok(line) => {
                if !line.trim().is_empty() {
                    let helper = editor.helper();
                    let secret =
                        |tool: &str, key: &str| helper.is_some_and(|h| h.is_secret(tool, key));
                    let entry = history::kept(&line, &secret);
                    let _ = editor.add_history_entry(entry.as_str());
                }
                if run(&line).is_none() {
                    break;
                }
                // What the servers list may have changed with the command.
                if let Some(helper) = editor.helper() {
                    helper.forget();
                }
            }
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                warn(&format!("umcp: reading the line failed: {e}"));
                break;
            }
        }
    }
    if let Some(path) = &history {
        save_history(&editor, path);
    }
    Ok(())
}

/// Writes the history, readable by the user only: lines may hold what is private to them.
fn save_history<H: rustyline::Helper>(
    editor: &rustyline::Editor<H, rustyline::history::DefaultHistory>,
    path: &std::path::Path,
) {
    let entries = editor.history().iter().map(String::as_str);
    if let Err(e) = history::save(path, entries) {
        warn(&format!("umcp: the history was not saved: {e}"));
    }
}

/// Where the history is kept: `shell_history` in umcp's state directory (see
/// [`state_dir`](crate::user_dirs::state_dir)), made owner-only if missing; `None` when there
/// is none.
fn history_file() -> Option<PathBuf> {
    let dir = crate::user_dirs::state_dir()?;
    umcp::private_file::create_dir(&dir).ok()?;
    Some(dir.join("shell_history"))
}

/// Lines run against servers connected here.
struct Direct<'a> {
    manager: &'a Manager,
    /// The running command's interrupt, for Ctrl-C.
    running: Arc<Mutex<Option<Interrupt>>>,
}

impl Direct<'_> {
    fn command(&self, words: Vec<String>) -> Result<(), Exit> {
        let args = args::parse(words.into_iter().map(OsString::from).collect())?;
        let (cmd, rest) = args::command(&args)?;
        check(&args, cmd)?;
        let stdin = Stdin::Refused("the shell reads its commands there");
        let arguments = crate::run::arguments(cmd, &rest, stdin)?;
        let interrupt = Interrupt::default();
        *self.running.lock().unwrap_or_else(PoisonError::into_inner) = Some(interrupt.clone());
        let command = (cmd, rest.as_slice(), arguments);
        let result = crate::run::execute(self.manager, &args, command, Instant::now(), &interrupt);
        *self.running.lock().unwrap_or_else(PoisonError::into_inner) = None;
        match interrupt.is_set() {
            true => Err(Exit(130, "interrupted".into())),
            false => result,
        }
    }
}

impl Backend for Direct<'_> {
    fn run(&self, words: Vec<String>) -> u8 {
        let json = words.iter().any(|w| w == "--json");
        crate::exit::report_as(self.command(words), json)
    }

    fn names(&self) -> Names {
        let single = self.manager.server_names().len() == 1;
        let options = RequestOptions::default().with_timeout(NAMES_TIMEOUT);
        let listed: Vec<(String, Value)> = self
            .manager
            .known_tools()
            .into_iter()
            .map(|e| {
                let name = if single { e.tool.name } else { e.name };
                (name, e.tool.input_schema.clone().into_value())
            })
            .collect();
        let secrets = secrets_of(listed.iter().map(|(n, s)| (n.clone(), s)));
        let tools = listed
            .iter()
            .map(|(name, schema)| (name.clone(), keys(schema)));
        let (prompts, _) = self.manager.with(&options).list_prompts();
        let prompts = prompts.into_iter().map(|e| {
            let arguments = e.prompt.arguments.unwrap_or_default();
            let keys = arguments.into_iter().map(|a| a.name).collect();
            (if single { e.prompt.name } else { e.name }, keys)
        });
        let (resources, _) = self.manager.with(&options).list_resources();
        Names::new(
            tools.collect(),
            prompts.collect(),
            resources.into_iter().map(|e| e.resource.uri).collect(),
        )
        .with_secrets(secrets)
    }
}

/// The names of the properties of a tool's input schema.
fn keys(schema: &Value) -> Vec<String> {
    let properties = schema.get("properties").and_then(Value::as_object);
    properties
        .into_iter()
        .flatten()
        .map(|(k, _)| k.clone())
        .collect()
}

/// The arguments a tool's input `schema` marks secret: `"format": "password"`, or
/// `"writeOnly": true`, which the shell's history does not keep.
fn secret_keys(schema: &Value) -> Vec<String> {
    let properties = schema.get("properties").and_then(Value::as_object);
    let secret = |p: &Value| {
        p.get("format").and_then(Value::as_str) == Some("password")
            || p.get("writeOnly") == Some(&Value::Bool(true))
    };
    properties
        .into_iter()
        .flatten()
        .filter(|(_, p)| secret(p))
        .map(|(k, _)| k.clone())
        .collect()
}

/// `(tool, argument)` for every argument of `tools` (`(name, input schema)`) marked secret.
fn secrets_of<'a>(tools: impl Iterator<Item = (String, &'a Value)>) -> Vec<(String, String)> {
    tools
        .flat_map(|(name, schema)| {
            secret_keys(schema)
                .into_iter()
                .map(move |k| (name.clone(), k))
        })
        .collect()
}

/// Refuses what a shell's line cannot do: pick or configure servers, or run a command that
/// needs none.
fn check(args: &Args, cmd: &spec::Cmd) -> Result<(), Exit> {
    if NOT_IN_SHELL.contains(&cmd.name) {
        return Err(crate::exit::usage(format!(
            "{} is not a command of the shell",
            cmd.name
        )));
    }
    crate::session::check_through(args, cmd).map_err(|Exit(code, message)| {
        Exit(
            code,
            message.replace("umcp session start", "umcp shell").replace(
                "not to a command run through a session",
                "not to one of its lines",
            ),
        )
    })
}

/// Lines sent to a session.
#[cfg(unix)]
struct Through<'a> {
    name: &'a str,
    shutdown: &'a Shutdown,
}

#[cfg(unix)]
impl Through<'_> {
    /// Runs `words` through the session, printing or keeping the output; checked here first,
    /// so that a mistyped line is told without a round trip.
    fn send(&self, words: Vec<String>, sink: &mut dyn crate::session::Sink) -> Result<u8, Exit> {
        let os: Vec<OsString> = words.iter().map(OsString::from).collect();
        let args = args::parse(os)?;
        let (cmd, _) = args::command(&args)?;
        check(&args, cmd)?;
        let stdin = Stdin::Refused("the shell reads its commands there");
        let words = crate::session::for_session(words, stdin)?;
        crate::session::send_command(
            self.name,
            words,
            sink,
            crate::session::shell_signals(self.shutdown),
        )
    }

    /// The rows of `--json KIND` through the session.
    fn listed(&self, kind: &str) -> Vec<Value> {
        let mut kept = crate::session::Kept::default();
        let words = ["--json", "--timeout", "5", kind]
            .map(str::to_owned)
            .to_vec();
        if !matches!(self.send(words, &mut kept), Ok(0)) {
            return Vec::new();
        }
        match serde_json::from_str(&kept.0) {
            Ok(Value::Array(rows)) => rows,
            _ => Vec::new(),
        }
    }
}

#[cfg(unix)]
impl Backend for Through<'_> {
    fn run(&self, words: Vec<String>) -> u8 {
        match self.send(words, &mut crate::session::Printed) {
            Ok(code @ 130) => {
                warn("umcp: interrupted");
                code
            }
            Ok(code) => code,
            Err(exit) => crate::exit::report(Err(exit)),
        }
    }

    fn names(&self) -> Names {
        let text = |v: &Value, path: &[&str]| {
            let found = path.iter().try_fold(v, |v, key| v.get(key));
            found.and_then(Value::as_str).unwrap_or_default().to_owned()
        };
        let listed: Vec<(String, Value)> = self
            .listed("tools")
            .into_iter()
            .map(|row| {
                let schema = row.pointer("/tool/inputSchema").cloned();
                (text(&row, &["name"]), schema.unwrap_or_default())
            })
            .collect();
        let secrets = secrets_of(listed.iter().map(|(n, s)| (n.clone(), s)));
        let tools = listed
            .iter()
            .map(|(name, schema)| (name.clone(), keys(schema)));
        let prompts = self.listed("prompts").into_iter().map(|row| {
            let arguments = row.pointer("/prompt/arguments").and_then(Value::as_array);
            let keys = arguments.into_iter().flatten().map(|a| text(a, &["name"]));
            (text(&row, &["name"]), keys.collect())
        });
        let resources = self.listed("resources").into_iter();
        let resources = resources.map(|row| text(&row, &["resource", "uri"]));
        Names::new(tools.collect(), prompts.collect(), resources.collect()).with_secrets(secrets)
    }
}

/// A name shown as a completion only when it is safe on a terminal as it is.
fn printable(name: &str) -> bool {
    !name.is_empty() && shown::line(name) == name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schema_marks_passwords_and_write_only_arguments_secret() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "user": {"type": "string"},
            "pin": {"type": "string", "format": "password"},
            "key": {"type": "string", "writeOnly": true},
        }});
        let tools = [("login".to_owned(), &schema)];
        let mut secrets = secrets_of(tools.into_iter());
        secrets.sort();
        let pair = |k: &str| ("login".to_owned(), k.to_owned());
        assert_eq!(secrets, [pair("key"), pair("pin")]);
    }

    #[test]
    fn lines_are_split_as_a_shell_splits_them() {
        let command = |line: &str| match words(line) {
            Line::Command(words) => words,
            _ => panic!("{line}"),
        };
        assert_eq!(command("call add a=2 b=3"), ["call", "add", "a=2", "b=3"]);
        assert_eq!(
            command("  call echo 'message=two words' "),
            ["call", "echo", "message=two words"]
        );
        assert!(matches!(words("exit"), Line::Leave));
        assert!(matches!(words("help"), Line::Help));
        assert!(matches!(words("help call"), Line::Command(_)));
        assert!(matches!(words("  "), Line::Blank));
        assert!(matches!(words("# a comment"), Line::Blank));
        assert!(matches!(words("call echo 'open"), Line::Unsplit));
    }

    #[test]
    fn the_help_lists_the_commands_a_shell_runs() {
        let help = help();
        for name in [
            "tools", "call", "read", "prompt", "watch", "info", "tasks", "exit",
        ] {
            assert!(
                help.lines().any(|l| l.trim_start().starts_with(name)),
                "{name}: {help}"
            );
        }
        for name in NOT_IN_SHELL {
            assert!(
                !help.lines().any(|l| l.trim_start().starts_with(name)),
                "{name}"
            );
        }
    }

    #[test]
    fn only_printable_names_are_offered() {
        assert!(printable("add"));
        assert!(!printable("bad\u{1b}[2J"));
        assert!(!printable(""));
    }
}
