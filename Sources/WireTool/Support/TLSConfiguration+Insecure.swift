import WireTLS

extension TLSConfiguration {
    /// Switches certificate checks off as curl's `-k` (and `--proxy-insecure`) does. Nothing is then checked against
    /// trust roots (pins, if any, are matched against the leaf alone), so the system's store is not loaded either, as
    /// curl loads no CA file under `-k`: parsing the bundle is about 40 ms of a small download. Roots named on the
    /// command line (`--cacert`, `--capath`) stay. Call after those are set.
    mutating func waiveVerification() {
        certificateVerification = .none
        if trustRoots == .system && trustDirectory == nil { trustRoots = .der([]) }
    }
}
