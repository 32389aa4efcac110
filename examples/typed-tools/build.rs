//! Writes the typed bindings of the tools locked in `mcp.lock`, offline, before the crate
//! is compiled; and, for the tests, those of a lock whose schemas take every shape.

fn main() {
    umcp_codegen::Builder::new("mcp.lock")
        .write_to_out_dir("everything.rs")
        .expect("bindings for the tools of mcp.lock");
    umcp_codegen::Builder::new("../../codegen/tests/fixtures/shapes.lock")
        .write_to_out_dir("shapes.rs")
        .expect("bindings for the shapes lock");
}
