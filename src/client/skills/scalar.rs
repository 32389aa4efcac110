//! Frontmatter scalars: quoted ones with their escapes and line folding, plain ones typed by
//! the YAML 1.2 core schema, and the folding of `>` block scalars, each in one pass.

use serde_json::{Number, Value};

/// The quoted scalar whose opening quote is at byte `start` of `text`, and the byte just
/// past its closing quote; `None` when the closing quote is not in `text`. Line breaks
/// inside fold as in YAML: one becomes a space, several keep all but the first.
pub(super) fn quoted(text: &str, start: usize) -> Result<Option<(String, usize)>, String> {
    let mut chars = text[start..].char_indices().map(|(i, c)| (start + i, c));
    let Some((_, quote)) = chars.next() else {
        return Ok(None);
    };
    let mut chars = chars.peekable();
    let mut out = String::new();
    let mut breaks = 0;
    while let Some((i, c)) = chars.next() {
        if c == '\n' {
            breaks += 1;
            continue;
        }
        if breaks > 0 {
            fold_breaks(&mut out, breaks);
            breaks = 0;
        }
        if quote == '\'' {
            if c == '\'' {
                if chars.next_if(|&(_, n)| n == '\'').is_some() {
                    out.push('\'');
                    continue;
                }
                return Ok(Some((out, i + 1)));
            }
            out.push(c);
            continue;
        }
        match c {
            '"' => return Ok(Some((out, i + 1))),
            '\\' => {
                let (_, e) = chars.next().ok_or("a `\\` at the end of a quoted value")?;
                out.push(escape(e, &mut chars)?);
            }
            c => out.push(c),
        }
    }
    Ok(None)
}

/// `breaks` line breaks inside a quoted scalar: the spaces before them go, one break is a
/// space, more keep all but the first.
fn fold_breaks(out: &mut String, breaks: usize) {
    let trimmed = out.trim_end_matches(' ').len();
    out.truncate(trimmed);
    if breaks == 1 {
        out.push(' ');
    } else {
        out.extend(std::iter::repeat_n('\n', breaks - 1));
    }
}

/// The character a double-quoted escape `\e…` stands for, reading the hex digits of `\x`,
/// `\u` and `\U` from `chars`.
fn escape(e: char, chars: &mut impl Iterator<Item = (usize, char)>) -> Result<char, String> {
    let simple = match e {
        '0' => Some('\0'),
        'a' => Some('\u{7}'),
        'b' => Some('\u{8}'),
        't' | '\t' => Some('\t'),
        'n' => Some('\n'),
        'v' => Some('\u{b}'),
        'f' => Some('\u{c}'),
        'r' => Some('\r'),
        'e' => Some('\u{1b}'),
        ' ' => Some(' '),
        '"' => Some('"'),
        '/' => Some('/'),
        '\\' => Some('\\'),
        'N' => Some('\u{85}'),
        '_' => Some('\u{a0}'),
        'L' => Some('\u{2028}'),
        'P' => Some('\u{2029}'),
        _ => None,
    };
    if let Some(c) = simple {
        return Ok(c);
    }
    let digits = match e {
        'x' => 2,
        'u' => 4,
        'U' => 8,
        other => return Err(format!("an unknown escape `\\{}`", other.escape_debug())),
    };
    let hex: String = chars.take(digits).map(|(_, c)| c).collect();
    u32::from_str_radix(&hex, 16)
        .ok()
        .and_then(char::from_u32)
        .ok_or_else(|| format!("an invalid escape `\\{e}{}`", hex.escape_debug()))
}

/// Whether a quoted scalar has closed, kept as its lines come (each joined after a `\n`), so
/// each character is looked at once however many lines it spans.
pub(super) struct QuoteScan {
    quote: char,
    escaped: bool,
    opened: bool,
}

impl QuoteScan {
    /// A scan of the scalar `first` opens.
    pub(super) fn new(first: &str) -> QuoteScan {
        QuoteScan {
            quote: first.chars().next().unwrap_or('"'),
            escaped: false,
            opened: false,
        }
    }

