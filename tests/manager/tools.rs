//! The group's tools: namespacing and routing, deterministic disambiguation of collisions, and the
//! tool cache.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use umcp::{Manager, ManagerOptions, ServerConfig, ServerStatus, StdioConfig};

use crate::{demo, demo_server, options, stuck, stuck_server, text, BOUND};

/// A fresh directory under the system's temporary directory.
pub(crate) fn temp_dir(label: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("umcp-manager-{label}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn tool_names(manager: &Manager) -> Vec<String> {
    manager.known_tools().into_iter().map(|e| e.name).collect()
}

#[test]
fn tools_are_namespaced_and_routed_to_their_server() {
    let manager = Manager::start(
        vec![
            ServerConfig::new("one", demo().env("WHO", "first")),
            // The separator inside a server name is harmless: names are looked up, not split.
            ServerConfig::new("one__two", demo().env("WHO", "second")),
        ],
        options(),
    );
    assert!(manager.wait_ready(BOUND));
    let names = tool_names(&manager);
    assert!(names.contains(&"one__echo".to_owned()), "{names:?}");
    assert!(names.contains(&"one__two__echo".to_owned()), "{names:?}");
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), names.len());

    let who = |tool: &str| text(&manager.call_tool(tool, json!({"name": "WHO"})).unwrap());
    assert_eq!(who("one__env"), "first");
    assert_eq!(who("one__two__env"), "second");
    let err = manager.call_tool("echo", json!({})).unwrap_err();
    assert_eq!(
        err.to_string(),
        "no tool named `echo`; did you mean `one__echo` or `one__two__echo`?"
    );

    let dotted = Manager::start(vec![demo_server("d")], options().with_separator("."));
    assert!(dotted.wait_ready(BOUND));
    assert!(tool_names(&dotted).contains(&"d.echo".to_owned()));

    // Portable names: what an LLM API takes, routed all the same.
    let portable = Manager::start(
        vec![ServerConfig::new(
            "my server.v2",
            demo().env("WHO", "portable"),
        )],
        options().with_portable_names(64),
    );
    assert!(portable.wait_ready(BOUND));
    let names = tool_names(&portable);
    assert!(names.contains(&"my_server_v2__env".to_owned()), "{names:?}");
    let valid = |n: &String| {
        n.len() <= 64
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    assert!(names.iter().all(valid), "{names:?}");
    let result = portable.call_tool("my_server_v2__env", json!({"name": "WHO"}));
    assert_eq!(text(&result.unwrap()), "portable");
}

/// Writes a cache file for `server` holding tools of these names.
pub(crate) fn write_cache(options: &ManagerOptions, server: &ServerConfig, tools: &[&str]) {
    let tools: Vec<Value> = tools
        .iter()
        .map(|name| json!({"name": name, "inputSchema": {"type": "object"}}))
        .collect();
    let path = options.cache_file(server).expect("cache on");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let body = json!({"version": 1, "server": server.name, "savedAt": 0, "tools": tools});
    // As the manager writes it: only its owner may read or write it, or it is not trusted.
    let mut file = std::fs::OpenOptions::new();
    file.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut file, 0o600);
    let mut file = file.open(path).unwrap();
    std::io::Write::write_all(&mut file, body.to_string().as_bytes()).unwrap();
}

