import Wire

/// Answers 200 with JSON describing the request as parsed; for HEAD, the JSON goes base64-encoded in `X-Echo`.
struct EchoHandler: HTTPHandler {
    let maxBodySize: Int

    func handle(_ request: HTTPServerRequest, response: HTTPResponseWriter) async throws {
        let body = try await request.body.collect(upTo: maxBodySize)
        let json = Self.describe(request.head, body: body.readableBytesArray)
        var headers: HTTPHeaders = ["Content-Type": "application/json"]
        if request.method == .head {
            headers.add(name: "X-Echo", value: Base64Encoder.encode(Array(json.utf8)))
            headers.add(name: "Content-Length", value: String(json.utf8.count))
        }
        try await response.respond(HTTPResponseHead(status: .ok, headers: headers), body: ByteBuffer(string: json))
    }

    /// `{"method","target","version","headers":[[name,value],…],"body_b64"}`, fields exactly as sent: each byte of
    /// a string as the code point of the same value (`JSONString`, obs-text included).
    static func describe(_ head: HTTPRequestHead, body: [UInt8]) -> String {
        var json: [UInt8] = []
        json.append(contentsOf: #"{"method":"#.utf8)
        JSONString.append(head.method.rawValue, to: &json)
        json.append(contentsOf: #","target":"#.utf8)
        head.withTargetBytes { span in span.withUnsafeBufferPointer { JSONString.append($0, to: &json) } }
        json.append(contentsOf: #","version":"#.utf8)
        JSONString.append(head.version.description, to: &json)
        json.append(contentsOf: #","headers":"#.utf8)
        JSONString.appendFields(head.headers, to: &json)
        json.append(contentsOf: #","body_b64":""#.utf8)
        json.append(contentsOf: Base64Encoder.encode(body).utf8)
        json.append(contentsOf: #""}"#.utf8)
        // Plain ASCII, so the String holds exactly these bytes.
        return String(decoding: json, as: UTF8.self)
    }
}
