import Foundation
import Testing

extension IOSuite {
    /// `-w` and `--trace`, each compared with what curl 7.88 writes for the same request to the same raw peer.
    @Suite struct GetCommandWriteOutTests {
        /// The variables that must be curl's exactly (the same User-Agent is sent, so request sizes match too).
        static let exact = [
            "http_code", "response_code", "http_version", "method", "url", "url_effective", "num_redirects", "redirect_url",
            "num_connects", "content_type", "size_download", "size_upload", "size_header", "size_request", "remote_ip",
            "remote_port", "local_ip", "scheme", "exitcode", "ssl_verify_result", "filename_effective", "num_certs",
            "certs", "num_headers", "urlnum", "referer", "http_connect", "ftp_entry_path", "proxy_ssl_verify_result",
        ]
        static let times = [
            "time_namelookup", "time_connect", "time_appconnect", "time_pretransfer", "time_starttransfer", "time_total",
        ]

        /// Request words for which `%{json}` is compared; `PEER` is the peer's base URL.
        static let cases: [[String]] = [
            ["PEER/a?body=hello&h=Content-Type:text/plain"],
            ["-d", "abcdefghij", "PEER/a?body=hello"],
            ["PEER/a?body=hello&chunked=1"],
            ["-L", "PEER/a?status=302&h=Location:/b%3Fbody%3Dxyz&body=redirectbody"],
            ["PEER/a?status=302&h=Location:/b%3Fbody%3Dxyz&body=redirectbody"],
            ["-I", "PEER/a?body=hello"],
            ["-e", "http://r/", "-o", "/dev/null", "PEER/a?body=hello", "PEER/b?status=404&body=no"],
            ["http://127.0.0.1:1/"],
        ]

        /// Runs `words` (with `PEER` replaced) through wire and curl with the same agent, `-s` and output to /dev/null.
        static func both(
            _ peer: CurlPeer, _ words: [String]
        ) async throws -> (wire: WireToolRunner.Run, curl: WireToolRunner.Run) {
            let words =
                ["-s", "-A", "agent/1", "-o", "/dev/null"] + words.map { $0.replacingOccurrences(of: "PEER", with: peer.base) }
            return (try await peer.wire(words), try await peer.curl(words))
        }

        static func objects(_ run: WireToolRunner.Run) throws -> [[String: Any]] {
            try run.text.split(separator: "\n").map { line in
                try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            }
        }

        @Test(arguments: cases.indices)
        func jsonIsCurlsFieldByField(_ index: Int) async throws {
            try await CurlPeer.with { peer, _ in
                let (wire, curl) = try await Self.both(peer, ["-w", "%{json}\\n"] + Self.cases[index])
                #expect(wire.status == curl.status, "\(wire.errors)")
                let wireObjects = try Self.objects(wire)
                let curlObjects = try Self.objects(curl)
                try #require(wireObjects.count == curlObjects.count && !wireObjects.isEmpty)
                for (ours, theirs) in zip(wireObjects, curlObjects) {
                    for name in Self.exact {
                        #expect(
                            "\(ours[name] ?? "absent")" == "\(theirs[name] ?? "absent")",
                            "\(name): wire \(ours[name] ?? "absent"), curl \(theirs[name] ?? "absent")")
                    }
                    // Both name every variable curl 7.88 has; the error's words are Wire's own, its presence curl's.
                    #expect(Set(theirs.keys).subtracting(ours.keys).isEmpty)
                    #expect((ours["errormsg"] is NSNull) == (theirs["errormsg"] is NSNull))
                }
            }
        }

