//! Rust names for what a server names: snake_case for methods and fields, CamelCase for types
//! and variants, keywords escaped, clashes numbered, and literals and doc text written safely.

use std::collections::HashSet;

/// Words that cannot name anything, even as raw identifiers.
const NOT_RAW: [&str; 5] = ["self", "Self", "super", "crate", "_"];

/// Rust's keywords (2021 edition and reserved), which need `r#` to be names.
const KEYWORDS: [&str; 51] = [
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try",
];

/// The words of `text`: runs of ASCII letters and digits, split where a lowercase letter or
/// digit meets an uppercase one (`getSum` → `get`, `Sum`) and before the last capital of a
/// run of capitals (`HTTPServer` → `HTTP`, `Server`). Other characters separate words.
fn words(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut words = Vec::new();
    let mut word = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            continue;
        }
        let prev = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1).copied();
        let boundary = c.is_ascii_uppercase()
            && !word.is_empty()
            && (prev.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit())
                || (prev.is_some_and(|p| p.is_ascii_uppercase())
                    && next.is_some_and(|n| n.is_ascii_lowercase())));
        if boundary {
            words.push(std::mem::take(&mut word));
        }
        word.push(c);
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// `text` in snake_case, a valid identifier: `get-sum` → `get_sum`, `type` → `r#type`.
pub(crate) fn snake(text: &str) -> String {
    let joined = words(text)
        .iter()
        .map(|w| w.to_ascii_lowercase())
        .collect::<Vec<_>>()
        .join("_");
    let name = match joined.chars().next() {
        None => "value".to_owned(),
        Some(c) if c.is_ascii_digit() => format!("n{joined}"),
        Some(_) => joined,
    };
    escape_keyword(name)
}

/// `text` in CamelCase, a valid type or variant name: `get-sum` → `GetSum`; one that would
/// start with a digit gets `prefix` first (`1.0` → `V1_0` with `V`).
pub(crate) fn camel(text: &str, prefix: &str) -> String {
    let mut name = String::new();
    let mut last_digit = false;
    for word in words(text) {
        let first_digit = word.starts_with(|c: char| c.is_ascii_digit());
        // Digits on both sides of a separator stay apart: `1.0` is `1_0`, not `10`.
        if last_digit && first_digit {
            name.push('_');
        }
        last_digit = word.ends_with(|c: char| c.is_ascii_digit());
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            name.push(first.to_ascii_uppercase());
            name.extend(chars.map(|c| c.to_ascii_lowercase()));
        }
    }
    match name.chars().next() {
        None => format!("{prefix}Value"),
        Some(c) if c.is_ascii_digit() => format!("{prefix}{name}"),
        Some(_) if name == "Self" => format!("{name}_"),
        Some(_) => name,
    }
}

fn escape_keyword(name: String) -> String {
    if NOT_RAW.contains(&name.as_str()) {
        return format!("{name}_");
    }
    if KEYWORDS.contains(&name.as_str()) {
        return format!("r#{name}");
    }
    name
}

/// An identifier without its `r#`: the name serde sees.
pub(crate) fn bare(ident: &str) -> &str {
    ident.strip_prefix("r#").unwrap_or(ident)
}

/// Names taken in one scope: a clash gets the smallest suffix `2`, `3`, … that is free.
#[derive(Debug, Default)]
pub(crate) struct Taken(HashSet<String>);

impl Taken {
    /// Takes `name`, or the first free numbered form of it.
    pub(crate) fn take(&mut self, name: String) -> String {
        if self.0.insert(bare(&name).to_owned()) {
            return name;
        }
        let base = bare(&name).trim_end_matches('_').to_owned();
        // `get_sum_2` and `Mode2`, but `V1_0_2`: a number is not run into another.
        let snake = base.starts_with(|c: char| c.is_ascii_lowercase());
        let separator = match snake || base.ends_with(|c: char| c.is_ascii_digit()) {
            true => "_",
            false => "",
        };
        (2..)
            .map(|n| format!("{base}{separator}{n}"))
            .find(|candidate| self.0.insert(candidate.clone()))
            .unwrap_or(base)
    }
}

