//! The YAML frontmatter of a `SKILL.md`, read as JSON so it can be compared with a skill's
//! entry.
//!
//! Frontmatter is a small block mapping of scalars, lists and nested mappings, and only that
//! is read: block mappings and sequences, flow `[…]` and `{…}`, plain, quoted and `|`/`>`
//! block scalars, comments, with YAML 1.2 core-schema typing (`null`, booleans, integers,
//! floats, else strings) as servers' YAML 1.2 parsers type them. Anything else (anchors,
//! aliases, tags, complex keys, several documents, tabs for indentation) fails: a
//! frontmatter that cannot be read cannot be verified, and the skill is not loaded.

use serde_json::{Map, Number, Value};

/// The frontmatter of `text` as a JSON object.
pub(super) fn parse(text: &str) -> Result<Map<String, Value>, String> {
    let block = extract(text)?;
    let mut reader = Reader {
        lines: block
            .lines()
            .map(|l| l.trim_end_matches('\r').to_owned())
            .collect(),
        pos: 0,
    };
    reader.skip_blank();
    if reader.pos >= reader.lines.len() {
        return Err("the frontmatter is empty".into());
    }
    let value = reader.node()?;
    reader.skip_blank();
    if reader.pos < reader.lines.len() {
        return Err(format!(
            "unexpected indentation at frontmatter line {}",
            reader.pos + 1
        ));
    }
    match value {
        Value::Object(map) => Ok(map),
        _ => Err("the frontmatter is not a mapping".into()),
    }
}

/// The text between the opening `---` line and the next `---` line.
fn extract(text: &str) -> Result<&str, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let body = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or("the file does not begin with a `---` frontmatter line")?;
    let mut offset = 0;
    for line in body.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare.trim_end_matches([' ', '\t']) == "---" && offset > 0 {
            return Ok(&body[..offset]);
        }
        offset += line.len();
    }
    Err("the frontmatter has no closing `---` line".into())
}

struct Reader {
    lines: Vec<String>,
    pos: usize,
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn is_blank(line: &str) -> bool {
    let t = line.trim_start_matches(' ');
    t.is_empty() || t.starts_with('#')
}

fn is_item(content: &str) -> bool {
    content == "-" || content.starts_with("- ")
}

impl Reader {
    fn skip_blank(&mut self) {
        while self.pos < self.lines.len() && is_blank(&self.lines[self.pos]) {
            self.pos += 1;
        }
    }

    /// The current line's indentation and content, after blank lines.
    fn peek(&mut self) -> Option<(usize, String)> {
        self.skip_blank();
        let line = self.lines.get(self.pos)?;
        Some((indent_of(line), line.trim_start_matches(' ').to_owned()))
    }

    fn line_error(&self, what: &str) -> String {
        format!("{what} at frontmatter line {}", self.pos + 1)
    }

    /// The block node starting at the current line, at its indentation.
    fn node(&mut self) -> Result<Value, String> {
        let Some((indent, content)) = self.peek() else {
            return Ok(Value::Null);
        };
        if content.starts_with('\t') {
            return Err(self.line_error("a tab in the indentation"));
        }
        if is_item(&content) {
            self.sequence(indent)
        } else {
            self.mapping(indent)
        }
    }

    fn mapping(&mut self, indent: usize) -> Result<Value, String> {
        let mut map = Map::new();
        while let Some((at, content)) = self.peek() {
            if at < indent || (at == indent && is_item(&content)) {
                break;
            }
            if at > indent {
                return Err(self.line_error("unexpected indentation"));
            }
            let (key, rest) =
                split_key(&content).ok_or_else(|| self.line_error("not a `key: value` line"))?;
            self.pos += 1;
            let value = self.value(&rest, indent, true)?;
            if map.insert(key.clone(), value).is_some() {
                return Err(format!("the key `{key}` appears twice"));
            }
        }
        Ok(Value::Object(map))
    }

