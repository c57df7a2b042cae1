import FoundationEssentials
import Testing
import Wire
import WireClient

/// Builds responses for the response-serializer suites.
func makeResponse(_ status: Int = 200, _ contentType: String? = "application/json", url: String = "http://h/r") -> ClientResponse
{
    var headers = HTTPHeaders()
    if let contentType { headers.add(name: "Content-Type", value: contentType) }
    return ClientResponse(url: URL(string: url)!, statusCode: status, headers: headers)
}

/// Response validation and its precedence, and the data serializer.
@Suite struct ResponseValidationTests {
    let body = Data("{}".utf8)

    @Test func acceptableResponsesPass() {
        let serializer = JSONResponseSerializer()
        #expect(serializer.validate(response: makeResponse(200), data: body) == nil)
        #expect(serializer.validate(response: makeResponse(299, "Application/JSON; charset=utf-8"), data: body) == nil)
        #expect(serializer.validate(response: makeResponse(200, "text/javascript"), data: body) == nil)
        #expect(serializer.validate(response: nil, data: body) == nil)
        var custom = JSONResponseSerializer()
        custom.acceptableContentTypes = ["Application/Vnd.Thing+JSON"]
        #expect(custom.validate(response: makeResponse(200, "application/vnd.thing+json"), data: body) == nil)
    }

    @Test func statusFailure() throws {
        let error = try #require(JSONResponseSerializer().validate(response: makeResponse(404), data: body))
        #expect(error.code == .unacceptableStatusCode(404))
        #expect(error.urlErrorCode == -1011)
        #expect(error.underlying == nil)
        #expect(error.responseData == body)
        #expect(error.response?.statusCode == 404)
        #expect(error.failingURL?.absoluteString == "http://h/r")
        #expect(JSONResponseSerializer().validate(response: makeResponse(199), data: body)?.code == .unacceptableStatusCode(199))
        #expect(JSONResponseSerializer().validate(response: makeResponse(300), data: body)?.code == .unacceptableStatusCode(300))
    }

    @Test func contentTypeFailure() throws {
        let error = try #require(JSONResponseSerializer().validate(response: makeResponse(200, "text/html"), data: body))
        #expect(error.code == .unacceptableContentType("text/html"))
        #expect(error.urlErrorCode == -1016)
        #expect(error.responseData == body)
        let missing = try #require(JSONResponseSerializer().validate(response: makeResponse(200, nil), data: body))
        #expect(missing.code == .unacceptableContentType(nil))
    }

    @Test func emptyBodyIsNeverRejectedForItsContentType() {
        #expect(JSONResponseSerializer().validate(response: makeResponse(200, "text/html"), data: Data()) == nil)
        #expect(JSONResponseSerializer().validate(response: makeResponse(204, nil), data: nil) == nil)
        let error = JSONResponseSerializer().validate(response: makeResponse(500, "text/html"), data: Data())
        #expect(error?.code == .unacceptableStatusCode(500))
        #expect(error?.underlying == nil)
        #expect(error?.responseData == Data())
    }

    @Test func bothFailuresGiveTheStatusErrorOverTheContentTypeError() throws {
        let error = try #require(JSONResponseSerializer().validate(response: makeResponse(500, "text/html"), data: body))
        #expect(error.code == .unacceptableStatusCode(500))
        let underlying = try #require(error.underlying as? ClientError)
        #expect(underlying.code == .unacceptableContentType("text/html"))
        #expect(underlying.responseData == body)
    }

    @Test func nilSetsAcceptAnything() {
        var serializer = HTTPResponseSerializer()
        serializer.acceptableStatusCodes = nil
        #expect(serializer.validate(response: makeResponse(999, "x/y"), data: body) == nil)
        #expect(HTTPResponseSerializer().acceptableContentTypes == nil)
        #expect(HTTPResponseSerializer().acceptableStatusCodes == Set(200..<300))
    }

    @Test func dataSerializerReturnsTheBodyEvenWhenInvalid() {
        let ok = HTTPResponseSerializer().serialize(response: makeResponse(200, "x/y"), data: body)
        #expect(ok.value as? Data == body)
        #expect(ok.error == nil)
        let bad = HTTPResponseSerializer().serialize(response: makeResponse(500), data: body)
        #expect(bad.value as? Data == body)
        #expect(bad.error?.code == .unacceptableStatusCode(500))
        #expect(bad.error?.responseData == body)
    }
}
