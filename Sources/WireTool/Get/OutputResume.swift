import Wire
import WireClient

/// `-C -` (curl's `--continue-at -`): an output file continued from its size, and curl's reading of the answer.
package struct OutputResume: Equatable, Sendable {
    /// What an answer to the ranged request means.
    package enum Verdict: Equatable, Sendable {
        /// A 206 for the `length` bytes from the offset: they are appended, and a body that runs past them is
        /// refused.
        case append(length: Int64)
        /// A 416, or a whole body exactly as long as the file: the file is complete and stays as it is (success).
        case alreadyComplete
        /// Anything else (a 200 with the whole file, another range, an error status): the server cannot continue
        /// the file; curl's exit 33, the file untouched.
        case cannotResume
        /// A 206 for the bytes from the offset whose `Content-Length` is not the length of its `Content-Range`:
        /// which of the two is wrong cannot be told, so nothing is appended; exit 33, the file untouched. (curl
        /// 7.88 appends such a body whole; its code for an answer that cannot continue the file is 33,
        /// CURLE_RANGE_ERROR, and 18 is for a body cut short.)
        case inconsistentLength(String)
    }

    /// The bytes already in the output file: where the request asks the body to start.
    package let offset: Int

    /// The resumption for one transfer, or nil when there is nothing to continue: no `-C -`, `-I`, standard output,
    /// or no file or an empty one (the request goes out without `Range`, as curl's does).
    package init?(options: FetchOptions, output: String?) {
        guard !options.headOnly else { return nil }
        if let offset = options.resumeOffset {
            // -C OFFSET: the caller's offset, whatever the output; 0 asks for the whole body.
            guard offset > 0 else { return nil }
            self.offset = Int(offset)
            return
        }
        guard options.continuesOutput, let output, output != "-",
            let size = LocalFiles.size(atPath: output), size > 0
        else { return nil }
        offset = size
    }

    /// `Range: bytes=<offset>-`, replacing one given with `-H`.
    func apply(to request: inout HTTPClientRequest) {
        // -C OFFSET's field is in curl's place already; -C - learns the offset only now.
        let value = "bytes=\(offset)-"
        guard request.headers["Range"] != [value] else { return }
        request.headers.replaceOrAdd(name: "Range", value: value)
    }

    /// What the answer's status and fields mean for the file (curl 7.88's rules: any 416 is the complete file; a
    /// body without the asked range whose length equals the file's is too).
    package func verdict(status: Int, headers: HTTPHeaders) -> Verdict {
        if status == 416 { return .alreadyComplete }
        if status == 206, let range = headers.first(name: "Content-Range").flatMap({ ContentRange($0) })?.range,
            range.lowerBound == Int64(offset)
        {
            let length = range.upperBound - range.lowerBound + 1
            let declared = headers["Content-Length"]
            if !declared.isEmpty, !declared.allSatisfy({ Int64($0) == length }) {
                return .inconsistentLength(
                    "the 206 answer's Content-Length \(declared.joined(separator: ", ")) disagrees with its "
                        + "Content-Range of \(length) bytes; nothing appended")
            }
            return .append(length: length)
        }
        if let length = headers.first(name: "Content-Length").flatMap({ Int($0) }), length == offset { return .alreadyComplete }
        return .cannotResume
    }
}
