//! Tab completion in the shell: commands and their options, then what the servers list (tool,
//! prompt and resource names) and a tool's or prompt's argument names, as `KEY=`.

use std::cell::RefCell;

use rustyline::completion::Completer;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::Context;

use super::{printable, shell_commands};
use crate::spec;

/// The options a line may give (those of a command, not of its servers).
const LINE_OPTIONS: [&str; 8] = [
    "--json",
    "--timeout",
    "--tools",
    "--prompts",
    "--resources",
    "--resource",
    "--for",
    "--help",
];

/// What the servers list, as Tab offers it.
#[derive(Default)]
pub struct Names {
    /// Each tool's name (as `call` takes it) and argument names.
    tools: Vec<(String, Vec<String>)>,
    /// Each prompt's name and argument names.
    prompts: Vec<(String, Vec<String>)>,
    /// The resources' URIs.
    resources: Vec<String>,
    /// The arguments of tools whose schema marks them secret, as (tool, argument).
    secrets: Vec<(String, String)>,
}

impl Names {
    /// The names given, less those not safe to show on a terminal as they are.
    pub fn new(
        tools: Vec<(String, Vec<String>)>,
        prompts: Vec<(String, Vec<String>)>,
        resources: Vec<String>,
    ) -> Names {
        let keep = |(name, keys): (String, Vec<String>)| {
            printable(&name).then(|| (name, keys.into_iter().filter(|k| printable(k)).collect()))
        };
        Names {
            tools: tools.into_iter().filter_map(keep).collect(),
            prompts: prompts.into_iter().filter_map(keep).collect(),
            resources: resources.into_iter().filter(|r| printable(r)).collect(),
            secrets: Vec::new(),
        }
    }

    /// These names, knowing which tool arguments are secret (`(tool, argument)`).
    pub fn with_secrets(mut self, secrets: Vec<(String, String)>) -> Names {
        self.secrets = secrets;
        self
    }

    /// Whether the schema of `tool` marks its argument `key` secret.
    pub fn is_secret(&self, tool: &str, key: &str) -> bool {
        self.secrets.iter().any(|(t, k)| t == tool && k == key)
    }
}

/// The candidates for the word being typed at the end of `line`, and where that word starts.
pub fn candidates<'n>(
    line: &str,
    names: &dyn Fn() -> std::cell::Ref<'n, Names>,
) -> (usize, Vec<String>) {
    let start = line.rfind([' ', '\t']).map_or(0, |i| i + 1);
    let typed = &line[start..];
    let before: Vec<&str> = line[..start].split_whitespace().collect();
    if typed.starts_with('-') {
        return (
            start,
            matching(LINE_OPTIONS.iter().map(|o| o.to_string()), typed),
        );
    }
    // The words after the options (and the values of those that take one).
    let mut words = Vec::new();
    let mut skip = false;
    for word in before {
        match word {
            _ if skip => skip = false,
            "--timeout" | "--resource" | "--for" => skip = true,
            _ if word.starts_with("--") => {}
            _ => words.push(word),
        }
    }
    let commands = || {
        let names = shell_commands().map(|c| c.name.to_owned());
        names.chain(["exit".to_owned()])
    };
    let offered: Vec<String> = match words.as_slice() {
        [] => matching(commands(), typed),
        ["help"] => matching(commands(), typed),
        [command] if !spec::subcommands(command).is_empty() => {
            let subcommands = spec::subcommands(command)
                .iter()
                .map(|(s, _)| s.to_string());
            matching(subcommands, typed)
        }
        ["call"] => matching(names().tools.iter().map(|(n, _)| n.clone()), typed),
        ["prompt"] => matching(names().prompts.iter().map(|(n, _)| n.clone()), typed),
        ["read"] => matching(names().resources.iter().cloned(), typed),
        ["complete"] => matching(["prompt", "resource"].map(String::from).into_iter(), typed),
        ["call" | "prompt", name, given @ ..] if !typed.contains('=') => {
            let names = names();
            let list = match words[0] {
                "call" => &names.tools,
                _ => &names.prompts,
            };
            let keys = list.iter().find(|(n, _)| n == name).map(|(_, k)| k.clone());
            // A key given already is not offered again.
            let unused = keys.into_iter().flatten().filter(|key| {
                !given.iter().any(|g| {
                    g.split_once('=')
                        .is_some_and(|(k, _)| k.trim_end_matches(':') == key)
                })
            });
            matching(unused.map(|key| format!("{key}=")), typed)
        }
        _ => Vec::new(),
    };
    (start, offered)
}

