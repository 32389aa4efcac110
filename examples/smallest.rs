//! The smallest useful program: connects to a stdio server, calls one tool and prints its
//! text. `.ci/run` builds it stdio-only, for size, and checks its stripped size.
//!
//! ```sh
//! cargo run --release --no-default-features --example smallest -- SERVER [ARGS...]
//! ```

use std::process::ExitCode;

use serde_json::json;
use umcp::{Client, StdioConfig};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(program) = args.next() else {
        eprintln!("usage: smallest SERVER [ARGS...]");
        return ExitCode::FAILURE;
    };
    let result = Client::connect(StdioConfig::new(program).args(args)).and_then(|client| {
        let result = client.call_tool("echo", json!({ "message": "hi" }));
        client.close();
        result
    });
    match result {
        Ok(result) => {
            for block in &result.content {
                if let Some(text) = block.as_text() {
                    println!("{text}");
                }
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("smallest: {error}");
            ExitCode::FAILURE
        }
    }
}
