import FoundationEssentials
import Synchronization
@_spi(Locking) import Wire

/// The Public Suffix List (<https://publicsuffix.org>): the names under which unrelated parties register names of
/// their own (`com`, `co.uk`, `com.de`, `github.io`), so that no cookie may be set for one of them (RFC 6265 §5.3
/// step 5).
///
/// The rules come from a file in the list's format, by default the system's copy (`systemPath`, from Debian's
/// `publicsuffix` package). The file is read and parsed at the first lookup, once, into a trie of labels read from
/// the right, so a lookup costs one step per label of the name. Both of the list's sections count, the ICANN
/// domains and the private ones (`github.io`), as in browsers and curl; wildcard rules (`*.ck`) and exception rules
/// (`!www.ck`) follow the list's algorithm, and a name no rule matches has its last label as its public suffix.
/// Rules written in Unicode also match their ASCII (`xn--`) form.
///
/// When the file cannot be read, every name counts as a public suffix: a cookie's `Domain` attribute is then accepted
/// only when it names the request's own host, and such a cookie stays host-only. That is said once, on standard
/// error, when the failed read happens.
///
/// ```swift
/// let storage = CookieStorage(publicSuffixList: PublicSuffixList(contentsOfFile: "/etc/myapp/suffixes.dat"))
/// ```
public final class PublicSuffixList: Sendable {
    /// Where Debian's `publicsuffix` package puts the list.
    package static let systemPath = "/usr/share/publicsuffix/public_suffix_list.dat"

    /// The system's list (`systemPath`), read at its first lookup and shared by every storage that does not name
    /// another.
    public static let system = PublicSuffixList(contentsOfFile: systemPath)

    private enum Source {
        case file(String)
        case text(String)
    }

    private enum Loaded {
        case notYet
        case rules(SuffixTrie)
        case unavailable
    }

    private let source: Source
    private let warn: @Sendable (String) -> Void
    private let loaded = Lock(Loaded.notYet)

    /// A list read from `path` at its first lookup.
    /// - Parameter path: A file in the list's format (`public_suffix_list.dat`).
    public convenience init(contentsOfFile path: String) {
        self.init(contentsOfFile: path, warn: { Posix.writeToStandardError($0) })
    }

    /// A list read from `path` at its first lookup that reports a failed read to `warn` instead of standard error.
    package init(contentsOfFile path: String, warn: @escaping @Sendable (String) -> Void) {
        source = .file(path)
        self.warn = warn
    }

    /// A list of the rules in `text`, in the list's format: one rule a line, `//` comments, `*` and `!` rules.
    /// - Parameter rules: The list's text.
    package init(rules: String) {
        source = .text(rules)
        warn = { _ in }
    }

    /// Whether the rules could be read (the file is read now if it was not yet).
    public var isAvailable: Bool {
        trie() != nil
    }

    /// Whether `domain` (lower-case, without a trailing dot) is a public suffix: itself a name under which others
    /// register theirs. Always true when the rules could not be read.
    public func isPublicSuffix(_ domain: String) -> Bool {
        guard let trie = trie() else { return true }
        let labels = domain.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return trie.suffixLabelCount(labels) >= labels.count
    }

    /// The registrable domain of `domain` (lower-case, without a trailing dot): its public suffix and one label
    /// more, `example.co.uk` for `www.example.co.uk`; nil when `domain` is itself a public suffix or the rules could
    /// not be read.
    package func registrableDomain(of domain: String) -> String? {
        guard let trie = trie() else { return nil }
        let labels = domain.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        let suffix = trie.suffixLabelCount(labels)
        guard labels.count > suffix else { return nil }
        let first = labels[labels.count - suffix - 1]
        return String(Substring(domain.utf8[first.startIndex...]))
    }

    /// The parsed rules, read on the first call; nil when they cannot be read (said once, when the read fails).
    private func trie() -> SuffixTrie? {
        let (trie, warning): (SuffixTrie?, String?) = loaded.withLock { loaded in
            switch loaded {
            case .rules(let trie): return (trie, nil)
            case .unavailable: return (nil, nil)
            case .notYet:
                switch source {
                case .text(let text):
                    let trie = SuffixTrie(parsing: text)
                    loaded = .rules(trie)
                    return (trie, nil)
                case .file(let path):
                    do {
                        let data = try Data(contentsOf: URL(fileURLWithPath: path))
                        let trie = SuffixTrie(parsing: String(decoding: data, as: UTF8.self))
                        loaded = .rules(trie)
                        return (trie, nil)
                    } catch {
                        loaded = .unavailable
                        return (
                            nil,
                            "wire: cannot read the public suffix list \(path) (\(error)); a cookie's Domain "
                                + "attribute is accepted only when it names the request's own host\n"
                        )
                    }
                }
            }
        }
        if let warning { warn(warning) }
        return trie
    }
}

/// The list's rules as a trie of labels from the right (`uk` → `co` for `co.uk`): one hash lookup per label.
final class SuffixTrie: Sendable {
    private struct Edge: Hashable {
        var parent: Int32
        var label: String
    }

