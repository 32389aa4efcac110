//! Tests for `umcp bridge`, the installed binary between hosts and servers: hosts written by
//! others (the TypeScript SDK's clients v1 and v2, the Python SDK's, the MCP Inspector's
//! command line) over stdio and `--listen`, servers of both eras written by others
//! (server-everything, rmcp's, the TypeScript SDK v2's, on Streamable HTTP and the deprecated
//! HTTP+SSE) and the bundled demo server, and a host of our own for what those do not show.

mod auth;
mod config;
mod eras;
mod inspector;
mod lifecycle;
mod listen;
mod relay;
mod support;
