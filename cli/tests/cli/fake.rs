//! The scripted server of `fake_server.py`, which umcp starts with `--stdio`: a server
//! misbehaving as real ones do (refusing an unknown tool with an `isError` result, failing its
//! listings, writing terminal controls).

use std::process::Output;

use umcp_test_support::installed::{cli, stderr, stdout};
use umcp_test_support::python::system_python;

/// The `--stdio` command line of the fake server in `modes`.
pub fn fake(modes: &[&str]) -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cli/fake_server.py");
    let mut line = format!("'{}' '{script}'", system_python());
    for mode in modes {
        line += &format!(" {mode}");
    }
    line
}

/// Runs umcp against the fake server in `modes` and checks the exit code.
pub fn run(modes: &[&str], args: &[&str], code: i32) -> Output {
    run_with(&fake(modes), args, code)
}

/// Runs umcp against the `--stdio` server `server` and checks the exit code.
pub fn run_with(server: &str, args: &[&str], code: i32) -> Output {
    ended(cli(&[&["--stdio", server][..], args].concat()), args, code)
}

/// `out`, of a run of umcp with `args`, once checked to have ended with `code`.
pub fn ended(out: Output, args: &[&str], code: i32) -> Output {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}\nstdout: {}\nstderr: {}",
        stdout(&out),
        stderr(&out)
    );
    out
}
