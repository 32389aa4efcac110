//! How results are printed: JSON for scripts (`--json`) or readable text.
//!
//! Everything goes through [`say`] and [`warn`], which write to stdout and stderr and ignore
//! a closed pipe (`umcp tools | head` must not panic the way `println!` would). Any other
//! failure to write stdout (a full disk, `> /dev/full`) is kept, for [`write_error`] to fail
//! the program with: output that did not reach its file is not success.

use std::cell::{Cell, RefCell};
use std::sync::Mutex;

use crate::shown;

/// The first error writing stdout, other than a closed pipe.
static WRITE_ERROR: Mutex<Option<String>> = Mutex::new(None);

thread_local! {
    /// Whether this thread's command printed on stdout, and the last line it warned, for a
    /// failure to be told as JSON under `--json` ([`take_said`]).
    static SAID: (Cell<bool>, RefCell<Option<String>>) = const {
        (Cell::new(false), RefCell::new(None))
    };
}

/// Writes a line to stdout (the [`console`](crate::console)'s).
pub fn say(line: &str) {
    SAID.with(|(printed, _)| printed.set(true));
    if let Err(error) = crate::console::out(&format!("{line}\n")) {
        failed_write(&error);
    }
}

/// Whether this thread printed on stdout, and the last line it warned, since the last call;
/// both are forgotten.
pub fn take_said() -> (bool, Option<String>) {
    SAID.with(|(printed, warned)| (printed.replace(false), warned.borrow_mut().take()))
}

/// Keeps `error`, from writing stdout, unless it is a closed pipe (the reader had enough:
/// `umcp tools | head -1`), which ends nothing but the output.
pub fn failed_write(error: &std::io::Error) {
    if error.kind() == std::io::ErrorKind::BrokenPipe {
        return;
    }
    let mut kept = WRITE_ERROR.lock().unwrap_or_else(|e| e.into_inner());
    kept.get_or_insert_with(|| error.to_string());
}

/// The first error writing stdout, other than a closed pipe, if one happened: the output is
/// incomplete.
pub fn write_error() -> Option<String> {
    WRITE_ERROR
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
}

/// Asks `question` on stderr and reads the answer from stdin: yes only for `y` or `yes`.
pub fn ask(question: &str) -> bool {
    ask_or(question, false)
}

/// [`ask`] whose answer, when the line is empty, is `default`.
pub fn ask_or(question: &str, default: bool) -> bool {
    use std::io::{BufRead, Write};
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{question}");
    let _ = err.flush();
    drop(err);
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(n) if n > 0 => match line.trim().to_ascii_lowercase().as_str() {
            "" => default,
            answer => matches!(answer, "y" | "yes"),
        },
        _ => false,
    }
}

/// Writes a line to stderr (the [`console`](crate::console)'s).
pub fn warn(line: &str) {
    SAID.with(|(_, warned)| *warned.borrow_mut() = Some(line.to_owned()));
    crate::console::err(&format!("{line}\n"));
}

/// `value` as indented JSON, written compactly and then indented, so that text kept as the server
/// wrote it (a tool's schemas) is indented like the rest; terminal controls are escaped.
pub fn pretty(value: &impl serde::Serialize) -> String {
    shown::json(&indent(&serde_json::to_string(value).unwrap_or_default()))
}

/// Indents valid JSON text as serde_json's pretty printer does: two spaces a level, `": "`
/// after keys, empty objects and arrays kept on one line.
fn indent(json: &str) -> String {
    fn newline(out: &mut String, depth: usize) {
        out.push('\n');
        out.extend(std::iter::repeat_n("  ", depth));
    }
    let mut out = String::with_capacity(json.len().saturating_mul(2));
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let mut chars = json.chars().peekable();
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                while chars.next_if(char::is_ascii_whitespace).is_some() {}
                let close = if c == '{' { '}' } else { ']' };
                if let Some(close) = chars.next_if_eq(&close) {
                    out.push(close);
                } else {
                    depth = depth.saturating_add(1);
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            _ if c.is_ascii_whitespace() => {}
            _ => out.push(c),
        }
    }
    out
}

/// The widest a column is padded to on a terminal: a longer cell overflows its column rather
/// than widen it for every row.
const MAX_COLUMN: usize = 48;

