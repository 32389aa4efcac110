//! The agent skill shipped in this package (`skills/umcp/SKILL.md`): its frontmatter is what
//! the Agent Skills format asks, and every example runs as written against server-everything,
//! printing what the `#` line under it says (or ending with its `# exit N`).

use std::path::Path;
use std::process::Command;

use umcp_test_support::installed::{empty_home, install_dir, stderr, stdout};
use umcp_test_support::peers;

const SKILL: &str = include_str!("../../skills/umcp/SKILL.md");

/// One example: a shell line, and what it should print or end with.
struct Example {
    line: String,
    expect: Vec<String>,
    code: i32,
}

/// The examples of every `sh` block, in order.
fn examples() -> Vec<Example> {
    let mut examples: Vec<Example> = Vec::new();
    let mut in_block = false;
    for line in SKILL.lines() {
        match line.trim_end() {
            "```sh" => in_block = true,
            "```" => in_block = false,
            _ if !in_block => {}
            comment if comment.starts_with("# ") => {
                let example = examples.last_mut().expect("a comment follows a command");
                match comment.strip_prefix("# exit ") {
                    Some(code) => example.code = code.parse().unwrap(),
                    None => example.expect.push(comment[2..].to_owned()),
                }
            }
            command => examples.push(Example {
                line: command.to_owned(),
                expect: Vec::new(),
                code: 0,
            }),
        }
    }
    examples
}

#[test]
fn the_skill_has_the_frontmatter_agents_read() {
    let front = SKILL
        .strip_prefix("---\n")
        .and_then(|rest| rest.split_once("\n---\n"))
        .map(|(front, _)| front)
        .expect("frontmatter");
    let field = |key: &str| {
        front
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{key}: ")))
            .unwrap_or_else(|| panic!("{key}"))
    };
    assert_eq!(field("name"), "umcp");
    let description = field("description");
    assert!((1..=1024).contains(&description.chars().count()));
    assert!(examples().len() >= 15, "every section has examples");
}

#[test]
fn every_example_of_the_skill_runs_as_written() {
    if peers::skip_interop() {
        return;
    }
    let dir = empty_home().join(format!("agent-skill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("rt")).unwrap();
    let server = format!(
        "{} {} stdio",
        peers::node().display(),
        peers::server_everything().display()
    );
    let path = std::env::join_paths(std::iter::once(install_dir()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    // The variables set by one example (`ID=$(…)`), for the ones after it.
    let mut kept: Vec<(String, String)> = Vec::new();
    for example in examples() {
        let (assigned, line) = match example.line.split_once("=$(") {
            Some((name, _)) if name.chars().all(|c| c.is_ascii_uppercase()) => (
                Some(name.to_owned()),
                format!("{}; printf %s \"${name}\"", example.line),
            ),
            _ => (None, example.line.clone()),
        };
        let out = Command::new("bash")
            .args(["-c", &line])
            .current_dir(&dir)
            .env("PATH", &path)
            .env("HOME", &dir)
            .env("UMCP_RUNTIME_DIR", dir.join("rt"))
            .env("S", &server)
            .envs(kept.iter().map(|(k, v)| (k, v)))
            .output()
            .unwrap();
        let shown = stdout(&out);
        assert_eq!(
            out.status.code(),
            Some(example.code),
            "{}\nstdout: {shown}\nstderr: {}",
            example.line,
            stderr(&out)
        );
        for expected in &example.expect {
            assert!(
                shown.contains(expected.as_str()),
                "{}: {expected:?} in\n{shown}",
                example.line
            );
        }
        if let Some(name) = assigned {
            kept.push((name, shown.trim().to_owned()));
        }
    }
    assert!(Path::new(&dir.join("images/get-tiny-image-1.png")).is_file());
    std::fs::remove_dir_all(&dir).unwrap();
}