    fn sequence(&mut self, indent: usize) -> Result<Value, String> {
        let mut items = Vec::new();
        while let Some((at, content)) = self.peek() {
            if at != indent || !is_item(&content) {
                if at > indent {
                    return Err(self.line_error("unexpected indentation"));
                }
                break;
            }
            let after = content[1..].trim_start_matches(' ');
            let inner = indent + (content.len() - after.len());
            let nested = !after.is_empty()
                && (is_item(after) || (split_key(after).is_some() && !starts_scalar(after)));
            if nested {
                // The item is a block node that starts on the dash's line: read it as if the
                // dash were a space.
                self.lines[self.pos] = format!("{}{after}", " ".repeat(inner));
                items.push(self.node()?);
            } else {
                self.pos += 1;
                items.push(self.value(after, indent, false)?);
            }
        }
        Ok(Value::Array(items))
    }

    /// The value after `key:` (or `- `) on a line indented `indent`; the line is consumed.
    fn value(&mut self, rest: &str, indent: usize, in_map: bool) -> Result<Value, String> {
        let rest = rest.trim();
        if rest.is_empty() || rest.starts_with('#') {
            return match self.peek() {
                Some((at, _)) if at > indent => self.node(),
                Some((at, content)) if in_map && at == indent && is_item(&content) => {
                    self.sequence(indent)
                }
                _ => Ok(Value::Null),
            };
        }
        match rest.as_bytes()[0] {
            b'|' | b'>' => self.block_scalar(rest, indent),
            b'[' | b'{' => {
                let mut text = rest.to_owned();
                while !balanced(&text) {
                    let line = self
                        .lines
                        .get(self.pos)
                        .ok_or("an unclosed flow collection")?;
                    text.push(' ');
                    text.push_str(line.trim());
                    self.pos += 1;
                }
                let mut flow = Flow {
                    chars: text.chars().collect(),
                    at: 0,
                };
                let value = flow.value()?;
                flow.end()?;
                Ok(value)
            }
            b'"' | b'\'' => {
                let mut text = rest.to_owned();
                loop {
                    if let Some((value, after)) = quoted(&text)? {
                        let after = after.trim();
                        if !after.is_empty() && !after.starts_with('#') {
                            return Err(format!("text after a quoted value: {after:?}"));
                        }
                        return Ok(Value::String(value));
                    }
                    let line = self.lines.get(self.pos).ok_or("an unclosed quoted value")?;
                    text.push('\n');
                    text.push_str(line.trim());
                    self.pos += 1;
                }
            }
            b'&' | b'*' | b'!' | b'%' | b'@' | b'`' | b'?' => Err(format!(
                "YAML beyond plain frontmatter (anchors, aliases, tags, directives): {rest:?}"
            )),
            _ => self.plain(rest, indent),
        }
    }

    /// A plain scalar, continued on more-indented lines.
    fn plain(&mut self, first: &str, indent: usize) -> Result<Value, String> {
        let mut text = strip_comment(first).to_owned();
        if text.contains(": ") || text.ends_with(':') {
            return Err(format!("a `: ` inside the plain value {text:?}"));
        }
        let mut continued = false;
        let mut blanks = 0;
        while let Some(line) = self.lines.get(self.pos) {
            if line.trim().is_empty() {
                blanks += 1;
                self.pos += 1;
                continue;
            }
            let content = line.trim_start_matches(' ');
            if indent_of(line) <= indent || content.starts_with('#') {
                break;
            }
            let content = strip_comment(content);
            if content.contains(": ") || content.ends_with(':') {
                return Err(self.line_error("a `key: value` inside a plain value"));
            }
            if blanks == 0 {
                text.push(' ');
            } else {
                text.push_str(&"\n".repeat(blanks));
            }
            blanks = 0;
            text.push_str(content);
            continued = true;
            self.pos += 1;
        }
        // Blank lines that did not lead to a continuation belong to what follows.
        self.pos -= blanks;
        if continued {
            return Ok(Value::String(text));
        }
        resolve(&text)
    }

