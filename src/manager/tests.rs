//! Tests of `manager`.

#[test]
fn manager_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<super::Manager>();
    assert_send_sync::<super::ManagerNotifications>();
    assert_send_sync::<super::StatusEvents>();
}

#[test]
fn retry_waits_read_as_people_say_them() {
    use std::time::{Duration, Instant};

    use super::status::when;
    use super::ServerStatus;
    use crate::error::Error;

    assert_eq!(when(Duration::ZERO), "now");
    assert_eq!(when(Duration::from_micros(300)), "now");
    assert_eq!(when(Duration::from_millis(250)), "in 250 ms");
    assert_eq!(when(Duration::from_millis(1500)), "in 1.5 s");
    assert_eq!(when(Duration::from_secs(125)), "in 2 min 5 s");
    let failed = |next_attempt| ServerStatus::Failed {
        error: Error::Protocol("gone".into()),
        attempts: 1,
        next_attempt,
    };
    // A retry that is due, or overdue, is not "in 0.0ns".
    let due = failed(Some(Instant::now())).to_string();
    assert!(due.ends_with("(retrying now)"), "{due}");
    let later = failed(Some(Instant::now() + Duration::from_secs(30))).to_string();
    assert!(
        later.contains("(retrying in 29.") || later.contains("(retrying in 30.0 s)"),
        "{later}"
    );
}
