//! Writes the typed bindings of the tools locked in `mcp.lock`, offline, before the crate
//! is compiled; and, for the tests, those of a lock whose schemas take every shape.

fn main() {
    // The tools this crate calls, and a few more: connecting checks only these against the
    // lock. (The server lists its elicitation tools only to a client that can answer them,
    // as `umcp lock` can.)
    let bound = [
        "echo",
        "get-annotated-message",
        "get-structured-content",
        "get-sum",
        "trigger-long-running-operation",
    ];
    umcp_codegen::Builder::new("mcp.lock")
        .tools("everything", bound)
        .write_to_out_dir("everything.rs")
        .expect("bindings for the tools of mcp.lock");
    umcp_codegen::Builder::new("../../codegen/tests/fixtures/shapes.lock")
        .write_to_out_dir("shapes.rs")
        .expect("bindings for the shapes lock");
}
