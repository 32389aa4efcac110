//! Tests of `transport::stdio`.

use super::*;
use crate::transport::Connect;

#[test]
fn describe_quotes_only_where_needed() {
    let config = StdioConfig::new("npx").args(["-y", "my server", ""]);
    assert_eq!(config.describe(), r#"npx -y "my server" """#);
}

#[test]
fn debug_hides_env_values() {
    let config = StdioConfig::new("srv").env("TOKEN", "hunter2");
    let shown = format!("{config:?}");
    assert!(
        shown.contains("TOKEN") && !shown.contains("hunter2"),
        "{shown}"
    );
}
