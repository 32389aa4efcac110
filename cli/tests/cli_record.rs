//! Tests for `umcp record` and `umcp replay`: the binary as a stdio MCP server that records
//! a session with the bundled demo server, then plays it back with no server to run.

use umcp_test_support::demo;

use std::path::PathBuf;

use serde_json::Value;
use umcp_test_support::installed::{cli, stderr, stdout};

/// A directory of this test run's own.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("umcp-cli-record-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(args: &[&str], code: i32) -> (String, String) {
    let out = cli(args);
    let (o, e) = (stdout(&out), stderr(&out));
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}\nstdout: {o}\nstderr: {e}"
    );
    (o, e)
}

#[test]
fn smoke_a_recorded_call_plays_back_with_no_demo_server() {
    let dir = scratch("smoke");
    // A copy of the demo server, removed once recorded: the replay cannot start it.
    let server = dir.join(format!("demo{}", std::env::consts::EXE_SUFFIX));
    std::fs::copy(demo::demo_binary(), &server).unwrap();
    let file = dir.join("session.jsonl");
    let (file_arg, server_arg) = (file.display(), server.display());

    let record = format!("umcp record --out '{file_arg}' --stdio '{server_arg} --server'");
    let (printed, _) = run(&["--stdio", &record, "call", "add", "a=2", "b=3"], 0);
    assert_eq!(printed.trim(), "5");
    let text = std::fs::read_to_string(&file).expect("the recording");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines[0]["recording"], "umcp");
    let call = lines
        .iter()
        .position(|l| l["message"]["params"]["name"] == "add")
        .expect("the call is recorded");
    assert_eq!(lines[call]["message"]["params"]["arguments"]["b"], 3);
    assert!(lines[call..]
        .iter()
        .any(|l| l["from"] == "server" && l["message"]["result"]["structuredContent"]["sum"] == 5));

    std::fs::remove_file(&server).unwrap();
    let replay = format!("umcp replay '{file_arg}'");
    let (printed, _) = run(&["--stdio", &replay, "call", "add", "a=2", "b=3"], 0);
    assert_eq!(printed.trim(), "5");

    // A call the recording lacks names the one recorded.
    let (_, said) = run(&["--stdio", &replay, "call", "add", "a=2", "b=4"], 1);
    assert!(said.contains(&format!("line {}", call + 1)), "{said}");
    assert!(said.contains("/arguments/b: recorded 3, sent 4"), "{said}");
}

#[test]
fn record_needs_its_file_and_one_server_and_out_is_for_record_only() {
    let (_, said) = run(&["record", "--stdio", "true"], 2);
    assert!(said.contains("--out"), "{said}");
    let (_, said) = run(&["--out", "f.jsonl", "--stdio", "true", "tools"], 2);
    assert!(said.contains("--out is for record"), "{said}");
    let missing = scratch("missing").join("none.jsonl");
    let (_, said) = run(&["replay", &missing.display().to_string()], 1);
    assert!(said.contains("none.jsonl"), "{said}");
}

#[test]
fn an_http_server_s_header_secret_stays_out_of_the_recording() {
    let dir = scratch("http");
    let server = std::process::Command::new(demo::demo_binary())
        .args(["--server", "--http", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start the demo server over HTTP");
    let mut server = Killed(server);
    let mut first = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.0.stdout.take().unwrap()),
        &mut first,
    )
    .unwrap();
    let url = first
        .trim()
        .strip_prefix("listening on ")
        .expect("the URL")
        .to_owned();
    let file = dir.join("http.jsonl");
    let record = format!(
        "umcp record --out '{}' --url {url} --header 'X-Api-Key: key-d41d8cd98f' --timeout 20",
        file.display()
    );
    let (printed, _) = run(&["--stdio", &record, "call", "echo", "message=hello"], 0);
    assert_eq!(printed.trim(), "hello");
    drop(server);
    let text = std::fs::read_to_string(&file).expect("the recording");
    assert!(text.contains(r#""message":"hello""#), "{text}");
    assert!(!text.contains("d41d8cd98f"), "{text}");
    let replay = format!("umcp replay '{}'", file.display());
    let (printed, _) = run(&["--stdio", &replay, "call", "echo", "message=hello"], 0);
    assert_eq!(printed.trim(), "hello");
}

/// A child process killed and reaped on drop, also when a test fails.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A recording holds whole sessions: `umcp record --out F` creates F readable by its owner
/// only, and refuses when F is a symbolic link (planted in a shared directory, say), leaving
/// the link's target as it was.
#[cfg(unix)]
#[test]
fn the_recording_is_owner_only_and_never_written_through_a_link() {
    use std::os::unix::fs::PermissionsExt;

    let dir = scratch("private");
    let file = dir.join("rec.jsonl");
    let server = umcp_test_support::installed::fixtures_stdio();
    let record = |out: &std::path::Path| {
        format!(
            "umcp record --out '{}' --stdio \"{}\"",
            out.display(),
            server.replace('"', "\\\"")
        )
    };
    let (printed, _) = run(&["--stdio", &record(&file), "call", "add", "a=2", "b=3"], 0);
    assert_eq!(printed.trim(), "5");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);

    let notes = dir.join("notes.txt");
    std::fs::write(&notes, "precious").unwrap();
    let planted = dir.join("planted.jsonl");
    std::os::unix::fs::symlink(&notes, &planted).unwrap();
    let out = cli(&["--stdio", &record(&planted), "call", "add", "a=2", "b=3"]);
    // The recorder refuses, and says why; its server never starts.
    assert_ne!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "precious");
    assert!(std::fs::symlink_metadata(&planted)
        .unwrap()
        .file_type()
        .is_symlink());
}