#[test]
fn colliding_names_are_disambiguated_deterministically() {
    let dir = temp_dir("collide");
    let options = options().with_cache_dir(&dir);
    let a = stuck_server("a", BOUND);
    let ab = ServerConfig::new("a__b", stuck().arg("extra")).with_startup_timeout(BOUND);
    write_cache(&options, &a, &["b__c", "x", "x", "x_2"]);
    write_cache(&options, &ab, &["c"]);
    // Both servers stay in start-up, so their cached tools are what is offered.
    let manager = Manager::start(vec![ab, a], options);
    let tools = manager.known_tools();
    let listed: Vec<(&str, &str, &str)> = tools
        .iter()
        .map(|e| (e.name.as_str(), e.server.as_str(), e.tool.name.as_str()))
        .collect();
    assert_eq!(
        listed,
        [
            ("a__b__c", "a", "b__c"),
            ("a__x", "a", "x"),
            ("a__x_3", "a", "x"),
            ("a__x_2", "a", "x_2"),
            ("a__b__c_2", "a__b", "c"),
        ]
    );
    assert!(tools.iter().all(|e| e.stale));
    let started = Instant::now();
    manager.close();
    assert!(started.elapsed() < BOUND);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_tool_name_never_routes_to_another_server_after_its_own_fails() {
    let dir = temp_dir("stable");
    let options = options().with_cache_dir(&dir).with_reconnect_attempts(0);
    // `a` fails once its start-up timeout passes; `a__b` stays in start-up throughout.
    let a = stuck_server("a", Duration::from_secs(5));
    // Other arguments, so that the two servers' cache files differ.
    let ab = ServerConfig::new("a__b", stuck().arg("1001")).with_startup_timeout(BOUND);
    write_cache(&options, &a, &["b__c"]);
    write_cache(&options, &ab, &["c"]);
    let manager = Manager::start(vec![ab, a], options);
    let named = |manager: &Manager| -> Vec<(String, String)> {
        let tools = manager.known_tools();
        tools.into_iter().map(|e| (e.name, e.server)).collect()
    };
    assert_eq!(
        named(&manager),
        [
            ("a__b__c".to_owned(), "a".to_owned()),
            ("a__b__c_2".to_owned(), "a__b".to_owned())
        ]
    );

    let deadline = Instant::now() + BOUND;
    while !matches!(manager.status("a"), Some(ServerStatus::Failed { .. })) {
        assert!(Instant::now() < deadline, "{:?}", manager.status("a"));
        std::thread::sleep(Duration::from_millis(20));
    }
    // `a`'s tool is gone from the list, and `a__b`'s keeps the name it was given.
    assert_eq!(
        named(&manager),
        [("a__b__c_2".to_owned(), "a__b".to_owned())]
    );
    // The old name still means `a`'s tool: the call fails with `a`'s error.
    let failed = manager.client("a").unwrap_err().to_string();
    let err = manager.call_tool("a__b__c", json!({})).unwrap_err();
    assert_eq!(err.to_string(), failed);
    drop(manager);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn cached_tools_are_served_stale_while_a_slow_server_starts() {
    let dir = temp_dir("slow");
    let options = options().with_cache_dir(&dir);
    let binary = demo::demo_binary().to_string_lossy().into_owned();
    let slow = ServerConfig::new(
        "slow",
        StdioConfig::new("sh").args(["-c", "sleep 2; exec \"$0\" --server --fixtures", &binary]),
    );
    write_cache(&options, &slow, &["echo", "retired"]);
    let cache_file = options.cache_file(&slow).unwrap();

    let manager = Manager::start(vec![slow], options);
    let tools = manager.known_tools();
    let names: Vec<&str> = tools.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["slow__echo", "slow__retired"]);
    assert!(tools.iter().all(|e| e.stale));
    assert!(matches!(
        manager.status("slow"),
        Some(ServerStatus::Connecting { .. })
    ));

    // The call waits for the server to start, then goes through.
    let result = manager
        .call_tool("slow__echo", json!({"message": "patience"}))
        .unwrap();
    assert_eq!(text(&result), "patience");

    let tools = manager.known_tools();
    assert!(tools.iter().all(|e| !e.stale));
    assert!(tools.iter().any(|e| e.name == "slow__crash"));
    assert!(!tools.iter().any(|e| e.name == "slow__retired"));
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(cache_file).unwrap()).unwrap();
    let saved: Vec<&str> = saved["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        saved.contains(&"crash") && !saved.contains(&"retired"),
        "{saved:?}"
    );
    drop(manager);
    let _ = std::fs::remove_dir_all(dir);
}

/// A name of a server that failed to start says that server is down and why, not just that
/// the name is unknown; a name of no configured server stays a plain unknown name.
#[test]
fn a_name_of_a_server_that_is_down_says_so() {
    let manager = Manager::start(
        vec![
            demo_server("up"),
            ServerConfig::stdio("missing", "/nonexistent/umcp-no-such-server"),
        ],
        options().with_reconnect_attempts(0),
    );
    assert!(manager.wait_ready(BOUND));
    let err = manager.call_tool("missing__echo", json!({})).unwrap_err();
    let shown = err.to_string();
    assert!(matches!(err, umcp::Error::Invalid(_)), "{err:?}");
    assert!(
        shown.starts_with(
            "no tool named `missing__echo`: server `missing` is not connected \
             (failed: failed to start `/nonexistent/umcp-no-such-server`"
        ),
        "{shown}"
    );
    let err = manager
        .get_prompt("missing__greet", Value::Null)
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("no prompt named `missing__greet`: server `missing` is not"),
        "{err}"
    );
    // A connected server's unknown tool, and a server nobody configured: no such hint.
    let err = manager.call_tool("up__nothing", json!({})).unwrap_err();
    assert_eq!(err.to_string(), "no tool named `up__nothing`");
    let err = manager.call_tool("nope__echo", json!({})).unwrap_err();
    assert_eq!(err.to_string(), "no tool named `nope__echo`");
}

/// A call made while its server is still starting waits for it, as for a name from the
/// cache, rather than fail because nothing is listed yet.
#[test]
fn a_call_to_a_server_still_starting_waits_for_its_tools() {
    let slow = ServerConfig::new("slow", demo().args(["--start-delay", "500"]));
    let manager = Manager::start(vec![slow], options());
    let started = Instant::now();
    let result = manager.call_tool("slow__echo", json!({"message": "hi"}));
    assert_eq!(text(&result.expect("the call waits")), "hi");
    assert!(started.elapsed() >= Duration::from_millis(400));
}
