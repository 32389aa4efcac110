//! A reopening that fails on the way (its stream breaks before the acknowledgement, a server
//! error, an I/O error) is tried again after a growing pause, however often it fails; only the
//! server's refusal ends the subscription.

use super::*;
use umcp::jsonrpc::{ErrorCode, ErrorObject, Response};
use umcp::SubscriptionEnd;

fn lose_the_stream(peer: &Peer, request: &Request) {
    peer.fail(&request.id, Error::ResponseLost("connection reset".into()));
}

#[test]
fn a_reopening_whose_stream_breaks_before_its_acknowledgement_is_tried_again() {
    let (server, listens) = stateless_server_with(|peer, request, n| {
        if n == 2 {
            lose_the_stream(peer, request);
        } else {
            acknowledge(peer, &serde_json::to_value(&request.id).unwrap());
        }
    });
    let options = Options::default().with_request_timeout(Duration::from_secs(2));
    let client = Client::connect_with_options(server, options).expect("connect");
    let sub = broken_subscription(&client);
    await_reopening(&sub);
    assert_eq!(listens.lock().unwrap().len(), 3);
    expect_tools_changed(&client, &sub);
}

#[test]
fn a_server_failing_every_reopening_is_asked_again_after_growing_pauses() {
    let (server, listens) = stateless_server_with(|peer, request, n| {
        if n == 1 {
            acknowledge(peer, &serde_json::to_value(&request.id).unwrap());
        } else {
            lose_the_stream(peer, request);
        }
    });
    let client = Client::connect(server).expect("connect");
    let sub = broken_subscription(&client);
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(2) {
        let event = read(&sub);
        assert!(event.is_none(), "{event:?}");
        assert!(sub.ended().is_none(), "{:?}", sub.ended());
    }
    // At once, then after 0.1, 0.2, 0.4, 0.8 s: a handful of attempts in 2 s, not hundreds.
    let reopenings = listens.lock().unwrap().len() - 1;
    assert!(
        (3..=8).contains(&reopenings),
        "{reopenings} reopenings in 2 s"
    );
}

#[test]
fn a_refused_reopening_ends_the_subscription() {
    let (server, _) = stateless_server_with(|peer, request, n| {
        if n == 1 {
            acknowledge(peer, &serde_json::to_value(&request.id).unwrap());
        } else {
            let refusal = ErrorObject::new(ErrorCode::INVALID_PARAMS, "no more listening");
            peer.send(Response::err(request.id.clone(), refusal).into());
        }
    });
    let client = Client::connect(server).expect("connect");
    let sub = broken_subscription(&client);
    let until = Instant::now() + WAIT;
    while sub.ended().is_none() {
        assert!(Instant::now() < until, "never ended");
        let event = read(&sub);
        assert!(event.is_none(), "{event:?}");
    }
    match sub.ended() {
        Some(SubscriptionEnd::Failed { reason }) => {
            assert!(reason.contains("no more listening"), "{reason}");
        }
        other => panic!("expected a failure, got {other:?}"),
    }
}
