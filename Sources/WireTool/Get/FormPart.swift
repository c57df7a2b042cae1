import FoundationEssentials
import Glibc
import Wire
import WireClient

/// One `-F`/`--form` field, parsed as curl parses it: `name=value` is a text field, `name=@file` a file part
/// (`;type=…` and `;filename=…` may follow, in any order), `name=<file` a text field holding the file's contents.
package struct FormPart: Equatable, Sendable {
    /// What the field holds.
    package enum Content: Equatable, Sendable {
        /// `name=value`.
        case text(String)
        /// `name=<file`: the file's bytes as a text field.
        case textFile(String)
        /// `name=@file`: the file as a file part, with an optional type and file name.
        case file(path: String, type: String?, fileName: String?)
    }

    /// The field's name.
    var name: String
    /// The field's content.
    var content: Content

    /// A field.
    package init(name: String, content: Content) {
        self.name = name
        self.content = content
    }

    /// Parses one `-F` value.
    /// - Throws: `FetchUsageError` when there is no `=`.
    package init(_ value: String) throws(FetchUsageError) {
        guard let equals = value.firstIndex(of: "=") else {
            throw FetchUsageError(message: "-F needs name=content, not '\(value)'")
        }
        name = String(value[..<equals])
        let rest = value[value.index(after: equals)...]
        if rest.hasPrefix("@") {
            let fields = rest.dropFirst().split(separator: ";", omittingEmptySubsequences: false)
            var type: String?
            var fileName: String?
            for field in fields.dropFirst() {
                if field.hasPrefix("type=") {
                    type = String(field.dropFirst(5))
                } else if field.hasPrefix("filename=") {
                    fileName = Self.unquoted(field.dropFirst(9))
                } else {
                    throw FetchUsageError(message: "-F: unknown parameter '\(field)' in '\(value)'")
                }
            }
            content = .file(path: String(fields.first ?? ""), type: type, fileName: fileName)
        } else if rest.hasPrefix("<") {
            content = .textFile(String(rest.dropFirst()))
        } else {
            content = .text(String(rest))
        }
    }

    private static func unquoted(_ text: Substring) -> String {
        text.count >= 2 && text.hasPrefix("\"") && text.hasSuffix("\"") ? String(text.dropFirst().dropLast()) : String(text)
    }

    /// The multipart form of `parts`, built with WireClient's `MultipartFormData`: files are checked and sized now
    /// and read as the socket takes them.
    /// - Throws: `TransferFailure` with curl's read-error status (26) when a file cannot be read; with curl's status
    ///   for an option it cannot use (2, "option -F: is badly used here") when a part's header would hold CR, LF or
    ///   NUL (`;type=text/plain\r\nEvil: 1`), which curl writes into the part and Wire refuses.
    static func form(of parts: [FormPart]) throws(TransferFailure) -> MultipartFormData {
        // curl's boundary shape: 24 dashes and random hex.
        let form = MultipartFormData(
            boundary: "------------------------" + MultipartFormData().boundary.dropFirst(9).lowercased())
        for part in parts {
            switch part.content {
            case .text(let text):
                form.appendPart(formData: Data(text.utf8), name: part.name)
            case .textFile(let path):
                do {
                    form.appendPart(formData: Data(try LocalFiles.contents(atPath: path)), name: part.name)
                } catch {
                    throw TransferFailure(
                        status: ExitStatus.readError, message: "cannot read \(path): \(systemErrorText(error.errno.rawValue))")
                }
            case .file(let path, let type, let fileName):
                let name = fileName ?? String(path.split(separator: "/").last ?? "")
                do {
                    try form.appendPart(fileAt: path, name: part.name, fileName: name, mimeType: type ?? curlType(of: name))
                } catch  where error.code == .requestSerializationFailed {
                    throw TransferFailure(status: ExitStatus.usage, message: "option -F: \(error.failureReason ?? "\(error)")")
                } catch {
                    throw TransferFailure(
                        status: ExitStatus.readError, message: "cannot read \(path): \(error.failureReason ?? "\(error)")")
                }
            }
        }
        return form
    }

    /// The type curl guesses from a file name (its own short table; anything else is `application/octet-stream`).
    package static func curlType(of fileName: String) -> String {
        let table = [
            ".gif": "image/gif", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".svg": "image/svg+xml",
            ".txt": "text/plain", ".htm": "text/html", ".html": "text/html", ".pdf": "application/pdf", ".xml": "application/xml",
        ]
        guard let dot = fileName.lastIndex(of: ".") else { return "application/octet-stream" }
        return table[fileName[dot...].lowercased()] ?? "application/octet-stream"
    }
}
