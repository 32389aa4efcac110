//! Spawning a stdio server: a round trip, spawn failures, the allow-listed environment and the
//! working directory.

use std::path::Path;
use std::time::Instant;

use serde_json::json;
use umcp::jsonrpc::{Message, Request};
use umcp::transport::{Connect, Inbox};
use umcp::{EnvPolicy, Error, StdioConfig};

use crate::{
    connect, deadline, next_closed, next_message, notification, params_of, python, serial, SOON,
};

#[test]
fn smoke_echo_round_trip_through_cat() {
    let _serial = serial();
    let config = StdioConfig::new("cat");
    assert_eq!(config.describe(), "cat");
    let (transport, rx) = connect(&config);
    assert_eq!(transport.kind(), "stdio");

    let request = Message::from(Request::new(1, "tools/list", Some(json!({"text": "a\nb"}))));
    transport.send(&request, deadline()).unwrap();
    assert_eq!(next_message(&rx), request);
    transport.send(&notification("n"), deadline()).unwrap();
    assert_eq!(next_message(&rx), notification("n"));

    let started = Instant::now();
    transport.close();
    assert!(started.elapsed() < SOON);
    let closed = next_closed(&rx, SOON);
    assert_eq!(closed.reason, "closed by client");
    assert!(
        closed.exit_status.is_some_and(|s| s.success()),
        "{closed:?}"
    );
    transport.close();
    assert!(rx.try_recv().is_err(), "the end is reported once");
    match transport.send(&notification("late"), deadline()) {
        Err(Error::Closed(info)) => assert_eq!(info.reason, "closed by client"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn spawn_failure_names_the_command() {
    let _serial = serial();
    let (inbox, _rx) = Inbox::new();
    match StdioConfig::new("/nonexistent/umcp-no-such-server").connect(inbox) {
        Err(Error::Spawn { command, source }) => {
            assert_eq!(command, "/nonexistent/umcp-no-such-server");
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        Err(other) => panic!("{other:?}"),
        Ok(_) => panic!("a missing program started"),
    }
}

#[test]
fn spawn_failure_says_what_is_missing() {
    let _serial = serial();
    let spawn_error = |config: StdioConfig| match config.connect(Inbox::new().0) {
        Err(Error::Spawn { source, .. }) => {
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
            source.to_string()
        }
        Err(other) => panic!("{other:?}"),
        Ok(_) => panic!("the server started"),
    };
    // The program exists; the directory does not, which the OS reports as a missing file.
    let program = std::env::current_exe().unwrap();
    let missing = std::env::temp_dir().join("umcp-no-such-dir").join("deeper");
    let config = StdioConfig::new(program.to_string_lossy()).cwd(&missing);
    let message = spawn_error(config);
    assert!(message.contains("working directory"), "{message}");
    assert!(message.contains(&*missing.to_string_lossy()), "{message}");
    // A whole command line given as the program's name.
    let message = spawn_error(StdioConfig::new("umcp-no-such-program --stdio x"));
    assert!(message.contains("from_command_line"), "{message}");
}

#[test]
fn environment_is_allow_listed_by_default() {
    let _serial = serial();
    std::env::set_var("UMCP_TEST_SECRET_TOKEN", "hunter2");
    std::env::set_var("LC_UMCP_TEST", "kept");
    std::env::set_var("https_proxy", "http://proxy.test:3128");
    let dump = "import os, json; print(json.dumps({'jsonrpc': '2.0', 'method': 'env', 'params': dict(os.environ)}))";
    let env_of = |config: StdioConfig| {
        let (transport, rx) = connect(&config);
        let env = params_of(next_message(&rx), "env");
        transport.close();
        env
    };

    let env = env_of(
        python(dump)
            .env("UMCP_CONFIGURED", "yes")
            .env("TERM", "umcp-term"),
    );
    assert!(
        env.get("UMCP_TEST_SECRET_TOKEN").is_none(),
        "the secret leaked: {env}"
    );
    assert_eq!(env["PATH"].as_str(), std::env::var("PATH").ok().as_deref());
    if let Ok(home) = std::env::var("HOME") {
        assert_eq!(env["HOME"], home.as_str());
    }
    assert_eq!(env["LC_UMCP_TEST"], "kept");
    assert_eq!(
        env["https_proxy"], "http://proxy.test:3128",
        "a server reaches the network the way its parent does"
    );
    assert_eq!(env["UMCP_CONFIGURED"], "yes");
    assert_eq!(env["TERM"], "umcp-term", "configured variables win");

    let env = env_of(python(dump).env_policy(EnvPolicy::InheritAll));
    assert_eq!(env["UMCP_TEST_SECRET_TOKEN"], "hunter2");

    let env = env_of(
        python(dump)
            .env_policy(EnvPolicy::Clear)
            .env("ONLY", "this"),
    );
    assert!(
        env.get("UMCP_TEST_SECRET_TOKEN").is_none() && env.get("PATH").is_none(),
        "{env}"
    );
    assert_eq!(env["ONLY"], "this");

    std::env::remove_var("UMCP_TEST_SECRET_TOKEN");
    std::env::remove_var("LC_UMCP_TEST");
    std::env::remove_var("https_proxy");
}

#[test]
fn working_directory_is_applied() {
    let _serial = serial();
    let dir = std::env::temp_dir().canonicalize().unwrap();
    let script = "import os, json; print(json.dumps({'jsonrpc': '2.0', 'method': 'cwd', 'params': {'cwd': os.getcwd()}}))";
    let (transport, rx) = connect(&python(script).cwd(&dir));
    let cwd = params_of(next_message(&rx), "cwd");
    assert_eq!(
        Path::new(cwd["cwd"].as_str().unwrap())
            .canonicalize()
            .unwrap(),
        dir
    );
    transport.close();
}
