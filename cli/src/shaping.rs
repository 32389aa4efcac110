//! Output for pipes and agents: a result's text alone (`--raw`), its structured content alone
//! (`--structured`), the stable JSON envelope of `--json`, at most N characters with the whole
//! output kept in a file (`--max-chars`), and images, audio and blobs written to files
//! (`--save DIR`).
//!
//! The envelope of a tool's result under `--json` always has the same four members, `null`
//! when the server sent none: `isError` (a boolean), `content`, `structuredContent` and
//! `_meta`. A command that fails prints `{"isError": true, "error": {"code", "message"}}`
//! instead, `code` being its exit code (see [`report_as`](crate::exit::report_as)).

use std::fs;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::{json, Value};
use umcp::private_file;
use umcp::types::{CallToolResult, ContentBlock, ResourceContents};

use crate::exit::{usage, Exit};
use crate::output::{pretty, say, warn};
use crate::shown;

/// How a result is printed, from `--raw`, `--structured`, `--max-chars` and `--save`.
#[derive(Default, Clone)]
pub struct Shaping {
    pub raw: bool,
    pub structured: bool,
    pub max_chars: Option<usize>,
    pub save: Option<PathBuf>,
}

impl Shaping {
    /// Refuses what does not go together: one way of printing, and a cut of text only.
    pub fn check(&self, json: bool) -> Result<(), Exit> {
        let ways = [
            (json, "--json"),
            (self.raw, "--raw"),
            (self.structured, "--structured"),
        ];
        let given: Vec<&str> = ways.iter().filter(|(on, _)| *on).map(|(_, n)| *n).collect();
        if given.len() > 1 {
            return Err(usage(format!("{} do not go together", given.join(" and "))));
        }
        if json && self.max_chars.is_some() {
            return Err(usage(
                "--max-chars cuts text, not --json (whose cut would not parse)",
            ));
        }
        Ok(())
    }
}

/// The stable `--json` envelope of a tool's result.
pub fn envelope(result: &CallToolResult, saved: &[Option<PathBuf>]) -> Value {
    let mut content = serde_json::to_value(&result.content).unwrap_or(Value::Null);
    if let Value::Array(blocks) = &mut content {
        for (block, path) in blocks.iter_mut().zip(saved) {
            if let (Some(path), Value::Object(block)) = (path, block) {
                block.insert("savedTo".into(), json!(path.display().to_string()));
            }
        }
    }
    json!({
        "isError": result.is_error(),
        "content": content,
        "structuredContent": result.structured_content,
        "_meta": result.meta,
    })
}

/// Renders content blocks as text: each text as written (escaped), the others as one line
/// each, or, under `--save`, written into a file whose path the line gives. With `raw`, only
/// the texts. Returns the text, and each block's file when it was saved.
pub fn render(
    blocks: &[ContentBlock],
    shaping: &Shaping,
    name: &str,
) -> (String, Vec<Option<PathBuf>>) {
    let saver = shaping.save.as_deref().map(|dir| Saver::new(dir, name));
    let mut text = Vec::new();
    let mut saved = Vec::with_capacity(blocks.len());
    for block in blocks {
        let (line, path) = render_block(block, saver.as_ref(), shaping.raw);
        saved.push(path.clone());
        if let (true, Some(path)) = (shaping.raw, &path) {
            warn(&format!(
                "umcp: saved {}",
                shown::line(&path.display().to_string())
            ));
        }
        text.extend(line);
    }
    (text.join("\n"), saved)
}

/// One block: its text, or its line (none under `raw` for what is not text), and its file.
fn render_block(
    block: &ContentBlock,
    saver: Option<&Saver>,
    raw: bool,
) -> (Option<String>, Option<PathBuf>) {
    // `label` names the content in its line: `image image/png`, `blob file:///b`.
    let binary = |label: String, mime: &str, data: &str| {
        let saved = saver.map(|s| s.save(mime, data));
        let line = match &saved {
            Some(Ok(path)) => format!("[{label} saved to {}]", path.display()),
            Some(Err(why)) => format!("[{label}: not saved: {why}]"),
            None => format!("[{label}: {} base64 bytes]", data.len()),
        };
        let line = (!raw).then(|| shown::line(&line));
        (line, saved.and_then(Result::ok))
    };
    match block {
        ContentBlock::Text(t) => (Some(shown::text_lines(&t.text)), None),
        ContentBlock::Image(i) => binary(format!("image {}", i.mime_type), &i.mime_type, &i.data),
        ContentBlock::Audio(a) => binary(format!("audio {}", a.mime_type), &a.mime_type, &a.data),
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::Text(t) => (Some(shown::text_lines(&t.text)), None),
            ResourceContents::Blob(b) => {
                let mime = b.mime_type.as_deref().unwrap_or("application/octet-stream");
                binary(format!("blob {}", b.uri), mime, &b.blob)
            }
        },
        ContentBlock::ResourceLink(r) => {
            let line = format!("[resource {}]", r.uri);
            ((!raw).then(|| shown::line(&line)), None)
        }
        other => ((!raw).then(|| pretty(other)), None),
    }
}

/// Prints `text` on stdout, at most `max` characters of it when a cut is asked for: the whole
/// text then goes to a file of its own, owner-only, whose path the last line gives.
pub fn emit(text: &str, max: Option<usize>) -> Result<(), Exit> {
    let Some(max) = max else {
        say(text);
        return Ok(());
    };
    let total = text.chars().count();
    if total <= max {
        say(text);
        return Ok(());
    }
    let path =
        keep_whole(text).map_err(|e| Exit(1, format!("cannot keep the whole output: {e}")))?;
    let cut: String = text.chars().take(max).collect();
    say(&cut);
    say(&format!(
        "[umcp: cut at {max} of {total} characters; all of it is in {}]",
        shown::line(&path.display().to_string())
    ));
    Ok(())
}

