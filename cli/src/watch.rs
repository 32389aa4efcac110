//! `umcp watch`: the notifications of one server, or of every connected server, as they
//! arrive.
//!
//! Each server is followed through its client's own subscription rather than the manager's:
//! the command line never reconnects (no restart to survive), and the client's handle tells
//! how the subscription ended, which becomes that server's last line and the exit code.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Instant;

use serde_json::{json, Value};
use umcp::types::SubscriptionFilter;
use umcp::{Client, Subscription, SubscriptionEnd, SubscriptionEvent};

use crate::exit::Exit;
use crate::output::warn;
use crate::shown;
use crate::target::Target;

/// Follows the target's server (or every connected one) until `--for` runs out or every
/// subscription has ended. The exit code is the worst end: 3 for a lost connection, 1 for a failed
/// subscription, else 0.
pub fn run(target: &Target<'_>) -> Result<(), Exit> {
    let (wanted, limit) = &target.watch;
    let filter = match wanted.is_empty() {
        true => SubscriptionFilter::all_lists(),
        false => wanted.clone(),
    };
    let clients: Vec<(Option<String>, Arc<Client>)> = match &target.single {
        Some(_) => vec![(None, target.client()?)],
        None => target
            .clients()
            .into_iter()
            .map(|(name, client)| (Some(name), client))
            .collect(),
    };
    if clients.is_empty() {
        return Err(Exit(3, "umcp: no server is connected".into()));
    }
    let mut followed = Vec::new();
    let mut worst = 0;
    for (name, client) in clients {
        let prefix = name
            .as_deref()
            .map(|n| format!("{n}: "))
            .unwrap_or_default();
        match client.listen(filter.clone()) {
            Ok(sub) => {
                check_granted(&sub, &filter, &prefix);
                followed.push((name, sub));
            }
            // One server alone: its refusal is the command's; among several, the others go on.
            Err(e) if target.single.is_some() => return Err(target.failed(e)),
            Err(e) => {
                warn(&format!("umcp: {prefix}{}", shown::block(&e.to_string())));
                worst = worst.max(target.failed(e).0);
            }
        }
    }
    if followed.is_empty() {
        return Err(Exit(worst.max(1), String::new()));
    }
    let deadline = limit.and_then(|limit| Instant::now().checked_add(limit));
    let json = target.out.json;
    let stop = AtomicBool::new(false);
    let codes: Vec<u8> = thread::scope(|scope| {
        let followers: Vec<_> = followed
            .iter()
            .map(|(name, sub)| {
                let follower = Follower {
                    name: name.as_deref(),
                    json,
                    stop: &stop,
                    deadline: &target.deadline,
                };
                // A session's watch prints on its caller's console, which is the thread's.
                let console = crate::console::inherited();
                thread::Builder::new()
                    .name("umcp-watch".into())
                    .spawn_scoped(scope, move || {
                        let _console = crate::console::redirect_thread(console);
                        follower.follow(sub, deadline)
                    })
            })
            .collect();
        followers
            .into_iter()
            .map(|f| match f {
                Ok(f) => f.join().unwrap_or(1),
                Err(e) => {
                    warn(&format!("umcp: could not follow a server: {e}"));
                    1
                }
            })
            .collect()
    });
    match codes.into_iter().fold(worst, u8::max) {
        0 => Ok(()),
        code => Err(Exit(code, String::new())),
    }
}

/// Says on stderr when the server grants less than was asked.
fn check_granted(sub: &Subscription, filter: &SubscriptionFilter, prefix: &str) {
    let granted = sub.acknowledged();
    if granted.is_empty() {
        warn(&format!(
            "umcp: {prefix}the server offers none of these notifications"
        ));
    } else if granted != *filter {
        let granted = shown::line(&serde_json::to_string(&granted).unwrap_or_default());
        warn(&format!("umcp: {prefix}the server offers only {granted}"));
    }
}

/// One subscription's printer.
struct Follower<'a> {
    /// The server's name, when several are followed.
    name: Option<&'a str>,
    json: bool,
    /// Set when stdout is gone (`umcp watch | head -1`): every follower stops.
    stop: &'a AtomicBool,
    /// The command's clock, whose interrupt (Ctrl-C in a shell) stops every follower too.
    deadline: &'a crate::deadline::Deadline,
}

impl Follower<'_> {
    /// Prints events until the deadline, the end of the subscription, or a stop; returns
    /// this subscription's exit code.
    fn follow(&self, sub: &Subscription, deadline: Option<Instant>) -> u8 {
        let stopped = || self.stop.load(Ordering::Relaxed) || self.deadline.interrupted();
        match sub.for_each_event(deadline, &stopped, |event| self.print_event(&event)) {
            // Ended by the servers' close after Ctrl-C (the signal is marked before the close
            // begins): the user's own doing, not a lost connection to report.
            Ok(Some(_)) if crate::signals::stopping() => 0,
            Ok(Some(end)) => self.print_end(end),
            Ok(None) => 0,
            // stdout is gone (`umcp watch | head -1`) or cannot be written: every follower
            // stops (a write error other than a closed pipe fails the run, see `output`).
            Err(error) => {
                crate::output::failed_write(&error);
                self.stop.store(true, Ordering::Relaxed);
                0
            }
        }
    }

    fn print_event(&self, event: &SubscriptionEvent) -> std::io::Result<()> {
        print(&self.line(event.to_json(), event.to_text()))
    }

    /// One line of output: `json` with `--json`, else `text`, naming the server when several
    /// are followed.
    fn line(&self, json: Value, text: String) -> String {
        match (self.json, self.name) {
            (true, name) => shown::json(&with_server(json, name).to_string()),
            // A text line holds what the server sent (a URI, a reason): escaped.
            (false, Some(name)) => format!("{name}: {}", shown::line(&text)),
            (false, None) => shown::line(&text),
        }
    }

    /// Prints how the subscription ended and returns its exit code.
    fn print_end(&self, end: SubscriptionEnd) -> u8 {
        let (reason, code) = match end {
            SubscriptionEnd::Completed => ("the server ended it".to_owned(), 0),
            SubscriptionEnd::CancelledByServer { reason } => (
                format!("the server cancelled it: {}", reason.unwrap_or_default()),
                0,
            ),
            SubscriptionEnd::ConnectionLost { reason } => {
                (format!("the connection was lost: {reason}"), 3)
            }
            SubscriptionEnd::Failed { reason } => (format!("it failed: {reason}"), 1),
            _ => return 0,
        };
        let json = json!({"event": "ended", "reason": reason});
        if let Err(error) = print(&self.line(json, format!("subscription ended: {reason}"))) {
            crate::output::failed_write(&error);
        }
        code
    }
}

/// Writes one whole line in one write, which keeps lines of different servers apart (stdout
/// writes a whole line through at once).
fn print(line: &str) -> std::io::Result<()> {
    crate::console::out(&format!("{line}\n"))
}

/// `value` with a `"server"` member first, when a name is given.
fn with_server(value: Value, name: Option<&str>) -> Value {
    match (value, name) {
        (Value::Object(members), Some(name)) => {
            let mut object = serde_json::Map::new();
            object.insert("server".into(), json!(name));
            object.extend(members);
            Value::Object(object)
        }
        (value, _) => value,
    }
}
