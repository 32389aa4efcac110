//! Edits of a configuration file (`umcp servers add` and `remove`): whatever the file holds,
//! reading it returns (its entries, or an error naming a line and column it has, but for a
//! top level that is no object); removing an entry leaves a file that reads with exactly the
//! other entries, their values unchanged; and adding one leaves a file that reads with all
//! of them and the new one, as written.

use serde_json::{json, Value};
use umcp_test_support::fuzz::{Rng, Target};

use super::Document;

const DICTIONARY: &[&[u8]] = &[
    b"\"mcpServers\":",
    b"\"servers\":",
    b"\"mcp\": {\"servers\": {}}",
    b"{\"command\": \"x\"}",
    b"//",
    b"/*",
    b"*/",
    b"\n",
    b"\r\n",
    b",",
    b",}",
    b",]",
    b"\"",
    b"\\\"",
    b"{",
    b"}",
    b"[",
    b"]",
    b":",
    b"\xef\xbb\xbf",
    b"\t",
];

/// The name an added entry gets, which no corpus file uses.
const ADDED: &str = "umcp-fuzz-added";

#[test]
fn catalog_edits_keep_every_other_entry() {
    Target {
        name: "catalog-edits",
        dictionary: DICTIONARY,
        default_cases: 2000,
    }
    .run(check);
}

/// The entries of `doc`, by name, with their values (the first of a name repeated).
fn entries(doc: &Document) -> Vec<(String, Value)> {
    let mut seen: Vec<(String, Value)> = Vec::new();
    for entry in doc.entries() {
        if seen.iter().all(|(name, _)| name != entry.name) {
            seen.push((entry.name.to_owned(), entry.value.clone()));
        }
    }
    seen
}

fn check(input: &[u8], rng: &mut Rng) {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    let doc = match Document::parse(text) {
        Ok(doc) => doc,
        Err(error) => {
            // Every error names its place, but the one about the whole file.
            if error == "the top level is not a JSON object" {
                return;
            }
            let lines = text.split('\n').count();
            let line: usize = error
                .rsplit_once(" at line ")
                .and_then(|(_, at)| at.split(' ').next()?.parse().ok())
                .unwrap_or_else(|| panic!("no line in {error:?}"));
            assert!((1..=lines).contains(&line), "{error}");
            return;
        }
    };
    let before = entries(&doc);
    if !before.is_empty() {
        let (gone, _) = &before[rng.below(before.len())];
        let unique = doc.entries().filter(|e| e.name == gone.as_str()).count() == 1;
        let removed = doc.without(gone).expect("an entry it has");
        let after = Document::parse(&removed).unwrap_or_else(|e| panic!("{e}: {removed}"));
        if unique {
            let mut left = before.clone();
            left.retain(|(name, _)| name != gone);
            assert_eq!(entries(&after), left, "{removed}");
        }
    }
    if before.iter().all(|(name, _)| name != ADDED) {
        let value = json!({"command": "x", "args": ["-y"]});
        let added = doc.with_added(ADDED, &value, doc.section().unwrap_or("mcpServers"));
        let after = Document::parse(&added).unwrap_or_else(|e| panic!("{e}: {added}"));
        let mut expected = before;
        expected.push((ADDED.to_owned(), value));
        let mut read = entries(&after);
        let mut want = expected;
        read.sort_by(|a, b| a.0.cmp(&b.0));
        want.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(read, want, "{added}");
    }
}
