//! Tests for the client over real child processes: the bundled demo server and its scripted
//! misbehaviours (crashes, garbage, floods, a server that stops reading, process trees), and a
//! scripted Python server sending requests with ids of a forbidden type.

use umcp_test_support::demo;
use umcp_test_support::python;

use demo::demo;
use umcp::Client;

mod calls;
mod floods;
mod hostile;
mod invalid_ids;
mod lifecycle;

fn connect(behaviour: &str) -> Client {
    Client::connect(demo(behaviour)).expect("connect to the demo server")
}
