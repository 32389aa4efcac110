//! Tests of `client`.

#[test]
fn client_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<super::Client>();
    assert_send_sync::<super::Notifications>();
    assert_send_sync::<super::CancelHandle>();
    assert_send_sync::<super::Subscription>();
    assert_send_sync::<crate::ManagedSubscription>();
}
