public import FoundationEssentials
public import WireTLS

extension SecurityPolicy {
    /// The file name endings `certificates(inDirectory:)` reads, case-sensitive.
    public static let certificateFileExtensions = [".cer", ".der", ".pem"]

    /// The certificates of every regular file directly in `directory` (not recursive) whose name ends in `.cer`,
    /// `.der` or `.pem` (AFNetworking's `certificatesInBundle:` reads `.cer` only), as DER: a DER file is one
    /// certificate, a PEM file gives every certificate block it holds. Files that cannot be read or parsed are
    /// skipped; an unreadable directory gives the empty set.
    public static func certificates(inDirectory directory: String) -> Set<Data> {
        let files = FileManager.default
        guard let names = try? files.contentsOfDirectory(atPath: directory) else { return [] }
        var found: Set<Data> = []
        for name in names where certificateFileExtensions.contains(where: { name.hasSuffix($0) }) {
            let path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
            guard isRegularFile(path, in: directory), let contents = files.contents(atPath: path),
                let certificates = try? certificates(in: contents)
            else { continue }
            found.formUnion(certificates)
        }
        return found
    }

    /// Whether `path` is a regular file, or a symbolic link to one (a FIFO or a device is never read).
    private static func isRegularFile(_ path: String, in directory: String) -> Bool {
        let files = FileManager.default
        guard let type = (try? files.attributesOfItem(atPath: path))?[.type] as? FileAttributeType else { return false }
        if type == .typeRegular { return true }
        guard type == .typeSymbolicLink, let target = try? files.destinationOfSymbolicLink(atPath: path) else { return false }
        let resolved = target.hasPrefix("/") ? target : directory + "/" + target
        return ((try? files.attributesOfItem(atPath: resolved))?[.type] as? FileAttributeType) == .typeRegular
    }

    /// The certificates of PEM data (every `CERTIFICATE` block, in order) or DER data (one certificate), told apart
    /// by content, as DER.
    /// - Throws: `TLSError` with reason `.localCertificate` when the data is neither, or holds a malformed certificate.
    public static func certificates(in data: Data) throws(TLSError) -> [Data] {
        try Certificate.decode(Array(data)).map { Data($0.der) }
    }

    /// The public-key pins (`sha256/<base64>`) of the pinned certificates and `pinnedPublicKeyHashes`; a pinned
    /// certificate that cannot be parsed gives none (AFNetworking skips certificates without an extractable key).
    public var pinnedPublicKeys: Set<String> {
        var pins = pinnedPublicKeyHashes
        for der in pinnedCertificates {
            if let certificate = try? Certificate(der: Array(der)) { pins.insert(certificate.pin) }
        }
        return pins
    }
}
