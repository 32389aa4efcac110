//! The YAML frontmatter of a `SKILL.md`, read as JSON so it can be compared with a skill's
//! entry, within fixed bounds of size, depth and time whatever the server sent.
//!
//! Frontmatter is a small block mapping of scalars, lists and nested mappings, and only that
//! is read: block mappings and sequences, flow `[…]` and `{…}` (see `flow.rs`), plain, quoted
//! and `|`/`>` block scalars (see `scalar.rs`), comments, with YAML 1.2 core-schema typing
//! (`null`, booleans, integers, floats, else strings) as servers' YAML 1.2 parsers type them.
//! Anything else (anchors, aliases, tags, complex keys, several documents, tabs for
//! indentation) fails: a frontmatter that cannot be read cannot be verified, and the skill is
//! not loaded.
//!
//! The text comes from a server, so the reader is bounded and fails closed past its bounds:
//! the block between the `---` lines may hold [`MAX_BYTES`], checked before anything is
//! parsed; collections may nest [`MAX_DEPTH`](super::flow::MAX_DEPTH) deep, block and flow
//! together, which also bounds the recursion and so the stack; and every line and character
//! is looked at a bounded number of times (a quoted scalar or flow collection over several
//! lines is scanned once as its lines come, then parsed once), so the time is linear in the
//! block's length.

use serde_json::{Map, Value};

use super::flow::{deeper, Flow};
use super::scalar::{fold, quoted, resolve, snippet, QuoteScan};

/// The most bytes between the opening and closing `---` lines: frontmatter is a name, a
/// description of at most 1024 characters and some metadata, far below this.
pub(crate) const MAX_BYTES: usize = 64 * 1024;

/// The frontmatter of `text` as a JSON object.
pub(super) fn parse(text: &str) -> Result<Map<String, Value>, String> {
    let block = extract(text)?;
    let mut reader = Reader {
        lines: block.lines().map(Line::of).collect(),
        pos: 0,
    };
    reader.skip_blank();
    if reader.pos >= reader.lines.len() {
        return Err("the frontmatter is empty".into());
    }
    let value = reader.node(0)?;
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

/// The text between the opening `---` line and the next `---` line, at most [`MAX_BYTES`]
/// long: the search for the closing line stops there.
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
        if offset > MAX_BYTES {
            return Err(format!(
                "the frontmatter is longer than {} KiB",
                MAX_BYTES / 1024
            ));
        }
    }
    Err("the frontmatter has no closing `---` line".into())
}

/// One line of the block: its indentation (spaces) and what follows it, borrowed from the
/// text, so that reading a line again copies nothing.
#[derive(Clone, Copy)]
struct Line<'a> {
    indent: usize,
    text: &'a str,
}

impl<'a> Line<'a> {
    fn of(line: &'a str) -> Line<'a> {
        let line = line.trim_end_matches('\r');
        let text = line.trim_start_matches(' ');
        Line {
            indent: line.len() - text.len(),
            text,
        }
    }

    /// Empty, or a comment.
    fn is_blank(&self) -> bool {
        self.text.is_empty() || self.text.starts_with('#')
    }
}

fn is_item(content: &str) -> bool {
    content == "-" || content.starts_with("- ")
}

/// The block's lines and the one being read.
struct Reader<'a> {
    lines: Vec<Line<'a>>,
    pos: usize,
}

impl<'a> Reader<'a> {
    fn skip_blank(&mut self) {
        while self.lines.get(self.pos).is_some_and(Line::is_blank) {
            self.pos += 1;
        }
    }

    /// The current line's indentation and content, after blank lines.
    fn peek(&mut self) -> Option<(usize, &'a str)> {
        self.skip_blank();
        let line = self.lines.get(self.pos)?;
        Some((line.indent, line.text))
    }

    fn line_error(&self, what: &str) -> String {
        format!("{what} at frontmatter line {}", self.pos + 1)
    }

    /// The block node starting at the current line, at its indentation, inside `depth`
    /// collections.
    fn node(&mut self, depth: usize) -> Result<Value, String> {
        let Some((indent, content)) = self.peek() else {
            return Ok(Value::Null);
        };
        if content.starts_with('\t') {
            return Err(self.line_error("a tab in the indentation"));
        }
        if is_item(content) {
            self.sequence(indent, depth)
        } else {
            self.mapping(indent, depth)
        }
    }

