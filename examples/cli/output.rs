//! How the `cli` example prints results: JSON for scripts (`--json`) or readable text.

use serde_json::Value;
use umcp::types::{ContentBlock, ResourceContents};

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
    pub fn list(&self, items: impl Iterator<Item = (Value, String)>) {
        let (values, lines): (Vec<Value>, Vec<String>) = items.unzip();
        match self.json {
            true => println!("{}", pretty(&values)),
            false => lines.iter().for_each(|line| println!("{line}")),
        }
    }

    /// The whole result as JSON, or each content block readably.
    pub fn content(&self, whole: &impl serde::Serialize, blocks: &[ContentBlock]) {
        if self.json {
            println!("{}", pretty(whole));
            return;
        }
        for block in blocks {
            match block {
                ContentBlock::Text(t) => println!("{}", t.text),
                ContentBlock::Image(i) => {
                    println!("[image {}: {} base64 bytes]", i.mime_type, i.data.len())
                }
                ContentBlock::Audio(a) => {
                    println!("[audio {}: {} base64 bytes]", a.mime_type, a.data.len())
                }
                ContentBlock::ResourceLink(r) => println!("[resource {}]", r.uri),
                ContentBlock::Resource(r) => match &r.resource {
                    ResourceContents::Text(t) => println!("{}", t.text),
                    ResourceContents::Blob(b) => {
                        println!("[blob {}: {} base64 bytes]", b.uri, b.blob.len())
                    }
                },
                other => println!("{}", pretty(other)),
            }
        }
    }
}
