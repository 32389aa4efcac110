//! What `/proc` says about a client's process, its server and the whole machine.

use std::path::PathBuf;

/// Voluntary and involuntary context switches of every live thread of a process (`self` or a
/// process id).
pub fn context_switches(process: &str) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{process}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .map(|task| context_switches_in(task.path().join("status")))
        .sum()
}

/// The calling thread's CPU time so far, in ns, and its context switches (`/proc/thread-self`).
/// The threads making the calls read their own before they end: a thread that has ended is
/// no longer among a process's tasks.
pub fn this_thread() -> (u64, u64) {
    let cpu = std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|stat| stat.split_whitespace().next()?.parse().ok())
        .unwrap_or(0);
    (cpu, context_switches_in("/proc/thread-self/status"))
}

/// The voluntary and involuntary context switches in one task's `status` file.
fn context_switches_in(status: impl AsRef<std::path::Path>) -> u64 {
    let Ok(status) = std::fs::read_to_string(status) else {
        return 0;
    };
    status
        .lines()
        .filter(|l| l.contains("ctxt_switches:"))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum()
}

/// CPU time used so far, in ns, by every thread of a process (`self` or a process id) and of
/// its children (the server), from `/proc/*/task/*/schedstat`: children's time counts while they run, not only
/// once they are waited for.
pub fn cpu_ns(process: &str) -> u64 {
    let tasks = |pid: &str| -> Vec<PathBuf> {
        let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            return vec![];
        };
        dir.flatten().map(|t| t.path()).collect()
    };
    let ns = |task: &PathBuf| -> u64 {
        let stat = std::fs::read_to_string(task.join("schedstat")).unwrap_or_default();
        stat.split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    let own = tasks(process);
    let children: Vec<PathBuf> = own
        .iter()
        .filter_map(|t| std::fs::read_to_string(t.join("children")).ok())
        .flat_map(|c| c.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
        .flat_map(|pid| tasks(&pid))
        .collect();
    own.iter().chain(&children).map(ns).sum()
}

/// The machine's busy and total time so far, in clock ticks, from `/proc/stat`.
pub fn machine_ticks() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let ticks: Vec<u64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .filter_map(|t| t.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal; guest time is counted in user already.
    let total: u64 = ticks.iter().take(8).sum();
    let idle = ticks.get(3)? + ticks.get(4).unwrap_or(&0);
    Some((total - idle, total))
}

/// The share of the machine's time that was busy since `before`.
pub fn machine_busy(before: Option<(u64, u64)>) -> f64 {
    match (before, machine_ticks()) {
        (Some((busy, total)), Some((busy_now, total_now))) if total_now > total => {
            busy_now.saturating_sub(busy) as f64 / (total_now - total) as f64
        }
        _ => f64::NAN,
    }
}

/// A `kB` field of `/proc/self/status`.
pub fn status_kb(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
