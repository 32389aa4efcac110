//! MCP types.
