//! Tests for the client over real child processes: the bundled demo server and its scripted
//! misbehaviours (crashes, garbage, floods, a server that stops reading, process trees).

#[allow(dead_code)] // The stateless era's checks are used elsewhere.
#[path = "../common/demo.rs"]
mod demo;

use demo::demo;
use umcp::Client;

mod calls;
mod floods;
mod lifecycle;

fn connect(behaviour: &str) -> Client {
    Client::connect(demo(behaviour)).expect("connect to the demo server")
}