/// The `candidates` that begin with `typed`, sorted, each once.
fn matching(candidates: impl Iterator<Item = String>, typed: &str) -> Vec<String> {
    let mut found: Vec<String> = candidates.filter(|c| c.starts_with(typed)).collect();
    found.sort();
    found.dedup();
    found
}

/// The shell's helper for rustyline: completion from names fetched when Tab is first pressed
/// after a command (a command may change what the servers list).
pub struct Helper<'a> {
    fetch: Box<dyn Fn() -> Names + 'a>,
    names: RefCell<Option<Names>>,
}

impl<'a> Helper<'a> {
    pub fn new(fetch: Box<dyn Fn() -> Names + 'a>) -> Helper<'a> {
        Helper {
            fetch,
            names: RefCell::new(None),
        }
    }

    /// Whether the schema of `tool` marks its argument `key` secret (the names fetched if
    /// they are not known).
    pub fn is_secret(&self, tool: &str, key: &str) -> bool {
        self.names().is_secret(tool, key)
    }

    /// Forgets the names: the next Tab fetches them again.
    pub fn forget(&self) {
        self.names.replace(None);
    }

    /// The names, fetched if they are not known.
    fn names(&self) -> std::cell::Ref<'_, Names> {
        if self.names.borrow().is_none() {
            let names = (self.fetch)();
            self.names.replace(Some(names));
        }
        std::cell::Ref::map(self.names.borrow(), |n| {
            n.as_ref().expect("fetched just now")
        })
    }
}

impl Completer for Helper<'_> {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        Ok(candidates(&line[..pos], &|| self.names()))
    }
}

impl Hinter for Helper<'_> {
    type Hint = String;
}

impl Highlighter for Helper<'_> {}

impl Validator for Helper<'_> {}

impl rustyline::Helper for Helper<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> RefCell<Names> {
        RefCell::new(Names::new(
            vec![
                ("add".into(), vec!["a".into(), "b".into()]),
                ("echo".into(), vec!["message".into()]),
                ("evil\u{1b}[2J".into(), vec![]),
            ],
            vec![("greet".into(), vec!["name".into(), "style".into()])],
            vec!["demo://readme".into(), "demo://notes".into()],
        ))
    }

    fn complete(line: &str) -> (usize, Vec<String>) {
        let names = names();
        candidates(line, &|| names.borrow())
    }

    #[test]
    fn commands_then_names_then_argument_keys() {
        assert_eq!(complete("ca"), (0, vec!["call".into()]));
        assert_eq!(complete("c").1, ["call", "complete"]);
        assert_eq!(complete("call "), (5, vec!["add".into(), "echo".into()]));
        assert_eq!(complete("call e").1, ["echo"]);
        assert_eq!(complete("call add "), (9, vec!["a=".into(), "b=".into()]));
        assert_eq!(complete("call add a=2 ").1, ["b="]);
        assert_eq!(complete("call add a:=2 b").1, ["b="]);
        assert!(
            complete("call add a=").1.is_empty(),
            "a value is not completed"
        );
        assert_eq!(complete("prompt g").1, ["greet"]);
        assert_eq!(complete("prompt greet s").1, ["style="]);
        assert_eq!(complete("read demo://r").1, ["demo://readme"]);
        assert_eq!(
            complete("tasks ").1,
            ["cancel", "get", "list", "result", "wait"]
        );
        assert_eq!(complete("--json call ").1, ["add", "echo"]);
        assert_eq!(complete("--timeout 5 call ec").1, ["echo"]);
        assert_eq!(complete("--js"), (0, vec!["--json".into()]));
        assert_eq!(complete("help ca").1, ["call"]);
        assert!(complete("ex").1.contains(&"exit".to_owned()));
    }

    #[test]
    fn names_a_terminal_would_act_on_are_not_offered() {
        let offered = complete("call ").1;
        assert!(offered.iter().all(|n| !n.contains('\u{1b}')), "{offered:?}");
    }
}
