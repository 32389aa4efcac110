//! The baseline client: the caller writes its request, one reader thread parses each line and
//! hands the reply over a crossbeam channel.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use crossbeam_channel::Sender;
use serde_json::{json, Value};

use crate::{server_command, BoxResult, Echo, Placement};

/// The baseline: caller writes, a reader thread hands each reply over a channel.
pub struct Bare {
    stdin: Mutex<Option<ChildStdin>>,
    pending: Arc<Mutex<HashMap<u64, Sender<Value>>>>,
    next: AtomicU64,
    child: Mutex<Child>,
    reader: Option<thread::JoinHandle<()>>,
}

impl Bare {
    pub fn connect(server: &Path, placement: Placement) -> BoxResult<Bare> {
        let (program, args) = server_command(server, placement);
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let pending: Arc<Mutex<HashMap<u64, Sender<Value>>>> = Arc::default();
        let table = pending.clone();
        let reader = thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let Ok(mut reply) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                let waiter = reply["id"]
                    .as_u64()
                    .and_then(|id| table.lock().ok()?.remove(&id));
                if let Some(waiter) = waiter {
                    let _ = waiter.send(reply["result"].take());
                }
            }
        });
        let bare = Bare {
            stdin: Mutex::new(child.stdin.take()),
            pending,
            next: AtomicU64::new(1),
            child: Mutex::new(child),
            reader: Some(reader),
        };
        let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "bare", "version": "0"}});
        bare.request("initialize", init)?;
        bare.write(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(bare)
    }

    fn request(&self, method: &str, params: Value) -> BoxResult<Value> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.pending.lock().map_err(|_| "poisoned")?.insert(id, tx);
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        Ok(rx.recv_timeout(Duration::from_secs(30))?)
    }

    fn write(&self, message: &Value) -> BoxResult<()> {
        let mut line = serde_json::to_vec(message)?;
        line.push(b'\n');
        let mut stdin = self.stdin.lock().map_err(|_| "poisoned")?;
        stdin.as_mut().ok_or("closed")?.write_all(&line)?;
        Ok(())
    }
}

impl Echo for Bare {
    fn echo(&self, message: &str) -> BoxResult<()> {
        let args = json!({"name": "echo", "arguments": {"message": message}});
        self.request("tools/call", args).map(drop)
    }
    fn close(mut self: Box<Self>) {
        if let Ok(mut stdin) = self.stdin.lock() {
            stdin.take();
        }
        if let Ok(mut child) = self.child.lock() {
            let _ = child.wait();
        }
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}
