//! Fuzz targets for every decoder of what servers and files send, on the stable toolchain: a
//! seeded mutation loop over real captured inputs in `tests/fuzz/corpus/`, with invariants
//! checked on every case, not just the absence of a panic.
//!
//! Here, through the public API: SSE streams (`sse`), JSON-RPC messages (`jsonrpc`),
//! configuration files (`config`), the results that carry caching hints (`results`:
//! `server/discover`, the lists, `resources/read`) and recordings played to a client
//! (`recordings`). Inside the crate, from unit tests that include `tests/fuzz/internal/`:
//! stdio lines (`lines`), `WWW-Authenticate` values (`www-authenticate`), URLs (`urls`, the
//! HTTP transport's and the authorization spec's), JSONC (`jsonc`), env files (`env-file`), a
//! server's `SKILL.md` frontmatter (`frontmatter`) and the URIs of a skill's files
//! (`skill-uris`). The command-line tool's, from its unit tests that include `cli/tests/fuzz/`
//! (the engine reaches them through the test-support package): configuration files edited
//! by `umcp servers` (`catalog-edits`) and the frames a session reads (`session-frames`).
//! See `tests/fuzz/engine.rs` for how inputs are made and for the knobs (`UMCP_FUZZ_CASES`,
//! `UMCP_FUZZ_SEED`, `UMCP_FUZZ_CASE`, `UMCP_FUZZ_REPORT`).
//!
//! `cargo test` runs each target's bounded count: a few thousand cases, seconds in all.
//!
//! The long run: a million cases per target, with a seed from the clock, so each run explores
//! new inputs (minutes per target on one core of a debug build, which keeps overflow checks
//! and debug assertions):
//!
//! ```text
//! UMCP_FUZZ_CASES=1000000 cargo test --test fuzz -- --test-threads 1
//! UMCP_FUZZ_CASES=1000000 cargo test --lib fuzz:: -- --test-threads 1
//! UMCP_FUZZ_CASES=1000000 cargo test -p umcp-cli --bin umcp fuzz:: -- --test-threads 1
//! ```
//!
//! One target alone: its test's name as the filter (`cargo test --test fuzz results`). A
//! failure names its seed and case; `UMCP_FUZZ_SEED=<seed> UMCP_FUZZ_CASE=<case>` replays
//! that case alone. Fix what it found with a regression test, and add the input (cut to what
//! matters) to the target's corpus folder, where the bounded run meets it every time.

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
#[path = "fuzz/recordings.rs"]
mod recordings;
#[path = "fuzz/results.rs"]
mod results;
#[path = "fuzz/sse.rs"]
mod sse;
