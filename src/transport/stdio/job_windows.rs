//! Windows: a server's whole process tree lives in a Job Object that ends it when closed.
//!
//! Killing a server on Windows ends only that one process: the `node.exe` behind an `npx`
//! wrapper (or a Python server behind `uvx`) keeps running. A job with
//! `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE` terminates every process in it when its last handle
//! closes, and processes inherit their parent's job, so the whole tree ends together: when the
//! transport is closed or dropped, and also when this process exits however it exits, because
//! the system then closes the handle itself. A process the server starts in the instant
//! between spawn and assignment is not covered; no wrapper starts one that fast.
//!
//! This file holds the crate's only Windows unsafe code: three calls into kernel32, each
//! checked, and the ownership of the one handle they create.

use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::process::Child;
use std::sync::Mutex;
use std::time::Instant;

use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectExtendedLimitInformation,
    SetInformationJobObject, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};

use crate::error::Result;
use crate::jsonrpc::{Message, RequestId};
use crate::transport::{SessionEvent, Transport};

/// A job object that terminates its processes when dropped (its handle is closed).
pub(super) struct Job(OwnedHandle);

impl Job {
    /// Puts `child` in a new kill-on-close job. On failure (for example a host job that
    /// forbids nesting, before Windows 8) the server runs without one, as it would elsewhere.
    pub(super) fn contain(child: &Child) -> io::Result<Job> {
        let job = create()?;
        let mut limits = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        set_limits(&job, &limits)?;
        assign(&job, child)?;
        Ok(job)
    }
}

#[allow(unsafe_code)]
fn create() -> io::Result<Job> {
    // SAFETY: both pointers may be null (default security, an unnamed job); nothing else is
    // read or written.
    let raw = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
    if raw.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a valid handle just created and owned by nobody else; `OwnedHandle`
    // closes it exactly once.
    Ok(Job(unsafe { OwnedHandle::from_raw_handle(raw) }))
}

#[allow(unsafe_code)]
fn set_limits(job: &Job, limits: &JOBOBJECT_EXTENDED_LIMIT_INFORMATION) -> io::Result<()> {
    let size = std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32;
    let info: *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION = limits;
    // SAFETY: the job handle is open for the call; `info` points to a live structure of
    // exactly `size` bytes, of the type the information class names, and is only read.
    let ok = unsafe {
        SetInformationJobObject(
            job.0.as_raw_handle(),
            JobObjectExtendedLimitInformation,
            info.cast(),
            size,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[allow(unsafe_code)]
fn assign(job: &Job, child: &Child) -> io::Result<()> {
    // SAFETY: both handles are open for the call (the job's is owned, the child's is owned
    // by `child`, which is borrowed), and the call keeps neither.
    let ok = unsafe { AssignProcessToJobObject(job.0.as_raw_handle(), child.as_raw_handle()) };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A stdio transport with its server's job: closing the transport, after its usual shutdown
/// sequence, closes the job and so ends whatever the server left running.
pub(super) struct Contained<T> {
    // Declared first so that on drop the transport's own shutdown runs before the job ends.
    transport: T,
    job: Mutex<Option<Job>>,
}

impl<T: Transport> Contained<T> {
    /// `transport`, whose server runs in `job`.
    pub(super) fn new(transport: T, job: Job) -> Contained<T> {
        Contained {
            transport,
            job: Mutex::new(Some(job)),
        }
    }
}

impl<T: Transport> Transport for Contained<T> {
    fn send(&self, message: &Message, deadline: Instant) -> Result<()> {
        self.transport.send(message, deadline)
    }

    fn send_waits_for_peer(&self) -> bool {
        self.transport.send_waits_for_peer()
    }

    fn abandon(&self, id: &RequestId) {
        self.transport.abandon(id);
    }

    fn session_event(&self, event: SessionEvent<'_>) {
        self.transport.session_event(event);
    }

    fn close(&self) {
        self.transport.close();
        // A poisoned lock still holds the job: ending the processes is what matters here.
        let job = match self.job.lock() {
            Ok(mut job) => job.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        drop(job);
    }

    fn abort(&self) {
        self.transport.abort();
        self.close(); // The transport is closed by now; this ends the job.
    }

    fn kind(&self) -> &'static str {
        self.transport.kind()
    }
}

#[cfg(test)]
mod tests {
    use super::Job;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    #[test]
    fn closing_the_job_ends_its_processes() {
        // `cmd` waits on `ping`, its own child: both are in the job.
        let mut child = Command::new("cmd")
            .args(["/C", "ping -n 120 127.0.0.1"])
            .stdout(Stdio::null())
            .spawn()
            .expect("spawn cmd");
        let job = Job::contain(&child).expect("a job for the child");
        drop(job);
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(status) = child.try_wait().expect("try_wait") {
                break status;
            }
            assert!(Instant::now() < deadline, "the job did not end its process");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(!status.success());
    }
}
