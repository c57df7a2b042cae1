import Foundation
import Testing
import Wire
import WireClient
import WireTLS

/// A configuration archives its settings (JSON and property lists alike) and leaves out live objects
/// and closures, saying what they decode as.
@Suite struct SessionConfigurationCodingTests {
    /// Every archived setting away from its default.
    static func unusual() -> SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.timeoutIntervalForRequest = .milliseconds(1500)
        configuration.timeoutIntervalForResource = .seconds(90)
        configuration.httpAdditionalHeaders = ["Accept": "application/json", "X-Trace": "a", "x-trace": "b"]
        configuration.httpMaximumConnectionsPerHost = 2
        configuration.maximumBufferedResponseSize = 1 << 20
        configuration.decodesContent = false
        configuration.contentDecoding = ContentDecodingLimits(maximumRatio: nil, ratioGracePeriod: 7, maximumDecodedSize: 1 << 30)
        configuration.maximumConcurrentTasks = 3
        configuration.maximumRedirects = 4
        configuration.transportSecurity = .requiresSecureConnections(
            exceptionDomains: ["example.org": .init(includesSubdomains: true)], allowsLocalNetworking: true)
        configuration.credentialStorage = CredentialStorage()
        var tls = TLSConfiguration()
        tls.minimumVersion = .tls13
        tls.trustRoots = .der([[0x30, 0x82, 0x01], [0x30, 0x03]])
        tls.certificateVerification = .noHostnameVerification
        tls.certificateChainFile = "/etc/wire/client.pem"
        tls.privateKeyFile = "/etc/wire/client.key"
        tls.pinning = .publicKey(["sha256/AAAA", "sha256/BBBB"])
        tls.resumesSessions = false
        tls.trustEvaluation = { _ in .proceed }
        configuration.tls = tls
        configuration.shouldHandleCookies = false
        configuration.httpCookieAcceptPolicy = .onlyFromMainDocumentDomain
        configuration.httpCookieStorage = nil
        configuration.urlCache = URLCache(memoryCapacity: 1000, diskCapacity: 2000, directory: "/tmp/wire-coding-test-cache")
        configuration.requestCachePolicy = .returnCacheDataElseLoad
        configuration.allowsCellularAccess = false
        configuration.networkServiceType = .background
        configuration.interfaceClassifier = InterfaceClassifier(sysfsRoot: "/tmp/sysfs-fixture")
        return configuration
    }

    static func expectSameSettings(_ decoded: SessionConfiguration, _ original: SessionConfiguration) {
        #expect(decoded.timeoutIntervalForRequest == original.timeoutIntervalForRequest)
        #expect(decoded.timeoutIntervalForResource == original.timeoutIntervalForResource)
        #expect(
            decoded.httpAdditionalHeaders.map { [$0.name, $0.value] }
                == original.httpAdditionalHeaders.map { [$0.name, $0.value] })
        #expect(decoded.httpMaximumConnectionsPerHost == original.httpMaximumConnectionsPerHost)
        #expect(decoded.maximumBufferedResponseSize == original.maximumBufferedResponseSize)
        #expect(decoded.decodesContent == original.decodesContent)
        #expect(decoded.contentDecoding == original.contentDecoding)
        #expect(decoded.maximumConcurrentTasks == original.maximumConcurrentTasks)
        #expect(decoded.maximumRedirects == original.maximumRedirects)
        #expect(decoded.transportSecurity == original.transportSecurity)
        #expect(decoded.shouldHandleCookies == original.shouldHandleCookies)
        #expect(decoded.httpCookieAcceptPolicy == original.httpCookieAcceptPolicy)
        #expect(decoded.requestCachePolicy == original.requestCachePolicy)
        #expect(decoded.allowsCellularAccess == original.allowsCellularAccess)
        #expect(decoded.networkServiceType == original.networkServiceType)
        #expect(decoded.interfaceClassifier == original.interfaceClassifier)
        #expect(decoded.urlCache?.memoryCapacity == original.urlCache?.memoryCapacity)
        #expect(decoded.urlCache?.diskCapacity == original.urlCache?.diskCapacity)
        #expect(decoded.urlCache?.directory == original.urlCache?.directory)
        #expect(decoded.tls?.minimumVersion == original.tls?.minimumVersion)
        #expect(decoded.tls?.maximumVersion == original.tls?.maximumVersion)
        #expect(decoded.tls?.trustRoots == original.tls?.trustRoots)
        #expect(decoded.tls?.certificateVerification == original.tls?.certificateVerification)
        #expect(decoded.tls?.certificateChainFile == original.tls?.certificateChainFile)
        #expect(decoded.tls?.privateKeyFile == original.tls?.privateKeyFile)
        #expect(decoded.tls?.pinning == original.tls?.pinning)
        #expect(decoded.tls?.resumesSessions == original.tls?.resumesSessions)
    }

    @Test func everySettingSurvivesJSONAndPropertyLists() throws {
        let original = Self.unusual()
        let fromJSON = try JSONDecoder().decode(SessionConfiguration.self, from: JSONEncoder().encode(original))
        Self.expectSameSettings(fromJSON, original)
        let fromPlist = try PropertyListDecoder().decode(SessionConfiguration.self, from: PropertyListEncoder().encode(original))
        Self.expectSameSettings(fromPlist, original)
        // The defaults survive as well.
        Self.expectSameSettings(
            try JSONDecoder().decode(SessionConfiguration.self, from: JSONEncoder().encode(SessionConfiguration())),
            SessionConfiguration())
    }

    @Test func liveObjectsAndClosuresAreLeftOut() throws {
        let original = Self.unusual()
        let decoded = try JSONDecoder().decode(SessionConfiguration.self, from: JSONEncoder().encode(original))
        #expect(decoded.credentialStorage == nil, "credentials must not be archived")
        #expect(decoded.httpClient == nil)
        #expect(decoded.tls?.trustEvaluation == nil && decoded.tls?.deferredTrustEvaluation == nil)
        #expect(decoded.httpCookieStorage == nil)
        // A new cache on the same shape, not the same object.
        #expect(decoded.urlCache !== original.urlCache)
        let json = String(decoding: try JSONEncoder().encode(original), as: UTF8.self)
        #expect(!json.contains("credential"))
    }

    @Test func cookieStoragesArchiveAsWhichStorage() throws {
        func roundTrip(_ storage: CookieStorage?) throws -> CookieStorage? {
            var configuration = SessionConfiguration()
            configuration.httpCookieStorage = storage
            return try JSONDecoder().decode(SessionConfiguration.self, from: JSONEncoder().encode(configuration))
                .httpCookieStorage
        }
        #expect(try roundTrip(.shared) === CookieStorage.shared)
        #expect(try roundTrip(nil) == nil)
        let own = CookieStorage()
        let decoded = try roundTrip(own)
        #expect(decoded != nil && decoded !== own && decoded !== CookieStorage.shared)
        // The ephemeral configuration's private storage and memory-only cache come back private and memory-only.
        let ephemeral = try JSONDecoder().decode(
            SessionConfiguration.self, from: JSONEncoder().encode(SessionConfiguration.ephemeral))
        #expect(ephemeral.httpCookieStorage !== CookieStorage.shared && ephemeral.httpCookieStorage != nil)
        #expect(
            ephemeral.urlCache?.directory == nil
                && ephemeral.urlCache?.diskCapacity == SessionConfiguration.ephemeral.urlCache?.diskCapacity)
    }

    /// Archives made while the cookie switch was spelled `httpShouldSetCookies` keep their value; new ones write only
    /// `shouldHandleCookies`.
    @Test func theCookieSwitchIsReadUnderItsOldKey() throws {
        var configuration = SessionConfiguration()
        configuration.shouldHandleCookies = false
        var object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(configuration)) as! [String: Any]
        #expect(object["shouldHandleCookies"] as? Bool == false && object["httpShouldSetCookies"] == nil)
        object["httpShouldSetCookies"] = object.removeValue(forKey: "shouldHandleCookies")
        let old = try JSONDecoder().decode(SessionConfiguration.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(old.shouldHandleCookies == false)
        object["httpShouldSetCookies"] = nil
        #expect(throws: DecodingError.self, "an archive with neither key is incomplete") {
            try JSONDecoder().decode(SessionConfiguration.self, from: JSONSerialization.data(withJSONObject: object))
        }
    }

    @Test func corruptArchivesAreErrorsNotTraps() throws {
        var object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(SessionConfiguration())) as! [String: Any]
        object["httpAdditionalHeaders"] = [["only-a-name"]]
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(SessionConfiguration.self, from: JSONSerialization.data(withJSONObject: object))
        }
        var tls = try JSONSerialization.jsonObject(with: JSONEncoder().encode(SessionConfiguration())) as! [String: Any]
        var settings = tls["tls"] as! [String: Any]
        settings["minimumVersion"] = 0x0301
        tls["tls"] = settings
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(SessionConfiguration.self, from: JSONSerialization.data(withJSONObject: tls))
        }
    }
}