    /// A `|` or `>` block scalar whose header is `header`, under a line indented `indent`.
    fn block_scalar(&mut self, header: &str, indent: usize) -> Result<Value, String> {
        let header = strip_comment(header);
        let folded = header.starts_with('>');
        let chomp = match &header[1..] {
            "" => Chomp::Clip,
            "-" => Chomp::Strip,
            "+" => Chomp::Keep,
            other => {
                return Err(format!(
                    "an unsupported block scalar header `{}{other}`",
                    &header[..1]
                ))
            }
        };
        let mut lines = Vec::new();
        let mut block = None;
        while let Some(line) = self.lines.get(self.pos) {
            if line.trim().is_empty() {
                lines.push(String::new());
                self.pos += 1;
                continue;
            }
            let at = indent_of(line);
            let want = *block.get_or_insert(at);
            if at <= indent || at < want {
                break;
            }
            lines.push(line[want..].to_owned());
            self.pos += 1;
        }
        let trailing = lines.iter().rev().take_while(|l| l.is_empty()).count();
        lines.truncate(lines.len() - trailing);
        let mut text = if folded {
            fold(&lines)
        } else {
            lines.join("\n")
        };
        match chomp {
            _ if text.is_empty() && lines.is_empty() => {}
            Chomp::Strip => {}
            Chomp::Clip => text.push('\n'),
            Chomp::Keep => text.push_str(&"\n".repeat(1 + trailing)),
        }
        Ok(Value::String(text))
    }
}

enum Chomp {
    Clip,
    Strip,
    Keep,
}

/// The lines of a folded scalar: lines joined by spaces, blank lines kept as line breaks,
/// more-indented lines kept as they are.
fn fold(lines: &[String]) -> String {
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
            out.push_str(&"\n".repeat(blanks));
        } else if !more && !previous_more {
            match blanks {
                0 => out.push(' '),
                n => out.push_str(&"\n".repeat(n)),
            }
        } else {
            // A more-indented line keeps its own line break.
            out.push_str(&"\n".repeat(blanks + 1));
        }
        out.push_str(line);
        blanks = 0;
        previous_more = more;
        first = false;
    }
    out
}

/// `key` and what follows its `:`, for a `key: value` (or `key:`) line.
fn split_key(content: &str) -> Option<(String, String)> {
    if content.starts_with('"') || content.starts_with('\'') {
        let (key, after) = quoted(content).ok()??;
        let rest = after.strip_prefix(':')?;
        if !(rest.is_empty() || rest.starts_with(' ')) {
            return None;
        }
        return Some((key, rest.to_owned()));
    }
    if content.starts_with(['[', '{', '#', '&', '*', '!', '|', '>', '%', '@', '`', '?']) {
        return None;
    }
    let end = content
        .find(": ")
        .or_else(|| content.strip_suffix(':').map(str::len))?;
    let key = content[..end].trim_end();
    if key.is_empty() || key.contains(" #") {
        return None;
    }
    Some((key.to_owned(), content[end + 1..].to_owned()))
}

/// Whether a sequence item's text is a scalar or flow value (not a nested `key: value`).
fn starts_scalar(text: &str) -> bool {
    text.starts_with(['[', '{', '|', '>'])
}

/// `text` up to a ` #` comment, trimmed.
fn strip_comment(text: &str) -> &str {
    let end = text.find(" #").unwrap_or(text.len());
    text[..end].trim()
}

/// Whether the brackets of a flow collection (outside quotes) are all closed.
fn balanced(text: &str) -> bool {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        match quote {
            Some('"') if escaped => escaped = false,
            Some('"') if c == '\\' => escaped = true,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                '"' | '\'' => quote = Some(c),
                '[' | '{' => depth += 1,
                ']' | '}' => depth -= 1,
                _ => {}
            },
        }
    }
    depth <= 0 && quote.is_none()
}

