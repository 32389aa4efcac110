//! Tests for `umcp watch`, installed with `cargo install --path cli` and run from the
//! `PATH` against the bundled demo server in both protocol eras.
//!
//! The demo changes its lists when one of its tools is called, and over stdio only the
//! connection's own client can call it. So the server command is `sh`, standing between
//! `umcp` and the demo: it passes `umcp`'s messages through and, every 0.3 s while `umcp` is
//! connected, adds one `tools/call` of its own (its answer carries an id `umcp` never sent,
//! which the client drops). The notification that call provokes is the demo's own, on the
//! real connection.

use std::process::Output;

use serde_json::{json, Value};

use umcp_test_support::demo;

use umcp_test_support::installed::{cli, stderr, stdout};

const README: &str = "demo://text/readme";

/// Forwards stdin to the demo (`$0`, with its arguments) and, while stdin is open, writes
/// `$UMCP_CALL` to it every 0.3 s, at most 40 times, starting after `$UMCP_AFTER` seconds. A background job's stdin is
/// `/dev/null` unless redirected, hence fd 3.
const WRAPPER: &str = r#"exec 3<&0
{ cat <&3 & c=$!
  sleep "$UMCP_AFTER"; i=0
  while [ $i -lt 40 ] && kill -0 $c 2>/dev/null; do
    sleep 0.3; printf '%s\n' "$UMCP_CALL"; i=$((i+1))
  done
  wait $c
} | "$0" "$@""#;

/// Runs `umcp watch ARGS` against the demo (`--modern` when asked), with the wrapper calling
/// `tool` with `arguments` again and again.
fn watch(modern: bool, tool: &str, arguments: Value, args: &[&str]) -> Output {
    watch_with(modern, &[], 0, tool, arguments, args)
}

/// [`watch`], the demo started with `demo_args` and the calls starting after `after` seconds.
fn watch_with(
    modern: bool,
    demo_args: &[&str],
    after: u32,
    tool: &str,
    arguments: Value,
    args: &[&str],
) -> Output {
    let call = injected_call(tool, arguments);
    let quote = |word: &str| format!("'{}'", word.replace('\'', r"'\''"));
    let mut line = vec![
        "sh".to_owned(),
        "-c".to_owned(),
        quote(WRAPPER),
        quote(&demo::demo_binary().to_string_lossy()),
        "--server".to_owned(),
        "--fixtures".to_owned(),
    ];
    line.extend(demo_args.iter().map(|a| quote(a)));
    if modern {
        line.push("--modern".to_owned());
    }
    let line = line.join(" ");
    let env = format!("UMCP_CALL={call}");
    let after = format!("UMCP_AFTER={after}");
    let mode = if modern { "modern" } else { "legacy" };
    let mut all = vec![
        "--stdio",
        line.as_str(),
        "--env",
        env.as_str(),
        "--env",
        after.as_str(),
        "--protocol",
        mode,
        "watch",
    ];
    all.extend_from_slice(args);
    cli(&all)
}

