import Glibc
import Wire

/// Where one transfer's body is written and what curl does with that file: `-o` and `-O` names under
/// `--output-dir`, `-J`'s `Content-Disposition` name, `--create-dirs`, `-R` and `--remove-on-error`.
package struct OutputFile: Equatable, Sendable {
    /// The path written (`-` for standard output); nil for standard output without `-o`.
    var path: String?
    /// Whether the name may still come from `Content-Disposition` (`-O` with `-J`).
    var takesHeaderName: Bool

    /// The output of a transfer of `url` to `output` (nil: standard output).
    ///
    /// - Throws: `TransferFailure` 23 for `-O` on a URL whose path ends in `/` (curl: "Remote file name has no
    ///   length!").
    init(_ output: FetchOptions.Output?, url: String, options: FetchOptions.OutputOptions) throws(TransferFailure) {
        switch output {
        case nil:
            path = nil
            takesHeaderName = false
        case .file("-"):
            path = "-"
            takesHeaderName = false
        case .file(let name):
            path = Self.inDirectory(name, options.directory)
            takesHeaderName = false
        case .remoteName:
            guard let name = Self.remoteName(of: url) else {
                throw TransferFailure(status: ExitStatus.writeError, message: "remote file name has no length: \(url)")
            }
            path = Self.inDirectory(name, options.directory)
            takesHeaderName = options.remoteHeaderName
        }
    }

    /// Whether the body goes to a file (not standard output).
    var isFile: Bool { path != nil && path != "-" }

    /// `name` under `--output-dir`, as curl joins them (`DIR/name`, whatever `name` is).
    static func inDirectory(_ name: String, _ directory: String?) -> String {
        guard let directory, !directory.isEmpty else { return name }
        return directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// `-O`'s name: the URL path's last segment as written (not percent-decoded, as curl 7.88 keeps it), without
    /// query or fragment; nil when it is empty.
    static func remoteName(of url: String) -> String? {
        var rest = Substring(url)
        if let separator = rest.firstRange(of: "://") { rest = rest[separator.upperBound...] }
        rest = rest.prefix { $0 != "?" && $0 != "#" }
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let name = rest[slash...].split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        return name.isEmpty ? nil : String(name)
    }

    /// The file name a `Content-Disposition` field offers (`filename="x"` or `filename=x`), without any directory part
    /// (a name is never a path: everything up to the last `/` or `\` is dropped); nil when there is none left.
    package static func dispositionName(_ value: String) -> String? {
        // curl 7.88 reads only `filename=`, not RFC 6266's `filename*=`; the parameter name in any case.
        let bytes = Array(value.utf8)
        let key = Array("filename=".utf8)
        var index = 0
        while index + key.count <= bytes.count {
            let matches = zip(bytes[index..<(index + key.count)], key).allSatisfy { ($0 | 0x20) == $1 || $0 == $1 }
            let boundary = index == 0 || [UInt8(ascii: ";"), UInt8(ascii: " "), UInt8(ascii: "\t")].contains(bytes[index - 1])
            guard matches && boundary else {
                index += 1
                continue
            }
            var rest = bytes[(index + key.count)...]
            if rest.first == UInt8(ascii: "\"") {
                rest = rest.dropFirst().prefix { $0 != UInt8(ascii: "\"") }
            } else {
                rest = rest.prefix { $0 != UInt8(ascii: ";") && $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
            }
            if let separator = rest.lastIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") }) {
                rest = rest[(separator + 1)...]
            }
            let name = String(decoding: rest, as: UTF8.self)
            // Control characters never reach a file name, nor do the names of directories.
            guard !name.isEmpty, name != ".", name != "..", !rest.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return nil }
            return name
        }
        return nil
    }

    /// `--create-dirs`: makes the directories above `path` that are missing (mode 0750, as curl makes them).
    ///
    /// - Throws: `TransferFailure` 23 naming the directory that cannot be made.
    static func createDirectories(above path: String) throws(TransferFailure) {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropLast()
        var prefix = path.hasPrefix("/") ? "" : "."
        for part in parts where !part.isEmpty {
            prefix += "/" + part
            if mkdir(prefix, 0o750) != 0 {
                let code = errno
                guard code == EEXIST else {
                    throw TransferFailure(
                        status: ExitStatus.writeError, message: "cannot create directory \(prefix): \(systemErrorText(code))")
                }
            }
        }
    }

    /// `-R`: sets the file's access and modification times to the `Last-Modified` of `headers`, when it has a valid one.
    static func setRemoteTime(of path: String, from headers: HTTPHeaders) {
        guard let text = headers.first(name: "Last-Modified"), let seconds = HTTPFieldDate.parse(text) else { return }
        var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
        _ = utimensat(AT_FDCWD, path, &times, 0)
    }

    /// `--remove-on-error`: removes the file written.
    static func remove(_ path: String) {
        _ = unlink(path)
    }
}
