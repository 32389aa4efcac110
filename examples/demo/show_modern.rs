//! The stateless part of the demo: starts this same program as a server that speaks only
//! protocol 2026-07-28 (`--server --modern`) and connects with the very same client code. The
//! client probes with `server/discover`, a tool that needs the user's answer comes back
//! `input_required` (the client runs its elicitation handler and retries: one input round),
//! and a tool the server runs as a task is polled until it ends.

use std::error::Error;
use std::path::Path;

use serde_json::json;
use umcp::{Client, StdioConfig};

/// Runs the stateless part against `exe --server --modern`.
pub fn run(exe: &Path) -> Result<(), Box<dyn Error>> {
    println!("\nthe same server in the stateless era (demo --server --modern):");
    let server = StdioConfig::new(exe.to_string_lossy()).args(["--server", "--modern"]);
    let client = Client::connect_with_options(server, crate::show::options())?;
    let info = client.server_info();
    println!(
        "  connected to {} {}, era {}, protocol {}",
        info.name,
        info.version,
        client.era().as_str(),
        client.protocol_version()
    );

    let sum = client.call_tool("add", json!({"a": 2, "b": 3}))?;
    println!(
        "\nadd(2, 3), with the protocol version in the request's _meta:\n  {:?}",
        sum.text()
    );

    // The server cannot ask the client mid-call any more: it answers `input_required` with an
    // elicitation, the client answers it with the same handler as before and retries.
    println!("\nask_user, one input round (MRTR):");
    let reply = client.call_tool("ask_user", json!({"question": "Shall we go on?"}))?;
    println!("  {:?}", reply.text());

    // A tool the server runs as a task (the tasks extension): the client polls it until it
    // ends, within the call's timeout, and returns its result like any other call's.
    println!("\nreport, run as a task:");
    let report = client.call_tool("report", json!({"topic": "the weather", "ms": 300}))?;
    println!("  {:?}", report.text());

    // This era has no `ping`: `Client::ping` asks `server/discover` instead, so one health
    // check serves servers of both eras.
    client.ping()?;
    println!("\nping (server/discover in this era): answered");
    client.close();
    Ok(())
}
