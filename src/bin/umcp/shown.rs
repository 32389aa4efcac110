//! Text a server wrote, made safe to print on a terminal: control characters and bidi
//! overrides escaped, so a server can neither drive the terminal nor dress its text as umcp's.

/// One line of a server's text (a URL, a field's title): every control character, newline
/// and tab included, and every bidi control is escaped as `\u{…}`.
pub fn line(text: &str) -> String {
    escape(text, false)
}

/// A server's text of possibly several lines (a message): newlines and tabs kept, every other
/// control character and bidi control escaped, and each line after the first indented by
/// two spaces, so none starts where umcp's own lines do.
pub fn block(text: &str) -> String {
    escape(&text.replace("\r\n", "\n"), true).replace('\n', "\n  ")
}

fn escape(text: &str, keep_lines: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let kept = keep_lines && (c == '\n' || c == '\t');
        if !kept && (c.is_control() || is_bidi_control(c) || is_line_separator(c)) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// The characters that reorder the text around them (Unicode's `Bidi_Control`): with them a
/// URL can be shown with its parts in another order than the one a browser reads.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Unicode's own line and paragraph separators, which some terminals break lines at.
fn is_line_separator(c: char) -> bool {
    matches!(c, '\u{2028}' | '\u{2029}')
}

/// The host of a URL (`https://user@host:8443/path` gives `host`): what the user is sent to,
/// whatever the rest of the URL says. `None` when the URL names no host.
pub fn host(url: &str) -> Option<&str> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    if !scheme_ok {
        return None;
    }
    // Browsers end the authority at a backslash too.
    let authority = rest.split(['/', '?', '#', '\\']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if host_port.starts_with('[') {
        host_port.split_inclusive(']').next().unwrap_or(host_port)
    } else {
        host_port.split(':').next().unwrap_or(host_port)
    };
    (!host.is_empty()).then_some(host)
}

/// Why a host deserves a second look, if it does: internationalized names can imitate
/// others letter for letter (the spec asks for a warning on Punycode).
pub fn host_warning(host: &str) -> Option<&'static str> {
    let lower = host.to_ascii_lowercase();
    let punycode = lower.split('.').any(|label| label.starts_with("xn--"));
    (punycode || !host.is_ascii()).then_some(
        "an internationalized name, which can imitate another: check it letter by letter",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_controls_are_escaped() {
        assert_eq!(line("plain text, é ✓"), "plain text, é ✓");
        assert_eq!(line("\x1b[2J\x1b]8;;x\x07"), "\\u{1b}[2J\\u{1b}]8;;x\\u{7}");
        assert_eq!(
            line("a\rb\0c\x7fd\u{9b}e"),
            "a\\u{d}b\\u{0}c\\u{7f}d\\u{9b}e"
        );
        assert_eq!(line("two\nlines\there"), "two\\u{a}lines\\u{9}here");
        // A right-to-left override before `moc.knab` would show the URL as ending in bank.com.
        assert_eq!(
            line("https://evil.com/\u{202e}moc.knab"),
            "https://evil.com/\\u{202e}moc.knab"
        );
        for c in [
            '\u{061c}', '\u{200e}', '\u{200f}', '\u{2066}', '\u{2069}', '\u{2028}',
        ] {
            assert!(line(&c.to_string()).starts_with("\\u{"), "{c:?}");
        }
    }

    #[test]
    fn blocks_keep_their_lines_indented() {
        assert_eq!(block("one"), "one");
        assert_eq!(
            block("one\r\numcp: fake\tline\x1b[1A"),
            "one\n  umcp: fake\tline\\u{1b}[1A"
        );
        assert_eq!(block("bidi \u{202d}x"), "bidi \\u{202d}x");
    }

    #[test]
    fn the_host_is_what_the_browser_would_visit() {
        assert_eq!(host("https://example.com/a?b#c"), Some("example.com"));
        assert_eq!(host("https://example.com"), Some("example.com"));
        assert_eq!(host("HTTP://Example.com:8080"), Some("Example.com"));
        assert_eq!(host("https://bank.com@evil.com/login"), Some("evil.com"));
        assert_eq!(host("https://a:b@[::1]:443/x"), Some("[::1]"));
        assert_eq!(host("https://evil.com\\@bank.com"), Some("evil.com"));
        assert_eq!(host("https://evil.com?@bank.com"), Some("evil.com"));
        assert_eq!(host("mailto:someone@example.com"), None);
        assert_eq!(host("https:///path"), None);
        assert_eq!(host("no url"), None);
        assert_eq!(host("1x://host"), None);
    }

    #[test]
    fn internationalized_hosts_are_flagged() {
        assert!(host_warning("example.com").is_none());
        assert!(host_warning("xn--pple-43d.com").is_some());
        assert!(host_warning("shop.XN--80ak6aa92e.com").is_some());
        assert!(host_warning("аpple.com").is_some());
    }
}
