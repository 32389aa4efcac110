//! The umcp demo: `cargo run --example demo` starts this same program as an MCP server over
//! stdio, connects to it with `umcp::Client` and walks through what a client can do; then it
//! starts it again in the stateless protocol era (one input round) and as a Streamable HTTP
//! server.
//!
//! `demo --server` is the server on its own: tools (`echo`, `add`, `time`, `slow` with
//! progress, `ask_llm` with sampling, `ask_user` with elicitation, `list_roots`, `log`),
//! resources and a resource template, prompts with completions. With `--http 127.0.0.1:0` it
//! serves Streamable HTTP instead of stdio and prints `listening on
//! http://127.0.0.1:<port>/mcp`. With `--modern` it speaks only the stateless protocol
//! 2026-07-28 (`server/discover`, input rounds, a tool run as a task), over either.
//!
//! The integration tests run the same server with options of their own (tools that expose
//! or break the server, scripted misbehaviours), listed in `server/behaviours.rs`.

mod server;
mod show;
#[cfg(feature = "http")]
mod show_http;
mod show_modern;

const USAGE: &str = "\
usage: demo                  walk through what a client can do, against this program as a
                             server (stdio, then the stateless era, then Streamable HTTP)
       demo --server [--modern] [--http ADDR]
                             the server alone, over stdio (or Streamable HTTP on ADDR,
                             e.g. 127.0.0.1:0); --modern speaks only protocol 2026-07-28
";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--server") => server::run(&args[1..]),
        // The sleeping child of the `grandchild` behaviour.
        Some("--grandchild") => server::sleep_forever(),
        Some("--help" | "-h") => print!("{USAGE}"),
        Some(other) => {
            eprintln!("demo: unknown argument `{other}`\n\n{USAGE}");
            std::process::exit(2);
        }
        None => {
            if let Err(err) = show::run() {
                eprintln!("demo failed: {err}");
                std::process::exit(1);
            }
        }
    }
}
