//! Exits, crashes and closing: the process group is killed and reaped, and no process or thread is
//! left behind.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::time::{Duration, Instant};

use umcp::jsonrpc::Message;
use umcp::{Error, StdioConfig};

use crate::{
    connect, deadline, ms, next_closed, next_message, notification, params_of, serial, sh, SOON,
};

/// A shell line printing a notification `method` whose params are `{"pid": <expr>}`.
fn print_pid(method: &str, expr: &str) -> String {
    format!(
        r#"echo "{{\"jsonrpc\":\"2.0\",\"method\":\"{method}\",\"params\":{{\"pid\":{expr}}}}}""#
    )
}

fn pid_from(message: Message, method: &str) -> u32 {
    params_of(message, method)["pid"].as_u64().expect("a pid") as u32
}

/// Whether process `pid` has ended (gone, or a zombie waiting for init).
fn ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// The pids of this process's children, zombies included.
fn children() -> Vec<u32> {
    let me = std::process::id().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(pid) = name.parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        if rest.split_whitespace().nth(1) == Some(me.as_str()) {
            found.push(pid);
        }
    }
    found
}

fn thread_count() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

#[test]
fn a_crash_is_reported_with_status_and_stderr_tail() {
    let _serial = serial();
    let (transport, rx) = connect(&sh("read line; echo 'fatal: boom' >&2; exit 3"));
    transport.send(&notification("go"), deadline()).unwrap();
    let closed = next_closed(&rx, ms(2000));
    assert_eq!(closed.reason, "server exited");
    assert_eq!(closed.exit_status.and_then(|s| s.code()), Some(3));
    assert_eq!(closed.stderr_tail.as_deref(), Some("fatal: boom\n"));
    match transport.send(&notification("late"), deadline()) {
        Err(Error::Closed(info)) => {
            assert_eq!(info.exit_status.and_then(|s| s.code()), Some(3));
            assert!(info.to_string().contains("fatal: boom"), "{info}");
        }
        other => panic!("{other:?}"),
    }
    transport.close();
    assert!(
        rx.recv_timeout(ms(100)).is_err(),
        "the end is reported once"
    );
}

#[test]
fn an_exit_is_noticed_while_a_grandchild_holds_stdout() {
    let _serial = serial();
    let script = format!(
        "sleep 1000 & {}; echo bye >&2; exit 4",
        print_pid("pid", "$!")
    );
    let (transport, rx) = connect(&sh(&script).close_grace(ms(200)));
    let grandchild = pid_from(next_message(&rx), "pid");
    let closed = next_closed(&rx, ms(3000));
    assert_eq!(closed.exit_status.and_then(|s| s.code()), Some(4));
    assert_eq!(closed.stderr_tail.as_deref(), Some("bye\n"));
    assert!(!ended(grandchild));
    let started = Instant::now();
    transport.close();
    assert!(started.elapsed() < SOON);
    assert!(ended(grandchild), "the grandchild outlived close");
}

#[test]
fn close_kills_the_whole_process_group() {
    let _serial = serial();
    let script = format!("sleep 1000 & {}; sleep 1000", print_pid("pid", "$!"));
    let (transport, rx) = connect(&sh(&script).close_grace(ms(200)));
    let grandchild = pid_from(next_message(&rx), "pid");
    assert!(!ended(grandchild));
    let started = Instant::now();
    transport.close();
    assert!(started.elapsed() < ms(200) + SOON);
    assert!(ended(grandchild), "the grandchild outlived close");
    let closed = next_closed(&rx, SOON);
    assert_eq!(closed.reason, "closed by client");
    assert_eq!(
        closed.exit_status.and_then(|s| s.signal()),
        Some(15),
        "{closed:?}"
    );
}

