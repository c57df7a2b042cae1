extension SessionEventMonitor {
    /// Called, on the manager's delegate queue, once per connection whose pins did not match under a report-only
    /// policy; the connection was used. Does nothing unless a monitor implements it.
    public func manager(_ manager: SessionManager, didRecordPinMismatch report: PinMismatchReport) {}
}
