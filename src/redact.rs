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
    // The user info first: a password pasted unencoded may hold a `/`, `?` or `#`.
    let (mut out, rest) = user_info(url);
    let (rest, fragment) = match rest.split_once('#') {
        Some((rest, fragment)) if !fragment.is_empty() => (rest, Some(REDACTED)),
        Some((rest, _)) => (rest, None),
        None => (rest, None),
    };
    let (base, query) = match rest.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (rest, None),
    };
    out.push_str(base);
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

/// Splits `text` into its start up to the user info, redacted, and the rest (with none, nothing
/// and `text`). After `://` or a leading `//` a user alone is redacted too, else only
/// `user:password@`; the user info ends at the last `@`, hiding too much rather than too little.
fn user_info(text: &str) -> (String, &str) {
    // A `://` after a `/` is in a path, and a scheme holds no `?#@:`: such text, as
    // `me:p://w@h`, is read as having no scheme.
    let scheme_end = text
        .find("://")
        .filter(|&colon| !text[..colon].contains(['/', '?', '#', '@', ':']))
        .map(|colon| colon + 3);
    let (start, authority) = match scheme_end {
        Some(end) => (end, true),
        None if text.starts_with("//") => (2, true),
        None => (0, false),
    };
    let (prefix, rest) = text.split_at(start);
    let Some(at) = rest.rfind('@') else {
        return (String::new(), text);
    };
    let head = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let has_user_info = match authority {
        // Up to the first `/`, `?` or `#`: the whole authority, or a user and the start of a
        // password. An empty one (`https:///me:pw@h`) tells nothing.
        true if !head.is_empty() => head.contains('@') || password_colon(head),
        // A path (`file:///C:/Users/me@corp`): file URIs carry no password.
        true if prefix.eq_ignore_ascii_case("file://") => false,
        // `:` anywhere before the `@`, a typo before it (`https//me:pw@h`) included.
        _ => password_colon(&rest[..=at]),
    };
    if !has_user_info {
        return (String::new(), text);
    }
    let info = &rest[..at];
    let shown = match info.split_once(':') {
        Some((user, _)) if !user.contains(['/', '?', '#', '@']) => format!("{user}:{REDACTED}"),
        // No user, or one that is not sure to be one (the password's start, a query).
        _ => REDACTED.to_owned(),
    };
    (format!("{prefix}{shown}@"), &rest[at + 1..])
}

/// True when `text`, read from the start of an authority, holds a `:` that starts no port:
/// one not followed by digits and then a `/`, `?`, `#` or the end. The colons of an IPv6
/// literal (`[::1]`) count for nothing.
fn password_colon(text: &str) -> bool {
    let text = match text.strip_prefix('[').and_then(|t| t.split_once(']')) {
        Some((_, after)) => after,
        None => text,
    };
    text.match_indices(':').any(|(colon, _)| {
        let after = &text[colon + 1..];
        let port = after.trim_start_matches(|c: char| c.is_ascii_digit());
        port.len() == after.len() || !(port.is_empty() || port.starts_with(['/', '?', '#']))
    })
}

/// Command-line arguments with secrets redacted: secret-looking options and `NAME=value`, header
/// arguments, URL credentials and queries, and values with a known token prefix (`sk-`, `ghp_`).
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
pub(crate) fn secret_name(name: &str) -> bool {
    let name: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    const PARTS: [&str; 12] = [
        "token",
        "secret",
        "password",
        "passwd",
        "apikey",
        "auth",
        "credential",
        "privatekey",
        "accesskey",
        "session",
        "cookie",
        "bearer",
    ];
    name == "key" || name == "pat" || PARTS.iter().any(|part| name.contains(part))
}

/// True for values that carry a well-known secret token prefix.
pub(crate) fn token_like(value: &str) -> bool {
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
        // A `://` further on is not the scheme's.
        assert_eq!(url("me:pw@h/a/http://x"), "me:<redacted>@h/a/http://x");
        // An `@` in the path is not user info.
        assert_eq!(url("h/users/@me"), "h/users/@me");
        assert_eq!(url("mcp.example.com/mcp"), "mcp.example.com/mcp");
        assert_eq!(url("/messages?id=1"), "/messages?id=<redacted>");
    }

    #[test]
    fn a_url_after_text_that_is_no_scheme_hides_its_password_too() {
        for (given, shown) in [
            (" https://me:hunter2@h/mcp", " https://me:<redacted>@h/mcp"),
            ("\thttps://me:hunter2@h/", "\thttps://me:<redacted>@h/"),
            ("<https://me:hunter2@h/>", "<https://me:<redacted>@h/>"),
            ("my_scheme://me:hunter2@h", "my_scheme://me:<redacted>@h"),
            (" https://tok@h", " https://<redacted>@h"),
        ] {
            assert_eq!(url(given), shown, "{given:?}");
        }
    }

    #[test]
    fn a_password_holding_a_slash_question_mark_or_hash_is_hidden_whole() {
        for (given, shown) in [
            ("https://me:hun/ter2@h/mcp", "https://me:<redacted>@h/mcp"),
            (
                "https://me:hun?ter2@h/x?k=1",
                "https://me:<redacted>@h/x?k=<redacted>",
            ),
            ("https://me:hun#ter2@h", "https://me:<redacted>@h"),
            ("https://me:/pw@h", "https://me:<redacted>@h"),
            ("https://me:p@ss/word@h/mcp", "https://me:<redacted>@h/mcp"),
            ("me:hun/ter2@h/mcp", "me:<redacted>@h/mcp"),
            // Typos of the scheme.
            ("https:/me:pw@h", "https:<redacted>@h"),
            ("https//me:pw@h/x", "<redacted>@h/x"),
            ("https:///me:pw@h", "https://<redacted>@h"),
            ("///me:pw@h", "//<redacted>@h"),
            ("me:p://w@h/x", "me:<redacted>@h/x"),
            // An `@` further on hides more, never less.
            ("https://me:pw@h/x?e=a@b", "https://me:<redacted>@b"),
            ("https://tok@h:8080/p?x=a@b", "https://<redacted>@b"),
        ] {
            assert_eq!(url(given), shown, "{given:?}");
        }
    }

    #[test]
    fn urls_without_user_info_keep_their_host_port_and_at_signs() {
        for (given, shown) in [
            ("https://h:8080/p?x=a@b", "https://h:8080/p?x=<redacted>"),
            ("https://h/p?email=a@b", "https://h/p?email=<redacted>"),
            (
                "https://[::1]:8080/p?x=a@b",
                "https://[::1]:8080/p?x=<redacted>",
            ),
            ("https://h/users/@me", "https://h/users/@me"),
            ("file:///C:/Users/me@corp/x", "file:///C:/Users/me@corp/x"),
            ("h:8080/p@x", "h:8080/p@x"),
        ] {
            assert_eq!(url(given), shown, "{given:?}");
        }
    }

    #[test]
    fn text_without_a_scheme_keeps_an_address_with_no_password() {
        for kept in ["bob@example.com", "tok@h", "write to bob@example.com"] {
            assert_eq!(url(kept), kept);
        }
        // After `//` an authority starts: a user alone is a token.
        assert_eq!(url("//tok@h/x"), "//<redacted>@h/x");
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
