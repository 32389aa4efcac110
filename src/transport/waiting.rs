//! A send whose caller only waits for the answer afterwards, with nothing to hear meanwhile (no
//! progress, no cancel handle): a transport may then read the answer on the sending thread, as
//! it reads a JSON body, rather than hand it to a thread of its own and wake the caller.
//!
//! The layer above marks such a send ([`waiting_here`]); a transport asks ([`is_waiting_here`])
//! before it starts a reader. Reading on the caller's thread ends by the send's deadline.

use std::cell::Cell;

thread_local! {
    /// Whether the send under way on this thread is one [`waiting_here`] marked.
    static HERE: Cell<bool> = const { Cell::new(false) };
}

/// Clears the mark when a [`waiting_here`] scope ends, even by unwinding.
struct Clear(bool);

impl Drop for Clear {
    fn drop(&mut self) {
        let _ = HERE.try_with(|here| here.set(self.0));
    }
}

/// Runs `send`, a send whose caller waits for the answer right after with nothing to hear
/// meanwhile.
pub(crate) fn waiting_here<T>(send: impl FnOnce() -> T) -> T {
    let _clear = Clear(HERE.with(|here| here.replace(true)));
    send()
}

/// Whether the send under way on this thread may have its answer read on this thread.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) fn is_waiting_here() -> bool {
    HERE.with(Cell::get)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mark_holds_for_its_send_alone() {
        assert!(!is_waiting_here());
        waiting_here(|| {
            assert!(is_waiting_here());
            waiting_here(|| assert!(is_waiting_here()));
            assert!(
                is_waiting_here(),
                "an inner scope leaves the outer one's mark"
            );
        });
        assert!(!is_waiting_here());
        let other = std::thread::spawn(|| waiting_here(|| std::thread::spawn(is_waiting_here)));
        assert!(
            !other.join().unwrap().join().unwrap(),
            "one thread's mark alone"
        );
    }
}
