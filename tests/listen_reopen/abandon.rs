//! A reopening given up on, or a subscription closed, while its `subscriptions/listen` is still
//! being sent: the request is ended on the server once it got there, never before, so no
//! listen is left open on the server and a cancellation never overtakes its request.

use super::*;

/// What the server received of listen requests and their cancellations, in order: the
/// request id and whether it was the cancellation.
fn listens_and_cancels(server: &FakeServer) -> Vec<(Value, bool)> {
    server
        .received
        .lock()
        .unwrap()
        .iter()
        .filter_map(|message| match message {
            Message::Request(r) if r.method == "subscriptions/listen" => {
                Some((serde_json::to_value(&r.id).unwrap(), false))
            }
            Message::Notification(n) if n.method == "notifications/cancelled" => {
                Some((n.params.as_ref().unwrap()["requestId"].clone(), true))
            }
            _ => None,
        })
        .collect()
}

/// Whether every listen request after the first (whose stream broke) was cancelled after it
/// reached the server, and nothing was cancelled before its request.
fn each_cancelled_after_its_request(seen: &[(Value, bool)]) -> bool {
    let mut open = Vec::new();
    for (id, cancel) in seen {
        if !cancel {
            open.push(id);
        } else if let Some(at) = open.iter().position(|listen| *listen == id) {
            open.remove(at);
        } else {
            return false;
        }
    }
    open.len() <= 1
}

/// Waits until the server received what `done` looks for, at most [`WAIT`].
fn wait_for(server: &FakeServer, done: impl Fn(&[(Value, bool)]) -> bool) -> Vec<(Value, bool)> {
    let until = Instant::now() + WAIT;
    loop {
        let seen = listens_and_cancels(server);
        if done(&seen) || Instant::now() >= until {
            return seen;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn reopenings_given_up_while_still_being_sent_are_cancelled_after_they_reach_the_server() {
    let (server, _) = stateless_server(|_| true);
    let options = Options::default().with_request_timeout(Duration::from_secs(1));
    let client = Client::connect_with_options(server.clone(), options).expect("connect");
    let sub = broken_subscription(&client);
    // From now on a request takes longer to hand over than the request timeout, as an HTTP
    // POST does that waits for a token refresh: each reopening is given up on before the
    // server has it.
    *server.send_delay.lock().unwrap() = Duration::from_millis(1500);
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        let _ = read(&sub);
    }
    drop(sub);
    let seen = wait_for(&server, |seen| {
        let listens = seen.iter().filter(|(_, cancel)| !cancel).count();
        let cancels = seen.len() - listens;
        listens >= 3 && cancels + 1 == listens
    });
    assert!(
        seen.iter().filter(|(_, cancel)| !cancel).count() >= 3,
        "{seen:?}"
    );
    assert!(each_cancelled_after_its_request(&seen), "{seen:?}");
    assert_eq!(
        seen.iter().filter(|(_, cancel)| *cancel).count() + 1,
        seen.iter().filter(|(_, cancel)| !cancel).count(),
        "every listen but the broken first one is cancelled: {seen:?}"
    );
}

#[test]
fn closing_while_the_reopening_is_still_being_sent_cancels_it_once_it_was_sent() {
    let (server, _) = stateless_server(|_| true);
    let options = Options::default().with_request_timeout(Duration::from_secs(5));
    let client = Client::connect_with_options(server.clone(), options).expect("connect");
    let sub = broken_subscription(&client);
    *server.send_delay.lock().unwrap() = Duration::from_secs(1);
    // This read hands the reopening to a sending thread, which takes a second to send it.
    let event = read(&sub);
    assert!(event.is_none(), "{event:?}");
    drop(sub);
    let seen = wait_for(&server, |seen| seen.len() >= 3);
    // The broken listen, then the reopening, then its cancellation.
    let reopening = seen.get(1).map(|(id, _)| id.clone());
    assert!(reopening.is_some() && seen[0].0 != seen[1].0, "{seen:?}");
    let reopening = reopening.unwrap_or_default();
    assert_eq!(
        seen[1..],
        [(reopening.clone(), false), (reopening, true)],
        "{seen:?}"
    );
}

#[test]
fn try_recv_is_not_held_by_a_reopening_another_thread_sends() {
    let (server, _) = stateless_server(|_| true);
    // A transport that only queues what it sends (stdio): the reader that meets the break
    // sends the reopening on its own thread.
    server
        .queued_sends
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let options = Options::default().with_request_timeout(Duration::from_secs(10));
    let client = Client::connect_with_options(server.clone(), options).expect("connect");
    let sub = broken_subscription(&client);
    *server.send_delay.lock().unwrap() = Duration::from_secs(3);
    std::thread::scope(|scope| {
        let reader = scope.spawn(|| sub.recv_timeout(WAIT));
        // Give the reader time to meet the break and start its three-second send.
        std::thread::sleep(Duration::from_millis(500));
        let started = Instant::now();
        let event = sub.try_recv();
        let took = started.elapsed();
        assert!(took < READ_BOUND, "try_recv took {took:?}");
        assert!(event.is_none(), "{event:?}");
        let event = reader.join().expect("the reader");
        assert!(
            matches!(event, Some(SubscriptionEvent::Resubscribed { .. })),
            "{event:?}"
        );
    });
}
