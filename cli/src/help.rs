//! The help texts: the short usage, `umcp --help`, and `umcp help COMMAND`.

use crate::spec::{
    Cmd, ABOUT, COMMANDS, ENVIRONMENT, EXIT_CODES, FILES, FILES_WHEN, FLAGS, ONE_SERVER,
};

/// The usage line of the full help.
const USAGE: &str = "usage: umcp [OPTIONS] COMMAND [ARGS]";

/// The short usage shown after a usage error: the usage line and where to read more (which
/// the full help itself leaves out).
pub fn usage() -> String {
    format!("{USAGE}   (umcp --help for more)")
}

/// The full help.
pub fn help() -> String {
    let mut text = format!(
        "umcp {}: {ABOUT}\n\n{USAGE}\n\nCOMMANDS:\n",
        env!("CARGO_PKG_VERSION"),
    );
    for cmd in COMMANDS {
        let head = format!("{} {}", cmd.name, cmd.args);
        text += &format!("  {head:<44} {}\n", cmd.help);
    }
    text += "\nOPTIONS:\n";
    for flag in FLAGS {
        let head = format!("--{} {}", flag.long, flag.value.unwrap_or_default());
        text += &format!("  {head:<30} {}\n", flag.help);
    }
    text += "\nENVIRONMENT:\n";
    for (name, meaning) in ENVIRONMENT {
        text += &format!("  {name:<30} {meaning}\n");
    }
    text += &format!("\nFILES ({FILES_WHEN}):\n{FILES}\n\nEXIT CODES:\n");
    for (code, meaning) in EXIT_CODES {
        text += &format!("  {code:<3}  {meaning}\n");
    }
    text
}

/// The help of one command.
pub fn command_help(cmd: &Cmd) -> String {
    let mut text = format!(
        "usage: umcp [OPTIONS] {} {}\n\n{}\n",
        cmd.name, cmd.args, cmd.help
    );
    if !cmd.details.is_empty() {
        text += &format!("\n{}\n", cmd.details);
    }
    if cmd.one_server {
        text += &format!("\n{ONE_SERVER}\n");
    }
    text += "\nOptions: see umcp --help.\n";
    text
}
