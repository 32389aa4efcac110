//! Redaction of secrets in text meant for people (log lines, error messages): URL query
//! values and credentials, and secret-looking command-line arguments.
//!
//! Servers are often configured with a key in the URL (`?api_key=…`) or on the command line
//! (`--token …`, `API_KEY=…`); these helpers keep such values out of what umcp prints while
//! leaving enough to recognise the server.

/// What replaces a secret.
pub(crate) const REDACTED: &str = "<redacted>";

/// How many characters of a user's text a message quotes.
const CLIP_CHARS: usize = 80;

/// `text` cut to its first 80 characters, with `…` when cut: for quoting what a user wrote
/// (a variable name, a URL, a value) in a message, which a huge input must not make huge.
pub(crate) fn clip(text: &str) -> String {
    match text.char_indices().nth(CLIP_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// Name–value pairs (headers, environment variables) with every value replaced by
/// `<redacted>`, for `Debug` output: which names are set is useful to see, and any value may
/// be a key.
pub(crate) fn values(pairs: &[(String, String)]) -> Vec<(&str, &str)> {
    pairs
        .iter()
        .map(|(name, _)| (name.as_str(), REDACTED))
        .collect()
}

/// `url` with the password of its user info, every query value and its fragment replaced
/// by `<redacted>` (names are kept: `?api_key=<redacted>&page=<redacted>`). Text that is not
/// a URL comes back unchanged.
pub(crate) fn url(url: &str) -> String {
    let (rest, fragment) = match url.split_once('#') {
        Some((rest, fragment)) if !fragment.is_empty() => (rest, Some(REDACTED)),
        Some((rest, _)) => (rest, None),
        None => (url, None),
    };
    let (base, query) = match rest.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (rest, None),
    };
    let mut out = user_info(base);
    if let Some(query) = query {
        out.push('?');
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, _)) => format!("{name}={REDACTED}"),
                None if pair.is_empty() => String::new(),
                // A bare value (`?sk-123`) may be the secret itself.
                None => REDACTED.to_owned(),
            })
            .collect();
        out.push_str(&pairs.join("&"));
    }
    if let Some(fragment) = fragment {
        out.push('#');
        out.push_str(fragment);
    }
    out
}

/// `scheme://user:password@host…` with the password redacted, and as well without the
/// scheme (`user:password@host…`, `//user:password@host…`): a URL written without it is
/// refused, and the error quotes it.
fn user_info(base: &str) -> String {
    // Where the authority starts: after `scheme://`, after a leading `//`, or at the start.
    let start = match base.find("://") {
        Some(colon) if is_scheme(&base[..colon]) => colon + 3,
        _ if base.starts_with("//") => 2,
        _ => 0,
    };
    let (scheme, rest) = base.split_at(start);
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((info, host)) => {
            let user = info.split_once(':').map_or(info, |(user, _)| user);
            let shown = if info.contains(':') {
                format!("{user}:{REDACTED}")
            } else {
                REDACTED.to_owned()
            };
            format!("{scheme}{shown}@{host}{path}")
        }
        None => base.to_owned(),
    }
}