    private static let isRule: UInt8 = 1
    private static let isException: UInt8 = 2

    /// Every node's children, as one table keyed by parent and label; node 0 is the root.
    private let edges: [Edge: Int32]
    /// Each node's flags: whether a rule or an exception rule ends there.
    private let flags: [UInt8]

    /// The trie of the rules in `text`. A line's rule is its first word (the list's format); lines starting with `//`
    /// are comments; a rule with an empty label is skipped.
    init(parsing text: String) {
        var edges: [Edge: Int32] = [:]
        var flags: [UInt8] = [0]
        for line in text.utf8.split(whereSeparator: { $0 == 0x0A || $0 == 0x0D }) {
            guard let word = line.split(whereSeparator: { $0 == 0x20 || $0 == 0x09 }).first,
                !word.starts(with: "//".utf8)
            else { continue }
            var rule = Substring(word).lowercased()[...]
            let exception = rule.hasPrefix("!")
            if exception { rule.removeFirst() }
            let labels = rule.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map(Substring.init)
            guard !labels.contains(where: \.isEmpty) else { continue }
            // A Unicode rule is entered twice, as written and in its ASCII form, which is how most hosts arrive.
            var spellings = [labels.map(String.init)]
            if labels.contains(where: { !$0.utf8.allSatisfy { $0 < 0x80 } }) {
                let ascii = labels.map { Punycode.asciiLabel(String($0)) }
                if ascii.allSatisfy({ $0 != nil }) { spellings.append(ascii.map { $0! }) }
            }
            for spelling in spellings {
                var node: Int32 = 0
                for label in spelling.reversed() {
                    let edge = Edge(parent: node, label: label)
                    if let child = edges[edge] {
                        node = child
                    } else {
                        node = Int32(flags.count)
                        edges[edge] = node
                        flags.append(0)
                    }
                }
                flags[Int(node)] |= exception ? Self.isException : Self.isRule
            }
        }
        self.edges = edges
        self.flags = flags
    }

    /// How many labels, from the right, form the public suffix of the name made of `labels` (the list's algorithm:
    /// an exception rule prevails and drops its leftmost label; otherwise the longest matching rule; a name no rule
    /// matches has one). Wildcards are matched where the list has them, as a rule's leftmost label.
    func suffixLabelCount(_ labels: [Substring.UTF8View]) -> Int {
        var longest = 1
        var node: Int32 = 0
        var depth = 0
        for label in labels.reversed() {
            if let wildcard = edges[Edge(parent: node, label: "*")], flags[Int(wildcard)] & Self.isRule != 0 {
                longest = depth + 1
            }
            guard let child = edges[Edge(parent: node, label: String(Substring(label)))] else { break }
            node = child
            depth += 1
            if flags[Int(child)] & Self.isException != 0 { return depth - 1 }
            if flags[Int(child)] & Self.isRule != 0 { longest = depth }
        }
        return min(longest, labels.count)
    }
}

/// RFC 3492's Punycode, the encoding half: the ASCII form (`xn--…`) of a Unicode label, as IDNA writes hosts.
enum Punycode {
    private static let base = 36
    private static let tMin = 1
    private static let tMax = 26

    /// `xn--` and the label's Punycode; the label itself when it is ASCII; nil when it is longer than a DNS label.
    static func asciiLabel(_ label: String) -> String? {
        let scalars = label.unicodeScalars.map { Int($0.value) }
        if scalars.allSatisfy({ $0 < 0x80 }) { return label }
        // A DNS label has at most 63 octets: longer input is no host, and the arithmetic below stays small.
        guard scalars.count <= 63 else { return nil }
        var output: [UInt8] = scalars.filter { $0 < 0x80 }.map { UInt8($0) }
        let basicCount = output.count
        if basicCount > 0 { output.append(UInt8(ascii: "-")) }
        var handled = basicCount
        var code = 0x80
        var delta = 0
        var bias = 72
        while handled < scalars.count {
            let next = scalars.filter { $0 >= code }.min()!
            delta += (next - code) * (handled + 1)
            code = next
            for scalar in scalars {
                if scalar < code { delta += 1 }
                guard scalar == code else { continue }
                var q = delta
                var k = base
                while true {
                    let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                    if q < t { break }
                    output.append(digit(t + (q - t) % (base - t)))
                    q = (q - t) / (base - t)
                    k += base
                }
                output.append(digit(q))
                bias = adapt(delta, points: handled + 1, first: handled == basicCount)
                delta = 0
                handled += 1
            }
            delta += 1
            code += 1
        }
        return "xn--" + String(decoding: output, as: UTF8.self)
    }

    private static func digit(_ value: Int) -> UInt8 {
        value < 26 ? UInt8(ascii: "a") + UInt8(value) : UInt8(ascii: "0") + UInt8(value - 26)
    }

    /// RFC 3492 §6.1.
    private static func adapt(_ delta: Int, points: Int, first: Bool) -> Int {
        var delta = first ? delta / 700 : delta / 2
        delta += delta / points
        var k = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + (base - tMin + 1) * delta / (delta + 38)
    }
}
