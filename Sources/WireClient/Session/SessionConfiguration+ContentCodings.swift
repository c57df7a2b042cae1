import Wire

extension SessionConfiguration {
    /// The `Accept-Encoding` value a session offers: the codings `ContentDecoder` decodes.
    static let offeredContentCodings = "gzip, deflate"

    /// Adds `Accept-Encoding: gzip, deflate` to `headers` when the session decodes content and the request has no
    /// `Accept-Encoding` of its own (a caller's value, `identity` on a resumed download included, is left alone).
    func offerContentCodings(in headers: inout HTTPHeaders) {
        guard decodesContent, !headers.contains(name: "Accept-Encoding") else { return }
        headers.add(name: "Accept-Encoding", value: Self.offeredContentCodings)
    }
}
