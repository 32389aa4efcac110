//! What `umcp` says when something is wrong: servers that did not start, names that match
//! nothing, and mistyped commands and options.

use std::path::PathBuf;

use serde_json::Value;

use umcp_test_support::installed::{cli, stderr, stdout};

/// A configuration file with a working demo server `up` and a server `missing` whose command
/// does not exist, removed when dropped.
struct HalfUp(PathBuf);

impl HalfUp {
    fn new(label: &str) -> HalfUp {
        let config = serde_json::json!({
            "mcpServers": {
                "up": { "command": umcp_test_support::demo::demo_binary(), "args": ["--server"] },
                "missing": { "command": "umcp-no-such-bin" },
            }
        });
        let name = format!("umcp-cli-{label}-{}.json", std::process::id());
        let path = std::env::temp_dir().join(name);
        std::fs::write(&path, config.to_string()).unwrap();
        HalfUp(path)
    }

    fn path(&self) -> String {
        self.0.to_string_lossy().into_owned()
    }
}

impl Drop for HalfUp {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

const NOT_STARTED: &str = "failed to start `umcp-no-such-bin`";

#[test]
fn ping_reports_every_server_and_fails_when_one_did_not_connect() {
    let config = HalfUp::new("ping");
    let out = cli(&["--config", &config.path(), "ping"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let rows = stdout(&out);
    let lines: Vec<&str> = rows.lines().collect();
    assert_eq!(lines.len(), 2, "{rows}");
    assert!(
        lines[0].starts_with(&format!("missing  failed  {NOT_STARTED}")),
        "{rows}"
    );
    assert!(lines[1].starts_with("up  ok  "), "{rows}");

    let out = cli(&["--config", &config.path(), "--json", "ping"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let rows: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(rows[0]["server"], "missing");
    assert_eq!(rows[0]["ok"], false);
    let error = rows[0]["error"].as_str().expect("an error string");
    assert!(error.starts_with(NOT_STARTED), "{error}");
    assert_eq!(rows[1]["ok"], true);

    // The only server selected never connected: it still gets its row.
    let out = cli(&["--config", &config.path(), "--server", "missing", "ping"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with(&format!("missing  failed  {NOT_STARTED}")),
        "{}",
        stdout(&out)
    );
}

/// A server that did not start is reported with its reason, without the manager's retry
/// bookkeeping, which means nothing to a run that never retries.
#[test]
fn a_server_that_did_not_start_is_reported_plainly() {
    let config = HalfUp::new("plain");
    let out = cli(&["--config", &config.path(), "tools"]);
    let shown = stderr(&out);
    assert!(
        shown.contains(&format!("umcp: server `missing`: {NOT_STARTED}")),
        "{shown}"
    );
    assert!(!shown.contains("retrying"), "{shown}");
    assert!(!shown.contains("not connected"), "{shown}");
}

#[test]
fn a_tool_of_a_server_that_did_not_start_says_so() {
    let config = HalfUp::new("call");
    let out = cli(&["--config", &config.path(), "call", "missing__echo"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no tool named `missing__echo`: server `missing` is not connected"),
        "{}",
        stderr(&out)
    );
}

/// A mistyped tool or prompt name is a usage error (exit code 2), also when another server
/// of the file did not start, and its message is not dressed as a configuration problem.
#[test]
fn a_mistyped_name_is_a_usage_error_even_when_another_server_is_down() {
    let config = HalfUp::new("typo");
    for (args, said) in [
        (&["call", "up__ecko"][..], "no tool named `up__ecko`"),
        (&["call", "ecko"][..], "no tool named `ecko`"),
        (
            &["prompt", "up__greeet"][..],
            "no prompt named `up__greeet`",
        ),
    ] {
        let out = cli(&[&["--config", &config.path()][..], args].concat());
        let shown = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {shown}");
        assert!(
            shown.contains(&format!("umcp: {said}")),
            "{args:?}: {shown}"
        );
        assert!(!shown.contains("config:"), "{args:?}: {shown}");
    }
}

#[test]
fn a_server_name_that_is_not_configured_lists_the_names() {
    let config = HalfUp::new("names");
    let out = cli(&["--config", &config.path(), "--server", "nope", "tools"]);
    assert_eq!(out.status.code(), Some(2));
    let shown = stderr(&out);
    assert!(
        shown.contains(&format!(
            "no server named `nope` in {} (its servers: `missing`, `up`)",
            config.path()
        )),
        "{shown}"
    );
    assert!(!shown.contains("no usable server"), "{shown}");
}

#[test]
fn a_configured_server_that_is_unusable_is_no_usable_server() {
    let config = serde_json::json!({
        "mcpServers": { "broken": { "command": 42 } }
    });
    let path = std::env::temp_dir().join(format!("umcp-cli-broken-{}.json", std::process::id()));
    std::fs::write(&path, config.to_string()).unwrap();
    let file = path.to_string_lossy().into_owned();
    let out = cli(&["--config", &file, "--server", "broken", "tools"]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(&format!("no usable server in {file}")),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_mistyped_command_or_option_gets_the_closest_name() {
    for (args, said) in [
        (&["tols"][..], "unknown command tols (did you mean tools?)"),
        (&["pign"][..], "unknown command pign (did you mean ping?)"),
        (
            &["--jsn", "tools"][..],
            "unknown option --jsn (did you mean --json?)",
        ),
        (
            &["--time", "1", "tools"][..],
            "unknown option --time (did you mean --timeout?)",
        ),
    ] {
        let out = cli(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(said), "{args:?}: {}", stderr(&out));
    }
    // Nothing close: no guess.
    let out = cli(&["frobnicate"]);
    assert!(
        stderr(&out).contains("unknown command frobnicate\n"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_full_help_does_not_point_to_itself() {
    let out = cli(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = stdout(&out);
    assert!(
        help.contains("\nusage: umcp [OPTIONS] COMMAND [ARGS]\n"),
        "{help}"
    );
    assert!(!help.contains("--help for more"), "{help}");
    // A usage error still says where to read more.
    assert!(stderr(&cli(&["tols"])).contains("(umcp --help for more)"));
}
