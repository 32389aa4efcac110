//! `--root DIR`: directories offered to the servers as roots (`roots/list`), each as the
//! `file://` URI of its canonical path, named after its last component.

use std::path::Path;

use umcp::types::Root;

use crate::exit::{usage, Exit};

/// The roots of `dirs`, each of which must be a directory; a usage error names one that is
/// not.
pub fn roots(dirs: &[String]) -> Result<Vec<Root>, Exit> {
    dirs.iter().map(|dir| root(dir)).collect()
}

fn root(dir: &str) -> Result<Root, Exit> {
    let path = std::fs::canonicalize(dir).map_err(|e| usage(format!("--root {dir}: {e}")))?;
    if !path.is_dir() {
        return Err(usage(format!("--root {dir}: not a directory")));
    }
    let mut root = Root::new(file_uri(&path));
    root.name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    Ok(root)
}

/// The `file://` URI of the absolute `path`: `/` between components, every byte but the
/// unreserved ones percent-encoded.
fn file_uri(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    // A Windows path (`C:/…`) gets the third slash a URI's empty host needs.
    let text = match text.starts_with('/') {
        true => text,
        false => format!("/{text}"),
    };
    let mut uri = String::from("file://");
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' | b':' => {
                uri.push(char::from(byte))
            }
            other => uri.push_str(&format!("%{other:02X}")),
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_file_uris() {
        assert_eq!(
            file_uri(Path::new("/home/ada/my project")),
            "file:///home/ada/my%20project"
        );
        assert_eq!(file_uri(Path::new("/tmp/é#?")), "file:///tmp/%C3%A9%23%3F");
        let dir = std::env::temp_dir();
        let got = roots(&[dir.to_string_lossy().into_owned()]).unwrap();
        assert!(got[0].uri.starts_with("file:///"), "{}", got[0].uri);
        assert!(roots(&["/nonexistent/dir".to_owned()]).is_err());
    }
}
