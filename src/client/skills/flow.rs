//! Frontmatter flow collections, `[…]` and `{…}`, read in one pass over their text with a
//! bounded nesting.

use serde_json::{Map, Value};

use super::scalar::{quoted, resolve, snippet};

/// The most collections one inside another, block and flow together: the frontmatter's
/// block reader counts its own with [`deeper`] too.
pub(super) const MAX_DEPTH: usize = 64;

/// The depth inside one more collection, or an error past [`MAX_DEPTH`].
pub(super) fn deeper(depth: usize) -> Result<usize, String> {
    if depth >= MAX_DEPTH {
        return Err(format!("collections nested deeper than {MAX_DEPTH}"));
    }
    Ok(depth + 1)
}

/// A flow collection being read: its text (the lines it spans joined by spaces) and the byte
/// where reading is.
pub(super) struct Flow<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Flow<'a> {
    pub(super) fn new(text: &'a str) -> Flow<'a> {
        Flow { text, at: 0 }
    }

    fn peek(&self) -> Option<char> {
        self.text[self.at..].chars().next()
    }

    fn skip_space(&mut self) {
        while let Some(c) = self.peek().filter(|c| c.is_whitespace()) {
            self.at += c.len_utf8();
        }
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.at += c.len_utf8();
            true
        } else {
            false
        }
    }

    /// Nothing but space or a comment is left.
    pub(super) fn end(&mut self) -> Result<(), String> {
        self.skip_space();
        match self.peek() {
            None | Some('#') => Ok(()),
            Some(c) => Err(format!(
                "text after a flow collection at `{}`",
                c.escape_debug()
            )),
        }
    }

    /// The value at the current byte, inside `depth` collections.
    pub(super) fn value(&mut self, depth: usize) -> Result<Value, String> {
        self.skip_space();
        match self.peek() {
            Some('[') => self.sequence(deeper(depth)?),
            Some('{') => self.mapping(deeper(depth)?),
            Some('"' | '\'') => {
                let (value, after) =
                    quoted(self.text, self.at)?.ok_or("an unclosed quoted value")?;
                self.at = after;
                Ok(Value::String(value))
            }
            Some('&' | '*' | '!' | '|' | '>' | '%' | '@' | '`') => {
                Err("YAML beyond plain frontmatter inside a flow collection".into())
            }
            _ => self.plain(),
        }
    }

    /// `[…]`, its items inside `depth` collections.
    fn sequence(&mut self, depth: usize) -> Result<Value, String> {
        self.at += 1;
        let mut items = Vec::new();
        loop {
            self.skip_space();
            if self.eat(']') {
                return Ok(Value::Array(items));
            }
            items.push(self.value(depth)?);
            self.skip_space();
            if !self.eat(',') && self.peek() != Some(']') {
                return Err("a flow sequence item not followed by `,` or `]`".into());
            }
        }
    }

    /// `{…}`, its values inside `depth` collections.
    fn mapping(&mut self, depth: usize) -> Result<Value, String> {
        self.at += 1;
        let mut map = Map::new();
        loop {
            self.skip_space();
            if self.eat('}') {
                return Ok(Value::Object(map));
            }
            let key = match self.value(depth)? {
                Value::String(s) => s,
                Value::Null => return Err("an empty key in a flow mapping".into()),
                Value::Array(_) | Value::Object(_) => {
                    return Err("a collection as a key in a flow mapping".into())
                }
                other => other.to_string(),
            };
            self.skip_space();
            let value = if self.eat(':') {
                self.value(depth)?
            } else {
                Value::Null
            };
            if map.contains_key(&key) {
                return Err(format!("the key `{}` appears twice", snippet(&key)));
            }
            map.insert(key, value);
            self.skip_space();
            if !self.eat(',') && self.peek() != Some('}') {
                return Err("a flow mapping entry not followed by `,` or `}`".into());
            }
        }
    }

    /// A plain scalar, up to a flow indicator or a `: `.
    fn plain(&mut self) -> Result<Value, String> {
        let start = self.at;
        while let Some(c) = self.peek() {
            let colon_end = c == ':'
                && self.text[self.at + 1..]
                    .chars()
                    .next()
                    .is_none_or(|n| n.is_whitespace() || matches!(n, ',' | ']' | '}'));
            if matches!(c, ',' | '[' | ']' | '{' | '}') || colon_end {
                break;
            }
            self.at += c.len_utf8();
        }
        resolve(self.text[start..self.at].trim())
    }
}

#[cfg(test)]
mod tests {
    use super::Flow;
    use serde_json::json;

    fn read(text: &str) -> Result<serde_json::Value, String> {
        let mut flow = Flow::new(text);
        let value = flow.value(0)?;
        flow.end()?;
        Ok(value)
    }

    #[test]
    fn flows_read_as_json() {
        assert_eq!(
            read("[a, 'b c', \"é\\u00e9\", {k: [1, 2.5], x: y, z}, ~] # done").unwrap(),
            json!(["a", "b c", "éé", {"k": [1, 2.5], "x": "y", "z": null}, null])
        );
        assert_eq!(
            read("{url: http://x/y, t: a:b}").unwrap(),
            json!({"url": "http://x/y", "t": "a:b"})
        );
    }

    #[test]
    fn malformed_flows_fail() {
        for text in [
            "[a b] c",
            "[a, &x b]",
            "{: v}",
            "{[a]: v}",
            "{a: 1, a: 2}",
            "[\"open]",
        ] {
            assert!(read(text).is_err(), "{text:?}");
        }
    }
}
