import FoundationEssentials
import Testing
import Wire
import WireClient

/// The JSON and property-list request serializers.
@Suite struct BodyRequestSerializerTests {
    let url = URL(string: "http://h/p")!

    func http() -> HTTPRequestSerializer {
        HTTPRequestSerializer(
            preferredLanguages: ["en"], product: "t", system: SystemIdentity(systemName: "Linux", release: "r", machine: "m"))
    }

    func body(_ request: ClientRequest) -> Data? {
        guard case .data(let data) = request.body else { return nil }
        return data
    }

    func text(_ request: ClientRequest) -> String? {
        body(request).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func jsonBodyIsCompactSortedAndEscapedLikeNSJSONSerialization() throws {
        let serializer = JSONRequestSerializer(httpSerializer: http())
        let request = try serializer.request(
            withMethod: "POST",
            urlString: "http://h/p",
            parameters: ["z": [true, nil, 1.5, 2.0], "a": "x/y \"q\" \\ é\u{1}\u{8}\u{c}\n\r\t\u{1f}", "m": ["k": -3]]
        )
        #expect(text(request) == #"{"a":"x\/y \"q\" \\ é\u0001\b\f\n\r\t\u001f","m":{"k":-3},"z":[true,null,1.5,2]}"#)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(request.value(forHTTPHeaderField: "User-Agent") == "t/unknown (Linux r; m)")
        let array = try serializer.request(withMethod: "PUT", urlString: "http://h/p", parameters: [1, "two"])
        #expect(text(array) == #"[1,"two"]"#)
    }

    @Test func jsonWritingOptions() throws {
        let slashes = JSONRequestSerializer(httpSerializer: http(), writingOptions: .withoutEscapingSlashes)
        #expect(
            text(try slashes.request(withMethod: "POST", urlString: "http://h/", parameters: ["u": "a/b"])) == #"{"u":"a/b"}"#)
        let pretty = JSONRequestSerializer(httpSerializer: http(), writingOptions: .prettyPrinted)
        let request = try pretty.request(
            withMethod: "POST", urlString: "http://h/", parameters: ["b": [1, [:]], "a": [:], "c": []])
        #expect(text(request) == "{\n  \"a\" : {},\n  \"b\" : [\n    1,\n    {}\n  ],\n  \"c\" : []\n}")
    }

    @Test func jsonKeepsAnExistingContentTypeAndSendsNothingForNilParameters() throws {
        let serializer = JSONRequestSerializer(httpSerializer: http())
        var typed = ClientRequest(url: url, method: "POST")
        typed.setValue("application/vnd.api+json", forHTTPHeaderField: "Content-Type")
        #expect(
            try serializer.request(bySerializing: typed, parameters: ["a": 1]).headers["content-type"] == [
                "application/vnd.api+json"
            ])
        let none = try serializer.request(withMethod: "POST", urlString: "http://h/p", parameters: nil)
        #expect(none.body == nil)
        #expect(none.value(forHTTPHeaderField: "Content-Type") == nil)
        #expect(none.value(forHTTPHeaderField: "Accept-Language") == "en;q=1")
    }

    @Test func jsonUsesTheQueryForURIMethods() throws {
        let serializer = JSONRequestSerializer(httpSerializer: http())
        let request = try serializer.request(withMethod: "GET", urlString: "http://h/p", parameters: ["a": [1, 2]])
        #expect(request.url.absoluteString == "http://h/p?a%5B%5D=1&a%5B%5D=2")
        #expect(request.body == nil)
    }

    @Test func jsonRefusesWhatJSONCannotHold() {
        let serializer = JSONRequestSerializer(httpSerializer: http())
        for parameters: Parameters in [
            "scalar", 1, nil, ["d": .double(.nan)], ["d": .double(.infinity)], ["d": .data(Data([1]))],
        ] {
            do {
                _ = try serializer.request(withMethod: "POST", urlString: "http://h/p", parameters: parameters)
                Issue.record("\(parameters) must be refused")
            } catch {
                #expect(error.code == .requestSerializationFailed)
                #expect(error.urlErrorCode == -1016)
            }
        }
    }

    @Test func jsonFromEncodable() throws {
        struct User: Encodable {
            var name: String
            var tags: [String]
            var age: Int
        }
        let serializer = JSONRequestSerializer(httpSerializer: http())
        let post = try serializer.request(
            bySerializing: ClientRequest(url: url, method: "POST"), encoding: User(name: "a/b", tags: ["x"], age: 3))
        #expect(text(post) == #"{"age":3,"name":"a\/b","tags":["x"]}"#)
        let get = try serializer.request(bySerializing: ClientRequest(url: url), encoding: User(name: "n", tags: [], age: 1))
        #expect(get.url.absoluteString == "http://h/p?age=1&name=n")
        #expect(throws: ClientError(.requestSerializationFailed)) {
            try serializer.request(bySerializing: ClientRequest(url: url, method: "POST"), encoding: "fragment")
        }
    }

    @Test func jsonSerializerArchives() throws {
        var serializer = JSONRequestSerializer(httpSerializer: http(), writingOptions: [.prettyPrinted])
        serializer.setValue("1", forHTTPHeaderField: "X-A")
        let restored = try JSONDecoder().decode(JSONRequestSerializer.self, from: try JSONEncoder().encode(serializer))
        #expect(restored.writingOptions == [.prettyPrinted])
        #expect(restored.value(forHTTPHeaderField: "X-A") == "1")
    }

    @Test func propertyListBodyIsXML10ByDefault() throws {
        let serializer = PropertyListRequestSerializer(httpSerializer: http())
        let parameters: Parameters = [
            "name": "x", "count": 2, "ratio": 0.5, "on": true, "blob": .data(Data([1, 2])), "list": ["a"],
        ]
        let request = try serializer.request(withMethod: "POST", urlString: "http://h/p", parameters: parameters)
        let xml = try #require(text(request))
        #expect(
            xml.hasPrefix(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n<plist version=\"1.0\">"
            ))
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-plist")
        let decoded = try PropertyListDecoder().decode(PropertyListValue.self, from: try #require(body(request)))
        #expect(
            decoded
                == .dictionary([
                    "name": .string("x"), "count": .int(2), "ratio": .double(0.5), "on": .bool(true),
                    "blob": .data(Data([1, 2])),
                    "list": .array([.string("a")]),
                ]))
    }

    @Test func propertyListBinaryNullAndURIMethods() throws {
        let binary = PropertyListRequestSerializer(httpSerializer: http(), format: .binary)
        let request = try binary.request(withMethod: "POST", urlString: "http://h/p", parameters: ["a": 1])
        #expect(body(request)?.prefix(8) == Data("bplist00".utf8))
        #expect(throws: ClientError(.requestSerializationFailed)) {
            try binary.request(withMethod: "POST", urlString: "http://h/p", parameters: ["a": [nil]])
        }
        #expect(
            try binary.request(withMethod: "GET", urlString: "http://h/p", parameters: ["a": 1]).url.absoluteString
                == "http://h/p?a=1")
        let none = try binary.request(withMethod: "POST", urlString: "http://h/p", parameters: nil)
        #expect(none.body == nil && none.value(forHTTPHeaderField: "Content-Type") == nil)
    }
}