/// The quoted scalar at the start of `text` and the text after it, or `None` when its closing
/// quote is not in `text`. Line breaks inside fold as in YAML: one becomes a space, several
/// keep all but the first.
fn quoted(text: &str) -> Result<Option<(String, &str)>, String> {
    let mut chars = text.char_indices();
    let Some((_, quote)) = chars.next() else {
        return Ok(None);
    };
    let mut out = String::new();
    let mut breaks = 0;
    while let Some((i, c)) = chars.next() {
        if c == '\n' {
            breaks += 1;
            continue;
        }
        if breaks > 0 {
            let trimmed = out.trim_end_matches(' ').len();
            out.truncate(trimmed);
            out.push_str(&if breaks == 1 {
                " ".to_owned()
            } else {
                "\n".repeat(breaks - 1)
            });
            breaks = 0;
        }
        if quote == '\'' {
            if c == '\'' {
                if text[i + 1..].starts_with('\'') {
                    chars.next();
                    out.push('\'');
                    continue;
                }
                return Ok(Some((out, &text[i + 1..])));
            }
            out.push(c);
            continue;
        }
        match c {
            '"' => return Ok(Some((out, &text[i + 1..]))),
            '\\' => {
                let (_, e) = chars.next().ok_or("a `\\` at the end of a quoted value")?;
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
                    out.push(c);
                    continue;
                }
                let digits = match e {
                    'x' => 2,
                    'u' => 4,
                    'U' => 8,
                    other => return Err(format!("an unknown escape `\\{other}`")),
                };
                let hex: String = (0..digits)
                    .filter_map(|_| chars.next().map(|(_, c)| c))
                    .collect();
                let code = u32::from_str_radix(&hex, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .ok_or_else(|| format!("an invalid escape `\\{e}{hex}`"))?;
                out.push(code);
            }
            c => out.push(c),
        }
    }
    Ok(None)
}

