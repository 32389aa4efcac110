//! Where the era verdicts of servers are kept between connections: what a connection under
//! [`ProtocolMode::Auto`] learned a server speaks, so that the next one to the same server
//! starts in that era without the `server/discover` probe's round trip.
//!
//! A verdict is a hint, never a trap: a remembered stateless verdict still sends
//! `server/discover` (the stateless era's own first request), and a remembered handshake one
//! whose `initialize` is refused is forgotten, and the server is probed again (see
//! [`ProtocolMode::Auto`]). By default verdicts are kept in this process's memory; an
//! application that connects again from another process gives the client a store of its own
//! ([`Options::with_verdict_store`](crate::Options::with_verdict_store)), such as the one a
//! [`Manager`](crate::Manager) keeps beside its tool cache.

use std::fmt;
use std::sync::{Arc, Mutex};

use crate::sync::lock;

use super::state::ProtocolMode;

/// How many servers' verdicts the process remembers; when full, the memory is cleared (a
/// cleared entry only costs one more probe).
const PROCESS_CAPACITY: usize = 256;

/// A place era verdicts are kept, by server: its command line, or its URL, as the transport
/// describes it (secrets redacted).
///
/// The client loads the verdict before it connects under [`ProtocolMode::Auto`], saves what it
/// learned (a verdict it was given that turned out right is saved again), and forgets one the
/// server contradicted. A verdict is [`ProtocolMode::Legacy`] or a
/// [`ProtocolMode::Pinned`] stateless version. The methods run on the connecting thread and
/// should be quick; a store that cannot read or write should say nothing (`None`) rather than
/// fail: a lost verdict only costs one more probe.
///
/// ```
/// use std::collections::HashMap;
/// use std::sync::{Arc, Mutex};
/// use umcp::{Options, ProtocolMode, VerdictStore};
///
/// /// Verdicts kept in the application's own settings (here, a map).
/// #[derive(Default)]
/// struct Settings(Mutex<HashMap<String, String>>);
///
/// impl VerdictStore for Settings {
///     fn load(&self, server: &str) -> Option<ProtocolMode> {
///         let saved = self.0.lock().ok()?.get(server).cloned()?;
///         ProtocolMode::parse(&saved)
///     }
///     fn save(&self, server: &str, verdict: &ProtocolMode) {
///         if let Ok(mut map) = self.0.lock() {
///             map.insert(server.to_owned(), verdict.as_str().to_owned());
///         }
///     }
///     fn forget(&self, server: &str) {
///         if let Ok(mut map) = self.0.lock() {
///             map.remove(server);
///         }
///     }
/// }
///
/// let options = Options::default().with_verdict_store(Arc::new(Settings::default()));
/// # let _ = options;
/// ```
pub trait VerdictStore: Send + Sync {
    /// The verdict remembered for `server`, if any.
    ///
    /// See the example on [`VerdictStore`].
    fn load(&self, server: &str) -> Option<ProtocolMode>;

    /// Remembers `verdict` for `server`.
    ///
    /// See the example on [`VerdictStore`].
    fn save(&self, server: &str, verdict: &ProtocolMode);

    /// Forgets the verdict for `server`, so that its next connection probes again.
    ///
    /// See the example on [`VerdictStore`].
    fn forget(&self, server: &str);
}

/// The store a connection uses: the one given, or this process's memory.
#[derive(Clone, Default)]
pub(crate) struct Verdicts(Option<Arc<dyn VerdictStore>>);

impl Verdicts {
    /// The verdicts of `store`.
    pub(crate) fn of(store: Arc<dyn VerdictStore>) -> Verdicts {
        Verdicts(Some(store))
    }

    fn store(&self) -> &dyn VerdictStore {
        match &self.0 {
            Some(store) => store.as_ref(),
            None => &Process,
        }
    }

    /// The verdict remembered for `server`.
    pub(crate) fn load(&self, server: &str) -> Option<ProtocolMode> {
        // A store's `Auto` would be no verdict at all.
        self.store()
            .load(server)
            .filter(|verdict| *verdict != ProtocolMode::Auto)
    }

    /// Remembers `verdict` for `server`.
    pub(crate) fn save(&self, server: &str, verdict: ProtocolMode) {
        log::debug!("era verdict for {server}: {}", verdict.as_str());
        self.store().save(server, &verdict);
    }

    /// Forgets the verdict for `server`.
    pub(crate) fn forget(&self, server: &str) {
        log::debug!("era verdict for {server} forgotten");
        self.store().forget(server);
    }
}

impl fmt::Debug for Verdicts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.0 {
            Some(_) => "VerdictStore(given)",
            None => "VerdictStore(process)",
        })
    }
}

/// This process's memory, for up to [`PROCESS_CAPACITY`] servers (past that all are forgotten).
struct Process;

impl Process {
    /// A list rather than a hash map: it holds at most [`PROCESS_CAPACITY`] entries, read once a
    /// connect, and a list's code is a fraction of a map's in a small program.
    fn list() -> &'static Mutex<Vec<(String, ProtocolMode)>> {
        static VERDICTS: Mutex<Vec<(String, ProtocolMode)>> = Mutex::new(Vec::new());
        &VERDICTS
    }
}

impl VerdictStore for Process {
    fn load(&self, server: &str) -> Option<ProtocolMode> {
        let list = lock(Process::list());
        list.iter()
            .find(|(s, _)| s == server)
            .map(|(_, v)| v.clone())
    }

    fn save(&self, server: &str, verdict: &ProtocolMode) {
        let mut list = lock(Process::list());
        list.retain(|(s, _)| s != server);
        if list.len() >= PROCESS_CAPACITY {
            list.clear();
        }
        list.push((server.to_owned(), verdict.clone()));
    }

    fn forget(&self, server: &str) {
        lock(Process::list()).retain(|(s, _)| s != server);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn verdicts_are_remembered_per_server_in_the_process_by_default() {
        let verdicts = Verdicts::default();
        verdicts.save("era-test-a", ProtocolMode::Legacy);
        verdicts.save("era-test-b", ProtocolMode::modern());
        assert_eq!(verdicts.load("era-test-a"), Some(ProtocolMode::Legacy));
        assert_eq!(verdicts.load("era-test-b"), Some(ProtocolMode::modern()));
        assert_eq!(verdicts.load("era-test-c"), None);
        verdicts.forget("era-test-a");
        assert_eq!(Verdicts::default().load("era-test-a"), None);
    }

    #[test]
    fn a_given_store_is_used_alone_and_its_auto_is_no_verdict() {
        #[derive(Default)]
        struct Map(Mutex<HashMap<String, ProtocolMode>>);
        impl VerdictStore for Map {
            fn load(&self, server: &str) -> Option<ProtocolMode> {
                lock(&self.0).get(server).cloned()
            }
            fn save(&self, server: &str, verdict: &ProtocolMode) {
                lock(&self.0).insert(server.to_owned(), verdict.clone());
            }
            fn forget(&self, server: &str) {
                lock(&self.0).remove(server);
            }
        }
        let store = Arc::new(Map::default());
        let verdicts = Verdicts::of(store.clone());
        verdicts.save("era-test-d", ProtocolMode::Legacy);
        assert_eq!(
            Verdicts::default().load("era-test-d"),
            None,
            "not the process's"
        );
        assert_eq!(verdicts.load("era-test-d"), Some(ProtocolMode::Legacy));
        store.save("era-test-e", &ProtocolMode::Auto);
        assert_eq!(verdicts.load("era-test-e"), None);
    }
}
