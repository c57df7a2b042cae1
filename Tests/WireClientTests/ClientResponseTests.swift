import FoundationEssentials
import Testing
import Wire
import WireClient

/// §0.4: `mimeType` lower-cased without parameters, `expectedContentLength` −1 when unknown.
@Suite struct ClientResponseTests {
    let url = URL(string: "http://example.com/")!

    @Test func mimeTypeIsLowerCasedWithoutParameters() {
        let response = ClientResponse(url: url, statusCode: 200, headers: ["Content-Type": " Application/JSON ; Charset=\"UTF-8\""])
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
        #expect(ClientResponse(url: url, statusCode: 200, headers: ["Content-Length": "99999999999999999999999"]).expectedContentLength == -1)
        let chunked: HTTPHeaders = ["Transfer-Encoding": "chunked", "Content-Length": "5"]
        #expect(ClientResponse(url: url, statusCode: 200, headers: chunked).expectedContentLength == -1)
        #expect(ClientResponse(url: url, statusCode: 200, headers: ["Content-Length": "7"]).value(forHTTPHeaderField: "content-length") == "7")
    }
}
