//! The README's main job, `cargo run --example demo`, runs to its end: the demo client tours
//! the bundled server in both eras and over HTTP, and every step of the tour succeeds.
#![cfg(feature = "http")]

use std::process::Command;

use umcp_test_support::demo::demo_binary;

#[test]
fn the_demo_tour_runs_to_its_end() {
    let out = Command::new(demo_binary()).output().expect("run the demo");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.trim_end().ends_with("done"), "{stdout}");
    for step in [
        "era modern, protocol 2026-07-28",
        "report, run as a task:",
        "over HTTP, with progress:",
        "\"Four.\"",
    ] {
        assert!(stdout.contains(step), "`{step}` missing: {stdout}");
    }
}
