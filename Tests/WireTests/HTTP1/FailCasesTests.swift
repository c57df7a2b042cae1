import Foundation
import Testing

import Wire

extension IOSuite {
    // Opens files or runs processes: an I/O test (IOSuite), never beside one that compares descriptors.
    /// Replays every input kept in `fuzz/FailCases/<target>/` (inputs that once broke a fuzz property) through the
    /// parser: it must not crash, and whole, split and byte-at-a-time parses must agree. The option bytes are decoded as
    /// `fuzz/Sources/FuzzSupport/FuzzCase.swift` does; the full property checks stay in the fuzz package.
    @Suite struct FailCasesTests {
        /// One kept input, decoded.
        struct Case: CustomTestStringConvertible {
            var name: String
            var kind: HTTP1Parser.Kind
            var configuration: HTTP1ParserConfiguration
            var methods: [HTTPMethod]
            var acceptsUpgrades: Bool
            var input: [UInt8]

            var testDescription: String { name }

            init?(target: String, name: String, data: [UInt8]) {
                guard data.count >= 4 else { return nil }
                let flags = data[0]
                self.name = "\(target)/\(name)"
                var configuration = HTTP1ParserConfiguration()
                if flags & 8 != 0 {
                    configuration = HTTP1ParserConfiguration(
                        maxStartLineLength: 40, maxHeaderSectionSize: 160, maxHeaderCount: 4, maxChunkExtensionLength: 8,
                        maxBodySize: 32)
                }
                configuration.allowsResponseTransferEncodingWithContentLength = flags & 4 != 0
                if flags & 1 != 0 { configuration.leniency = .all }
                self.configuration = configuration
                acceptsUpgrades = flags & 2 != 0
                let choices: [HTTPMethod] = [.get, .head, .connect, .post]
                methods = (0..<4).map { choices[Int(data[1] >> ($0 * 2)) & 3] }
                let payload = Array(data[4...])
                switch target {
                case "FuzzHTTP1Request":
                    kind = .request
                    input = payload
                case "FuzzHTTP1Response":
                    kind = .response
                    input = payload
                case "FuzzChunked":
                    kind = flags & 16 != 0 ? .response : .request
                    methods = []
                    let head =
                        kind == .request
                        ? "POST /c HTTP/1.1\r\nHost: f\r\nTransfer-Encoding: chunked\r\n\r\n"
                        : "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                    input = Array(head.utf8) + payload
                case "FuzzRoundTrip":
                    // Serializer-first inputs (flag 32) are not parser input; replay the parser-first ones.
                    guard flags & 32 == 0 else { return nil }
                    kind = flags & 16 != 0 ? .response : .request
                    input = payload
                default:
                    return nil
                }
                if kind == .request { methods = [] }
            }
        }

        /// Every kept input, from the fuzz package beside the sources.
        static let cases: [Case] = {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("fuzz/FailCases")
            let fileManager = FileManager.default
            var cases: [Case] = []
            for target in ((try? fileManager.contentsOfDirectory(atPath: root.path)) ?? []).sorted() {
                let folder = root.appendingPathComponent(target)
                for name in ((try? fileManager.contentsOfDirectory(atPath: folder.path)) ?? []).sorted() {
                    guard let data = fileManager.contents(atPath: folder.appendingPathComponent(name).path),
                        let decoded = Case(target: target, name: name, data: Array(data))
                    else { continue }
                    cases.append(decoded)
                }
            }
            return cases
        }()

        @Test(arguments: FailCasesTests.cases)
        func keptFuzzInputParsesTheSameAtAnySplit(_ kept: Case) {
            let whole = HTTP1TestDriver.run(
                kept.input, kind: kept.kind, configuration: kept.configuration, methods: kept.methods,
                acceptsUpgrades: kept.acceptsUpgrades)
            for cut in stride(from: 0, through: kept.input.count, by: max(1, kept.input.count / 64)) {
                let split = HTTP1TestDriver.run(
                    kept.input, kind: kept.kind, configuration: kept.configuration, methods: kept.methods,
                    acceptsUpgrades: kept.acceptsUpgrades, splits: [cut])
                #expect(split == whole, "split at \(cut)")
            }
            let trickled = HTTP1TestDriver.run(
                kept.input, kind: kept.kind, configuration: kept.configuration, methods: kept.methods,
                acceptsUpgrades: kept.acceptsUpgrades, splits: Array(0..<kept.input.count))
            #expect(trickled == whole, "one byte at a time")
        }
    }
}
