//! Secrets written in clear into a shared configuration file: a project's file, or any file
//! of a git checkout, is read by everyone who has the repository. `servers add` says so when
//! an entry would put one there, and offers a `${VAR}` reference in its place, which keeps
//! the value in the user's environment.

use std::path::Path;

use crate::output::{ask_or, warn};
use crate::secret_words::{secret_name, token_like};
use crate::shown;
use serde_json::Value;

/// A value of an entry that is a secret written in clear.
struct Literal {
    /// Where it is in the entry (`headers.Authorization`, `env.API_KEY`).
    field: String,
    /// The variable suggested to hold it.
    variable: String,
    /// What is written instead: the reference, with an authorization's scheme kept.
    reference: String,
}

/// Why the file at `path` is shared, or `None` when it is the user's alone: a project file
/// found in the working directory, or a file of a git checkout.
fn shared(path: &Path, project: bool) -> Option<&'static str> {
    if project {
        return Some("this project's configuration file");
    }
    let absolute = std::path::absolute(path).ok()?;
    let checkout = absolute
        .ancestors()
        .skip(1)
        .any(|dir| dir.join(".git").exists());
    checkout.then_some("a file of a git checkout")
}

/// Looks for secrets `entry` (the new entry `server`) would write in clear into the file at
/// `path` (`project`: found in the working directory); when it is shared, says so, and at a
/// terminal offers to write `${VAR}` references instead (the default), which it does.
pub fn offer_references(path: &Path, project: bool, server: &str, entry: &mut Value) {
    let Some(why) = shared(path, project) else {
        return;
    };
    let literals = literals(server, entry);
    if literals.is_empty() {
        return;
    }
    let fields: Vec<&str> = literals.iter().map(|l| l.field.as_str()).collect();
    let variables: Vec<&str> = literals.iter().map(|l| l.variable.as_str()).collect();
    let file = shown::line(&path.display().to_string());
    let said = format!(
        "umcp: {file} is {why}, read by everyone who has the repository: {} would be \
         written in it in clear",
        fields.join(", ")
    );
    use crate::console::{is_terminal, Stream};
    let interactive = is_terminal(Stream::Stdin) && is_terminal(Stream::Stderr);
    if interactive {
        warn(&said);
        let question = format!(
            "Write ${{{}}} in its place, read from your environment? [Y/n] ",
            variables.join("}, ${")
        );
        if ask_or(&question, true) {
            for literal in &literals {
                replace(entry, &literal.field, &literal.reference);
            }
            warn(&format!(
                "umcp: set {} in the environment umcp runs in",
                variables.join(", ")
            ));
            return;
        }
    }
    let references: Vec<String> = literals
        .iter()
        .map(|l| format!("{} as {}", l.field, l.reference))
        .collect();
    warn(&format!(
        "{said}; write {} instead, with the variables set in your environment",
        references.join(", ")
    ));
}

/// The secrets `entry` holds in clear: header values that authenticate, environment values
/// with a secret's name or a token's form, an OAuth client secret. A value that is a
/// reference already (`${VAR}`) is none.
fn literals(server: &str, entry: &Value) -> Vec<Literal> {
    let mut found = Vec::new();
    let prefix = variable_part(server);
    for (key, object) in [("headers", "headers"), ("env", "env")] {
        let Some(Value::Object(pairs)) = entry.get(object) else {
            continue;
        };
        for (name, value) in pairs {
            let Some(text) = value.as_str().filter(|t| !t.contains("${")) else {
                continue;
            };
            let secret = match key {
                "headers" => header_secret(name, text),
                _ => secret_name(name) || token_like(text),
            };
            if !secret {
                continue;
            }
            let (scheme, variable) = match text.split_once(' ') {
                Some((scheme, _)) if name.eq_ignore_ascii_case("authorization") => {
                    (format!("{scheme} "), format!("{prefix}_TOKEN"))
                }
                _ => (String::new(), format!("{prefix}_{}", variable_part(name))),
            };
            found.push(Literal {
                field: format!("{key}.{name}"),
                reference: format!("{scheme}${{{variable}}}"),
                variable,
            });
        }
    }
    let secret = entry.pointer("/oauth/clientSecret").and_then(Value::as_str);
    if secret.is_some_and(|s| !s.contains("${")) {
        let variable = format!("{prefix}_CLIENT_SECRET");
        found.push(Literal {
            field: "oauth.clientSecret".into(),
            reference: format!("${{{variable}}}"),
            variable,
        });
    }
    found
}

/// Whether a header authenticates: by its name (`Authorization`, `Cookie`, `X-Api-Key`, …) or
/// by its value's form (`Bearer …`, a known token prefix).
fn header_secret(name: &str, value: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower == "authorization"
        || lower == "cookie"
        || secret_name(name)
        || token_like(value)
        || value
            .split_once(' ')
            .is_some_and(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
}

/// `text` as part of a variable's name: upper case, every other character `_`.
fn variable_part(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' => c.to_ascii_uppercase(),
            _ => '_',
        })
        .collect()
}

/// Sets `field` (`headers.Authorization`) of `entry` to `text`.
fn replace(entry: &mut Value, field: &str, text: &str) {
    let Some((object, name)) = field.split_once('.') else {
        return;
    };
    let slot = match object {
        "oauth" => entry.pointer_mut("/oauth/clientSecret"),
        _ => entry.get_mut(object).and_then(|o| o.get_mut(name)),
    };
    if let Some(slot) = slot {
        *slot = Value::String(text.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn literal_secrets_are_found_and_references_suggested() {
        let mut entry = json!({
            "type": "http", "url": "https://api.example.com/mcp",
            "headers": {"Authorization": "Bearer sk-live-0123456789abcdef",
                        "X-Api-Key": "k-1", "Accept": "application/json",
                        "Cookie": "sid=abc", "X-Ref": "${ALREADY}"},
            "env": {"REGION": "eu", "GITHUB_TOKEN": "ghp_abcdef", "OTHER": "sk-proj-1"},
            "oauth": {"clientId": "umcp", "clientSecret": "s3cret"},
        });
        let found = literals("prod-1", &entry);
        let fields: Vec<&str> = found.iter().map(|l| l.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "headers.Authorization",
                "headers.X-Api-Key",
                "headers.Cookie",
                "env.GITHUB_TOKEN",
                "env.OTHER",
                "oauth.clientSecret"
            ]
        );
        assert_eq!(found[0].reference, "Bearer ${PROD_1_TOKEN}");
        assert_eq!(found[1].reference, "${PROD_1_X_API_KEY}");
        for literal in &found {
            replace(&mut entry, &literal.field, &literal.reference);
        }
        let written = entry.to_string();
        for secret in ["sk-live", "k-1\"", "sid=abc", "ghp_", "sk-proj", "s3cret"] {
            assert!(!written.contains(secret), "{secret}: {written}");
        }
        assert_eq!(entry["headers"]["Accept"], "application/json");
        assert_eq!(entry["env"]["REGION"], "eu");
    }
}