/// A plain scalar typed by the YAML 1.2 core schema.
fn resolve(text: &str) -> Result<Value, String> {
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

/// A flow collection being read.
struct Flow {
    chars: Vec<char>,
    at: usize,
}

impl Flow {
    fn skip_space(&mut self) {
        while self.chars.get(self.at).is_some_and(|c| c.is_whitespace()) {
            self.at += 1;
        }
    }

    fn end(&mut self) -> Result<(), String> {
        self.skip_space();
        match self.chars.get(self.at) {
            None | Some('#') => Ok(()),
            Some(c) => Err(format!("text after a flow collection at `{c}`")),
        }
    }

    fn value(&mut self) -> Result<Value, String> {
        self.skip_space();
        match self.chars.get(self.at) {
            Some('[') => {
                self.at += 1;
                let mut items = Vec::new();
                loop {
                    self.skip_space();
                    if self.eat(']') {
                        return Ok(Value::Array(items));
                    }
                    items.push(self.value()?);
                    self.skip_space();
                    if !self.eat(',') && self.chars.get(self.at) != Some(&']') {
                        return Err("a flow sequence item not followed by `,` or `]`".into());
                    }
                }
            }
            Some('{') => {
                self.at += 1;
                let mut map = Map::new();
                loop {
                    self.skip_space();
                    if self.eat('}') {
                        return Ok(Value::Object(map));
                    }
                    let key = match self.value()? {
                        Value::String(s) => s,
                        Value::Null => return Err("an empty key in a flow mapping".into()),
                        other => other.to_string(),
                    };
                    self.skip_space();
                    let value = if self.eat(':') {
                        self.value()?
                    } else {
                        Value::Null
                    };
                    if map.insert(key.clone(), value).is_some() {
                        return Err(format!("the key `{key}` appears twice"));
                    }
                    self.skip_space();
                    if !self.eat(',') && self.chars.get(self.at) != Some(&'}') {
                        return Err("a flow mapping entry not followed by `,` or `}`".into());
                    }
                }
            }
            Some('"' | '\'') => {
                let rest: String = self.chars[self.at..].iter().collect();
                let (value, after) = quoted(&rest)?.ok_or("an unclosed quoted value")?;
                self.at = self.chars.len() - after.chars().count();
                Ok(Value::String(value))
            }
            Some('&' | '*' | '!' | '|' | '>' | '%' | '@' | '`') => {
                Err("YAML beyond plain frontmatter inside a flow collection".into())
            }
            _ => {
                let start = self.at;
                while let Some(&c) = self.chars.get(self.at) {
                    let colon_end = c == ':'
                        && self
                            .chars
                            .get(self.at + 1)
                            .is_none_or(|n| n.is_whitespace() || matches!(n, ',' | ']' | '}'));
                    if matches!(c, ',' | '[' | ']' | '{' | '}') || colon_end {
                        break;
                    }
                    self.at += 1;
                }
                let text: String = self.chars[start..self.at].iter().collect();
                resolve(text.trim())
            }
        }
    }

    fn eat(&mut self, c: char) -> bool {
        if self.chars.get(self.at) == Some(&c) {
            self.at += 1;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse;
    use serde_json::json;

    fn read(yaml: &str) -> serde_json::Value {
        serde_json::Value::Object(parse(&format!("---\n{yaml}---\nbody\n")).expect(yaml))
    }

    #[test]
    fn the_suites_frontmatter_reads_as_its_entry() {
        let text = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF \
                    documents\n---\n\nSkill body.\n";
        assert_eq!(
            serde_json::Value::Object(parse(text).unwrap()),
            json!({"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents"})
        );
    }

    #[test]
    fn scalars_are_typed_by_the_core_schema() {
        assert_eq!(
            read("a: 1\nb: 1.5\nc: true\nd: ~\ne: 0x1f\nf: '007'\ng: \"x\\ty\"\nh: -2e3\ni: v1.0\nj:\n"),
            json!({"a": 1, "b": 1.5, "c": true, "d": null, "e": 31, "f": "007",
                   "g": "x\ty", "h": -2000.0, "i": "v1.0", "j": null})
        );
    }

    #[test]
    fn nested_mappings_sequences_and_flows_read_as_json() {
        let yaml = "metadata:\n  author: me # who\n  tags: [a, 'b c', 3]\nallowed-tools:\n- Read\n\
                    - Bash(git:*)\nlist:\n  - k: 1\n    j: {x: y, z: [1, 2]}\n  - plain\n";
        assert_eq!(
            read(yaml),
            json!({"metadata": {"author": "me", "tags": ["a", "b c", 3]},
                   "allowed-tools": ["Read", "Bash(git:*)"],
                   "list": [{"k": 1, "j": {"x": "y", "z": [1, 2]}}, "plain"]})
        );
    }

    #[test]
    fn block_and_continued_scalars_keep_their_lines() {
        assert_eq!(
            read("a: |\n  one\n  two\n\nb: >-\n  one\n  two\n\n  three\nc: long\n  wrapped text\n"),
            json!({"a": "one\ntwo\n", "b": "one two\nthree", "c": "long wrapped text"})
        );
    }

    #[test]
    fn what_frontmatter_does_not_use_fails_closed() {
        for yaml in [
            "a: &x 1\nb: *x\n",
            "a: !!str 1\n",
            "? complex\n: key\n",
            "a: 1\na: 2\n",
            "a: b: c\n",
            "a: .inf\n",
            "a: [1, 2\n",
            "  a: 1\nb: 2\n",
        ] {
            assert!(
                parse(&format!("---\n{yaml}---\n")).is_err(),
                "{yaml:?} should not read"
            );
        }
        assert!(parse("no frontmatter\n").is_err());
        assert!(parse("---\nname: x\n").is_err());
    }

    #[test]
    fn a_byte_order_mark_and_crlf_lines_are_tolerated() {
        let text = "\u{feff}---\r\nname: x\r\ndescription: y\r\n---\r\nbody";
        assert_eq!(
            serde_json::Value::Object(parse(text).unwrap()),
            json!({"name": "x", "description": "y"})
        );
    }
}