    fn mapping(&mut self, indent: usize, depth: usize) -> Result<Value, String> {
        let inner = deeper(depth)?;
        let mut map = Map::new();
        while let Some((at, content)) = self.peek() {
            if at < indent || (at == indent && is_item(content)) {
                break;
            }
            if at > indent {
                return Err(self.line_error("unexpected indentation"));
            }
            let (key, rest) =
                split_key(content).ok_or_else(|| self.line_error("not a `key: value` line"))?;
            self.pos += 1;
            let value = self.value(rest, indent, true, inner)?;
            if map.contains_key(&key) {
                return Err(format!("the key `{}` appears twice", snippet(&key)));
            }
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }

    fn sequence(&mut self, indent: usize, depth: usize) -> Result<Value, String> {
        let inner = deeper(depth)?;
        let mut items = Vec::new();
        while let Some((at, content)) = self.peek() {
            if at != indent || !is_item(content) {
                if at > indent {
                    return Err(self.line_error("unexpected indentation"));
                }
                break;
            }
            let after = content[1..].trim_start_matches(' ');
            let nested = !after.is_empty()
                && (is_item(after) || (split_key(after).is_some() && !starts_scalar(after)));
            if nested {
                // The item is a block node that starts on the dash's line: the line is read
                // again as what follows the dash, at that column (nothing is copied).
                self.lines[self.pos] = Line {
                    indent: indent + (content.len() - after.len()),
                    text: after,
                };
                items.push(self.node(inner)?);
            } else {
                self.pos += 1;
                items.push(self.value(after, indent, false, inner)?);
            }
        }
        Ok(Value::Array(items))
    }

    /// The value after `key:` (or `- `) on a line indented `indent`, whose line is consumed,
    /// inside `depth` collections.
    fn value(
        &mut self,
        rest: &'a str,
        indent: usize,
        in_map: bool,
        depth: usize,
    ) -> Result<Value, String> {
        let rest = rest.trim();
        if rest.is_empty() || rest.starts_with('#') {
            return match self.peek() {
                Some((at, _)) if at > indent => self.node(depth),
                Some((at, content)) if in_map && at == indent && is_item(content) => {
                    self.sequence(indent, depth)
                }
                _ => Ok(Value::Null),
            };
        }
        match rest.as_bytes()[0] {
            b'|' | b'>' => self.block_scalar(rest, indent),
            b'[' | b'{' => self.flow(rest, depth),
            b'"' | b'\'' => self.quoted(rest),
            b'&' | b'*' | b'!' | b'%' | b'@' | b'`' | b'?' => Err(format!(
                "YAML beyond plain frontmatter (anchors, aliases, tags, directives): {:?}",
                snippet(rest)
            )),
            _ => self.plain(rest, indent),
        }
    }

    /// A flow collection starting with `first`, continued on the next lines until its
    /// brackets close.
    fn flow(&mut self, first: &str, depth: usize) -> Result<Value, String> {
        let mut text = first.to_owned();
        let mut scan = FlowScan::default();
        scan.feed(first);
        while !scan.closed() {
            let line = self
                .lines
                .get(self.pos)
                .ok_or("an unclosed flow collection")?;
            let added = line.text.trim();
            text.push(' ');
            text.push_str(added);
            scan.feed(" ");
            scan.feed(added);
            self.pos += 1;
        }
        let mut flow = Flow::new(&text);
        let value = flow.value(depth)?;
        flow.end()?;
        Ok(value)
    }

    /// A quoted scalar starting with `first`, continued on the next lines until its closing
    /// quote.
    fn quoted(&mut self, first: &str) -> Result<Value, String> {
        let mut text = first.to_owned();
        let mut scan = QuoteScan::new(first);
        let mut closed = scan.feed(first, 0);
        while !closed {
            let line = self.lines.get(self.pos).ok_or("an unclosed quoted value")?;
            let from = text.len();
            text.push('\n');
            text.push_str(line.text.trim());
            closed = scan.feed(&text, from);
            self.pos += 1;
        }
        let (value, after) = quoted(&text, 0)?.ok_or("an unclosed quoted value")?;
        let after = text[after..].trim();
        if !after.is_empty() && !after.starts_with('#') {
            return Err(format!("text after a quoted value: {:?}", snippet(after)));
        }
        Ok(Value::String(value))
    }

    /// A plain scalar, continued on more-indented lines.
    fn plain(&mut self, first: &str, indent: usize) -> Result<Value, String> {
        let mut text = strip_comment(first).to_owned();
        if text.contains(": ") || text.ends_with(':') {
            return Err(format!(
                "a `: ` inside the plain value {:?}",
                snippet(&text)
            ));
        }
        let mut continued = false;
        let mut blanks = 0;
        while let Some(line) = self.lines.get(self.pos) {
            if line.text.trim().is_empty() {
                blanks += 1;
                self.pos += 1;
                continue;
            }
            if line.indent <= indent || line.text.starts_with('#') {
                break;
            }
            let content = strip_comment(line.text);
            if content.contains(": ") || content.ends_with(':') {
                return Err(self.line_error("a `key: value` inside a plain value"));
            }
            if blanks == 0 {
                text.push(' ');
            } else {
                text.extend(std::iter::repeat_n('\n', blanks));
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
                    "an unsupported block scalar header `{}{}`",
                    &header[..1],
                    snippet(other)
                ))
            }
        };
        let mut lines = Vec::new();
        let mut block = None;
        while let Some(line) = self.lines.get(self.pos) {
            if line.text.trim().is_empty() {
                lines.push(String::new());
                self.pos += 1;
                continue;
            }
            let want = *block.get_or_insert(line.indent);
            if line.indent <= indent || line.indent < want {
                break;
            }
            let mut kept = " ".repeat(line.indent - want);
            kept.push_str(line.text);
            lines.push(kept);
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
            Chomp::Keep => text.extend(std::iter::repeat_n('\n', 1 + trailing)),
        }
        Ok(Value::String(text))
    }
}

