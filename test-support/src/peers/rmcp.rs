//! A server on rmcp (the official Rust SDK) that speaks 2026-07-28 only, built from
//! `cli/tests/peers/rmcp-server` (a project of its own, with its own lock file: rmcp runs on
//! tokio, which never enters umcp's tree) into `<target dir>/peers/rmcp-server` on first use.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use super::{peers_dir, repo_path, SKIP_VAR};

/// The server's binary, built on first use: run it as a stdio server.
///
/// # Panics
///
/// When the build fails (it needs the crates.io registry, or the crates in cargo's cache);
/// the message says how to build it by hand.
pub fn rmcp_modern() -> PathBuf {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let manifest = repo_path("cli/tests/peers/rmcp-server/Cargo.toml");
        let target = peers_dir().join("rmcp-server");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "--quiet", "--locked", "--manifest-path"])
            .arg(&manifest)
            .arg("--target-dir")
            .arg(&target)
            .status()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        if !status.success() {
            return Err(format!(
                "cargo build --manifest-path {} failed",
                manifest.display()
            ));
        }
        let binary = target
            .join("debug")
            .join(format!("rmcp-modern-peer{}", std::env::consts::EXE_SUFFIX));
        Ok(binary)
    });
    match built {
        Ok(binary) => binary.clone(),
        Err(detail) => panic!(
            "the rmcp peer server could not be built: {detail}\n\nBuild it by hand with `cargo \
             build --locked --manifest-path cli/tests/peers/rmcp-server/Cargo.toml --target-dir \
             target/peers/rmcp-server`. To skip the interop tests on a machine without it (never \
             in CI), set {SKIP_VAR}=1."
        ),
    }
}
