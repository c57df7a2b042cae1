import FoundationEssentials
import Wire

/// What `cancel(producingResumeData:)` hands out and `downloadTask(withResumeData:)` takes back: a
/// versioned JSON record of the partial download. Callers treat it as opaque bytes; it may be kept across restarts of
/// the process, as long as the temporary file stays where it is.
struct ResumeRecord: Codable, Sendable, Equatable {
    /// The only version this build writes and reads; another one is refused as corrupt.
    static let currentVersion = 1

    /// The record's format version.
    var version: Int
    /// The URL the bytes came from (the last hop's, after redirects).
    var url: String
    /// The request's header fields, in order, without `Range`, `If-Range` and `Accept-Encoding` (the resumption sets
    /// its own).
    var headers: [[String]]
    /// The strong `ETag`, else the `Last-Modified` date, of the response the bytes belong to: sent as `If-Range`.
    var validator: String
    /// How many bytes the temporary file holds: the resumption asks for the rest from here.
    var bytesOnDisk: Int64
    /// The representation's whole length, or −1 when the response did not say.
    var expectedTotalBytes: Int64
    /// The partial download, in WireClient's download directory.
    var temporaryFile: String

    /// The record as resume data.
    func encoded() -> Data? {
        try? JSONEncoder().encode(self)
    }

    /// Decodes and checks resume data: the current version, an http(s) URL, a validator, a non-negative offset, and a
    /// temporary file that is a `.download` file directly inside WireClient's download directory (so crafted data
    /// cannot make a task append to or truncate any other file).
    /// - Throws: `.cannotDecodeRawData`, naming what is wrong.
    static func decode(_ data: Data) throws(ClientError) -> ResumeRecord {
        let record: ResumeRecord
        do {
            record = try JSONDecoder().decode(ResumeRecord.self, from: data)
        } catch {
            throw corrupt("the resume data is not a resume record", underlying: error)
        }
        guard record.version == currentVersion else {
            throw corrupt("the resume data has version \(record.version); this build reads version \(currentVersion)")
        }
        guard let url = URL(string: record.url), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host != nil
        else {
            throw corrupt("the resume data's URL '\(record.url)' is not an http(s) URL")
        }
        guard !record.validator.isEmpty, record.bytesOnDisk >= 0, record.expectedTotalBytes >= -1,
            record.headers.allSatisfy({ $0.count == 2 })
        else {
            throw corrupt("the resume data's validator, offset or header fields are malformed")
        }
        let directory = DownloadFile.directory + "/"
        let name = record.temporaryFile.dropFirst(directory.count)
        guard record.temporaryFile.hasPrefix(directory), name.hasSuffix(".download"), !name.contains("/"),
            name != ".download"
        else {
            throw corrupt("the resume data's temporary file \(record.temporaryFile) is not a WireClient download file")
        }
        return record
    }

    /// The request that resumes the download: the recorded fields plus `Range: bytes=<n>-`, `If-Range` and
    /// `Accept-Encoding: identity` (a decoded body's bytes would not match the offsets).
    var resumingRequest: ClientRequest {
        var request = freshRequest
        request.headers.add(name: "Range", value: "bytes=\(bytesOnDisk)-")
        request.headers.add(name: "If-Range", value: validator)
        request.headers.add(name: "Accept-Encoding", value: "identity")
        return request
    }

    /// The request that starts the download over: the recorded fields only.
    var freshRequest: ClientRequest {
        var fields = HTTPHeaders()
        for pair in headers { fields.add(name: pair[0], value: pair[1]) }
        // `decode` checked the URL; a record made here always has one.
        return ClientRequest(url: URL(string: url) ?? URL(string: "http://invalid.invalid/")!, headers: fields)
    }

    /// The header fields of `request` worth recording: all but the ones a resumption sets itself.
    static func recordedHeaders(of request: ClientRequest) -> [[String]] {
        let own: Set<String> = ["range", "if-range", "accept-encoding"]
        return request.headers.filter { !own.contains($0.name.lowercased()) }.map { [$0.name, $0.value] }
    }

    private static func corrupt(_ reason: String, underlying: (any Error)? = nil) -> ClientError {
        ClientError(.cannotDecodeRawData, underlying: underlying, failureReason: reason)
    }
}
