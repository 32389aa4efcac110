//! Tests of `manager`.

#[test]
fn manager_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<super::Manager>();
    assert_send_sync::<super::ManagerNotifications>();
    assert_send_sync::<super::StatusEvents>();
}