    /// Scans `text` from byte `from` (where the last scan stopped); whether the closing quote
    /// is in it. A `'` last in the text closes: what is joined next starts with a line break,
    /// so it cannot be the second `'` of an escaped one.
    pub(super) fn feed(&mut self, text: &str, from: usize) -> bool {
        let mut chars = text[from..].chars().peekable();
        if !self.opened {
            self.opened = true;
            chars.next();
        }
        while let Some(c) = chars.next() {
            if self.quote == '\'' {
                if c == '\'' && chars.next_if_eq(&'\'').is_none() {
                    return true;
                }
            } else if self.escaped {
                self.escaped = false;
            } else if c == '\\' {
                self.escaped = true;
            } else if c == '"' {
                return true;
            }
        }
        false
    }
}

/// The lines of a folded scalar: lines joined by spaces, blank lines kept as line breaks,
/// more-indented lines kept as they are.
pub(super) fn fold(lines: &[String]) -> String {
    let mut out = String::new();
    let mut blanks = 0;
    let mut previous_more = false;
    let mut first = true;
    for line in lines {
        if line.is_empty() {
            blanks += 1;
            continue;
        }
        let more = line.starts_with(' ');
        if first {
            out.extend(std::iter::repeat_n('\n', blanks));
        } else if !more && !previous_more {
            match blanks {
                0 => out.push(' '),
                n => out.extend(std::iter::repeat_n('\n', n)),
            }
        } else {
            // A more-indented line keeps its own line break.
            out.extend(std::iter::repeat_n('\n', blanks + 1));
        }
        out.push_str(line);
        blanks = 0;
        previous_more = more;
        first = false;
    }
    out
}

/// A plain scalar typed by the YAML 1.2 core schema.
pub(super) fn resolve(text: &str) -> Result<Value, String> {
    Ok(match text {
        "" | "~" | "null" | "Null" | "NULL" => Value::Null,
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        _ => {
            if let Some(n) = core_number(text) {
                n
            } else if matches!(
                text.trim_start_matches(['+', '-']),
                ".inf" | ".Inf" | ".INF" | ".nan" | ".NaN" | ".NAN"
            ) {
                return Err(format!("{text} has no JSON value"));
            } else {
                Value::String(text.to_owned())
            }
        }
    })
}

fn core_number(text: &str) -> Option<Value> {
    if let Some(octal) = text.strip_prefix("0o") {
        return i64::from_str_radix(octal, 8).ok().map(Value::from);
    }
    if let Some(hex) = text.strip_prefix("0x") {
        return i64::from_str_radix(hex, 16).ok().map(Value::from);
    }
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if digits(unsigned) {
        return Some(match text.trim_start_matches('+').parse::<i64>() {
            Ok(n) => Value::from(n),
            Err(_) => Number::from_f64(text.parse::<f64>().ok()?).map(Value::Number)?,
        });
    }
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], Some(&unsigned[at + 1..])),
        None => (unsigned, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some((whole, fraction)) => {
            (whole.is_empty() && digits(fraction))
                || (digits(whole) && (fraction.is_empty() || digits(fraction)))
        }
        None => false,
    } || (exponent.is_some() && digits(mantissa));
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e)));
    if !(mantissa_ok && exponent_ok) {
        return None;
    }
    text.parse::<f64>()
        .ok()
        .and_then(Number::from_f64)
        .map(Value::Number)
}

/// At most the first 40 characters of `text`, for an error message: what a server wrote is
/// quoted, never all of it.
pub(super) fn snippet(text: &str) -> String {
    const SHOWN: usize = 40;
    match text.char_indices().nth(SHOWN) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::{quoted, QuoteScan};

    #[test]
    fn a_quoted_scalar_ends_where_its_scan_says() {
        for (text, end) in [
            ("'it''s' rest", Some(7)),
            ("\"a\\\"b\" rest", Some(6)),
            ("'open", None),
            ("\"a\\\\\"", Some(5)),
            ("'x'", Some(3)),
        ] {
            let parsed = quoted(text, 0).unwrap().map(|(_, at)| at);
            assert_eq!(parsed, end, "{text:?}");
            assert_eq!(
                QuoteScan::new(text).feed(text, 0),
                end.is_some(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn a_quoted_scalar_may_start_inside_a_text() {
        let text = "[a, \"b c\", 'd']";
        assert_eq!(quoted(text, 4).unwrap(), Some(("b c".to_owned(), 9)));
        assert_eq!(quoted(text, 11).unwrap(), Some(("d".to_owned(), 14)));
    }
}