        @Test(arguments: cases.indices)
        func timesHaveCurlsFormatAndKeepTheirOrder(_ index: Int) async throws {
            try await CurlPeer.with { peer, _ in
                let format = Self.times.map { "%{\($0)}" }.joined(separator: " ") + " %{time_redirect} %{speed_download}\\n"
                let (wire, curl) = try await Self.both(peer, ["-w", format] + Self.cases[index])
                let pattern = #/^(\d+\.\d{6} ){7}\d+$/#
                for line in curl.text.split(separator: "\n") { #expect(line.wholeMatch(of: pattern) != nil, "curl: \(line)") }
                let lines = wire.text.split(separator: "\n")
                #expect(lines.count == curl.text.split(separator: "\n").count)
                for line in lines {
                    #expect(line.wholeMatch(of: pattern) != nil, "wire: \(line)")
                    let values = line.split(separator: " ").prefix(6).compactMap { Double($0) }
                    // A failed transfer has no phases past the lookup (0 as in curl); any other keeps the order.
                    if wire.status == 0 { #expect(values == values.sorted(), "\(line)") }
                }
            }
        }

        @Test func textEscapesHeadersSwitchesAndUnknownVariablesAreCurls() async throws {
            try await CurlPeer.with { peer, folder in
                let file = folder.appendingPathComponent("format").path
                try "from file %{http_code}\\n".write(toFile: file, atomically: true, encoding: .utf8)
                let formats = [
                    "%{http_code}\\t%header{x-a}|%header{nope}|%{nosuch}|%%|\\q|%z|%{header{x-a}}|\\r\\n%{",
                    "out%{stderr}err %{content_type}%{stdout} back%{onerror} never\\n",
                    "%{header_json}",
                    "@" + file,
                ]
                for format in formats {
                    let (wire, curl) = try await Self.both(
                        peer, ["-w", format, "PEER/a?body=hello&h=X-A:1&h=X-A:2&h=Content-Type:text/plain"])
                    #expect(wire.output == curl.output, "\(format): \(wire.text) != \(curl.text)")
                    #expect(
                        wire.errors.replacingOccurrences(of: "wire:", with: "curl:") == curl.errors,
                        "\(format): \(wire.errors) != \(curl.errors)")
                }
            }
        }

        /// The records of a trace: each section's title and byte count, `== Info` lines left out (their words are
        /// each tool's own).
        static func sections(_ text: String) -> [String] {
            text.split(separator: "\n").filter { $0.hasPrefix("=>") || $0.hasPrefix("<=") }.map(String.init)
        }

        @Test(arguments: [true, false])
        func traceHasCurlsSectionsAndByteCounts(_ ascii: Bool) async throws {
            try await CurlPeer.with { peer, folder in
                let wireFile = folder.appendingPathComponent("wire.trace").path
                let curlFile = folder.appendingPathComponent("curl.trace").path
                let flag = ascii ? "--trace-ascii" : "--trace"
                let words = [
                    "-s", "-A", "agent/1", "-o", "/dev/null", "-o", "/dev/null", "-o", "/dev/null", "-L", "-d", "abc",
                    peer.url("/a?body=hello&chunked=1"), peer.url("/b?status=307&h=Location:/c%3Fbody%3Dxyz"),
                    peer.url("/d?size=70"),
                ]
                let wire = try await peer.wire([flag, wireFile] + words)
                let curl = try await peer.curl([flag, curlFile] + words)
                #expect(wire.status == 0 && curl.status == 0, "\(wire.errors)")
                let wireTrace = try String(contentsOfFile: wireFile, encoding: .utf8)
                let curlTrace = try String(contentsOfFile: curlFile, encoding: .utf8)
                // The same records with the same byte counts (the bytes differ only in the order of the request's
                // fields: Wire writes Content-Length last).
                #expect(Self.sections(wireTrace) == Self.sections(curlTrace))
                #expect(Self.sections(wireTrace).count == 25)
                // Each dump row's layout is curl's: the chunked body's rows, split at its line ends, the same.
                let rows = { (text: String) in text.split(separator: "\n").filter { $0.hasPrefix("000") && $0.contains("hello") }
                }
                #expect(!rows(wireTrace).isEmpty && rows(wireTrace) == rows(curlTrace))
            }
        }

        @Test func traceTCPInfoEndsEachExchangeWithTheKernelsSampleOnlyWhenAsked() async throws {
            try await CurlPeer.with { peer, _ in
                // The bodies go elsewhere: on standard output they would run into the trace's lines.
                let urls = [
                    "-o", "/dev/null", peer.url("/a?body=hello"), "-o", "/dev/null",
                    peer.url("/b?status=302&h=Location:/c%3Fbody%3Dxyz"),
                ]
                let asked = try await peer.wire(["-s", "-L", "--trace-ascii", "-", "--trace-tcp-info"] + urls)
                #expect(asked.status == 0, "\(asked.errors)")
                let samples = asked.text.split(separator: "\n").filter { $0.hasPrefix("== Info: TCP_INFO ") }
                // One per exchange: the first URL, then the redirect and its target.
                #expect(samples.count == 3, "\(asked.text)")
                for sample in samples {
                    #expect(sample.contains(#/rtt=\d+us rttvar=\d+us retransmits=\d+ total_retrans=\d+ cwnd=[1-9]\d* mss=[1-9]/#))
                }
                let plain = try await peer.wire(["-s", "-L", "--trace-ascii", "-"] + urls)
                #expect(!plain.text.contains("TCP_INFO"))
            }
        }

        @Test func timeQueueIsInCurlsFormatAndInTheJSON() async throws {
            try await CurlPeer.with { peer, _ in
                let run = try await peer.wire(["-s", "-o", "/dev/null", "-w", "%{time_queue}\\n%{json}", peer.url("/a")])
                #expect(run.status == 0)
                let lines = run.text.split(separator: "\n", maxSplits: 1)
                try #require(lines.count == 2)
                #expect(lines[0].wholeMatch(of: #/\d+\.\d{6}/#) != nil, "\(lines[0])")
                let json = try #require(try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any])
                #expect(json["time_queue"] is Double)
            }
        }

        @Test func traceTimeStampsEachLineAndDashIsStandardOutput() async throws {
            try await CurlPeer.with { peer, _ in
                let run = try await peer.wire(["-s", "--trace-ascii", "-", "--trace-time", peer.url("/a?body=hello")])
                #expect(run.status == 0)
                let lines = run.text.split(separator: "\n").filter { $0.contains("==") || $0.contains("=>") || $0.contains("<=") }
                #expect(lines.count >= 5)
                for line in lines { #expect(line.prefixMatch(of: #/\d\d:\d\d:\d\d\.\d{6} (==|=>|<=) /#) != nil, "\(line)") }
                #expect(run.text.hasSuffix("hello"))
            }
        }
    }
}
