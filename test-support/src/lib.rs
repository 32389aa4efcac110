//! What the tests of `umcp` and `umcp-cli` share: the bundled demo server, over stdio and
//! HTTP; a loopback HTTP server and an OAuth authorization server; the pinned interop peers
//! and their installer; the system's Python; the `umcp` binary, installed and run as a user
//! would; and the seeded fuzz engine.
//!
//! Unpublished. It depends on the library without its default features, so a test build
//! keeps the features it was given, and uses only what every build of the library has.

use std::path::Path;

pub mod auth_server;
pub mod demo;
// The library's seeded mutation engine, for the command-line tool's fuzz targets.
#[allow(dead_code)]
#[path = "../../tests/fuzz/engine.rs"]
pub mod fuzz;
pub mod http_demo;
pub mod http_server;
pub mod installed;
pub mod peers;
pub mod python;

/// The repository's root, which holds the workspace, `target/` and the peers' lock files.
pub fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("test-support sits in the repository's root")
}
