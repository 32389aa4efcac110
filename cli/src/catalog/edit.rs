//! A configuration file edited in place: its text read with the position of every server
//! entry, one entry added or removed by changing only the bytes around it, and the result
//! written atomically.
//!
//! The file is read as JSON with comments and trailing commas (JSONC, as VS Code writes
//! it). An edit touches the entry's own text, the comma that joins it to its neighbours, and
//! the line it stands on; everything else (the other entries, their order, formatting and
//! comments) is kept byte for byte.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// The deepest nesting read: a file nested deeper is refused rather than read by a recursion
/// that could exhaust the stack.
const MAX_DEPTH: usize = 128;

/// How deep the objects whose members' values are kept lie: the top level (depth 0), and
/// the sections in it, `mcp.servers` the deepest (depth 2).
const ENTRY_DEPTH: usize = 3;

/// The sections servers are listed in, in the order they are looked for (as umcp reads them):
/// each one's name as shown and its path of keys from the top-level object.
const SECTIONS: [(&str, &[&str]); 4] = [
    ("mcpServers", &["mcpServers"]),
    ("servers", &["servers"]),
    ("mcp.servers", &["mcp", "servers"]),
    ("context_servers", &["context_servers"]),
];

/// A JSON object of the file: where its braces are and its members.
#[derive(Debug, Clone)]
struct Object {
    open: usize,
    close: usize,
    members: Vec<Member>,
}

/// One member of an object: its key, where its text lies, and its value.
#[derive(Debug, Clone)]
struct Member {
    key: String,
    key_start: usize,
    value_end: usize,
    /// The comma after the value, when there is one (a trailing one too).
    comma: Option<usize>,
    /// The value, kept for the members of the top three levels only, where the server
    /// entries are: a deeper value is in its parent's alone, so that a value nested many
    /// levels down is not copied once per level.
    value: Option<Value>,
    /// The member's value when it is an object, with its members' places.
    object: Option<Object>,
}

/// One server entry: its section, name and value as written.
pub struct Entry<'a> {
    pub section: &'static str,
    pub name: &'a str,
    pub value: &'a Value,
}

/// A configuration file's text, with the place of each server entry.
#[derive(Debug)]
pub struct Document {
    text: String,
    root: Object,
    /// The sections present, by name, each an object.
    sections: Vec<(&'static str, Object)>,
}

impl Document {
    /// Reads `text`; an error (with its line and column) when it is not JSON with comments,
    /// or its top level is not an object.
    pub fn parse(text: &str) -> Result<Document, String> {
        let mut parser = Parser {
            bytes: text.as_bytes(),
            at: 0,
        };
        // A byte order mark is kept as it is, and skipped.
        if text.starts_with('\u{feff}') {
            parser.at = '\u{feff}'.len_utf8();
        }
        parser.skip()?;
        let (_, root) = parser.value(0)?;
        parser.skip()?;
        if parser.at < text.len() {
            return Err(parser.error("unexpected text after the JSON value"));
        }
        let root = root.ok_or("the top level is not a JSON object")?;
        let mut sections = Vec::new();
        for (name, path) in SECTIONS {
            let mut object = Some(&root);
            for key in path {
                let member = object.and_then(|o| o.members.iter().rev().find(|m| m.key == *key));
                object = member.and_then(|m| m.object.as_ref());
            }
            if let Some(object) = object {
                sections.push((name, object.clone()));
            }
        }
        Ok(Document {
            text: text.to_owned(),
            root,
            sections,
        })
    }

    /// Every server entry, section by section, each in the file's order.
    pub fn entries(&self) -> impl Iterator<Item = Entry<'_>> {
        self.sections.iter().flat_map(|(section, object)| {
            object.members.iter().filter_map(move |m| {
                Some(Entry {
                    section,
                    name: &m.key,
                    value: m.value.as_ref()?,
                })
            })
        })
    }

