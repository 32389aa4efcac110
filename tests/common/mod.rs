//! Helpers shared by the integration tests.

// Each test binary compiles this module on its own and uses only part of it.
#![allow(dead_code)]

pub mod interop;
// At its old path: the interop tests name it `common::peers`, and some builds use none of it.
#[allow(unused_imports)]
pub use umcp_test_support::peers;
