//! The names the shell completion scripts ask umcp for as they complete a value: the
//! running sessions (`--session`, `session stop`) and the servers of the configuration file
//! a command line would use (`--server`). Asked with `umcp --umcp-complete sessions|servers
//! [--config FILE]`, a first word no user types; nothing is started, trusted or expanded.

use std::ffi::OsString;
use std::path::Path;

use crate::exit::Exit;
use crate::output::say;
use crate::{config_files, hosts};

/// The first word of a command line that asks for names.
const ASK: &str = "--umcp-complete";

/// The words after [`ASK`], when the command line is such a question.
pub fn asked(raw: &[OsString]) -> Option<Vec<String>> {
    (raw.first()? == ASK).then(|| {
        raw[1..]
            .iter()
            .map(|w| w.to_string_lossy().into_owned())
            .collect()
    })
}

/// Prints the names asked for, one a line; nothing when there are none to give.
pub fn print(words: &[String]) -> Result<(), Exit> {
    let names = match words {
        [what] if what == "sessions" => crate::session::names(),
        [what, rest @ ..] if what == "servers" => servers(rest),
        _ => Vec::new(),
    };
    for name in names {
        // A name that would break the completion's line is not offered.
        if !name.chars().any(|c| c.is_control() || c.is_whitespace()) {
            say(&name);
        }
    }
    Ok(())
}

/// The servers of `--config FILE` among `words`, else of the first file umcp would use.
fn servers(words: &[String]) -> Vec<String> {
    let given = words
        .windows(2)
        .find(|pair| pair[0] == "--config")
        .map(|pair| pair[1].clone());
    let files = match given {
        Some(path) => vec![path.into()],
        None => config_files::candidates(),
    };
    for path in files
        .iter()
        .filter(|p| p.is_file() && hosts::may_hold_servers(p))
    {
        let file = hosts::load_with(Path::new(path), &|name| Some(format!("${{{name}}}")));
        if let Ok(file) = file {
            let mut names: Vec<String> = file.servers.into_iter().map(|s| s.name).collect();
            if !names.is_empty() {
                names.sort();
                return names;
            }
        }
    }
    Vec::new()
}