    /// The name of the first server section, if the file has one.
    pub fn section(&self) -> Option<&'static str> {
        self.sections.first().map(|(name, _)| *name)
    }

    /// The entry named `name` (the first one, should several be).
    pub fn entry(&self, name: &str) -> Option<Entry<'_>> {
        self.entries().find(|e| e.name == name)
    }

    /// The text with an entry `name` of `value` added at the end of the first section, or,
    /// in a file without one, in a new section `section` at the end of the top level.
    pub fn with_added(&self, name: &str, value: &Value, section: &str) -> String {
        match self.sections.first() {
            Some((_, object)) => self.insert(object, name, value),
            None => {
                let mut servers = Map::new();
                servers.insert(name.to_owned(), value.clone());
                self.insert(&self.root, section, &Value::Object(servers))
            }
        }
    }

    /// The text without the entry `name`, or `None` when there is no such entry. Its comma
    /// goes with it and, when it stood on lines of its own, those lines too.
    pub fn without(&self, name: &str) -> Option<String> {
        let (object, at) = self.sections.iter().find_map(|(_, object)| {
            let at = object.members.iter().position(|m| m.key == name)?;
            Some((object, at))
        })?;
        let member = &object.members[at];
        let mut cuts: Vec<(usize, usize)> = Vec::new();
        let end = match member.comma {
            Some(comma) => comma + 1,
            None => {
                // The last entry: the comma before it goes instead.
                if let Some(before) = at.checked_sub(1).and_then(|i| object.members[i].comma) {
                    cuts.push((before, before + 1));
                }
                member.value_end
            }
        };
        cuts.push(self.whole_lines(member.key_start, end));
        let mut text = self.text.clone();
        for (start, end) in cuts.into_iter().rev() {
            text.replace_range(start..end, "");
        }
        Some(text)
    }

    /// `start..end` widened to whole lines when nothing but blanks (and a `//` comment after
    /// it, which goes with it) share those lines; as it is otherwise.
    fn whole_lines(&self, start: usize, end: usize) -> (usize, usize) {
        let bytes = self.text.as_bytes();
        let line_start = self.text[..start].rfind('\n').map_or(0, |i| i + 1);
        if !bytes[line_start..start]
            .iter()
            .all(|b| matches!(b, b' ' | b'\t'))
        {
            return (start, end);
        }
        let mut after = end;
        while matches!(bytes.get(after), Some(b' ' | b'\t')) {
            after += 1;
        }
        if bytes[after..].starts_with(b"//") {
            after += self.text[after..]
                .find(['\n', '\r'])
                .unwrap_or(bytes.len() - after);
        }
        match &bytes[after..] {
            [b'\r', b'\n', ..] => (line_start, after + 2),
            [b'\n', ..] => (line_start, after + 1),
            [] => (line_start, after),
            _ => (start, end),
        }
    }

    /// The text with member `key` of `value` added at the end of `object`, indented as the
    /// object's members are.
    fn insert(&self, object: &Object, key: &str, value: &Value) -> String {
        let key = Value::String(key.to_owned()).to_string();
        let outer = self.indent_of(object.open);
        let unit = self.unit(object, &outer);
        let indent = match object.members.first() {
            Some(first) if self.starts_line(first.key_start) => self.indent_of(first.key_start),
            _ => format!("{outer}{unit}"),
        };
        let one_line =
            self.line_of(object.open) == self.line_of(object.close) && !object.members.is_empty();
        let member = match one_line {
            true => format!("{key}: {value}"),
            false => format!("{key}: {}", indented(value, &indent, &unit)),
        };
        let mut text = self.text.clone();
        let Some(last) = object.members.last() else {
            let inner = &self.text[object.open + 1..object.close];
            match inner.trim().is_empty() {
                true => text.replace_range(
                    object.open + 1..object.close,
                    &format!("\n{indent}{member}\n{outer}"),
                ),
                false => text.insert_str(object.open + 1, &format!("\n{indent}{member}")),
            }
            return text;
        };
        if one_line {
            match last.comma {
                Some(comma) => text.insert_str(comma + 1, &format!(" {member},")),
                None => text.insert_str(last.value_end, &format!(", {member}")),
            }
            return text;
        }
        match last.comma {
            // A trailing comma stays one: the new last entry gets one too.
            Some(comma) => {
                let at = self.line_end_after(comma + 1).unwrap_or(comma + 1);
                text.insert_str(at, &format!("\n{indent}{member},"));
            }
            None => match self.line_end_after(last.value_end) {
                Some(at) => {
                    text.insert_str(at, &format!("\n{indent}{member}"));
                    text.insert(last.value_end, ',');
                }
                None => text.insert_str(last.value_end, &format!(",\n{indent}{member}")),
            },
        }
        text
    }

    /// The end of the line `at` is on (before its line break), when only blanks or a `//`
    /// comment follow `at` there; `None` when more of the JSON does.
    fn line_end_after(&self, at: usize) -> Option<usize> {
        let rest = &self.text[at..];
        let end = rest.find(['\n', '\r']).unwrap_or(rest.len());
        let tail = rest[..end].trim_start_matches([' ', '\t']);
        (tail.is_empty() || tail.starts_with("//")).then_some(at + end)
    }

    /// The blanks the line holding `at` starts with.
    fn indent_of(&self, at: usize) -> String {
        let start = self.text[..at].rfind('\n').map_or(0, |i| i + 1);
        let line = &self.text[start..];
        let blanks = line.len() - line.trim_start_matches([' ', '\t']).len();
        line[..blanks].to_owned()
    }

    /// Whether `at` is the first thing on its line but blanks.
    fn starts_line(&self, at: usize) -> bool {
        let start = self.text[..at].rfind('\n').map_or(0, |i| i + 1);
        self.text[start..at].chars().all(|c| c == ' ' || c == '\t')
    }

    fn line_of(&self, at: usize) -> usize {
        self.text[..at].matches('\n').count()
    }

    /// One level of indentation: what the object's members add to the object's line, else
    /// the first indentation of the file, else two spaces.
    fn unit(&self, object: &Object, outer: &str) -> String {
        if let Some(first) = object.members.first() {
            let inner = self.indent_of(first.key_start);
            if self.starts_line(first.key_start) && inner.len() > outer.len() {
                if let Some(unit) = inner.strip_prefix(outer) {
                    return unit.to_owned();
                }
            }
        }
        let mut first = self.text.lines().map(|line| {
            let blanks = line.len() - line.trim_start_matches([' ', '\t']).len();
            &line[..blanks]
        });
        first
            .find(|blanks| !blanks.is_empty())
            .unwrap_or("  ")
            .to_owned()
    }
}

