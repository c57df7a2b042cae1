import FoundationEssentials
import Testing
import Wire
import WireClient

/// The form serializer.
@Suite struct HTTPRequestSerializerTests {
    let system = SystemIdentity(systemName: "Linux", release: "6.1.0-test", machine: "x86_64")

    func serializer() -> HTTPRequestSerializer {
        HTTPRequestSerializer(preferredLanguages: ["en-US", "fr"], applicationVersion: "2.0", product: "acme", system: system)
    }

    func bodyText(_ request: ClientRequest) -> String? {
        guard case .data(let data) = request.body else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    @Test func uriMethodsAppendTheQuery() throws {
        let serializer = serializer()
        for method in ["GET", "HEAD", "DELETE", "get", "Delete"] {
            let request = try serializer.request(withMethod: method, urlString: "http://h/p", parameters: ["b": "2", "a": "1"])
            #expect(request.url.absoluteString == "http://h/p?a=1&b=2", "\(method)")
            #expect(request.body == nil)
            #expect(request.value(forHTTPHeaderField: "Content-Type") == nil)
        }
        #expect(
            try serializer.request(withMethod: "GET", urlString: "http://h/p?x=1", parameters: ["a": 1]).url.absoluteString
                == "http://h/p?x=1&a=1")
        #expect(
            try serializer.request(withMethod: "GET", urlString: "http://h/p?", parameters: ["a": 1]).url.absoluteString
                == "http://h/p?a=1")
        #expect(
            try serializer.request(withMethod: "GET", urlString: "http://h/p#frag", parameters: ["a": 1]).url.absoluteString
                == "http://h/p?a=1")
        #expect(
            try serializer.request(withMethod: "GET", urlString: "http://h/p?x#frag", parameters: ["a": 1]).url.absoluteString
                == "http://h/p?x&a=1")
        #expect(
            try serializer.request(withMethod: "GET", urlString: "http://h/p", parameters: [:]).url.absoluteString == "http://h/p"
        )
        #expect(
            try serializer.request(withMethod: "GET", urlString: "http://h/p", parameters: nil).url.absoluteString == "http://h/p"
        )
    }

    @Test func otherMethodsSendAFormBody() throws {
        let serializer = serializer()
        let post = try serializer.request(withMethod: "POST", urlString: "http://h/p", parameters: ["b": "x y", "a": ["c": 1]])
        #expect(post.url.absoluteString == "http://h/p")
        #expect(bodyText(post) == "a%5Bc%5D=1&b=x%20y")
        #expect(post.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
        let empty = try serializer.request(withMethod: "PUT", urlString: "http://h/p", parameters: nil)
        #expect(bodyText(empty) == "")
        #expect(empty.body?.knownLength == 0)
        var typed = ClientRequest(url: URL(string: "http://h/p")!, method: "PATCH")
        typed.setValue("text/plain", forHTTPHeaderField: "content-type")
        let kept = try serializer.request(bySerializing: typed, parameters: ["a": 1])
        #expect(kept.headers["Content-Type"] == ["text/plain"])
    }

    @Test func uriMethodSetIsConfigurable() throws {
        var serializer = serializer()
        serializer.httpMethodsEncodingParametersInURI = ["GET", "POST"]
        #expect(
            try serializer.request(withMethod: "post", urlString: "http://h/", parameters: ["a": 1]).url.absoluteString
                == "http://h/?a=1")
        let delete = try serializer.request(withMethod: "DELETE", urlString: "http://h/", parameters: ["a": 1])
        #expect(bodyText(delete) == "a=1")
        // Back to the default set: methods in any case, and the ones outside it, go where the set says.
        serializer.httpMethodsEncodingParametersInURI = ["HEAD", "DELETE", "GET"]
        for method in ["GET", "get", "Head", "DELETE", "delete"] {
            #expect(try serializer.request(withMethod: method, urlString: "http://h/", parameters: ["a": 1]).url.query == "a=1")
        }
        for method in ["POST", "post", "OPTIONS", "PUT", "PATCH", "PURGE"] {
            let request = try serializer.request(withMethod: method, urlString: "http://h/", parameters: ["a": 1])
            #expect(request.url.query == nil && bodyText(request) == "a=1")
        }
    }

    @Test func customQuerySerialization() throws {
        var serializer = serializer()
        serializer.setQueryStringSerialization { request, parameters in
            guard case .dictionary(let members) = parameters else { return nil }
            return members.isEmpty ? nil : "custom=\(request.method)"
        }
        #expect(
            try serializer.request(withMethod: "GET", urlString: "http://h/", parameters: ["a": 1]).url.absoluteString
                == "http://h/?custom=GET")
        #expect(
            bodyText(try serializer.request(withMethod: "POST", urlString: "http://h/", parameters: ["a": 1])) == "custom=POST")
        #expect(
            try serializer.request(withMethod: "GET", urlString: "http://h/", parameters: [:]).url.absoluteString == "http://h/")
        #expect(bodyText(try serializer.request(withMethod: "POST", urlString: "http://h/", parameters: [:])) == "")

        struct Refused: Error {}
        serializer.setQueryStringSerialization { _, _ in throw Refused() }
        do {
            _ = try serializer.request(withMethod: "GET", urlString: "http://h/", parameters: ["a": 1])
            Issue.record("the block's error must fail the request")
        } catch {
            #expect(error.code == .requestSerializationFailed)
            #expect(error.underlying is Refused)
            #expect(error.failingURL?.absoluteString == "http://h/")
        }
        serializer.setQueryStringSerialization(style: .default)
        #expect(
            try serializer.request(withMethod: "GET", urlString: "http://h/", parameters: ["a": 1]).url.absoluteString
                == "http://h/?a=1")
    }

    @Test func defaultHeadersInOrderOnlyWhenAbsent() throws {
        let serializer = serializer()
        #expect(serializer.httpRequestHeaders.map(\.name) == ["Accept-Language", "User-Agent"])
        #expect(serializer.value(forHTTPHeaderField: "accept-language") == "en-US;q=1, fr;q=0.9")
        #expect(serializer.value(forHTTPHeaderField: "User-Agent") == "acme/2.0 (Linux 6.1.0-test; x86_64)")
        var own = ClientRequest(url: URL(string: "http://h/")!)
        own.setValue("mine/1", forHTTPHeaderField: "user-agent")
        let request = try serializer.request(bySerializing: own, parameters: nil)
        #expect(request.headers["User-Agent"] == ["mine/1"])
        #expect(request.headers.map(\.name) == ["user-agent", "Accept-Language"])
    }

    @Test func removingUserAgentSendsNone() throws {
        var serializer = serializer()
        serializer.setValue(nil, forHTTPHeaderField: "user-agent")
        let request = try serializer.request(withMethod: "GET", urlString: "http://h/", parameters: nil)
        #expect(!request.headers.contains(name: "User-Agent"))
        #expect(request.headers.contains(name: "Accept-Language"))
    }

    @Test func acceptLanguageFormat() {
        #expect(PreferredLanguages.acceptLanguage(["en"]) == "en;q=1")
        #expect(
            PreferredLanguages.acceptLanguage(["a", "b", "c", "d", "e", "f", "g", "h"])
                == "a;q=1, b;q=0.9, c;q=0.8, d;q=0.7, e;q=0.6, f;q=0.5")
        #expect(
            HTTPRequestSerializer(preferredLanguages: ["de-DE"], system: system).value(forHTTPHeaderField: "Accept-Language")
                == "de-DE;q=1")
    }

    @Test func preferredLanguagesFromTheEnvironment() {
        #expect(PreferredLanguages.fromEnvironment([:]) == ["en"])
        #expect(PreferredLanguages.fromEnvironment(["LANG": "C.UTF-8", "LANGUAGE": "fr:de"]) == ["en"])
        #expect(PreferredLanguages.fromEnvironment(["LC_ALL": "POSIX"]) == ["en"])
        #expect(PreferredLanguages.fromEnvironment(["LANG": "de_DE.UTF-8@euro"]) == ["de-DE"])
        #expect(
            PreferredLanguages.fromEnvironment(["LANG": "en_US.UTF-8", "LANGUAGE": "fr_CA:fr::en_US:C"]) == [
                "fr-CA", "fr", "en-US",
            ])
        #expect(PreferredLanguages.fromEnvironment(["LC_ALL": "", "LC_MESSAGES": "pt_BR", "LANG": "en_US"]) == ["pt-BR"])
        #expect(PreferredLanguages.fromEnvironment(["LC_ALL": "ja_JP.eucJP", "LC_MESSAGES": "pt_BR"]) == ["ja-JP"])
        #expect(PreferredLanguages.fromEnvironment(["LANGUAGE": "es"]) == ["es"])
    }

    @Test func userAgentIsFoldedToPrintableASCII() {
        let value = UserAgent.value(product: "Café Ünïcødé Straße æøœ 日本\u{7}x", version: nil, system: system)
        #expect(value == "Cafe Unicode Strasse aeooe x/unknown (Linux 6.1.0-test; x86_64)")
        #expect(UserAgent.ascii("ÀÉÎÕÜÇÑ ŁŻŚĆ ÞÐ") == "AEIOUCN LZSC THD")
        let current = UserAgent.current()
        #expect(current.contains("/unknown (Linux "))
        #expect(current.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F })
    }

    @Test func basicAuthorization() throws {
        var serializer = serializer()
        serializer.setAuthorizationHeaderField(username: "user", password: "password")
        #expect(serializer.value(forHTTPHeaderField: "Authorization") == "Basic dXNlcjpwYXNzd29yZA==")
        serializer.setAuthorizationHeaderField(username: "Aladdin", password: "open sesame")
        #expect(serializer.httpRequestHeaders["Authorization"] == ["Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="])
        serializer.setAuthorizationHeaderField(username: "ü", password: "€")
        #expect(serializer.value(forHTTPHeaderField: "Authorization") == "Basic w7w64oKs")
        var own = ClientRequest(url: URL(string: "http://h/")!)
        own.setValue("Bearer t", forHTTPHeaderField: "Authorization")
        #expect(try serializer.request(bySerializing: own, parameters: nil).headers["Authorization"] == ["Bearer t"])
        serializer.clearAuthorizationHeader()
        #expect(serializer.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(
            !(try serializer.request(withMethod: "GET", urlString: "http://h/", parameters: nil)).headers.contains(
                name: "Authorization"))
    }

    @Test func settingsAreCopiedOnlyWhenSet() throws {
        var serializer = serializer()
        var request = try serializer.request(withMethod: "GET", urlString: "http://h/", parameters: nil)
        #expect(request.timeoutInterval == nil && request.cachePolicy == nil && request.allowsCellularAccess == nil)
        #expect(request.shouldHandleCookies == nil && request.shouldUsePipelining == nil && request.networkServiceType == nil)
        serializer.timeoutInterval = .seconds(60)
        serializer.cachePolicy = .useProtocolCachePolicy
        serializer.allowsCellularAccess = true
        serializer.shouldHandleCookies = false
        serializer.shouldUsePipelining = false
        serializer.networkServiceType = .video
        request = try serializer.request(withMethod: "GET", urlString: "http://h/", parameters: nil)
        #expect(request.timeoutInterval == .seconds(60))
        #expect(request.cachePolicy == .useProtocolCachePolicy)
        #expect(request.allowsCellularAccess == true)
        #expect(request.shouldHandleCookies == false)
        #expect(request.shouldUsePipelining == false)
        #expect(request.networkServiceType == .video)
        serializer.timeoutInterval = nil
        #expect(try serializer.request(withMethod: "GET", urlString: "http://h/", parameters: nil).timeoutInterval == nil)
    }

    @Test func copiesAreIndependentAndSettableThroughTheProtocol() throws {
        let original = serializer()
        var copy = original
        copy.setValue("1", forHTTPHeaderField: "X-Copy")
        copy.setQueryStringSerialization { _, _ in "q" }
        #expect(original.value(forHTTPHeaderField: "X-Copy") == nil)
        #expect(
            try original.request(withMethod: "GET", urlString: "http://h/", parameters: ["a": 1]).url.absoluteString
                == "http://h/?a=1")
        #expect(
            try copy.request(withMethod: "GET", urlString: "http://h/", parameters: ["a": 1]).url.absoluteString == "http://h/?q")
        var existential: any RequestSerializer = original
        existential.setValue("v", forHTTPHeaderField: "X-Any")
        existential.timeoutInterval = .seconds(5)
        let request = try existential.request(withMethod: "GET", urlString: "http://h/", parameters: nil)
        #expect(request.value(forHTTPHeaderField: "X-Any") == "v")
        #expect(request.timeoutInterval == .seconds(5))
    }

    @Test func archivesEverythingButTheBlock() throws {
        var serializer = serializer()
        serializer.setValue("v", forHTTPHeaderField: "X-Archived")
        serializer.httpMethodsEncodingParametersInURI = ["GET"]
        serializer.timeoutInterval = .seconds(7)
        serializer.networkServiceType = .voice
        serializer.setQueryStringSerialization { _, _ in "block" }
        let restored = try JSONDecoder().decode(HTTPRequestSerializer.self, from: try JSONEncoder().encode(serializer))
        #expect(restored.httpRequestHeaders == serializer.httpRequestHeaders)
        #expect(restored.httpMethodsEncodingParametersInURI == ["GET"])
        #expect(restored.timeoutInterval == .seconds(7))
        #expect(restored.networkServiceType == .voice)
        #expect(restored.cachePolicy == nil)
        #expect(
            try restored.request(withMethod: "GET", urlString: "http://h/", parameters: ["a": 1]).url.absoluteString
                == "http://h/?a=1")
    }

    /// Archives made while the serializer's cookie and pipelining switches were spelled `httpShouldHandleCookies` and
    /// `httpShouldUsePipelining` keep their values; new ones write only `shouldHandleCookies` and `shouldUsePipelining`.
    @Test func theSwitchesAreReadUnderTheirOldKeys() throws {
        var serializer = serializer()
        serializer.shouldHandleCookies = false
        serializer.shouldUsePipelining = false
        let archive = String(decoding: try JSONEncoder().encode(serializer), as: UTF8.self)
        #expect(archive.contains("\"shouldHandleCookies\":false") && !archive.contains("httpShouldHandleCookies"))
        #expect(archive.contains("\"shouldUsePipelining\":false") && !archive.contains("httpShouldUsePipelining"))
        let old = archive.replacing("\"shouldHandleCookies\"", with: "\"httpShouldHandleCookies\"")
            .replacing("\"shouldUsePipelining\"", with: "\"httpShouldUsePipelining\"")
        let restored = try JSONDecoder().decode(HTTPRequestSerializer.self, from: Data(old.utf8))
        #expect(restored.shouldHandleCookies == false && restored.shouldUsePipelining == false)
        let request = try restored.request(withMethod: "GET", urlString: "http://h/", parameters: nil)
        #expect(request.shouldHandleCookies == false && request.shouldUsePipelining == false)
    }

    @Test func unusableURLsAndParametersFail() {
        #expect(throws: ClientError(.badURL)) {
            try serializer().request(withMethod: "GET", urlString: "not a url", parameters: nil)
        }
        #expect(throws: ClientError(.badURL)) { try serializer().request(withMethod: "GET", urlString: "", parameters: nil) }
        #expect(throws: ClientError(.requestSerializationFailed)) {
            try serializer().request(withMethod: "POST", urlString: "http://h/", parameters: [1, 2])
        }
    }
}
