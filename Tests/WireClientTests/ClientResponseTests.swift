import FoundationEssentials
import Testing
import Wire
import WireClient

/// `ClientResponse`: `mimeType` lower-cased without parameters, `expectedContentLength` −1 when unknown.
@Suite struct ClientResponseTests {
    let url = URL(string: "http://example.com/")!

    @Test func mimeTypeIsLowerCasedWithoutParameters() {
        let response = ClientResponse(
            url: url, statusCode: 200, headers: ["Content-Type": " Application/JSON ; Charset=\"UTF-8\""])
        #expect(response.mimeType == "application/json")
        #expect(response.textEncodingName == "utf-8")
        #expect(ClientResponse(url: url, statusCode: 200).mimeType == nil)
        #expect(ClientResponse(url: url, statusCode: 200, headers: ["Content-Type": " ; charset=x"]).mimeType == nil)
        #expect(ClientResponse(url: url, statusCode: 200, headers: ["content-type": "TEXT/html"]).mimeType == "text/html")
    }

    @Test func expectedContentLength() {
        #expect(ClientResponse(url: url, statusCode: 200, headers: ["Content-Length": "42"]).expectedContentLength == 42)
        #expect(ClientResponse(url: url, statusCode: 200).expectedContentLength == -1)
        #expect(ClientResponse(url: url, statusCode: 200, headers: ["Content-Length": "42, 42"]).expectedContentLength == 42)
        #expect(ClientResponse(url: url, statusCode: 200, headers: ["Content-Length": "42, 43"]).expectedContentLength == -1)
        #expect(ClientResponse(url: url, statusCode: 200, headers: ["Content-Length": "-1"]).expectedContentLength == -1)
        #expect(
            ClientResponse(url: url, statusCode: 200, headers: ["Content-Length": "99999999999999999999999"])
                .expectedContentLength == -1)
        let chunked: HTTPHeaders = ["Transfer-Encoding": "chunked", "Content-Length": "5"]
        #expect(ClientResponse(url: url, statusCode: 200, headers: chunked).expectedContentLength == -1)
        #expect(
            ClientResponse(url: url, statusCode: 200, headers: ["Content-Length": "7"]).value(
                forHTTPHeaderField: "content-length") == "7")
        // Names in any case, repeated fields, a coding other than chunked, digits at the edge of Int64.
        func length(_ fields: [(String, String)]) -> Int64 {
            ClientResponse(url: url, statusCode: 200, headers: HTTPHeaders(fields.map { (name: $0.0, value: $0.1) }))
                .expectedContentLength
        }
        #expect(length([("CONTENT-LENGTH", "12"), ("Content-Type", "text/plain")]) == 12)
        #expect(length([("Content-Length", "12"), ("content-length", "12")]) == 12)
        #expect(length([("Content-Length", "12"), ("content-length", "13")]) == -1)
        #expect(length([("Transfer-Encoding", "gzip"), ("Content-Length", "12")]) == 12)
        #expect(length([("Content-Length", "12"), ("Transfer-Encoding", "gzip, Chunked")]) == -1)
        #expect(length([("Content-Length", "")]) == -1)
        #expect(length([("Content-Length", "1 2")]) == -1)
        #expect(length([("Content-Length", "999999999999999999")]) == 999_999_999_999_999_999)
        #expect(length([("Content-Length", "9223372036854775807")]) == Int64.max)
        #expect(length([("Content-Length", "9223372036854775808")]) == -1)
        #expect(length([("Content-Lengthy", "12"), ("Xontent-Length", "3")]) == -1)
    }

    /// A response is a value: a copy changed does not change the original, equal responses built apart are equal and
    /// hash alike, and any field that differs makes them unequal.
    @Test func copiesAreValuesAndEqualityCoversEveryField() {
        let original = ClientResponse(url: url, statusCode: 200, headers: ["Content-Type": "text/plain", "Content-Length": "3"])
        var copy = original
        copy.source = .cache
        copy.statusCode = 203
        #expect(original.source == .network && original.statusCode == 200)
        #expect(copy.source == .cache && copy.statusCode == 203 && copy.mimeType == "text/plain")
        #expect(copy != original)

        let twin = ClientResponse(url: url, statusCode: 200, headers: ["Content-Type": "text/plain", "Content-Length": "3"])
        #expect(twin == original)
        #expect(Set([twin, original]).count == 1)
        var edits: [(inout ClientResponse) -> Void] = [
            { $0.url = URL(string: "http://example.com/other")! }, { $0.headers.add(name: "X", value: "1") },
            { $0.mimeType = "text/html" }, { $0.textEncodingName = "utf-8" }, { $0.expectedContentLength = 4 },
            { $0.source = .revalidated },
        ]
        edits.append { $0.statusCode = 500 }
        for edit in edits {
            var changed = twin
            edit(&changed)
            #expect(changed != twin)
            #expect(twin == original, "editing a copy left the original alone")
        }
    }

    /// The derived values are read from the fields the response was made with; a value set stays as set, and new
    /// fields leave them as they were (as NSHTTPURLResponse's, fixed when it is made).
    @Test func derivedValuesStayAsMadeOrAsSet() {
        let made = ClientResponse(
            url: url, statusCode: 200, headers: ["Content-Type": "text/html; charset=ISO-8859-1", "Content-Length": "7"])
        var changed = made
        changed.headers = ["Content-Type": "application/json", "Transfer-Encoding": "chunked"]
        #expect(changed.mimeType == "text/html" && changed.textEncodingName == "iso-8859-1" && changed.expectedContentLength == 7)
        changed.mimeType = nil
        changed.expectedContentLength = -1
        #expect(changed.mimeType == nil && changed.textEncodingName == "iso-8859-1" && changed.expectedContentLength == -1)

        // Equality compares the values, whether derived or set.
        var pinned = made
        pinned.mimeType = "text/html"
        pinned.textEncodingName = "iso-8859-1"
        #expect(pinned == made && pinned.hashValue == made.hashValue)
        pinned.textEncodingName = "utf-8"
        #expect(pinned != made)
    }
}