/// `value` as indented JSON whose lines after the first start with `indent`, one `unit` more
/// a level.
fn indented(value: &Value, indent: &str, unit: &str) -> String {
    let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
    let mut out = String::with_capacity(pretty.len());
    for (i, line) in pretty.lines().enumerate() {
        if i > 0 {
            let body = line.trim_start_matches(' ');
            let levels = (line.len() - body.len()) / 2;
            out.push('\n');
            out.push_str(indent);
            out.push_str(&unit.repeat(levels));
            out.push_str(body);
        } else {
            out.push_str(line);
        }
    }
    out
}

/// A reader of JSON with comments and trailing commas that keeps the place of every member.
struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    /// An error at the current place, with its line and column.
    fn error(&self, what: &str) -> String {
        let before = &self.bytes[..self.at.min(self.bytes.len())];
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        let column = before.iter().rev().take_while(|b| **b != b'\n').count() + 1;
        format!("{what} at line {line} column {column}")
    }

    /// Skips blanks and comments.
    fn skip(&mut self) -> Result<(), String> {
        loop {
            match self.bytes.get(self.at..).unwrap_or_default() {
                [b' ' | b'\t' | b'\n' | b'\r', ..] => self.at += 1,
                [b'/', b'/', ..] => {
                    while !matches!(self.bytes.get(self.at), None | Some(b'\n' | b'\r')) {
                        self.at += 1;
                    }
                }
                [b'/', b'*', rest @ ..] => match rest.windows(2).position(|w| w == b"*/") {
                    Some(end) => self.at += 2 + end + 2,
                    None => return Err(self.error("a comment that is never closed")),
                },
                _ => return Ok(()),
            }
        }
    }

    /// Reads one value; for an object, the places of its members too.
    fn value(&mut self, depth: usize) -> Result<(Value, Option<Object>), String> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        match self.bytes.get(self.at) {
            Some(b'{') => self.object(depth).map(|(v, o)| (v, Some(o))),
            Some(b'[') => self.array(depth).map(|v| (v, None)),
            Some(b'"') => self.string().map(|s| (Value::String(s), None)),
            Some(_) => {
                let start = self.at;
                while !matches!(
                    self.bytes.get(self.at),
                    None | Some(b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r' | b'/')
                ) {
                    self.at += 1;
                }
                let token = std::str::from_utf8(&self.bytes[start..self.at]).unwrap_or_default();
                match serde_json::from_str::<Value>(token) {
                    Ok(value) if !token.is_empty() => Ok((value, None)),
                    _ => {
                        self.at = start;
                        Err(self.error("expected a JSON value"))
                    }
                }
            }
            None => Err(self.error("unexpected end of the file")),
        }
    }

    fn object(&mut self, depth: usize) -> Result<(Value, Object), String> {
        let open = self.at;
        self.at += 1;
        let mut members: Vec<Member> = Vec::new();
        let mut map = Map::new();
        loop {
            self.skip()?;
            match self.bytes.get(self.at) {
                Some(b'}') => break,
                Some(b'"') if members.last().is_none_or(|m| m.comma.is_some()) => {}
                _ => return Err(self.error("expected a member's name or `}`")),
            }
            let key_start = self.at;
            let key = self.string()?;
            self.skip()?;
            if self.bytes.get(self.at) != Some(&b':') {
                return Err(self.error("expected `:`"));
            }
            self.at += 1;
            self.skip()?;
            let (value, object) = self.value(depth + 1)?;
            let value_end = self.at;
            self.skip()?;
            let comma = (self.bytes.get(self.at) == Some(&b',')).then_some(self.at);
            if comma.is_some() {
                self.at += 1;
            }
            let kept = (depth < ENTRY_DEPTH).then(|| value.clone());
            map.insert(key.clone(), value);
            members.push(Member {
                key,
                key_start,
                value_end,
                comma,
                value: kept,
                object,
            });
        }
        let close = self.at;
        self.at += 1;
        Ok((
            Value::Object(map),
            Object {
                open,
                close,
                members,
            },
        ))
    }

    fn array(&mut self, depth: usize) -> Result<Value, String> {
        self.at += 1;
        let mut items = Vec::new();
        let mut joined = true;
        loop {
            self.skip()?;
            match self.bytes.get(self.at) {
                Some(b']') => break,
                Some(_) if joined => {}
                _ => return Err(self.error("expected `,` or `]`")),
            }
            items.push(self.value(depth + 1)?.0);
            self.skip()?;
            joined = self.bytes.get(self.at) == Some(&b',');
            if joined {
                self.at += 1;
            }
        }
        self.at += 1;
        Ok(Value::Array(items))
    }

    /// Reads a string, its escapes decoded.
    fn string(&mut self) -> Result<String, String> {
        let start = self.at;
        self.at += 1;
        loop {
            match self.bytes.get(self.at) {
                Some(b'\\') => self.at += 2,
                Some(b'"') => break,
                Some(_) => self.at += 1,
                None => {
                    self.at = start;
                    return Err(self.error("a string that is never closed"));
                }
            }
        }
        self.at += 1;
        let text = std::str::from_utf8(&self.bytes[start..self.at]).unwrap_or_default();
        serde_json::from_str(text).map_err(|_| {
            self.at = start;
            self.error("an invalid string")
        })
    }
}

