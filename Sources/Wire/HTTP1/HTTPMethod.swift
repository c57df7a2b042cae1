/// An HTTP request method (RFC 9110 §9).
///
/// The registered methods are static constants backed by a small integer, so comparing two known methods is one
/// integer compare and costs no allocation. Any other token is kept as sent: methods are case-sensitive
/// (RFC 9110 §9.1), so `get` is not `GET`.
public struct HTTPMethod: Sendable, Hashable, CustomStringConvertible {
    private enum Storage: Sendable, Hashable {
        case known(UInt8)
        case other(String)
    }

    private let storage: Storage

    private static let knownNames: [String] = [
        "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
    ]

    private init(known code: UInt8) {
        storage = .known(code)
    }

    /// Creates a method from its token.
    ///
    /// A registered name maps to the matching constant; anything else is stored verbatim. The token is not validated
    /// here: the serializer refuses a method that is not a `token`.
    /// - Parameter rawValue: The method token, case-sensitive.
    public init(_ rawValue: String) {
        if let code = HTTPMethod.knownNames.firstIndex(of: rawValue) {
            storage = .known(UInt8(code))
        } else {
            storage = .other(rawValue)
        }
    }

    /// GET: transfer a current representation of the target resource.
    public static let get = HTTPMethod(known: 0)
    /// HEAD: like GET, but the response carries no content.
    public static let head = HTTPMethod(known: 1)
    /// POST: resource-specific processing of the request content.
    public static let post = HTTPMethod(known: 2)
    /// PUT: replace the target resource's state.
    public static let put = HTTPMethod(known: 3)
    /// DELETE: remove the association between target and its state.
    public static let delete = HTTPMethod(known: 4)
    /// CONNECT: establish a tunnel to the server identified by the target.
    public static let connect = HTTPMethod(known: 5)
    /// OPTIONS: describe the communication options for the target.
    public static let options = HTTPMethod(known: 6)
    /// TRACE: loop-back test along the path to the target.
    public static let trace = HTTPMethod(known: 7)
    /// PATCH (RFC 5789): apply partial modifications.
    public static let patch = HTTPMethod(known: 8)

    /// Whether `other` is the same token byte for byte (`==` compares an unregistered token's text by canonical
    /// equivalence, under which the Kelvin sign equals `K`).
    package func hasSameToken(as other: HTTPMethod) -> Bool {
        switch (storage, other.storage) {
        case (.known(let mine), .known(let theirs)): return mine == theirs
        case (.other(let mine), .other(let theirs)): return mine.hasSameUTF8(as: theirs)
        default: return false
        }
    }

    /// The method token as sent.
    public var rawValue: String {
        switch storage {
        case .known(let code): return HTTPMethod.knownNames[Int(code)]
        case .other(let name): return name
        }
    }

    /// A textual representation: the method token.
    public var description: String { rawValue }

    /// Whether the method is safe: read-only by definition (RFC 9110 §9.2.1).
    public var isSafe: Bool {
        self == .get || self == .head || self == .options || self == .trace
    }

    /// Whether repeating the request has the same intended effect as sending it once (RFC 9110 §9.2.2).
    public var isIdempotent: Bool {
        isSafe || self == .put || self == .delete
    }

    /// Maps method bytes from the wire to a method without allocating for registered names.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> HTTPMethod {
        func matches(_ literal: StaticString) -> Bool {
            guard bytes.count == literal.utf8CodeUnitCount else { return false }
            // A plain loop: `elementsEqual` through iterators cost a hundred instructions a request here.
            let expected = literal.utf8Start
            for index in 0..<bytes.count where bytes[index] != expected[index] { return false }
            return true
        }
        switch bytes.count {
        case 3:
            if matches("GET") { return .get }
            if matches("PUT") { return .put }
        case 4:
            if matches("POST") { return .post }
            if matches("HEAD") { return .head }
        case 5:
            if matches("PATCH") { return .patch }
            if matches("TRACE") { return .trace }
        case 6:
            if matches("DELETE") { return .delete }
        case 7:
            if matches("OPTIONS") { return .options }
            if matches("CONNECT") { return .connect }
        default:
            break
        }
        return HTTPMethod(String(decoding: bytes, as: UTF8.self))
    }
}
