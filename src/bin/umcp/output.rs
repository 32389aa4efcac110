//! How results are printed: JSON for scripts (`--json`) or readable text.
//!
//! Everything goes through [`say`] and [`warn`], which write to stdout and stderr and ignore
//! a closed pipe (`umcp tools | head` must not panic the way `println!` would).

use std::io::Write;

use serde_json::Value;
use umcp::types::{ContentBlock, ResourceContents};

/// Writes a line to stdout.
pub fn say(line: &str) {
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

/// Writes a line to stderr.
pub fn warn(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

pub fn pretty(value: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

pub fn first_line(text: Option<&str>) -> &str {
    text.unwrap_or_default().lines().next().unwrap_or_default()
}

/// Prints results as JSON (`--json`) or as readable text.
pub struct Output {
    pub json: bool,
}

impl Output {
    /// A list: one JSON array, or one line per item.
    pub fn list(&self, items: impl Iterator<Item = (Value, String)>) {
        let (values, lines): (Vec<Value>, Vec<String>) = items.unzip();
        match self.json {
            true => say(&pretty(&values)),
            false => lines.iter().for_each(|line| say(line)),
        }
    }

    /// The whole result as JSON, or each content block readably.
    pub fn content(&self, whole: &impl serde::Serialize, blocks: &[ContentBlock]) {
        if self.json {
            say(&pretty(whole));
            return;
        }
        for block in blocks {
            match block {
                ContentBlock::Text(t) => say(&t.text),
                ContentBlock::Image(i) => say(&format!(
                    "[image {}: {} base64 bytes]",
                    i.mime_type,
                    i.data.len()
                )),
                ContentBlock::Audio(a) => say(&format!(
                    "[audio {}: {} base64 bytes]",
                    a.mime_type,
                    a.data.len()
                )),
                ContentBlock::ResourceLink(r) => say(&format!("[resource {}]", r.uri)),
                ContentBlock::Resource(r) => match &r.resource {
                    ResourceContents::Text(t) => say(&t.text),
                    ResourceContents::Blob(b) => {
                        say(&format!("[blob {}: {} base64 bytes]", b.uri, b.blob.len()))
                    }
                },
                other => say(&pretty(other)),
            }
        }
    }
}
