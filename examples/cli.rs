//! A short command-line client: start a stdio server from one command line, list its tools,
//! and call one with JSON arguments and a per-call timeout.
//!
//! ```text
//! cargo run --example cli -- 'target/debug/examples/demo --server' add '{"a": 2, "b": 3}'
//! ```
//!
//! The full tool, with HTTP, configuration files, OAuth, prompts and resources, is the `umcp`
//! binary of the `umcp-cli` package: `cargo install --path cli` in a checkout.

use std::time::Duration;

use umcp::{Client, RequestOptions, StdioConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(line), tool) = (args.next(), args.next()) else {
        return Err("usage: cli 'SERVER COMMAND LINE' [TOOL [JSON]]".into());
    };
    let client = Client::connect(StdioConfig::from_command_line(&line)?)?;
    let Some(tool) = tool else {
        for tool in client.list_all_tools()? {
            println!("{}  {}", tool.name, tool.description.unwrap_or_default());
        }
        return Ok(());
    };
    let arguments = serde_json::from_str(&args.next().unwrap_or_else(|| "{}".into()))?;
    let options = RequestOptions::default().with_timeout(Duration::from_secs(60));
    let result = client.with(&options).call_tool(&tool, arguments)?;
    println!("{}", result.text());
    client.close();
    match result.is_error() {
        true => Err(format!("the tool `{tool}` reported an error").into()),
        false => Ok(()),
    }
}
