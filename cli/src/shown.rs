//! Text a server wrote, made safe to print on a terminal: control characters, bidi controls
//! and invisible formatting escaped, so a server can neither drive the terminal nor dress its
//! text as umcp's, nor hide part of it.
//!
//! What is escaped ([`is_unsafe`]): every control character (C0 with ESC, BEL, CR and
//! backspace; DEL; the C1 controls U+0080–U+009F), the bidi controls (U+061C, U+200E/F,
//! U+202A–U+202E, U+2066–U+2069), Unicode's line and paragraph separators, and the invisible
//! characters that can hide text or make two names look alike (soft hyphen, zero-width space,
//! word joiner and invisible operators, zero-width no-break space, the interlinear annotation
//! marks and the tag characters U+E0000–U+E007F). The zero-width joiner and non-joiner are
//! kept: emoji sequences and several scripts need them.
//!
//! Text output is escaped whether or not stdout is a terminal: what is piped is often shown
//! on one later (`| less -R`, `| tee`), and a script that wants the server's exact text has
//! `--json`, whose strings [`json`] keeps valid JSON.

/// One line of a server's text (a URL, a field's title, a listing's row): every character
/// [`is_unsafe`] names, newline and tab included, is escaped as `\u{…}`.
pub fn line(text: &str) -> String {
    escape(text, false)
}

/// A server's text of possibly several lines (a message): newlines and tabs kept, every other
/// unsafe character escaped, and each line after the first indented by two spaces, so none
/// starts where umcp's own lines do.
pub fn block(text: &str) -> String {
    text_lines(text).replace('\n', "\n  ")
}

/// A server's text of possibly several lines printed as the result itself (a tool's text, a
/// resource's contents): newlines and tabs kept, a CR LF line end read as a newline, every
/// other unsafe character escaped.
pub fn text_lines(text: &str) -> String {
    escape(&text.replace("\r\n", "\n"), true)
}

/// JSON text with every unsafe character serde_json leaves raw (DEL, C1 and bidi controls,
/// invisible formatting) as a `\uXXXX` escape: the same value, with no raw control for the
/// terminal. Newlines and tabs outside strings are layout, and kept.
pub fn json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_unsafe(c) && c != '\n' && c != '\t' {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn escape(text: &str, keep_lines: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let kept = keep_lines && (c == '\n' || c == '\t');
        if !kept && is_unsafe(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether `c` is shown escaped: a control character, a bidi control, a line separator or an
/// invisible character (see the module's doc).
fn is_unsafe(c: char) -> bool {
    c.is_control() || is_bidi_control(c) || is_line_separator(c) || is_invisible(c)
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

/// Characters that show nothing, with which a description can carry text the reader never
/// sees (tag characters spell ASCII invisibly) or a name can look like another.
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00ad}' | '\u{200b}' | '\u{2060}'..='\u{2064}' | '\u{feff}' | '\u{fff9}'..='\u{fffb}'
        | '\u{e0000}'..='\u{e007f}')
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
    fn invisible_characters_are_escaped_and_joiners_kept() {
        // Tag characters spell `hi` invisibly; a soft hyphen and a zero-width space split a
        // name that then looks whole.
        assert_eq!(
            line("a\u{e0068}\u{e0069}b\u{ad}c\u{200b}d\u{feff}"),
            "a\\u{e0068}\\u{e0069}b\\u{ad}c\\u{200b}d\\u{feff}"
        );
        // A family emoji is joined with U+200D: kept.
        assert_eq!(
            line("\u{1f468}\u{200d}\u{1f467}"),
            "\u{1f468}\u{200d}\u{1f467}"
        );
    }

    #[test]
    fn results_keep_their_lines_unindented() {
        assert_eq!(
            text_lines("one\r\n\ttwo\rthree\x1b]0;x\x07\x08"),
            "one\n\ttwo\\u{d}three\\u{1b}]0;x\\u{7}\\u{8}"
        );
    }

    #[test]
    fn json_stays_the_same_value_without_raw_controls() {
        let value = serde_json::json!({
            "text": "\x1b]0;x\x07 \u{9b}31m \u{202e}rtl \u{7f} \u{e0041} é ✓\n",
        });
        let text = serde_json::to_string(&value).unwrap();
        let safe = json(&text);
        assert!(safe.chars().all(|c| !is_unsafe(c)), "{safe}");
        assert!(
            safe.contains(r"\u009b31m \u202ertl \u007f \udb40\udc41 é ✓\n"),
            "{safe}"
        );
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value);
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
