import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
import Wire
import WireLoad

extension IOSuite {
    /// `wire bench` as a user runs it: the embedded server, the report files, exit codes; and the
    /// engine against nginx.
    @Suite struct BenchToolTests {
        @Test func embeddedServerRunWritesJSONPercentilesAndAPlot() async throws {
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let hgrm = folder.appendingPathComponent("latency.hgrm").path
            let plot = folder.appendingPathComponent("latency.svg").path
            let run = try await WireToolRunner.run(["bench", "-n", "300", "-c", "4", "--json", "--hgrm", hgrm, "--plot", plot])
            #expect(run.status == 0, "\(run.errors)")
            #expect(run.errors.contains("embedded `wire serve --hello`"))

            let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.output)) as? [String: Any])
            #expect(summary["requests"] as? Int == 300)
            #expect(summary["embedded_server"] as? Bool == true)
            #expect((summary["requests_per_second"] as? Double ?? 0) > 0)
            #expect((summary["cpu_us_per_request"] as? Double ?? 0) > 0)
            let errors = try #require(summary["errors"] as? [String: Any])
            #expect(errors["total"] as? Int == 0)
            let latency = try #require(summary["latency_ms"] as? [String: Any])
            for key in ["p50", "p75", "p90", "p99", "p99_9", "max", "mean", "stdev"] {
                #expect(latency[key] is Double, "latency_ms.\(key)")
            }
            #expect(latency["count"] as? Int == 300)

            try checkPercentileDistribution(String(contentsOfFile: hgrm, encoding: .utf8), count: 300)
            try checkPlot(String(contentsOfFile: plot, encoding: .utf8))
        }

        /// The format HdrHistogram's outputPercentileDistribution and wrk2 print.
        func checkPercentileDistribution(_ text: String, count: Int) throws {
            let lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
            let header = lines.first?.split(separator: " ").map(String.init)
            #expect(header == ["Value", "Percentile", "TotalCount", "1/(1-Percentile)"])
            let rows = lines.dropFirst().filter { !$0.hasPrefix("#") }.map { $0.split(separator: " ").map(String.init) }
            #expect(rows.count > 5)
            var lastPercentile = -1.0
            var lastValue = -1.0
            for row in rows {
                try #require(row.count == 4 || row.count == 3, "\(row)")
                let value = try #require(Double(row[0]))
                let percentile = try #require(Double(row[1]))
                #expect(Int(row[2]) != nil)
                #expect(percentile >= lastPercentile && value >= lastValue)
                lastPercentile = percentile
                lastValue = value
            }
            #expect(rows.last.map { Int($0[2]) } == count)
            #expect(lastPercentile == 1.0)
            #expect(lines.contains { $0.hasPrefix("#[Mean") && $0.contains("StdDeviation") })
            #expect(lines.contains { $0.hasPrefix("#[Max") && $0.contains("Total count") })
        }

        func checkPlot(_ svg: String) throws {
            #if canImport(FoundationXML)
            let document = try XMLDocument(xmlString: svg)
            let root = try #require(document.rootElement())
            #expect(root.name == "svg")
            let texts = (try root.nodes(forXPath: "//*[local-name()='text']")).compactMap(\.stringValue)
            #expect(texts.contains("latency (ms)"))
            #expect(texts.contains("percentile"))
            for label in ["0%", "90%", "99%"] { #expect(texts.contains(label)) }
            #expect(texts.contains { $0.hasPrefix("wire bench http://127.0.0.1:") })
            let curve = try #require(try root.nodes(forXPath: "//*[local-name()='polyline']").first as? XMLElement)
            let points =
                curve.attributes?.first { $0.name == "points" || $0.localName == "points" }?.stringValue?
                .split(separator: " ") ?? []
            #expect(points.count > 5)
            #else
            #expect(svg.hasPrefix("<?xml") && svg.contains("<svg") && svg.hasSuffix("</svg>\n"))
            #endif
        }

        @Test func anUnreachableURLExitsWithAMessage() async throws {
            let socket = try Socket.makeStream(family: .ipv4)
            try socket.bind(to: SocketAddress(ipAddress: "127.0.0.1", port: 0))
            let port = try socket.localAddress().port!
            try socket.close()
            let run = try await WireToolRunner.run(["bench", "-n", "5", "http://127.0.0.1:\(port)/"])
            #expect(run.status == 1)
            #expect(run.errors.contains("wire bench: could not connect to 127.0.0.1:\(port)"))
            #expect(run.output.isEmpty)
        }

        @Test func badArgumentsExitWithUsageErrors() async throws {
            let run = try await WireToolRunner.run(["bench", "-c", "0", "http://127.0.0.1:1/"])
            #expect(run.status == 64)
            #expect(run.errors.contains("-c must be at least 1"))
        }

        @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx"), "nginx is not installed"))
        func exactCountAgainstNginxAcrossItsKeepAliveLimit() async throws {
            let nginx = try await GetCommandNginxTests.Nginx()
            defer { nginx.stop() }
            // nginx closes a connection after 1,000 requests (keepalive_requests): two connections
            // and 3,000 requests cross that limit, and the replacements must cost no request.
            var plan = try loadPlan(port: nginx.port, stop: .requests(3_000), connections: 2, loops: 2)
            plan.request = try LoadPlan.serializeRequest(
                method: .get, url: HTTPURL("http://127.0.0.1:\(nginx.port)/a.txt"), headers: HTTPHeaders(), body: nil)
            let result = try await runLoad(plan)
            #expect(result.statistics.responses == 3_000)
            #expect(result.statistics.errorCount == 0, "\(result.statistics.reasons)")
            let lines = try await nginx.logLines(count: 3_000)
            #expect(lines.count == 3_000)
            #expect(Set(lines.map { $0[0] }).count >= 4)
        }

        @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx"), "nginx is not installed"))
        func pipelinedAgainstNginx() async throws {
            let nginx = try await GetCommandNginxTests.Nginx()
            defer { nginx.stop() }
            var plan = try loadPlan(port: nginx.port, stop: .requests(800), connections: 2)
            plan.request = try LoadPlan.serializeRequest(
                method: .get, url: HTTPURL("http://127.0.0.1:\(nginx.port)/b.txt"), headers: HTTPHeaders(), body: nil)
            plan.pipeline = 16
            let result = try await runLoad(plan)
            #expect(result.statistics.responses == 800)
            #expect(result.statistics.errorCount == 0, "\(result.statistics.reasons)")
        }
    }
}
