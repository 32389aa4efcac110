//! `umcp tasks list|get|cancel|result` against a server that runs tasks.

use crate::fake::run_with;
use umcp_test_support::installed::{stderr, stdout};

#[test]
fn tasks_are_listed_shown_cancelled_and_their_results_read() {
    let server = crate::sessions::stateful();
    let list = stdout(&run_with(&server, &["tasks", "list"], 0));
    assert_eq!(list, "t-1  working  reading the files\nt-2  completed\n");
    let json = run_with(&server, &["--json", "tasks", "list"], 0);
    let rows: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(rows[1]["task"]["status"], "completed", "{rows}");
    let task = stdout(&run_with(&server, &["tasks", "get", "t-1"], 0));
    assert!(task.starts_with("taskId: t-1\nstatus: working\n"), "{task}");
    assert!(task.contains("pollInterval: 500\n"), "{task}");
    let cancelled = stdout(&run_with(&server, &["tasks", "cancel", "t-1"], 0));
    assert!(cancelled.contains("status: cancelled\n"), "{cancelled}");
    let result = stdout(&run_with(&server, &["tasks", "result", "t-2"], 0));
    assert_eq!(result, "the findings\n");
    let unknown = run_with(&server, &["tasks", "get", "t-9"], 1);
    assert!(
        stderr(&unknown).contains("no task t-9"),
        "{}",
        stderr(&unknown)
    );
    let bad = run_with(&server, &["tasks", "frob", "t-1"], 2);
    assert!(
        stderr(&bad).contains("bad arguments: umcp tasks"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn a_server_without_tasks_says_so() {
    let out = crate::fake::run(&[], &["tasks", "list"], 1);
    assert!(
        stderr(&out).contains("offers no task listing"),
        "{}",
        stderr(&out)
    );
}
