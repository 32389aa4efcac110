//! Starting the crate's named threads, all one way: std's start-up code for a thread is
//! compiled once per kind of closure it runs, so every thread of the crate starts a boxed
//! closure here and a program carries that code once rather than once per kind of thread.

use std::io;
use std::thread::{Builder, JoinHandle};

/// Starts `work` on a thread named `name`.
pub(crate) fn spawn(name: &str, work: Box<dyn FnOnce() + Send>) -> io::Result<JoinHandle<()>> {
    Builder::new().name(name.into()).spawn(work)
}
