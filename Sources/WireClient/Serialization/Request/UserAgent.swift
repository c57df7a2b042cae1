import FoundationEssentials
import Wire

/// WireClient's default `User-Agent`: `"<product>/<version> (Linux <kernel release>; <machine>)"`, the Linux
/// counterpart of AFNetworking's `"<app>/<version> (<model>; iOS <version>; Scale/<scale>)"`.
package enum UserAgent {
    /// The value for this process: the executable's file name, `applicationVersion` (or `"unknown"`), and
    /// `uname(2)`'s release and machine.
    /// - Parameter applicationVersion: The version to write; `"unknown"` when nil.
    /// - Returns: The header value, ASCII only.
    package static func current(applicationVersion: String? = nil) -> String {
        value(product: executableName, version: applicationVersion, system: .current)
    }

    /// The value for given parts, folded to printable ASCII (`ascii(_:)`).
    /// - Parameters:
    ///   - product: The product name.
    ///   - version: The product version; `"unknown"` when nil.
    ///   - system: The kernel release and machine.
    /// - Returns: The header value.
    package static func value(product: String, version: String?, system: SystemIdentity) -> String {
        ascii("\(product)/\(version ?? "unknown") (Linux \(system.release); \(system.machine))")
    }

    /// `text` as printable ASCII: Latin letters lose their marks (é→e, ü→u) or become their usual spelling (ß→ss,
    /// æ→ae, ø→o, œ→oe, þ→th); control characters and every other non-ASCII character are removed. (AFNetworking
    /// transliterates with ICU's `Any-Latin; Latin-ASCII`, which the toolchain does not have.)
    /// - Parameter text: Any text.
    /// - Returns: The folded text.
    package static func ascii(_ text: String) -> String {
        var folded = ""
        folded.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if value >= 0x20 && value < 0x7F {
                folded.unicodeScalars.append(scalar)
            } else if let spelled = spellings[value] {
                folded += spelled
            } else if value >= 0xC0, value < 0x180 {
                let offset = Int(value - 0xC0)
                let letter = baseLetters.utf8[baseLetters.utf8.index(baseLetters.utf8.startIndex, offsetBy: offset)]
                if letter != UInt8(ascii: "_") { folded.unicodeScalars.append(Unicode.Scalar(letter)) }
            }
        }
        return folded
    }

    /// The executable's file name (the target of `/proc/self/exe`), or the process name when that link is unreadable.
    static var executableName: String {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"),
            let name = path.split(separator: "/").last
        {
            return String(name)
        }
        return ProcessInfo.processInfo.processName
    }

    /// The base letter of each scalar U+00C0…U+017F whose canonical decomposition starts with one (`_`: none), so that
    /// marks are dropped without a normalisation library.
    private static let baseLetters =
        "AAAAAA_CEEEEIIII_NOOOOO__UUUUY__aaaaaa_ceeeeiiii_nooooo__uuuuy_yAaAaAaCcCcCcCcDd__EeEeEeEeEeGgGgGgGgHh__IiIiIiIiI___JjKk_LlLlLl____NnNnNn___OoOoOo__RrRrRrSsSsSsSsTtTt__UuUuUuUuUuUuWwYyYZzZzZz_"

    /// Latin letters without a decomposition, spelled as Latin-ASCII transliteration spells them.
    private static let spellings: [UInt32: String] = [
        0xC6: "AE", 0xD0: "D", 0xD8: "O", 0xDE: "TH", 0xDF: "ss", 0xE6: "ae", 0xF0: "d", 0xF8: "o", 0xFE: "th",
        0x110: "D", 0x111: "d", 0x126: "H", 0x127: "h", 0x131: "i", 0x132: "IJ", 0x133: "ij", 0x138: "q",
        0x13F: "L", 0x140: "l", 0x141: "L", 0x142: "l", 0x149: "'n", 0x14A: "N", 0x14B: "n", 0x152: "OE", 0x153: "oe",
        0x166: "T", 0x167: "t", 0x17F: "s",
    ]
}
