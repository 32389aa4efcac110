//! Tests of `manager::options`.

use super::*;

#[test]
fn backoff_doubles_up_to_the_maximum() {
    let options = ManagerOptions::default();
    let delays: Vec<u64> = (1..=8)
        .map(|n| options.backoff(n).as_millis() as u64)
        .collect();
    assert_eq!(delays, [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000]);
    assert_eq!(options.backoff(u32::MAX), Duration::from_secs(30));
    for n in 1..=8 {
        let jittered = options.backoff_with_jitter(n, "files");
        assert!(jittered <= options.backoff(n), "{jittered:?}");
        assert!(jittered >= options.backoff(n).mul_f64(0.75), "{jittered:?}");
    }
}

#[test]
fn backoff_without_limit_does_not_overflow() {
    let options = ManagerOptions::default().with_reconnect_delay(Duration::MAX, Duration::MAX);
    for n in [1, 2, 64, u32::MAX] {
        assert_eq!(options.backoff(n), Duration::MAX);
        let jittered = options.backoff_with_jitter(n, "files");
        assert!(
            jittered >= Duration::MAX - Duration::MAX / 4,
            "{jittered:?}"
        );
    }
    let doubling =
        ManagerOptions::default().with_reconnect_delay(Duration::from_secs(1), Duration::MAX);
    assert_eq!(doubling.backoff(21), Duration::from_secs(1 << 20));
    assert_eq!(doubling.backoff(u32::MAX), Duration::from_secs(1 << 20));
    let _ = crate::sync::deadline_in(doubling.backoff_with_jitter(u32::MAX, "files"));
    assert!(crate::sync::deadline_in(Duration::MAX) > std::time::Instant::now());
}

#[test]
fn queue_capacity_is_clamped() {
    let capacity = |n| {
        ManagerOptions::default()
            .with_queue_capacity(n)
            .queue_capacity
    };
    assert_eq!(capacity(0), 1);
    assert_eq!(capacity(10), 10);
    assert_eq!(capacity(usize::MAX), ManagerOptions::MAX_QUEUE_CAPACITY);
}

#[cfg(feature = "oauth")]
#[test]
fn the_token_file_sits_next_to_the_tool_cache() {
    let (tools, tokens) = (
        ManagerOptions::default_cache_dir(),
        ManagerOptions::default_token_file(),
    );
    assert_eq!(tools.is_some(), tokens.is_some());
    if let (Some(tools), Some(tokens)) = (tools, tokens) {
        assert!(
            tokens.ends_with("oauth/tokens.json"),
            "{}",
            tokens.display()
        );
        assert_eq!(tokens.parent().and_then(|p| p.parent()), tools.parent());
    }
}

#[test]
fn empty_separator_is_ignored() {
    assert_eq!(
        ManagerOptions::default().with_separator("").separator(),
        "__"
    );
    assert_eq!(
        ManagerOptions::default().with_separator(".").separator(),
        "."
    );
}
