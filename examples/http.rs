//! Connects to an MCP server over HTTP (Streamable HTTP, falling back to legacy SSE), lists its
//! tools and calls one: `cargo run --example http -- <url> [tool] [json-arguments]`.
//!
//! For example, against the reference server (installed by the tests into `target/peers`):
//!
//! ```sh
//! PORT=3001 node target/peers/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js streamableHttp &
//! cargo run --example http -- http://127.0.0.1:3001/mcp echo '{"message":"hello"}'
//! ```

use std::process::ExitCode;

use umcp::{Client, HttpConfig};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(url) = args.first() else {
        eprintln!("usage: http <url> [tool] [json-arguments]");
        return ExitCode::from(2);
    };
    match run(url, args.get(1), args.get(2)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}

fn run(
    url: &str,
    tool: Option<&String>,
    arguments: Option<&String>,
) -> Result<(), Box<dyn std::error::Error>> {
    let client = Client::connect(HttpConfig::new(url))?;
    let info = client.server_info();
    println!(
        "{} {} over {}",
        info.name,
        info.version,
        client.transport_kind()
    );
    for tool in client.list_all_tools()? {
        println!(
            "  {:<32} {}",
            tool.name,
            tool.description.unwrap_or_default()
        );
    }
    if let Some(tool) = tool {
        let arguments = match arguments {
            Some(json) => serde_json::from_str(json)?,
            None => serde_json::Value::Null,
        };
        let result = client.call_tool(tool, arguments)?;
        println!("{tool}: {}", result.text());
    }
    client.close();
    Ok(())
}
