//! `umcp lock`: the servers' tools pinned in `mcp.lock`, or checked against it (`--check`).
//!
//! The lock is made from what each server lists now, after the configuration's allowed and
//! excluded tools: a tool filtered out is neither locked nor offered. The same servers give
//! the same bytes, so a lock is rewritten only when something changed.

use std::path::{Path, PathBuf};

use umcp::lock::{Lockfile, ServerIdentity, ServerLock};
use umcp::{Manager, RequestOptions};

use crate::args::Args;
use crate::drift;
use crate::exit::{usage, Exit, DRIFTED};
use crate::output::{say, warn};
use crate::pinned::load;
use crate::run::{self, Configured};
use crate::shown;
use crate::signals::Shutdown;
use crate::spec::Cmd;

/// `umcp lock [--check] [--out FILE]`.
pub fn run(args: &Args, cmd: &Cmd, shutdown: &Shutdown) -> Result<(), Exit> {
    if args.frozen {
        return Err(usage(
            "--frozen pins the other commands: lock reads the servers as they are",
        ));
    }
    let configured = run::configured(args, cmd)?;
    let path = args
        .out
        .as_ref()
        .map(PathBuf::from)
        .unwrap_or_else(|| configured.lockfile.clone());
    let names: Vec<String> = configured.servers.iter().map(|s| s.name.clone()).collect();
    // Pruning the servers the file no longer names needs the whole file, not --server's one.
    let in_file = configured.in_file.clone().filter(|_| args.server.is_none());
    let unpinned = Configured {
        lock: None,
        ..configured
    };
    let connected = run::connect(args, unpinned, shutdown)?;
    let (locked, failed) = lock_servers(&connected.manager, &names, args);
    connected.finish();
    let result = match args.check {
        true => check(args, &path, &locked, in_file.as_deref()),
        false => write(args, &path, &locked, in_file.as_deref()),
    };
    match (result, failed.is_empty()) {
        (Err(exit), _) => Err(exit),
        (Ok(()), true) => Ok(()),
        (Ok(()), false) => Err(Exit(
            3,
            format!(
                "not {}: {}",
                if args.check { "checked" } else { "locked" },
                failed.join(", ")
            ),
        )),
    }
}

/// The lock of each server of `names` that lists its tools, and the servers that did not.
fn lock_servers(
    manager: &Manager,
    names: &[String],
    args: &Args,
) -> (Vec<ServerLock>, Vec<String>) {
    let options = RequestOptions::default().with_timeout(args.timeout);
    let mut locked = Vec::new();
    let mut failed = Vec::new();
    for name in names {
        let listed = manager.client(name).and_then(|client| {
            let tools = client.with(&options).list_all_tools()?;
            Ok(ServerLock::new(
                name.clone(),
                ServerIdentity::from(&client.server_info()),
                &tools,
            ))
        });
        match listed {
            Ok(lock) => locked.push(lock),
            Err(error) => {
                // A server that never connected was reported when connecting.
                if manager.status(name).is_some_and(|s| s.is_connected()) {
                    let why = shown::block(&error.to_string());
                    warn(&format!(
                        "umcp: server `{name}`: listing tools failed: {why}"
                    ));
                }
                failed.push(format!("`{name}`"));
            }
        }
    }
    (locked, failed)
}

/// Writes the lock: `locked` over what the lockfile had, the servers that failed keeping their
/// entries, and those the configuration file no longer names (`in_file`) dropped.
fn write(
    args: &Args,
    path: &Path,
    locked: &[ServerLock],
    in_file: Option<&[String]>,
) -> Result<(), Exit> {
    let shown_path = shown::line(&path.display().to_string());
    let old_text = std::fs::read_to_string(path).ok();
    let mut lock = match old_text.as_deref().map(Lockfile::parse) {
        Some(Ok(lock)) => lock,
        Some(Err(error)) => {
            let why = shown::block(&error.to_string());
            warn(&format!("umcp: {shown_path}: {why}; it is written anew"));
            Lockfile::new()
        }
        None => Lockfile::new(),
    };
    if let Some(in_file) = in_file {
        let gone: Vec<String> = lock
            .servers()
            .map(|s| s.name().to_owned())
            .filter(|name| !in_file.contains(name))
            .collect();
        for name in gone {
            lock.remove(&name);
        }
    }
    for server in locked {
        lock.insert(server.clone());
    }
    let text = lock.to_json_string();
    let written = old_text.as_deref() != Some(text.as_str());
    if written {
        lock.save(path)
            .map_err(|e| Exit(1, shown::block(&e.to_string())))?;
    }
    if args.json {
        let servers: serde_json::Map<String, serde_json::Value> = locked
            .iter()
            .map(|s| (s.name().to_owned(), serde_json::json!(s.tools().count())))
            .collect();
        let report = serde_json::json!({"lockfile": path, "written": written, "tools": servers});
        say(&crate::output::pretty(&report));
        return Ok(());
    }
    for server in locked {
        let who = server.identity();
        say(&format!(
            "{}: {} tools ({})",
            shown::line(server.name()),
            server.tools().count(),
            shown::line(&format!("{} {}", who.name, who.version))
        ));
    }
    say(&match written {
        true => format!("wrote {shown_path}"),
        false => format!("{shown_path} is up to date"),
    });
    Ok(())
}

/// Compares the servers with the lockfile: `locked` against their entries, and, for the
/// whole file (`in_file`), the entries of servers it no longer names.
fn check(
    args: &Args,
    path: &Path,
    locked: &[ServerLock],
    in_file: Option<&[String]>,
) -> Result<(), Exit> {
    let lock = load(path, "lock --check")?;
    let mut old = Lockfile::new();
    let mut new = Lockfile::new();
    for server in locked {
        if let Some(entry) = lock.server(server.name()) {
            old.insert(entry.clone());
        }
        new.insert(server.clone());
    }
    if let Some(in_file) = in_file {
        for entry in lock
            .servers()
            .filter(|s| !in_file.iter().any(|n| n == s.name()))
        {
            old.insert(entry.clone());
        }
    }
    let diff = old.diff(&new);
    let shown_path = shown::line(&path.display().to_string());
    if args.json {
        say(diff.to_json_string().trim_end());
    } else if diff.is_empty() {
        say(&format!("{shown_path}: the servers' tools are as locked"));
    } else {
        for line in drift::text(&diff, &shown_path) {
            say(&line);
        }
    }
    match diff.is_empty() {
        true => Ok(()),
        false => Err(Exit(
            DRIFTED,
            format!("the servers' tools drifted from {shown_path}"),
        )),
    }
}