/// `text` as a Rust string literal, quotes included: anything but printable ASCII escaped, so
/// the source holds no control or direction-changing character.
pub(crate) fn literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            ' '..='~' => out.push(c),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// The lines of a server's `text` for a doc comment, each without the `///`: plain when the
/// text is plain words, else inside a `text` code block (as long a fence as it needs), so
/// that nothing in it is read as Markdown, a link, HTML or a doc test. Characters that change
/// text direction and control characters are written as `\u{…}`, trailing space dropped.
pub(crate) fn doc_lines(text: &str) -> Vec<String> {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let lines: Vec<String> = text
        .trim()
        .lines()
        .map(|line| clean_line(line).trim_end().to_owned())
        .collect();
    if lines.iter().all(|line| line.is_empty()) {
        return Vec::new();
    }
    if lines.len() == 1 && is_plain(&lines[0]) {
        return lines;
    }
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let mut out = vec![format!("{fence}text")];
    out.extend(lines);
    out.push(fence);
    out
}

/// Whether a line reads the same as Markdown as it does as text.
fn is_plain(line: &str) -> bool {
    let safe = |c: char| c.is_alphanumeric() || " .,;:!?'\"()-/+=%@$".contains(c);
    line.chars().all(safe) && !line.starts_with(['-', '+', '=']) && !line.contains("://")
}

fn clean_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        let bidi = matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}');
        match c {
            '\t' => out.push_str("    "),
            c if c.is_control() || bidi => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake_and_camel_names() {
        let cases = [
            ("get-sum", "get_sum", "GetSum"),
            ("getSum", "get_sum", "GetSum"),
            ("HTTPServer", "http_server", "HttpServer"),
            ("messageType", "message_type", "MessageType"),
            ("type", "r#type", "Type"),
            ("self", "self_", "Self_"),
            ("2fa", "n2fa", "T2fa"),
            ("New York", "new_york", "NewYork"),
            ("1.0", "n1_0", "T1_0"),
            ("", "value", "TValue"),
            ("é", "value", "TValue"),
            ("__a__b__", "a_b", "AB"),
        ];
        for (text, snake_case, camel_case) in cases {
            assert_eq!(snake(text), snake_case, "{text:?}");
            assert_eq!(camel(text, "T"), camel_case, "{text:?}");
        }
    }

    #[test]
    fn clashes_are_numbered() {
        let mut taken = Taken::default();
        assert_eq!(taken.take("get_sum".into()), "get_sum");
        assert_eq!(taken.take("get_sum".into()), "get_sum_2");
        assert_eq!(taken.take("Mode".into()), "Mode");
        assert_eq!(taken.take("Mode".into()), "Mode2");
        assert_eq!(taken.take("r#type".into()), "r#type");
        assert_eq!(taken.take("type".into()), "type_2");
        assert_eq!(taken.take("v1".into()), "v1");
        assert_eq!(taken.take("v1".into()), "v1_2");
        assert_eq!(taken.take("V1_0".into()), "V1_0");
        assert_eq!(taken.take("V1_0".into()), "V1_0_2");
    }

    #[test]
    fn literals_hold_no_control_or_direction_characters() {
        assert_eq!(literal("a\"b\\c\n"), r#""a\"b\\c\n""#);
        assert_eq!(literal("é\u{202e}"), r#""\u{e9}\u{202e}""#);
    }

    #[test]
    fn doc_text_is_plain_or_fenced() {
        assert_eq!(
            doc_lines("Echoes back the input string"),
            ["Echoes back the input string"]
        );
        assert_eq!(doc_lines("  "), Vec::<String>::new());
        let fenced = doc_lines("Use `x` [here](http://a)\n    let x = 1;\t\u{202e}end  ");
        assert_eq!(
            fenced,
            [
                "```text",
                "Use `x` [here](http://a)",
                "    let x = 1;    \\u{202e}end",
                "```"
            ]
        );
        let fence = doc_lines("a ````` b");
        assert_eq!(fence[0], "``````text");
        assert_eq!(doc_lines("<b>bold</b>")[0], "```text");
    }
}
