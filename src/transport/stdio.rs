//! Stdio transport: placeholder.
/// Placeholder.
pub struct StdioConfig;
/// Placeholder.
pub enum EnvPolicy {}
