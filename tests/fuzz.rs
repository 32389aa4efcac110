//! Fuzz targets for the public decoders (SSE, JSON-RPC, configuration files), on the stable
//! toolchain: a seeded mutation loop over real captured inputs in `tests/fuzz/corpus/`, with
//! invariants checked on every case. See `tests/fuzz/engine.rs` for the knobs
//! (`UMCP_FUZZ_CASES`, `UMCP_FUZZ_SEED`, `UMCP_FUZZ_CASE`, `UMCP_FUZZ_REPORT`). The internal
//! decoders (stdio lines, `WWW-Authenticate`, URLs) are fuzzed by the same engine from unit
//! tests inside the crate.

#[path = "fuzz/config.rs"]
mod config;
// Not every helper of the shared engine is used by these targets.
#[allow(dead_code)]
#[path = "fuzz/engine.rs"]
mod engine;
#[path = "fuzz/json.rs"]
mod json;
#[path = "fuzz/jsonrpc.rs"]
mod jsonrpc;
#[path = "fuzz/results.rs"]
mod results;
#[path = "fuzz/sse.rs"]
mod sse;