/// What a block scalar keeps of its final line breaks.
enum Chomp {
    Clip,
    Strip,
    Keep,
}

/// Whether the brackets of a flow collection (outside quotes) are all closed, kept as the
/// collection's lines come, so each character is looked at once.
#[derive(Default)]
struct FlowScan {
    depth: i64,
    quote: Option<char>,
    escaped: bool,
}

impl FlowScan {
    fn feed(&mut self, text: &str) {
        for c in text.chars() {
            match self.quote {
                Some('"') if self.escaped => self.escaped = false,
                Some('"') if c == '\\' => self.escaped = true,
                Some(q) if c == q => self.quote = None,
                Some(_) => {}
                None => match c {
                    '"' | '\'' => self.quote = Some(c),
                    '[' | '{' => self.depth += 1,
                    ']' | '}' => self.depth -= 1,
                    _ => {}
                },
            }
        }
    }

    fn closed(&self) -> bool {
        self.depth <= 0 && self.quote.is_none()
    }
}

/// `key` and what follows its `:`, for a `key: value` (or `key:`) line.
fn split_key(content: &str) -> Option<(String, &str)> {
    if content.starts_with('"') || content.starts_with('\'') {
        let (key, after) = quoted(content, 0).ok()??;
        let rest = content[after..].strip_prefix(':')?;
        if !(rest.is_empty() || rest.starts_with(' ')) {
            return None;
        }
        return Some((key, rest));
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
    Some((key.to_owned(), &content[end + 1..]))
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

#[cfg(test)]
mod tests {
    use super::super::flow::MAX_DEPTH;
    use super::{parse, MAX_BYTES};
    use serde_json::json;

    fn read(yaml: &str) -> serde_json::Value {
        serde_json::Value::Object(parse(&format!("---\n{yaml}---\nbody\n")).expect(yaml))
    }

    fn refused(yaml: &str) -> String {
        parse(&format!("---\n{yaml}---\nbody\n")).expect_err("refused")
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
        assert_eq!(
            read("a: |\n  one\n    more\n  two\n"),
            json!({"a": "one\n  more\ntwo\n"})
        );
    }

    #[test]
    fn quoted_values_and_flows_over_several_lines_read_whole() {
        assert_eq!(
            read("a: \"one\n  two\n\n  three \\\"q\\\"\"\nb: 'it''s\n  here'\nc: [1,\n  [2, \"x]\"],\n  {k: v}]\nd: 1\n"),
            json!({"a": "one two\nthree \"q\"", "b": "it's here", "c": [1, [2, "x]"], {"k": "v"}], "d": 1})
        );
    }

    #[test]
    fn dashes_on_one_line_nest_sequences_and_mappings() {
        assert_eq!(
            read("a:\n- - x\n  - y\n- k: 1\n  l: 2\n"),
            json!({"a": [["x", "y"], {"k": 1, "l": 2}]})
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
            "a: \"open\n",
            "a: 'open\n  still\n",
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

    #[test]
    fn collections_nest_up_to_the_bound_and_no_deeper() {
        // The top mapping is one level: `a`'s value may nest MAX_DEPTH - 1 more.
        let fits = MAX_DEPTH - 1;
        let flow = format!("a: {}{}\n", "[".repeat(fits), "]".repeat(fits));
        assert!(parse(&format!("---\n{flow}---\n")).is_ok());
        let over = format!("a: {}{}\n", "[".repeat(fits + 1), "]".repeat(fits + 1));
        assert!(refused(&over).contains("nested deeper than 64"));
        let dashes = format!("a:\n{}x\n", "- ".repeat(fits + 1));
        assert!(refused(&dashes).contains("nested deeper than 64"));
        let mut block = String::new();
        for level in 0..=MAX_DEPTH {
            block.push_str(&format!("{}k{level}:\n", " ".repeat(level)));
        }
        assert!(refused(&block).contains("nested deeper than 64"));
        let mixed = format!("a:\n- {}\n", "{k: [".repeat(40) + &"]}".repeat(40));
        assert!(refused(&mixed).contains("nested deeper than 64"));
    }

    #[test]
    fn a_frontmatter_over_the_size_bound_is_not_parsed() {
        let long = format!("a: {}\n", "x".repeat(MAX_BYTES));
        assert!(refused(&long).contains("longer than 64 KiB"));
        // The closing line is looked for no further than the bound.
        let unclosed = format!("---\na: {}\n", "x\n".repeat(MAX_BYTES));
        assert!(parse(&unclosed).unwrap_err().contains("longer than 64 KiB"));
        let fits = format!("a: {}\n", "x".repeat(MAX_BYTES - 8));
        assert!(parse(&format!("---\n{fits}---\n")).is_ok());
    }

    /// The shapes that once overflowed the stack or took time quadratic in their length, each
    /// just under the size bound, read on a 2 MiB stack. A linear reader takes milliseconds
    /// on any of them; a quadratic one takes many seconds, so the generous limit cannot flake.
    #[test]
    fn hostile_shapes_read_in_bounded_stack_and_time() {
        let fill = |unit: &str| unit.repeat((MAX_BYTES - 64) / unit.len());
        let shapes: Vec<(&str, String, bool)> = vec![
            (
                "nested flows",
                format!("a: {}", "[".repeat(MAX_BYTES - 64)),
                false,
            ),
            (
                "nested closed flows",
                format!("a: {}{}", "[".repeat(30_000), "]".repeat(30_000)),
                false,
            ),
            ("nested dashes", format!("a:\n{}x", fill("- ")), false),
            (
                "a quoted value over many lines",
                format!("a: \"{}\"", fill("x\n")),
                true,
            ),
            (
                "a single-quoted value over many lines",
                format!("a: '{}'", fill("x\n")),
                true,
            ),
            (
                "a flow over many lines",
                format!("a: [{}]", fill("x,\n")),
                true,
            ),
            (
                "quoted items in a flow",
                format!("a: [{}]", fill("'x', ")),
                true,
            ),
            (
                "escapes in a quoted value",
                format!("a: \"{}\"", fill("\\\" ")),
                true,
            ),
            (
                "a plain value over many lines",
                format!("a: x\n{}", fill("  y\n")),
                true,
            ),
            (
                "a folded scalar",
                format!("a: >\n{}", fill("  y\n\n")),
                true,
            ),
            (
                "many keys",
                (0..6000).map(|i| format!("k{i}: v\n")).collect(),
                true,
            ),
            (
                "an unclosed flow",
                format!("a: [{}", fill("[x, \"y\n")),
                false,
            ),
        ];
        let reader = std::thread::Builder::new().stack_size(2 << 20);
        let worker = reader
            .spawn(move || {
                for (name, yaml, reads) in shapes {
                    let text = format!("---\n{yaml}\n---\nbody\n");
                    let started = std::time::Instant::now();
                    let read = parse(&text);
                    let took = started.elapsed();
                    assert_eq!(read.is_ok(), reads, "{name}: {:?}", read.err());
                    assert!(took.as_secs() < 3, "{name} took {took:?}");
                }
            })
            .unwrap();
        worker.join().expect("every shape read on a 2 MiB stack");
    }

    #[test]
    fn errors_quote_at_most_a_short_piece_of_the_text() {
        let error = refused(&format!("a: {} b: c\n", "x".repeat(10_000)));
        assert!(error.len() < 200, "{error}");
    }
}

#[cfg(test)]
#[path = "../../../tests/fuzz/internal/frontmatter.rs"]
mod fuzz;