/// The `tools/call` line the wrapper injects (its `_meta` is what the stateless demo needs,
/// and the handshake-era demo ignores).
fn injected_call(tool: &str, arguments: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": "injected",
        "method": "tools/call",
        "params": {
            "name": tool,
            "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    })
}

fn lines(output: &Output) -> Vec<String> {
    stdout(output).lines().map(str::to_owned).collect()
}

fn succeeded(output: &Output) {
    assert_eq!(
        output.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        stdout(output),
        stderr(output)
    );
}

/// Several of the repeated changes arrive within the `--for` window, each on its own line.
fn list_changes_are_printed(modern: bool) {
    let what = json!({"what": "tools"});
    let out = watch(modern, "list_changed", what.clone(), &["--for", "3"]);
    succeeded(&out);
    let text = lines(&out);
    assert!(text.len() >= 2, "{text:?}\nstderr: {}", stderr(&out));
    assert!(
        text.iter().all(|l| l == "notifications/tools/list_changed"),
        "{text:?}"
    );

    let out = watch(modern, "list_changed", what, &["--json", "--for", "3"]);
    succeeded(&out);
    let text = lines(&out);
    assert!(text.len() >= 2, "{text:?}\nstderr: {}", stderr(&out));
    for line in &text {
        let event: Value = serde_json::from_str(line).expect("one JSON object per line");
        assert_eq!(
            event["method"], "notifications/tools/list_changed",
            "{line}"
        );
        assert!(event["params"].get("_meta").is_none(), "{line}");
    }
}

#[test]
fn watch_prints_list_changes_from_a_handshake_era_server() {
    list_changes_are_printed(false);
}

#[test]
fn watch_prints_list_changes_from_a_stateless_server() {
    list_changes_are_printed(true);
}

/// `--tools` leaves out the prompt changes; `--resource` follows that resource's updates.
fn only_what_is_asked_for(modern: bool) {
    let prompts = json!({"what": "prompts"});
    let out = watch(modern, "list_changed", prompts, &["--tools", "--for", "2"]);
    succeeded(&out);
    assert_eq!(stdout(&out), "", "{}", stderr(&out));

    let touch = json!({"uri": README});
    let out = watch(
        modern,
        "touch",
        touch,
        &["--resource", README, "--for", "3"],
    );
    succeeded(&out);
    let text = lines(&out);
    assert!(!text.is_empty(), "stderr: {}", stderr(&out));
    let expected = format!("notifications/resources/updated {README}");
    assert!(text.iter().all(|l| *l == expected), "{text:?}");
}

#[test]
fn watch_follows_only_what_is_asked_for_in_the_handshake_era() {
    only_what_is_asked_for(false);
}

#[test]
fn watch_follows_only_what_is_asked_for_in_the_stateless_era() {
    only_what_is_asked_for(true);
}

#[test]
fn a_subscription_the_server_ends_is_the_last_line() {
    let out = watch(true, "end_subscriptions", json!({}), &[]);
    succeeded(&out);
    assert_eq!(
        stdout(&out),
        "subscription ended: the server ended it\n",
        "{}",
        stderr(&out)
    );

    let out = watch(true, "end_subscriptions", json!({}), &["--json"]);
    succeeded(&out);
    let last: Value = serde_json::from_str(stdout(&out).trim()).expect("JSON");
    assert_eq!(
        last,
        json!({"event": "ended", "reason": "the server ended it"})
    );
}

#[test]
fn a_lost_connection_is_exit_code_3() {
    // `slow` makes this demo exit unanswered: the subscription ends with the connection.
    // The first call comes after 2 s, once `umcp` is connected and watching.
    let demo_args = ["--behaviour", "crash-mid-call"];
    let out = watch_with(false, &demo_args, 2, "slow", json!({}), &["--for", "30"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("subscription ended: the connection was lost"),
        "{text}\nstderr: {}",
        stderr(&out)
    );
}

#[test]
fn watch_is_in_the_help_and_checks_its_options() {
    let out = cli(&["watch", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = stdout(&out);
    assert!(help.contains("usage: umcp [OPTIONS] watch"), "{help}");
    assert!(help.contains("Ctrl-C"), "{help}");
    let out = cli(&["--help"]);
    for flag in [
        "--tools",
        "--prompts",
        "--resources",
        "--resource URI",
        "--for SECS",
    ] {
        assert!(stdout(&out).contains(flag), "{flag}");
    }
    let out = cli(&["--stdio", "demo", "--for", "0", "watch"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// Without `--server`, `watch` follows every server of the configuration, each line naming
/// its server; one server's end is its own last line while the others go on.
#[test]
fn watch_follows_every_server_of_a_configuration() {
    let demo = demo::demo_binary();
    let server = |modern: bool, tool: &str, arguments: Value| {
        let mut args = vec![
            json!("-c"),
            json!(WRAPPER),
            json!(demo),
            json!("--server"),
            json!("--fixtures"),
        ];
        if modern {
            args.push(json!("--modern"));
        }
        json!({
            "command": "sh",
            "args": args,
            "env": {"UMCP_CALL": injected_call(tool, arguments).to_string(), "UMCP_AFTER": "0"},
            "protocol": if modern { "modern" } else { "legacy" },
        })
    };
    let config = json!({"mcpServers": {
        "old": server(false, "list_changed", json!({"what": "tools"})),
        "new": server(true, "list_changed", json!({"what": "prompts"})),
        "ends": server(true, "end_subscriptions", json!({})),
    }});
    let path = std::env::temp_dir().join(format!("umcp-watch-all-{}.json", std::process::id()));
    std::fs::write(&path, config.to_string()).expect("config file");
    let file = path.to_string_lossy().into_owned();

    let out = cli(&["--config", &file, "watch", "--for", "3"]);
    succeeded(&out);
    let text = lines(&out);
    let count = |line: &str| text.iter().filter(|l| *l == line).count();
    assert!(
        count("old: notifications/tools/list_changed") >= 2,
        "{text:?}"
    );
    assert!(
        count("new: notifications/prompts/list_changed") >= 2,
        "{text:?}"
    );
    assert_eq!(
        count("ends: subscription ended: the server ended it"),
        1,
        "{text:?}"
    );
    assert_eq!(
        text.len(),
        count("old: notifications/tools/list_changed")
            + count("new: notifications/prompts/list_changed")
            + 1,
        "{text:?}"
    );

    let out = cli(&["--config", &file, "--json", "watch", "--for", "3"]);
    succeeded(&out);
    let events: Vec<Value> = lines(&out)
        .iter()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    for server in ["old", "new"] {
        assert!(
            events.iter().filter(|e| e["server"] == server).count() >= 2,
            "{events:?}"
        );
    }
    let ended = json!({"server": "ends", "event": "ended", "reason": "the server ended it"});
    assert!(events.contains(&ended), "{events:?}");
    let _ = std::fs::remove_file(&path);
}
