import Testing
import WireTLS

/// A certificate's validity times as text, from the calendar arithmetic of `HTTPFieldDate` (HTTP1/), which the
/// server's `Date` field shares.
struct CertificateTimeTextTests {
    @Test(arguments: [
        (Int64(0), "1970-01-01 00:00:00Z"),
        (-1, "1969-12-31 23:59:59Z"),
        (951_782_400, "2000-02-29 00:00:00Z"),
        (4_102_444_799, "2099-12-31 23:59:59Z"),
    ])
    func unixSecondsBecomeUTCText(_ seconds: Int64, _ text: String) {
        #expect(Certificate.utcText(seconds) == text)
    }
}
