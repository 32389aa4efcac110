//! The bridge as its parts see it: the servers (once started), the jobs and their clock, the
//! hosts, what they follow, and the settings of the command line.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::asks::Asker;
use super::catalog::{self, Description};
use super::clock::Clock;
use super::follow::Followers;
use super::host::Hosts;
use super::jobs::Jobs;
use super::upstream::Upstream;

/// The bridge's settings.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// The server's time of each request (`--timeout`).
    pub timeout: Duration,
    /// The longest the servers may take to start before a host's first request is answered
    /// with the reason: `--timeout`, and the user's time to sign in when one may be asked.
    pub startup: Duration,
}

/// The bridge.
pub struct Bridge {
    upstream: OnceLock<Arc<Upstream>>,
    description: OnceLock<Description>,
    pub jobs: Arc<Jobs>,
    pub hosts: Arc<Hosts>,
    pub followers: Arc<Followers>,
    pub asker: Arc<Asker>,
    pub settings: Settings,
}

impl Bridge {
    /// A bridge with no servers started yet; starts its clock's thread.
    pub fn new(settings: Settings) -> std::io::Result<Arc<Bridge>> {
        let clock = Clock::start()?;
        let jobs = Arc::new(Jobs::new(clock, settings.timeout));
        let hosts = Arc::new(Hosts::default());
        Ok(Arc::new(Bridge {
            upstream: OnceLock::new(),
            description: OnceLock::new(),
            asker: Asker::new(Arc::clone(&jobs), Arc::clone(&hosts)),
            jobs,
            hosts,
            followers: Arc::new(Followers::default()),
            settings,
        }))
    }

    /// Sets the servers, once.
    pub fn set_upstream(&self, upstream: Arc<Upstream>) {
        let _ = self.upstream.set(upstream);
    }

    /// The servers; `None` until they are started.
    pub fn upstream(&self) -> Option<&Arc<Upstream>> {
        self.upstream.get()
    }

    /// What hosts are told of the servers, taken once they are connected and kept.
    pub fn description(&self) -> Option<&Description> {
        if let Some(description) = self.description.get() {
            return Some(description);
        }
        let description = catalog::describe(self.upstream()?)?;
        Some(self.description.get_or_init(|| description))
    }

    /// The servers' `serverInfo` for a result's `_meta`, once they are connected.
    pub fn server_info(&self) -> serde_json::Value {
        self.description()
            .map(|d| d.info.clone())
            .unwrap_or_default()
    }

    /// Stops everything the bridge runs besides the servers: jobs are cancelled, listen
    /// streams end gracefully, the clock stops.
    pub fn stop(&self) {
        for job in self.jobs.all() {
            job.cancel();
        }
        self.followers.end_all();
        for host in self.hosts.all() {
            host.end();
        }
        self.jobs.clock.stop();
    }
}
