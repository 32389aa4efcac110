//! `umcp skills list|get|load|file` against a server offering the Skills extension: nothing
//! is read ahead, and what is printed was verified against the skill's entry.

use crate::fake::run_with;
use umcp_test_support::installed::{stderr, stdout};
use umcp_test_support::python::system_python;

/// The `--stdio` command line of the skills server, logging its reads to a fresh file.
fn server(test: &str, tampered: bool) -> (String, std::path::PathBuf) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cli/skills_server.py");
    let reads = std::env::temp_dir().join(format!("umcp-skills-{test}-{}", std::process::id()));
    let _ = std::fs::remove_file(&reads);
    let mode = if tampered { " tampered" } else { "" };
    let line = format!(
        "'{}' '{script}'{mode} 'reads={}'",
        system_python(),
        reads.display()
    );
    (line, reads)
}

fn read_log(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[test]
fn skills_are_listed_and_described_without_reading_a_file() {
    let (server, reads) = server("list", false);
    let list = stdout(&run_with(&server, &["skills", "list"], 0));
    assert!(
        list.contains("pdf  skill://docs/pdf/SKILL.md  Read and fill PDF forms  (2 files,"),
        "{list}"
    );
    let json = run_with(&server, &["--json", "skills", "list"], 0);
    let rows: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(rows[0]["skill"]["frontmatter"]["name"], "pdf", "{rows}");
    let got = stdout(&run_with(
        &server,
        &["skills", "get", "skill://docs/pdf/SKILL.md"],
        0,
    ));
    assert!(got.contains("skill://docs/pdf/SKILL.md"), "{got}");
    assert_eq!(read_log(&reads), "", "listing and describing read nothing");
    let _ = std::fs::remove_file(&reads);
}

#[test]
fn a_skill_loads_verified_and_its_listed_files_only_are_read() {
    let (server, reads) = server("load", false);
    let uri = "skill://docs/pdf/SKILL.md";
    let loaded = stdout(&run_with(&server, &["skills", "load", uri], 0));
    assert!(loaded.contains("Use pdftotext."), "{loaded}");
    let forms = stdout(&run_with(
        &server,
        &["skills", "file", uri, "references/FORMS.md"],
        0,
    ));
    assert_eq!(forms, "Field names are case-sensitive.\n");
    let unlisted = run_with(&server, &["skills", "file", uri, "scripts/run.py"], 1);
    assert!(
        stderr(&unlisted).contains("not a file skill"),
        "{}",
        stderr(&unlisted)
    );
    // Two loads and one file: no read of the unlisted path.
    let log = read_log(&reads);
    assert!(!log.contains("scripts/run.py"), "{log}");
    assert_eq!(log.matches("FORMS.md").count(), 1, "{log}");
    let _ = std::fs::remove_file(&reads);
}

#[test]
fn a_tampered_skill_is_not_printed_and_its_files_are_not_read() {
    let (server, reads) = server("tampered", true);
    let uri = "skill://docs/pdf/SKILL.md";
    let out = run_with(&server, &["skills", "file", uri, "references/FORMS.md"], 1);
    assert!(
        stderr(&out).contains("verification failed"),
        "{}",
        stderr(&out)
    );
    assert!(!stdout(&out).contains("evil"), "{}", stdout(&out));
    assert!(!read_log(&reads).contains("FORMS.md"));
    let _ = std::fs::remove_file(&reads);
}

#[test]
fn ls_shows_the_servers_directory_beside_the_entry_and_reads_nothing() {
    let (server, reads) = server("ls", false);
    let uri = "skill://docs/pdf/SKILL.md";
    // Without directoryRead: from the entry alone.
    let out = run_with(&server, &["skills", "ls", uri], 0);
    assert!(
        stderr(&out).contains("no directoryRead"),
        "{}",
        stderr(&out)
    );
    let shown = stdout(&out);
    assert!(
        shown.contains("SKILL.md  skill://docs/pdf/SKILL.md\n"),
        "{shown}"
    );
    assert!(
        shown.contains("references/  skill://docs/pdf/references\n"),
        "{shown}"
    );
    let refs = stdout(&run_with(&server, &["skills", "ls", uri, "references"], 0));
    assert_eq!(refs, "FORMS.md  skill://docs/pdf/references/FORMS.md\n");
    // With it: the server's view, a child the entry lacks marked.
    let served = format!("{server} directories");
    let shown = stdout(&run_with(&served, &["skills", "ls", uri], 0));
    assert!(
        shown.contains("scripts/  skill://docs/pdf/scripts  (not in the entry: fetch it again)"),
        "{shown}"
    );
    let json = run_with(&served, &["--json", "skills", "ls", uri], 0);
    let rows: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let scripts = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "scripts")
        .unwrap();
    assert_eq!(scripts["listed"], false);
    assert_eq!(scripts["served"], true);
    run_with(&served, &["skills", "ls", uri, "../elsewhere"], 2);
    assert_eq!(read_log(&reads), "", "listing a directory reads no file");
    let _ = std::fs::remove_file(&reads);
}