/// `rows` as lines: cells parted by two spaces, each column but the last padded to its
/// widest cell (up to [`MAX_COLUMN`]) when `aligned`; empty cells at a row's end left out.
fn columns(rows: &[Vec<String>], aligned: bool) -> Vec<String> {
    let mut widths: Vec<usize> = Vec::new();
    for row in rows.iter().filter(|_| aligned) {
        for (i, cell) in row.iter().enumerate() {
            let width = cell.chars().count().min(MAX_COLUMN);
            match widths.get_mut(i) {
                Some(w) => *w = (*w).max(width),
                None => widths.push(width),
            }
        }
    }
    let mut lines = Vec::with_capacity(rows.len());
    for row in rows {
        let used = row.len() - row.iter().rev().take_while(|c| c.is_empty()).count();
        let mut line = String::new();
        for (i, cell) in row[..used].iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            line.push_str(cell);
            if aligned && i + 1 < used {
                let pad = widths[i].saturating_sub(cell.chars().count());
                line.extend(std::iter::repeat_n(' ', pad));
            }
        }
        lines.push(line);
    }
    lines
}

/// The first line of a server's text (a description), for a listing's row.
pub fn first_line(text: Option<&str>) -> &str {
    text.unwrap_or_default().lines().next().unwrap_or_default()
}

/// Prints results as JSON (`--json`) or as readable text. Every text a server wrote is
/// escaped ([`shown`]), in JSON only the characters serde_json leaves raw.
pub struct Output {
    pub json: bool,
}

impl Output {
    /// A list: one JSON array, or one line per item. Each line is escaped whole: it holds
    /// what servers wrote (names, URIs, descriptions), and umcp's own part is plain text.
    pub fn list<T: serde::Serialize>(&self, items: impl Iterator<Item = (T, String)>) {
        let (values, lines): (Vec<T>, Vec<String>) = items.unzip();
        match self.json {
            true => say(&pretty(&values)),
            false => lines.iter().for_each(|line| say(&shown::line(line))),
        }
    }

    /// A table: one JSON array, or one line per row, its cells escaped ([`shown`]) and, when
    /// stdout is a terminal, aligned in columns; elsewhere two spaces part them, for scripts
    /// that split on them.
    pub fn table<T: serde::Serialize>(&self, items: impl Iterator<Item = (T, Vec<String>)>) {
        let (values, rows): (Vec<T>, Vec<Vec<String>>) = items.unzip();
        if self.json {
            say(&pretty(&values));
            return;
        }
        let rows: Vec<Vec<String>> = (rows.iter())
            .map(|row| row.iter().map(|cell| shown::line(cell)).collect())
            .collect();
        let aligned = crate::console::is_terminal(crate::console::Stream::Stdout);
        for line in columns(&rows, aligned) {
            say(&line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn columns_align_on_a_terminal_and_are_two_spaces_apart_elsewhere() {
        let rows = vec![
            vec!["echo(message: string)".to_owned(), "Echoes".to_owned()],
            vec!["add(a: number, b: number)".to_owned(), "Adds".to_owned()],
            vec!["now()".to_owned(), String::new()],
        ];
        assert_eq!(
            columns(&rows, true),
            [
                "echo(message: string)      Echoes",
                "add(a: number, b: number)  Adds",
                "now()",
            ]
        );
        assert_eq!(
            columns(&rows, false),
            [
                "echo(message: string)  Echoes",
                "add(a: number, b: number)  Adds",
                "now()"
            ]
        );
        let long = vec![
            vec!["x".repeat(60), "a".into()],
            vec!["y".into(), "b".into()],
        ];
        let lines = columns(&long, true);
        assert_eq!(lines[1], format!("y{}  b", " ".repeat(MAX_COLUMN - 1)));
    }

    #[test]
    fn indents_as_serde_json_does() {
        let value = json!({"a": [1, {"b": "x,y:{}[]\\\"z"}, [], {}], "c": {"d": null}, "e": ""});
        let expected = serde_json::to_string_pretty(&value).unwrap();
        assert_eq!(indent(&value.to_string()), expected);
    }

    #[test]
    fn keeps_the_order_of_raw_text_and_drops_its_spacing() {
        let schema: umcp::types::Schema =
            serde_json::from_str(r#"{ "type": "object",	"$defs": { } , "a": [ 1 ,2 ] }"#).unwrap();
        assert_eq!(
            pretty(&schema),
            "{\n  \"type\": \"object\",\n  \"$defs\": {},\n  \"a\": [\n    1,\n    2\n  ]\n}"
        );
    }
}