#[test]
fn a_server_ignoring_sigterm_is_killed() {
    let _serial = serial();
    let script = r#"trap '' TERM; echo '{"jsonrpc":"2.0","method":"ready"}'; sleep 1000"#;
    let config = sh(script).close_grace(ms(200)).kill_grace(ms(300));
    let (transport, rx) = connect(&config);
    params_of(next_message(&rx), "ready");
    let started = Instant::now();
    transport.close();
    assert!(started.elapsed() < ms(500) + SOON);
    let closed = next_closed(&rx, SOON);
    assert_eq!(
        closed.exit_status.and_then(|s| s.signal()),
        Some(9),
        "{closed:?}"
    );
}

#[test]
fn drop_closes_and_reaps_without_a_call_to_close() {
    let _serial = serial();
    let script = format!("{}; exec sleep 1000", print_pid("pid", "$$"));
    let (transport, rx) = connect(&sh(&script).close_grace(ms(100)).kill_grace(ms(100)));
    let pid = pid_from(next_message(&rx), "pid");
    drop(transport);
    assert_eq!(next_closed(&rx, SOON).reason, "closed by client");
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the server was not reaped"
    );
}

#[test]
fn a_server_closing_stdout_is_reported_closed() {
    let _serial = serial();
    let (transport, rx) =
        connect(&sh("exec 1>&-; echo closing >&2; exec sleep 1000").close_grace(ms(200)));
    let closed = next_closed(&rx, ms(5000));
    assert_eq!(closed.reason, "server closed its output");
    assert!(closed.exit_status.is_none());
    assert!(matches!(
        transport.send(&notification("x"), deadline()),
        Err(Error::Closed(_))
    ));
    let started = Instant::now();
    transport.close();
    assert!(started.elapsed() < ms(200) + SOON);
}

#[test]
fn many_connections_leave_no_processes_or_threads_behind() {
    let _serial = serial();
    let cycle = || {
        let (transport, rx) = connect(&StdioConfig::new("cat"));
        transport.send(&notification("ping"), deadline()).unwrap();
        assert_eq!(next_message(&rx), notification("ping"));
        transport.close();
        next_closed(&rx, SOON);
    };
    for _ in 0..5 {
        cycle();
    }
    let threads_before = thread_count();
    for _ in 0..200 {
        cycle();
    }
    let threads_after = thread_count();
    assert!(
        threads_after <= threads_before + 4,
        "{threads_before} -> {threads_after} threads"
    );
    assert_eq!(
        children(),
        Vec::<u32>::new(),
        "children (or zombies) are left"
    );
}

#[test]
fn a_process_escaping_the_group_cannot_hang_close() {
    let _serial = serial();
    // setsid moves the sleep out of the server's process group with the pipes still open; it
    // prints its pid once it is out.
    let escapee = format!("{}; exec sleep 1000", print_pid("pid", "$$"));
    let script = format!("setsid sh -c '{escapee}' & exec sleep 1000");
    let (transport, rx) = connect(&sh(&script).close_grace(ms(100)).kill_grace(ms(100)));
    let escaped = pid_from(next_message(&rx), "pid");
    let started = Instant::now();
    transport.close();
    let took = started.elapsed();
    let still_there = !ended(escaped);
    let _ = std::process::Command::new("kill")
        .args(["-9", &escaped.to_string()])
        .status();
    assert!(took < ms(200) + SOON, "close took {took:?}");
    assert!(still_there, "the escaped process was not outside the group");
    assert_eq!(next_closed(&rx, SOON).reason, "closed by client");
}

#[test]
fn unlimited_grace_periods_are_accepted() {
    let _serial = serial();
    let config = StdioConfig::new("cat")
        .close_grace(Duration::MAX)
        .kill_grace(Duration::MAX);
    let (transport, rx) = connect(&config);
    transport.send(&notification("n"), deadline()).unwrap();
    assert_eq!(next_message(&rx), notification("n"));
    // `cat` exits on EOF, so the unlimited grace is never waited out.
    transport.close();
    assert_eq!(next_closed(&rx, SOON).reason, "closed by client");
}
