//! The moment a message being sent has been written out whole, told to the layer above before
//! the send returns: an HTTP POST answered with JSON returns only once the server has done the
//! work, yet the server has had the request since it was written.
//!
//! The layer above sets a hook for one send on its thread ([`noting`]); a transport that can
//! tell calls [`report`] once the message is out. Transports that cannot tell (stdio queues,
//! a user's own) never call it: their send's return is that moment.

use std::cell::RefCell;

thread_local! {
    /// What to call once the message being sent on this thread has been written out.
    static HOOK: RefCell<Option<Box<dyn FnOnce()>>> = const { RefCell::new(None) };
}

/// Clears the hook when a [`noting`] scope ends, even by unwinding: it belongs to one send.
struct Clear;

impl Drop for Clear {
    fn drop(&mut self) {
        // A hook left behind would fire for the thread's next send.
        let _ = HOOK.try_with(|hook| hook.borrow_mut().take());
    }
}

/// Runs `send` with `written` called as soon as the transport has written the message out
/// whole, if it can tell; `written` is dropped uncalled otherwise.
pub(crate) fn noting<T>(written: Box<dyn FnOnce()>, send: impl FnOnce() -> T) -> T {
    HOOK.with(|hook| *hook.borrow_mut() = Some(written));
    let _clear = Clear;
    send()
}

/// The message being sent on this thread has been written out whole: calls its hook, once.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) fn report() {
    // Taken before it runs, so that the hook may send on this thread without re-entering.
    let hook = HOOK
        .try_with(|hook| hook.borrow_mut().take())
        .ok()
        .flatten();
    if let Some(hook) = hook {
        hook();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;

    #[test]
    fn the_hook_fires_once_within_its_send_and_never_after() {
        let fired = Rc::new(Cell::new(0));
        let counter = Rc::clone(&fired);
        noting(Box::new(move || counter.set(counter.get() + 1)), || {
            report();
            report();
        });
        assert_eq!(fired.get(), 1);
        let counter = Rc::clone(&fired);
        noting(Box::new(move || counter.set(counter.get() + 1)), || {});
        report();
        assert_eq!(
            fired.get(),
            1,
            "a send that never reported leaves no hook behind"
        );
    }
}
