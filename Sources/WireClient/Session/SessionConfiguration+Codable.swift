import FoundationEssentials
import Wire
import WireTLS

/// A configuration archives its settings, not its live objects or closures:
///
/// - archived: the timeouts, additional headers, limits, content decoding, redirects, transport security, cookie
///   rules, cache policy, pipelining, cellular access, service type, interface classifier, and the TLS settings (versions, trust
///   roots, verification, client certificate files, pins, resumption);
/// - `proxy` as none, the environment, or a proxy's URL and `no_proxy` list without its credentials or fields (secrets
///   stay out of archives: a decoded proxy has none, set them again); an environment decodes as the process's;
/// - `urlCache` as its capacities and directory: decoding makes a new cache on them (keep one cache per directory
///   in a process: decode once, or set the property to the cache you already have);
/// - `httpCookieStorage` as which storage: `.shared`, none, or a private one, which decodes as a new, empty storage;
/// - not archived: `httpClient` (a running client), `credentialStorage` (secrets stay out of archives), the transfer
///   stages (code, not settings), and the TLS
///   trust hooks (closures). They decode as nil.
extension SessionConfiguration: Codable {
    private enum CodingKeys: String, CodingKey {
        case timeoutIntervalForRequest, timeoutIntervalForResource, httpAdditionalHeaders, httpMaximumConnectionsPerHost
        case maximumBufferedResponseSize, decodesContent, contentDecoding, maximumConcurrentTasks, maximumRedirects
        case transportSecurity, tls, shouldHandleCookies, httpCookieAcceptPolicy, httpCookieStorage, urlCache
        case requestCachePolicy, allowsCellularAccess, networkServiceType, interfaceClassifier, shouldUsePipelining
        case proxy
        /// `shouldHandleCookies` and `shouldUsePipelining` in archives made before each had one spelling: read, never
        /// written.
        case httpShouldSetCookies, httpShouldUsePipelining
    }

    /// Which cookie storage a configuration uses, as archived.
    private enum CookieStorageKind: String, Codable {
        case shared, none, `private`
    }

    /// Which proxy a configuration uses, as archived: never its credentials nor its fields.
    private enum ProxySetting: Codable {
        case none
        case environment
        case proxy(url: String, noProxy: String?)

        init(_ configuration: ProxyConfiguration) {
            switch configuration {
            case .none: self = .none
            case .environment: self = .environment
            case .proxy(let proxy, let noProxy): self = .proxy(url: "\(proxy.kind)://\(proxy.authority)", noProxy: noProxy?.text)
            }
        }

        var configuration: ProxyConfiguration {
            get throws {
                switch self {
                case .none: return .none
                case .environment: return .environment()
                case .proxy(let url, let noProxy):
                    do {
                        return .proxy(try Proxy(parsing: url), noProxy: noProxy.map(NoProxyList.init))
                    } catch {
                        throw DecodingError.dataCorrupted(
                            .init(codingPath: [], debugDescription: "an unreadable proxy URL: \(error)"))
                    }
                }
            }
        }
    }

    /// A cache's shape, as archived.
    private struct CacheShape: Codable {
        var memoryCapacity: Int
        var diskCapacity: Int
        var directory: String?
    }

    /// Restores an archived configuration; what is not archived takes the value described above.
    /// - Parameter decoder: The decoder.
    public init(from decoder: any Decoder) throws {
        self.init()
        let container = try decoder.container(keyedBy: CodingKeys.self)
        timeoutIntervalForRequest = try container.decode(Duration.self, forKey: .timeoutIntervalForRequest)
        timeoutIntervalForResource = try container.decode(Duration.self, forKey: .timeoutIntervalForResource)
        httpAdditionalHeaders = try HeaderPairs.decode(from: container, forKey: .httpAdditionalHeaders)
        httpMaximumConnectionsPerHost = try container.decode(Int.self, forKey: .httpMaximumConnectionsPerHost)
        maximumBufferedResponseSize = try container.decode(Int.self, forKey: .maximumBufferedResponseSize)
        decodesContent = try container.decode(Bool.self, forKey: .decodesContent)
        contentDecoding = try container.decode(ContentDecodingLimits.self, forKey: .contentDecoding)
        maximumConcurrentTasks = try container.decodeIfPresent(Int.self, forKey: .maximumConcurrentTasks)
        maximumRedirects = try container.decode(Int.self, forKey: .maximumRedirects)
        transportSecurity = try container.decode(TransportSecurityPolicy.self, forKey: .transportSecurity)
        tls = try container.decodeIfPresent(TLSSettings.self, forKey: .tls).map { try $0.configuration }
        shouldHandleCookies =
            try container.decodeIfPresent(Bool.self, forKey: .shouldHandleCookies)
            ?? container.decode(Bool.self, forKey: .httpShouldSetCookies)
        httpCookieAcceptPolicy = try container.decode(CookieAcceptPolicy.self, forKey: .httpCookieAcceptPolicy)
        httpCookieStorage =
            switch try container.decode(CookieStorageKind.self, forKey: .httpCookieStorage) {
            case .shared: CookieStorage.shared
            case .none: nil
            case .private: CookieStorage()
            }
        urlCache = try container.decodeIfPresent(CacheShape.self, forKey: .urlCache).map {
            URLCache(memoryCapacity: $0.memoryCapacity, diskCapacity: $0.diskCapacity, directory: $0.directory)
        }
        requestCachePolicy = try container.decode(CachePolicy.self, forKey: .requestCachePolicy)
        allowsCellularAccess = try container.decode(Bool.self, forKey: .allowsCellularAccess)
        // Absent from archives made before it existed: the default then.
        shouldUsePipelining =
            try container.decodeIfPresent(Bool.self, forKey: .shouldUsePipelining)
            ?? container.decodeIfPresent(Bool.self, forKey: .httpShouldUsePipelining) ?? false
        networkServiceType = try container.decode(NetworkServiceType.self, forKey: .networkServiceType)
        interfaceClassifier = InterfaceClassifier(sysfsRoot: try container.decode(String.self, forKey: .interfaceClassifier))
        // Absent from archives made before it existed: the default (the environment) then.
        if let setting = try container.decodeIfPresent(ProxySetting.self, forKey: .proxy) { proxy = try setting.configuration }
    }