/// Writes `text` into a new file of the temporary directory, readable by its owner only
/// (never one that is there, nor through a link).
fn keep_whole(text: &str) -> std::io::Result<PathBuf> {
    let dir = std::env::temp_dir();
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    for attempt in 0..100u32 {
        let path = dir.join(format!(
            "umcp-output-{}-{stamp}-{attempt}.txt",
            std::process::id()
        ));
        match private_file::write_new(&path, text.as_bytes()) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("no free file name"))
}

/// Writes binary contents into `--save DIR`, each into a new file named after the tool (or
/// resource) and its place in the result.
struct Saver {
    dir: PathBuf,
    stem: String,
    count: std::cell::Cell<usize>,
}

impl Saver {
    fn new(dir: &Path, name: &str) -> Saver {
        // Only what is safe in a file name of any system; a server's name is not trusted.
        let stem: String = name
            .chars()
            .map(
                |c| match c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    true => c,
                    false => '_',
                },
            )
            .take(64)
            .collect();
        Saver {
            dir: dir.to_path_buf(),
            stem: if stem.is_empty() {
                "content".into()
            } else {
                stem
            },
            count: std::cell::Cell::new(0),
        }
    }

    /// Decodes `data` and writes it into a new file whose extension `mime` gives.
    fn save(&self, mime: &str, data: &str) -> Result<PathBuf, String> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map_err(|_| "not valid base64".to_owned())?;
        fs::create_dir_all(&self.dir).map_err(|e| e.to_string())?;
        let extension = extension(mime);
        loop {
            let n = self.count.get() + 1;
            self.count.set(n);
            let path = self.dir.join(format!("{}-{n}.{extension}", self.stem));
            // Never a file that is there, nor through a link: owner-only, as umcp writes.
            match private_file::write_new(&path, &bytes) {
                Ok(()) => return Ok(path),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 10_000 => continue,
                Err(e) => return Err(e.to_string()),
            }
        }
    }
}

/// The usual file extension of a MIME type; `bin` for one not known.
fn extension(mime: &str) -> &'static str {
    let essence = mime.split(';').next().unwrap_or_default().trim();
    match essence.to_ascii_lowercase().as_str() {
        "image/png" => "png",
        "image/jpeg" | "image/jpg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "audio/wav" | "audio/x-wav" | "audio/wave" => "wav",
        "audio/mpeg" | "audio/mp3" => "mp3",
        "audio/ogg" => "ogg",
        "application/pdf" => "pdf",
        "application/json" => "json",
        "application/gzip" | "application/x-gzip" => "gz",
        "application/zip" => "zip",
        "text/plain" => "txt",
        "text/markdown" => "md",
        "text/html" => "html",
        "text/csv" => "csv",
        _ => "bin",
    }
}

/// The `--structured` output of a result: its structured content, or an error when it has
/// none.
pub fn structured(result: &CallToolResult) -> Result<String, Exit> {
    match &result.structured_content {
        Some(value) => Ok(pretty(value)),
        None => Err(Exit(1, "the result has no structured content".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use umcp::types::ContentBlock;

    #[test]
    fn a_cut_keeps_the_whole_text_in_a_private_file() {
        let text = "x".repeat(500);
        let path = keep_whole(&text).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), text);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        fs::remove_file(path).unwrap();
    }

    #[test]
    fn binary_contents_are_saved_under_safe_names_and_texts_kept() {
        let dir = std::env::temp_dir().join(format!("umcp-save-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let png = base64::engine::general_purpose::STANDARD.encode(b"\x89PNG\r\n\x1a\nrest");
        let blocks = vec![
            ContentBlock::text("hello\u{1b}[2J"),
            serde_json::from_value(json!({"type": "image", "data": png, "mimeType": "image/png"}))
                .unwrap(),
            serde_json::from_value(json!({"type": "image", "data": "!!", "mimeType": "image/png"}))
                .unwrap(),
        ];
        let shaping = Shaping {
            save: Some(dir.clone()),
            ..Shaping::default()
        };
        let (text, saved) = render(&blocks, &shaping, "../evil/tool");
        let path = saved[1].clone().unwrap();
        assert_eq!(path, dir.join("___evil_tool-1.png"));
        assert!(fs::read(&path).unwrap().starts_with(b"\x89PNG"));
        assert!(saved[2].is_none());
        assert!(
            text.starts_with("hello\\u{1b}[2J\n[image image/png saved to "),
            "{text}"
        );
        assert!(
            text.ends_with("[image image/png: not saved: not valid base64]"),
            "{text}"
        );
        let raw = Shaping {
            raw: true,
            ..Shaping::default()
        };
        assert_eq!(render(&blocks, &raw, "t").0, "hello\\u{1b}[2J");
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_envelope_has_its_four_members_always() {
        let result = CallToolResult::new(vec![ContentBlock::text("hi")]);
        let value = envelope(&result, &[None]);
        assert_eq!(value["isError"], false);
        assert_eq!(value["content"][0]["text"], "hi");
        assert!(value["structuredContent"].is_null() && value["_meta"].is_null());
        assert_eq!(value.as_object().unwrap().len(), 4);
    }
}