/// True for a URL scheme (RFC 3986: a letter, then letters, digits, `+`, `-` and `.`).
fn is_scheme(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// Command-line arguments with secrets redacted: the value of a secret-looking option
/// (`--token=…`, `--api-key …`, `-p …` is not guessed at), of a secret-looking `NAME=value`,
/// of an `Authorization:`-style header argument, credentials and queries in URLs, and values
/// that carry a well-known token prefix (`sk-`, `ghp_`, `xoxb-`, …).
pub(crate) fn args(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut hide_next = false;
    for arg in args {
        if hide_next && !arg.starts_with('-') {
            out.push(REDACTED.to_owned());
            hide_next = false;
            continue;
        }
        hide_next = false;
        if let Some(name) = arg.strip_prefix('-').map(|a| a.trim_start_matches('-')) {
            match name.split_once('=') {
                Some((name, _)) if secret_name(name) => {
                    let dashes = &arg[..arg.len() - arg.trim_start_matches('-').len()];
                    out.push(format!("{dashes}{name}={REDACTED}"));
                }
                Some(_) => out.push(value(arg)),
                None => {
                    hide_next = secret_name(name);
                    out.push(arg.clone());
                }
            }
            continue;
        }
        out.push(value(arg));
    }
    out
}

/// One argument that is not an option name.
fn value(arg: &str) -> String {
    if let Some((name, _)) = arg.split_once(':').filter(|(n, v)| {
        !n.contains(' ')
            && !v.starts_with("//")
            && (secret_name(n) || n.eq_ignore_ascii_case("cookie"))
    }) {
        return format!("{name}: {REDACTED}");
    }
    if let Some((name, _)) = arg
        .split_once('=')
        .filter(|(n, _)| !n.is_empty() && !n.contains(['/', ' ', ':']) && secret_name(n))
    {
        return format!("{name}={REDACTED}");
    }
    if arg.contains("://") {
        return url(arg);
    }
    if token_like(arg) {
        return REDACTED.to_owned();
    }
    arg.to_owned()
}

/// True for names of options, variables and headers that hold secrets.
fn secret_name(name: &str) -> bool {
    let name: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    const PARTS: [&str; 11] = [
        "token",
        "secret",
        "password",
        "passwd",
        "apikey",
        "auth",
        "credential",
        "privatekey",
        "accesskey",
        "sessionkey",
        "bearer",
    ];
    name == "key" || name == "pat" || PARTS.iter().any(|part| name.contains(part))
}

/// True for values that carry a well-known secret token prefix.
fn token_like(value: &str) -> bool {
    const PREFIXES: [&str; 10] = [
        "sk-",
        "ghp_",
        "gho_",
        "ghs_",
        "ghu_",
        "github_pat_",
        "glpat-",
        "xoxb-",
        "xoxp-",
        "Bearer ",
    ];
    PREFIXES.iter().any(|p| value.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn urls_keep_names_but_not_values() {
        assert_eq!(
            url("https://mcp.example/mcp?api_key=sk-123&page=2#frag"),
            "https://mcp.example/mcp?api_key=<redacted>&page=<redacted>#<redacted>"
        );
        assert_eq!(
            url("https://me:hunter2@mcp.example/x"),
            "https://me:<redacted>@mcp.example/x"
        );
        assert_eq!(url("https://tok@h/x"), "https://<redacted>@h/x");
        assert_eq!(
            url("http://localhost:3000/mcp"),
            "http://localhost:3000/mcp"
        );
        assert_eq!(url("https://h/x?sk-1"), "https://h/x?<redacted>");
        assert_eq!(url("not a url"), "not a url");
    }

    #[test]
    fn urls_without_a_scheme_hide_their_credentials_too() {
        assert_eq!(
            url("me:pw@mcp.example/mcp?key=1"),
            "me:<redacted>@mcp.example/mcp?key=<redacted>"
        );
        assert_eq!(url("//me:pw@h/x"), "//me:<redacted>@h/x");
        assert_eq!(url("tok@h"), "<redacted>@h");
        // A `://` further on is not the scheme's.
        assert_eq!(url("me:pw@h/a/http://x"), "me:<redacted>@h/a/http://x");
        // An `@` in the path is not user info.
        assert_eq!(url("h/users/@me"), "h/users/@me");
        assert_eq!(url("mcp.example.com/mcp"), "mcp.example.com/mcp");
        assert_eq!(url("/messages?id=1"), "/messages?id=<redacted>");
    }

    #[test]
    fn clip_keeps_short_text_and_cuts_long_text_on_a_character() {
        assert_eq!(clip("short"), "short");
        let long = "é".repeat(100);
        assert_eq!(clip(&long), format!("{}…", "é".repeat(80)));
        assert_eq!(clip(&"a".repeat(80)), "a".repeat(80));
    }

    #[test]
    fn secret_arguments_are_hidden_and_the_rest_kept() {
        let shown = args(&strings(&[
            "-y",
            "@scope/server",
            "--token",
            "abc123",
            "--api-key=k-1",
            "--port",
            "8080",
            "API_KEY=xyz",
            "--header",
            "Authorization: Bearer t0k",
            "https://u:p@h/x?key=1",
            "ghp_abcdef",
            "--verbose",
            "--password",
            "--next-flag",
            "DEBUG=1",
        ]));
        assert_eq!(
            shown,
            strings(&[
                "-y",
                "@scope/server",
                "--token",
                REDACTED,
                "--api-key=<redacted>",
                "--port",
                "8080",
                "API_KEY=<redacted>",
                "--header",
                "Authorization: <redacted>",
                "https://u:<redacted>@h/x?key=<redacted>",
                REDACTED,
                "--verbose",
                "--password",
                "--next-flag",
                "DEBUG=1",
            ])
        );
    }
}
