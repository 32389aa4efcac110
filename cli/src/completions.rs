//! Shell completion scripts for bash, zsh and fish, generated from [`spec`](crate::spec).

use crate::spec::{Completes, COMMANDS, FLAGS, SUBCOMMANDS};

/// The completion script for `shell`, or `None` for a shell this does not know.
pub fn script(shell: &str) -> Option<String> {
    match shell {
        "bash" => Some(bash()),
        "zsh" => Some(zsh()),
        "fish" => Some(fish()),
        _ => None,
    }
}

fn command_names() -> String {
    COMMANDS
        .iter()
        .map(|c| c.name)
        .collect::<Vec<_>>()
        .join(" ")
}

fn bash() -> String {
    let flags: Vec<String> = FLAGS.iter().map(|f| format!("--{}", f.long)).collect();
    let mut values = String::new();
    for flag in FLAGS.iter().filter(|f| f.value.is_some()) {
        let action = match (flag.choices, flag.completes) {
            (choices, _) if !choices.is_empty() => {
                format!(
                    "COMPREPLY=($(compgen -W '{}' -- \"$cur\"))",
                    choices.join(" ")
                )
            }
            (_, Completes::File) => "COMPREPLY=($(compgen -f -- \"$cur\"))".to_owned(),
            (_, Completes::Command) => "COMPREPLY=($(compgen -c -- \"$cur\"))".to_owned(),
            (_, Completes::Text) => "COMPREPLY=()".to_owned(),
            (_, Completes::Session) => {
                format!("COMPREPLY=($(compgen -W \"{BASH_SESSIONS}\" -- \"$cur\"))")
            }
            (_, Completes::Server) => {
                format!("COMPREPLY=($(compgen -W \"{BASH_SERVERS}\" -- \"$cur\"))")
            }
        };
        values += &format!("        --{}) {action}; return ;;\n", flag.long);
    }
    for (command, subcommands) in SUBCOMMANDS {
        values += &format!(
            "        {command}) COMPREPLY=($(compgen -W '{}' -- \"$cur\")); return ;;\n",
            names(subcommands)
        );
    }
    values += &format!(
        "        stop) COMPREPLY=($(compgen -W \"{BASH_SESSIONS}\" -- \"$cur\")); return ;;\n"
    );
    format!(
        r#"# bash completion for umcp
_umcp() {{
    local cur prev
    cur="${{COMP_WORDS[COMP_CWORD]}}"
    prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    case "$prev" in
{values}        completions) COMPREPLY=($(compgen -W 'bash zsh fish' -- "$cur")); return ;;
        help) COMPREPLY=($(compgen -W '{commands}' -- "$cur")); return ;;
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W '{flags}' -- "$cur"))
    else
        COMPREPLY=($(compgen -W '{commands}' -- "$cur"))
    fi
}}
complete -F _umcp umcp
"#,
        commands = command_names(),
        flags = flags.join(" "),
    )
}

/// The running sessions, as a bash word list: umcp is asked as the line is completed.
const BASH_SESSIONS: &str = "$(umcp --umcp-complete sessions 2>/dev/null)";

/// The servers of the configuration file the line names (or umcp would find), as a bash
/// word list.
const BASH_SERVERS: &str = "$(umcp --umcp-complete servers ${COMP_WORDS[*]} 2>/dev/null)";

/// The names of `subcommands`, separated by spaces, each once.
fn names(subcommands: &[(&str, usize)]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for (name, _) in subcommands {
        if !names.contains(name) {
            names.push(name);
        }
    }
    names.join(" ")
}

/// Text safe inside a single-quoted zsh or fish string.
fn quoted(text: &str) -> String {
    text.replace('\'', "'\\''")
}

