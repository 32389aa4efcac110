//! Tests for the client layer over an in-memory transport: handshake, pipelining, deadlines,
//! cancellation, progress, notifications, server requests and their cancellation, and requests
//! with ids of a forbidden type, alone and in batches.

#[allow(dead_code)] // Not every helper of the fake server is used here.
#[path = "../common/memory.rs"]
mod memory;

use memory::FakeServer;
use umcp::Client;

mod calls;
mod deadlines;
mod handshake;
mod invalid_batches;
mod invalid_ids;
mod server_cancels;
mod server_messages;
mod surrogates;

fn connect(server: &FakeServer) -> Client {
    Client::connect(server.clone()).expect("connect")
}