/// The largest configuration file read: far more than any list of servers, and a bound on
/// what a checkout's file can make umcp hold.
const MAX_FILE_BYTES: u64 = 16 << 20;

/// The text of the file at `path`, refused (`InvalidData`) past [`MAX_FILE_BYTES`] or when
/// it is not UTF-8.
pub fn read_text(path: &Path) -> io::Result<String> {
    let mut bytes = Vec::new();
    fs::File::open(path)?
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        let message = format!("larger than {} MiB", MAX_FILE_BYTES >> 20);
        return Err(io::Error::new(io::ErrorKind::InvalidData, message));
    }
    String::from_utf8(bytes).map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8"))
}

/// Writes `text` to `path` (through a symbolic link) atomically, by a new file renamed over it
/// with the old one's permissions (umcp's private-file writer); nothing is written when the
/// file has changed since `before`, the text the edit was made from.
pub fn write(path: &Path, before: Option<&str>, text: &str) -> io::Result<()> {
    let target = match fs::canonicalize(path) {
        Ok(target) => target,
        Err(e) if e.kind() == io::ErrorKind::NotFound && before.is_none() => path.to_owned(),
        Err(e) => return Err(e),
    };
    let now = read_text(&target).ok();
    if now.as_deref() != before {
        return Err(io::Error::other(
            "the file changed while it was being edited; nothing was written",
        ));
    }
    umcp::private_file::replace_keeping_permissions(&target, text.as_bytes())?;
    // The rename itself is made durable where the platform allows.
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
        _ => PathBuf::from("."),
    };
    if let Ok(dir) = fs::File::open(&dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const JSONC: &str = r#"{
    // My servers.
    "mcpServers": {
        "files": {
            "command": "npx", // the runner
            "args": ["-y", "fs"],
        },
        /* the clock */
        "time": {"command": "uvx", "args": ["mcp-server-time"]}
    },
    "other": [1, 2]
}
"#;

    fn entry() -> Value {
        json!({"command": "echo", "args": ["hi"]})
    }

    #[test]
    fn reads_entries_in_order_with_comments_and_trailing_commas() {
        let doc = Document::parse(JSONC).unwrap();
        let names: Vec<&str> = doc.entries().map(|e| e.name).collect();
        assert_eq!(names, ["files", "time"]);
        let files = doc.entry("files").unwrap();
        assert_eq!(files.section, "mcpServers");
        assert_eq!(
            files.value,
            &json!({"command": "npx", "args": ["-y", "fs"]})
        );
    }

    #[test]
    fn adding_then_removing_gives_back_the_same_bytes() {
        let doc = Document::parse(JSONC).unwrap();
        let added = doc.with_added("x", &entry(), "mcpServers");
        assert!(added.contains(
            "\"mcp-server-time\"]},\n        \"x\": {\n            \"command\": \"echo\",\n            \"args\": [\n                \"hi\"\n            ]\n        }\n    },"
        ), "{added}");
        let again = Document::parse(&added).unwrap();
        assert_eq!(again.entry("x").unwrap().value, &entry());
        assert_eq!(again.without("x").unwrap(), JSONC);
        // With a trailing comma after the last entry, the new one gets one too.
        let trailing = "{\n  \"servers\": {\n    \"a\": {\"url\": \"u\"},\n  }\n}";
        let doc = Document::parse(trailing).unwrap();
        let added = doc.with_added("x", &json!({"url": "v"}), "servers");
        assert_eq!(
            added,
            "{\n  \"servers\": {\n    \"a\": {\"url\": \"u\"},\n    \"x\": {\n      \"url\": \"v\"\n    },\n  }\n}"
        );
        assert_eq!(
            Document::parse(&added).unwrap().without("x").unwrap(),
            trailing
        );
    }

    #[test]
    fn removing_keeps_the_other_entries_and_their_comments() {
        let doc = Document::parse(JSONC).unwrap();
        let text = doc.without("files").unwrap();
        assert_eq!(
            text,
            JSONC.replace(
                "        \"files\": {\n            \"command\": \"npx\", // the runner\n            \"args\": [\"-y\", \"fs\"],\n        },\n",
                ""
            )
        );
        let text = Document::parse(&text).unwrap().without("time").unwrap();
        assert_eq!(
            text,
            "{\n    // My servers.\n    \"mcpServers\": {\n        /* the clock */\n    },\n    \"other\": [1, 2]\n}\n"
        );
        assert!(Document::parse(&text).unwrap().without("time").is_none());
    }

    #[test]
    fn a_file_without_a_section_gets_one_and_empty_sections_fill() {
        let doc = Document::parse("{\n\t\"other\": true\n}\n").unwrap();
        assert_eq!(
            doc.with_added("x", &json!({"url": "u"}), "mcpServers"),
            "{\n\t\"other\": true,\n\t\"mcpServers\": {\n\t\t\"x\": {\n\t\t\t\"url\": \"u\"\n\t\t}\n\t}\n}\n"
        );
        let doc = Document::parse("{\"mcpServers\": {}}").unwrap();
        assert_eq!(
            doc.with_added("x", &json!({"url": "u"}), "mcpServers"),
            "{\"mcpServers\": {\n  \"x\": {\n    \"url\": \"u\"\n  }\n}}"
        );
        // A one-line section stays on one line.
        let doc = Document::parse(r#"{"mcpServers": {"a": {"url": "u"}}}"#).unwrap();
        assert_eq!(
            doc.with_added("x", &json!({"url": "v"}), "mcpServers"),
            r#"{"mcpServers": {"a": {"url": "u"}, "x": {"url":"v"}}}"#
        );
    }

    #[test]
    fn vs_code_settings_have_their_servers_under_mcp() {
        let doc =
            Document::parse(r#"{"editor.tabSize": 2, "mcp": {"servers": {"a": {"url": "u"}}}}"#)
                .unwrap();
        assert_eq!(doc.entry("a").unwrap().section, "mcp.servers");
    }

    #[test]
    fn what_is_not_json_is_refused_with_its_place() {
        for (text, expected) in [
            (
                "{\"mcpServers\": {\"a\": }}",
                "expected a JSON value at line 1 column 22",
            ),
            (
                "{\"a\": 1 \"b\": 2}",
                "expected a member's name or `}` at line 1 column 9",
            ),
            (
                "{\n  /* open",
                "a comment that is never closed at line 2 column 3",
            ),
            ("[1, 2]", "the top level is not a JSON object"),
            (
                "{} {}",
                "unexpected text after the JSON value at line 1 column 4",
            ),
            (
                "{\"a\": \"x}",
                "a string that is never closed at line 1 column 7",
            ),
            ("", "unexpected end of the file at line 1 column 1"),
        ] {
            assert_eq!(
                Document::parse(text).err().as_deref(),
                Some(expected),
                "{text}"
            );
        }
        let deep = "[".repeat(1000) + &"]".repeat(1000);
        let err = Document::parse(&format!("{{\"a\": {deep}}}")).unwrap_err();
        assert!(err.starts_with("nested too deeply"), "{err}");
    }

    #[test]
    fn the_write_replaces_the_file_whole_and_keeps_its_permissions() {
        let dir = std::env::temp_dir().join(format!("umcp-edit-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("mcp.json");
        fs::write(&path, "{}").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        }
        write(&path, Some("{}"), "{\"mcpServers\": {}}").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "{\"mcpServers\": {}}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o640);
        }
        // Changed meanwhile: left as it is.
        let err = write(&path, Some("{}"), "[]").unwrap_err();
        assert!(err.to_string().contains("changed"), "{err}");
        assert_eq!(fs::read_to_string(&path).unwrap(), "{\"mcpServers\": {}}");
        let left: Vec<_> = fs::read_dir(&dir).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file is left");
        fs::remove_dir_all(&dir).unwrap();
    }
}

#[cfg(test)]
#[path = "../../tests/fuzz/catalog_edits.rs"]
mod fuzz;