fn zsh() -> String {
    let mut specs = String::new();
    for flag in FLAGS {
        let help = quoted(&flag.help.replace(['[', ']'], ""));
        let repeat = if matches!(flag.long, "env" | "header") {
            "*"
        } else {
            ""
        };
        let value = match (flag.value, flag.choices, flag.completes) {
            (None, _, _) => String::new(),
            (Some(_), choices, _) if !choices.is_empty() => {
                format!(":{}:({})", flag.long, choices.join(" "))
            }
            (Some(_), _, Completes::File) => format!(":{}:_files", flag.long),
            (Some(_), _, Completes::Command) => format!(":{}:_command_names", flag.long),
            (Some(_), _, Completes::Text) => format!(":{}:", flag.long),
            (Some(_), _, Completes::Session) => format!(
                ":{}:{{compadd -- $(umcp --umcp-complete sessions 2>/dev/null)}}",
                flag.long
            ),
            (Some(_), _, Completes::Server) => format!(
                ":{}:{{compadd -- $(umcp --umcp-complete servers $words 2>/dev/null)}}",
                flag.long
            ),
        };
        specs += &format!("    '{repeat}--{}[{help}]{value}' \\\n", flag.long);
    }
    let commands: Vec<String> = COMMANDS
        .iter()
        .map(|c| format!("'{}:{}'", c.name, quoted(&c.help.replace(':', " "))))
        .collect();
    let mut subcommands = String::new();
    for (command, list) in SUBCOMMANDS {
        subcommands += &format!(
            "                {command}) (( CURRENT == 2 )) && _values 'subcommand' {} ;;\n",
            names(list)
        );
    }
    format!(
        r#"#compdef umcp
# zsh completion for umcp
_umcp() {{
    local -a commands
    commands=({commands})
    _arguments -s \
{specs}    '1:command:->command' \
    '*::argument:->argument'
    case $state in
        command) _describe 'command' commands ;;
        argument)
            case $words[1] in
                completions) _values 'shell' bash zsh fish ;;
                help) _describe 'command' commands ;;
{subcommands}            esac ;;
    esac
}}
_umcp "$@"
"#,
        commands = commands.join(" "),
    )
}

fn fish() -> String {
    let mut lines = String::from("# fish completion for umcp\ncomplete -c umcp -f\n");
    for cmd in COMMANDS {
        lines += &format!(
            "complete -c umcp -n '__fish_use_subcommand' -a {} -d '{}'\n",
            cmd.name,
            quoted(cmd.help)
        );
    }
    for flag in FLAGS {
        let mut line = format!(
            "complete -c umcp -l {} -d '{}'",
            flag.long,
            quoted(flag.help)
        );
        if flag.value.is_some() {
            // -r: takes a value; -F: file names; -x: a value that is not a file name.
            match flag.completes {
                Completes::File => line += " -r -F",
                Completes::Command => line += " -x -a '(__fish_complete_command)'",
                Completes::Text => line += " -x",
                Completes::Session => {
                    line += " -x -a '(umcp --umcp-complete sessions 2>/dev/null)'"
                }
                Completes::Server => {
                    line += " -x -a '(umcp --umcp-complete servers (commandline -opc) 2>/dev/null)'"
                }
            }
            if !flag.choices.is_empty() {
                line += &format!(" -a '{}'", flag.choices.join(" "));
            }
        }
        lines += &line;
        lines.push('\n');
    }
    lines += "complete -c umcp -n '__fish_seen_subcommand_from completions' -a 'bash zsh fish'\n";
    for (command, list) in SUBCOMMANDS {
        let names = names(list);
        lines += &format!(
            "complete -c umcp -n '__fish_seen_subcommand_from {command}; \
             and not __fish_seen_subcommand_from {names}' -a '{names}'\n"
        );
    }
    lines += &format!(
        "complete -c umcp -n '__fish_seen_subcommand_from help' -a '{}'\n",
        command_names()
    );
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_and_option_is_in_every_script() {
        for shell in ["bash", "zsh", "fish"] {
            let text = script(shell).unwrap();
            for cmd in COMMANDS {
                assert!(text.contains(cmd.name), "{shell}: {}", cmd.name);
            }
            for flag in FLAGS {
                assert!(text.contains(flag.long), "{shell}: --{}", flag.long);
            }
        }
        assert!(script("tcsh").is_none());
    }

    #[test]
    fn subcommands_are_offered_after_their_command() {
        let bash = script("bash").unwrap();
        assert!(bash.contains("session) COMPREPLY=($(compgen -W 'start list stop' -- \"$cur\"))"));
        let zsh = script("zsh").unwrap();
        assert!(zsh.contains(
            "servers) (( CURRENT == 2 )) && _values 'subcommand' list show add remove import ;;"
        ));
        let fish = script("fish").unwrap();
        assert!(fish.contains(
            "complete -c umcp -n '__fish_seen_subcommand_from tasks; and not \
             __fish_seen_subcommand_from list get cancel result wait' -a 'list get cancel result wait'"
        ));
    }
}
