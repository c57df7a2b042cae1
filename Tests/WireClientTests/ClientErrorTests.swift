import FoundationEssentials
import Testing
import Wire
import WireClient

/// `ClientError`: every code and its NSURLError number; equality by code; the context an error carries.
@Suite struct ClientErrorTests {
    @Test func everyCodeHasItsURLErrorNumber() {
        let table: [(ClientError.Code, Int)] = [
            (.cancelled, -999), (.badURL, -1000), (.timedOut, -1001), (.cannotFindHost, -1003),
            (.cannotConnectToHost, -1004), (.networkConnectionLost, -1005), (.tooManyRedirects, -1007),
            (.resourceUnavailable, -1008), (.notConnectedToInternet, -1009), (.unacceptableStatusCode(404), -1011),
            (.cannotDecodeRawData, -1015), (.unacceptableContentType("text/html"), -1016),
            (.unacceptableContentType(nil), -1016), (.requestSerializationFailed, -1016),
            (.responseSerializationFailed, -1017), (.requestBodyStreamExhausted, -1021),
            (.appTransportSecurityRequiresSecureConnection, -1022), (.fileNotReachable, -1100),
            (.responseTooLarge, -1103), (.secureConnectionFailed, -1200), (.serverCertificateUntrusted, -1202),
            (.cannotWriteToFile, -3003), (.cannotMoveFile, -3005), (.bodyLengthMismatch, -1),
            (.sessionInvalidated, -1), (.invalidSecurityPolicy, -1),
        ]
        #expect(table.count == 26)
        for (code, number) in table {
            #expect(code.urlErrorCode == number, "\(code)")
            #expect(ClientError(code).urlErrorCode == number, "\(code)")
        }
    }

    @Test func equalityComparesTheCodeOnly() {
        let url = URL(string: "http://example.com/a")!
        let one = ClientError(.unacceptableStatusCode(500), failingURL: url, responseData: Data("x".utf8))
        let other = ClientError(.unacceptableStatusCode(500), underlying: ClientError(.timedOut))
        #expect(one == other)
        #expect(one != ClientError(.unacceptableStatusCode(404)))
        #expect(ClientError(.unacceptableContentType("a/b")) != ClientError(.unacceptableContentType(nil)))
    }

    @Test func carriesResponseDataUnderlyingAndTheResponsesURL() {
        let url = URL(string: "http://example.com/users")!
        let response = ClientResponse(url: url, statusCode: 404, headers: ["Content-Type": "text/plain"])
        let cause = ClientError(.unacceptableContentType("text/plain"))
        let error = ClientError(
            .unacceptableStatusCode(404), response: response, responseData: Data("no".utf8), underlying: cause)
        #expect(error.failingURL == url)
        #expect(error.response?.statusCode == 404)
        #expect(error.responseData == Data("no".utf8))
        #expect((error.underlying as? ClientError)?.code == .unacceptableContentType("text/plain"))
        #expect(error.description.contains("unacceptableStatusCode(404)"))
        #expect(error.description.contains("http://example.com/users"))
        #expect(error.description.contains("Request failed: not found (404)"))
        #expect(error.description.contains("unacceptable content-type: text/plain"))
    }
}
