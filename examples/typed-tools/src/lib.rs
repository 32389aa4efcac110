//! Typed bindings for the tools of server-everything (the MCP reference server), generated at
//! build time by `umcp-codegen` from the committed `mcp.lock`.
//!
//! `build.rs` reads the lock, offline, and writes a module per server: [`everything`] holds
//! [`everything::Everything`], one blocking method per tool over a `&umcp::Client` or a
//! `&umcp::Manager`, and a struct of arguments per tool. Connecting checks the server's tools
//! against the digests of the lock, so a server whose tools drifted is refused before a call.
//!
//! ```no_run
//! use umcp::{Client, StdioConfig};
//! use umcp_typed_tools_example::everything::{
//!     Everything, GetStructuredContentArgs, GetStructuredContentArgsLocation, GetSumArgs,
//! };
//!
//! # fn main() -> umcp::Result<()> {
//! let server = StdioConfig::new("npx")
//!     .args(["-y", "@modelcontextprotocol/server-everything@2026.8.31", "stdio"]);
//! let client = Client::connect(server)?;
//! let tools = Everything::connect(&client)?; // refused if a tool drifted from mcp.lock
//! let sum = tools.get_sum(&GetSumArgs { a: 2.0, b: 3.0 })?;
//! println!("{}", sum.text());
//! let weather = tools.get_structured_content(&GetStructuredContentArgs {
//!     location: GetStructuredContentArgsLocation::Chicago,
//! })?;
//! println!("{} °C, {}", weather.temperature, weather.conditions);
//! # Ok(()) }
//! ```
//!
//! After the server changes, `umcp lock` (in this folder, with its `mcp.json`) writes the
//! lock again, and the next build the bindings.

include!(concat!(env!("OUT_DIR"), "/everything.rs"));