    /// Archives the settings listed on the extension.
    /// - Parameter encoder: The encoder.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(timeoutIntervalForRequest, forKey: .timeoutIntervalForRequest)
        try container.encode(timeoutIntervalForResource, forKey: .timeoutIntervalForResource)
        try HeaderPairs.encode(httpAdditionalHeaders, to: &container, forKey: .httpAdditionalHeaders)
        try container.encode(httpMaximumConnectionsPerHost, forKey: .httpMaximumConnectionsPerHost)
        try container.encode(maximumBufferedResponseSize, forKey: .maximumBufferedResponseSize)
        try container.encode(decodesContent, forKey: .decodesContent)
        try container.encode(contentDecoding, forKey: .contentDecoding)
        try container.encodeIfPresent(maximumConcurrentTasks, forKey: .maximumConcurrentTasks)
        try container.encode(maximumRedirects, forKey: .maximumRedirects)
        try container.encode(transportSecurity, forKey: .transportSecurity)
        try container.encodeIfPresent(tls.map(TLSSettings.init), forKey: .tls)
        try container.encode(shouldHandleCookies, forKey: .shouldHandleCookies)
        try container.encode(httpCookieAcceptPolicy, forKey: .httpCookieAcceptPolicy)
        let storage: CookieStorageKind =
            switch httpCookieStorage {
            case nil: .none
            case let storage? where storage === CookieStorage.shared: .shared
            case _?: .private
            }
        try container.encode(storage, forKey: .httpCookieStorage)
        try container.encodeIfPresent(
            urlCache.map {
                CacheShape(memoryCapacity: $0.memoryCapacity, diskCapacity: $0.diskCapacity, directory: $0.directory)
            },
            forKey: .urlCache)
        try container.encode(requestCachePolicy, forKey: .requestCachePolicy)
        try container.encode(allowsCellularAccess, forKey: .allowsCellularAccess)
        try container.encode(shouldUsePipelining, forKey: .shouldUsePipelining)
        try container.encode(networkServiceType, forKey: .networkServiceType)
        try container.encode(interfaceClassifier.sysfsRoot, forKey: .interfaceClassifier)
        try container.encode(ProxySetting(proxy), forKey: .proxy)
    }
}

/// The archivable part of WireTLS's `TLSConfiguration`: everything but the trust hooks.
private struct TLSSettings: Codable {
    enum Roots: Codable {
        case system
        case pemFile(String)
        case der([Data])
    }

    enum Verification: String, Codable {
        case full, noHostnameVerification, none
    }

    enum Pins: Codable {
        case publicKey([String])
        case certificate([Data])
    }

    var minimumVersion: Int
    var maximumVersion: Int
    var trustRoots: Roots
    var certificateVerification: Verification
    var certificateChainFile: String?
    var privateKeyFile: String?
    var pinning: Pins?
    var resumesSessions: Bool

    init(_ tls: TLSConfiguration) {
        minimumVersion = tls.minimumVersion.rawValue
        maximumVersion = tls.maximumVersion.rawValue
        trustRoots =
            switch tls.trustRoots {
            case .system: .system
            case .pemFile(let path): .pemFile(path)
            case .der(let certificates): .der(certificates.map { Data($0) })
            }
        certificateVerification =
            switch tls.certificateVerification {
            case .full: .full
            case .noHostnameVerification: .noHostnameVerification
            case .none: .none
            }
        certificateChainFile = tls.certificateChainFile
        privateKeyFile = tls.privateKeyFile
        pinning =
            switch tls.pinning {
            case nil: nil
            case .publicKey(let pins)?: .publicKey(pins.sorted())
            case .certificate(let certificates)?:
                .certificate(certificates.map { Data($0) }.sorted { $0.lexicographicallyPrecedes($1) })
            }
        resumesSessions = tls.resumesSessions
    }

    /// The configuration these settings describe; an unknown TLS version is corrupt data.
    var configuration: TLSConfiguration {
        get throws {
            guard let minimum = TLSVersion(rawValue: minimumVersion), let maximum = TLSVersion(rawValue: maximumVersion) else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: [], debugDescription: "unknown TLS version \(minimumVersion) or \(maximumVersion)"))
            }
            var tls = TLSConfiguration()
            tls.minimumVersion = minimum
            tls.maximumVersion = maximum
            tls.trustRoots =
                switch trustRoots {
                case .system: .system
                case .pemFile(let path): .pemFile(path)
                case .der(let certificates): .der(certificates.map { [UInt8]($0) })
                }
            tls.certificateVerification =
                switch certificateVerification {
                case .full: .full
                case .noHostnameVerification: .noHostnameVerification
                case .none: .none
                }
            tls.certificateChainFile = certificateChainFile
            tls.privateKeyFile = privateKeyFile
            tls.pinning =
                switch pinning {
                case nil: nil
                case .publicKey(let pins)?: .publicKey(Set(pins))
                case .certificate(let certificates)?: .certificate(Set(certificates.map { [UInt8]($0) }))
                }
            tls.resumesSessions = resumesSessions
            return tls
        }
    }
}
