import Foundation
import Histogram
import Synchronization
import Testing
@_spi(Locking) import Wire
import WireLoad
import WireTool

/// Segments as k6 splits a run (striped shares that add up), the schedule they make together, and the
/// weighted order of a request mix.
struct LoadSegmentTests {
    @Test func segmentsReadAsPartIOfN() {
        #expect(LoadSegment(parsing: "1/4") == LoadSegment(index: 0, count: 4))
        #expect(LoadSegment(parsing: "4/4")?.description == "4/4")
        for text in ["0/4", "5/4", "1/0", "-1/3", "1", "1/", "/3", "a/b", "1/3/3", " 1/3", "1 /3"] {
            #expect(LoadSegment(parsing: text) == nil, "\(text)")
        }
    }

    @Test func tenConnectionsOverThreePartsAreFourThreeThree() {
        let parts = (0..<3).map { LoadSegment(index: $0, count: 3)! }
        #expect(parts.map { $0.share(of: 10) } == [4, 3, 3])
        #expect(parts.map { $0.share(of: 2) } == [1, 1, 0])
    }

    /// The slots every connection of every part sends, below a request count, are each slot of one
    /// run exactly once: nothing is lost to rounding, nothing is sent twice.
    @Test func thePartsSchedulesInterleaveIntoOneRunsSchedule() throws {
        for connections in 1...12 {
            for count in 1...min(connections, 5) {
                for requests in [0, 1, 7, 50, 97] {
                    var slots: [Int] = []
                    for index in 0..<count {
                        var plan = try loadPlan(port: 1, stop: .requests(requests), connections: connections)
                        plan.rate = 1_000
                        plan.segment = try #require(LoadSegment(index: index, count: count))
                        for connection in 0..<plan.segmentConnections {
                            slots += Array(
                                stride(from: plan.firstSlot(ofConnection: connection), to: requests, by: plan.slotStride))
                        }
                    }
                    #expect(slots.sorted() == Array(0..<requests), "\(connections) connections, \(count) parts, -n \(requests)")
                }
            }
        }
    }

    /// With connections a multiple of the parts, a slot goes to the connection that sends it in one run.
    @Test func evenSplitsKeepEachSlotOnItsConnection() throws {
        var whole = try loadPlan(port: 1, stop: .requests(64), connections: 8)
        whole.rate = 1_000
        for index in 0..<4 {
            var part = whole
            part.segment = try #require(LoadSegment(index: index, count: 4))
            for local in 0..<part.segmentConnections {
                let global = index + 4 * local
                #expect(part.firstSlot(ofConnection: local) == whole.firstSlot(ofConnection: global))
                #expect(part.slotStride == whole.slotStride)
            }
        }
    }

    @Test func aMixIsSpreadByWeight() {
        #expect(LoadPlan.mixOrder(weights: [5, 1, 1]) == [0, 0, 1, 0, 2, 0, 0])
        #expect(LoadPlan.mixOrder(weights: [2, 2]) == [0, 1])
        #expect(LoadPlan.mixOrder(weights: [3]) == [0])
        let order = LoadPlan.mixOrder(weights: [10, 3, 7])
        #expect(order.count == 20)
        #expect((0..<3).map { entry in order.filter { $0 == entry }.count } == [10, 3, 7])
    }
}

/// HdrHistogram's compressed V2 form and interval logs, as HdrHistogram's own tools read them.
struct HistogramCodingTests {
    func sampleHistogram() -> Histogram<UInt64> {
        var histogram = Histogram<UInt64>(highestTrackableValue: 3_600_000_000_000, numberOfSignificantValueDigits: .three)
        var value: UInt64 = 1
        for step in 0..<4_000 {
            histogram.record(value % 3_000_000_000_000, count: UInt64(step % 7 + 1))
            value = value &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        }
        histogram.record(0)
        histogram.record(1_000_000, count: 1 << 40)
        return histogram
    }

    @Test func compressedHistogramsRoundTrip() throws {
        let histogram = sampleHistogram()
        let text = HistogramCoding.base64(histogram)
        #expect(text.hasPrefix("HISTFAAA"))
        let decoded = try HistogramCoding.decode(base64: text)
        #expect(decoded == histogram)
        #expect(decoded.totalCount == histogram.totalCount)
        for percentile in [0.0, 50, 90, 99, 99.9] {
            #expect(decoded.valueAtPercentile(percentile) == histogram.valueAtPercentile(percentile))
        }
        // The encoding keeps buckets, not values: the maximum is its bucket's highest value, as in Java.
        #expect(decoded.max == histogram.max)
        #expect(decoded.valuesAreEquivalent(decoded.valueAtPercentile(100), histogram.valueAtPercentile(100)))
        #expect(try HistogramCoding.decode(HistogramCoding.encode(histogram)) == histogram)
        #expect(
            try HistogramCoding.decode(base64: HistogramCoding.base64(Histogram<UInt64>(highestTrackableValue: 1_000))).totalCount
                == 0)
    }

    @Test(arguments: [Int64(0), 1, -1, 63, 64, -64, -65, 1 << 20, -(1 << 40), Int64.max, Int64.min])
    func zigZagNumbersRoundTrip(value: Int64) {
        var bytes: [UInt8] = []
        HistogramCoding.appendZigZag(value, to: &bytes)
        #expect(bytes.count <= 9)
        var slice = bytes[...]
        #expect(HistogramCoding.readZigZag(&slice) == value)
        #expect(slice.isEmpty)
    }

    @Test func zigZagBytesAreHdrHistogramsLEB128() {
        var bytes: [UInt8] = []
        for value: Int64 in [0, -1, 1, 64, -3] { HistogramCoding.appendZigZag(value, to: &bytes) }
        #expect(bytes == [0x00, 0x01, 0x02, 0x80, 0x01, 0x05])
    }

    /// Every cut, a flipped byte, a wrong cookie: an error, never a trap.
    @Test func malformedHistogramsAreErrors() throws {
        let encoded = HistogramCoding.encodeCompressed(sampleHistogram())
        for length in [0, 3, 4, 7, 8, 20, encoded.count - 1] {
            #expect(throws: HistogramCoding.MalformedHistogram.self) { try HistogramCoding.decode(Array(encoded.prefix(length))) }
        }
        var plain = HistogramCoding.encode(sampleHistogram())
        plain[15] = 9  // six significant digits
        #expect(throws: HistogramCoding.MalformedHistogram.self) { try HistogramCoding.decode(plain) }
        plain = HistogramCoding.encode(sampleHistogram())
        plain[0] = 0
        #expect(throws: HistogramCoding.MalformedHistogram.self) { try HistogramCoding.decode(plain) }
        plain = HistogramCoding.encode(sampleHistogram())
        plain[7] &+= 1  // a payload longer than the bytes
        #expect(throws: HistogramCoding.MalformedHistogram.self) { try HistogramCoding.decode(plain) }
        #expect(throws: HistogramCoding.MalformedHistogram.self) { try HistogramCoding.decode(base64: "not base64!") }
        // A payload of empty-bucket runs past 64 bits.
        var runaway = Array(HistogramCoding.encode(Histogram<UInt64>(highestTrackableValue: 1_000)).prefix(40))
        var payload: [UInt8] = []
        HistogramCoding.appendZigZag(-(1 << 39), to: &payload)
        HistogramCoding.appendZigZag(1, to: &payload)
        runaway[4...7] = [0, 0, 0, UInt8(payload.count)]
        #expect(throws: HistogramCoding.MalformedHistogram.self) { try HistogramCoding.decode(runaway + payload) }
    }

    @Test func logsReadBackWithAbsoluteTimes() throws {
        let histogram = sampleHistogram()
        let text =
            HistogramLog.header(startTime: 1_800_000_000.25, comment: "test")
            + HistogramLog.line(start: 0, length: 1, histogram: histogram)
            + HistogramLog.line(start: 1, length: 0.5, histogram: histogram, tag: "part")
        #expect(text.contains("#[StartTime: 1800000000.250 (seconds since epoch), 2027-01-15T08:00:00Z]"))
        let intervals = try HistogramLog.read(text)
        #expect(intervals.count == 2)
        #expect(intervals.map(\.start) == [1_800_000_000.25, 1_800_000_001.25])
        #expect(intervals.map(\.length) == [1, 0.5])
        #expect(intervals.map(\.tag) == [nil, "part"])
        #expect(intervals[1].histogram == histogram)
        #expect(throws: HistogramLog.ReadError.self) { try HistogramLog.read("0.0,1.0,2.0\n") }
    }

    static let hdrHistogramJar = "/usr/share/java/hdrhistogram.jar"
    static let java = "/usr/bin/java"

    /// HdrHistogram's Java `HistogramLogProcessor` (Debian's libhdrhistogram-java) reads a log
    /// `wire bench` wrote, and finds its count, mean and maximum.
    @Test(
        .enabled(
            if: FileManager.default.fileExists(atPath: hdrHistogramJar) && FileManager.default.isExecutableFile(atPath: java),
            "Java or HdrHistogram's jar (libhdrhistogram-java) is not installed"))
    func hdrHistogramsJavaLogProcessorReadsTheLog() async throws {
        let folder = try WireToolRunner.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var first = Histogram<UInt64>(highestTrackableValue: 3_600_000_000_000, numberOfSignificantValueDigits: .three)
        var second = first
        for value in 1...1_000 { first.record(UInt64(value) * 10_000) }
        second.record(250_000_000, count: 24)
        let log =
            HistogramLog.header(startTime: 1_800_000_000, comment: "test")
            + HistogramLog.line(start: 0, length: 1, histogram: first) + HistogramLog.line(start: 1, length: 1, histogram: second)
        let path = folder.appendingPathComponent("run.hlog").path
        try log.write(toFile: path, atomically: true, encoding: .utf8)
        let output = folder.appendingPathComponent("out").path
        let run = try await WireToolRunner.run(
            program: URL(fileURLWithPath: Self.java),
            ["-cp", Self.hdrHistogramJar, "org.HdrHistogram.HistogramLogProcessor", "-i", path, "-o", output], seconds: 60)
        #expect(run.status == 0, "\(run.errors)")
        let distribution = try String(contentsOfFile: output + ".hgrm", encoding: .utf8)
        var combined = first
        combined.add(second)
        // Java prints milliseconds with three decimals.
        #expect(distribution.contains("Total count    =         1024"), "\(distribution)")
        #expect(distribution.contains("#[Max     =      250.085"), "\(distribution)")
        #expect(distribution.contains(String(format: "#[Mean    = %12.3f", combined.mean / 1e6)), "\(distribution)")
    }
}

extension IOSuite.BenchSegmentToolTests {
    /// HdrHistogram's Java `HistogramLogProcessor` reads the log `wire bench --hlog` itself wrote: every request
    /// measured is in it, and its maximum is the run's.
    @Test(
        .enabled(
            if: FileManager.default.fileExists(atPath: HistogramCodingTests.hdrHistogramJar)
                && FileManager.default.isExecutableFile(atPath: HistogramCodingTests.java),
            "Java or HdrHistogram's jar (libhdrhistogram-java) is not installed"))
    func hdrHistogramsJavaLogProcessorReadsTheToolsLog() async throws {
        let server = try await ServerHarness.start(handler: HTTPFixedResponseHandler.hello)
        let folder = try WireToolRunner.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("run.hlog").path
        let run = try await WireToolRunner.run([
            "bench", "-c", "4", "-n", "2000", "--hlog", path, "--interval", "100ms", "--json", "http://127.0.0.1:\(server.port)/",
        ])
        await server.stop()
        #expect(run.status == 0, "\(run.errors)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.output)) as? [String: Any])
        #expect(summary["requests"] as? Int == 2000)
        let output = folder.appendingPathComponent("out").path
        let java = try await WireToolRunner.run(
            program: URL(fileURLWithPath: HistogramCodingTests.java),
            ["-cp", HistogramCodingTests.hdrHistogramJar, "org.HdrHistogram.HistogramLogProcessor", "-i", path, "-o", output],
            seconds: 60)
        #expect(java.status == 0, "\(java.errors)")
        let distribution = try String(contentsOfFile: output + ".hgrm", encoding: .utf8)
        #expect(distribution.contains(String(format: "Total count    = %12d", 2000)), "\(distribution)")
        // The same histograms read here: Java's maximum and mean are theirs (milliseconds, three decimals).
        var combined = Histogram<UInt64>(highestTrackableValue: 3_600_000_000_000, numberOfSignificantValueDigits: .three)
        for interval in try HistogramLog.read(try String(contentsOfFile: path, encoding: .utf8)) {
            combined.add(interval.histogram)
        }
        #expect(combined.totalCount == 2000)
        #expect(distribution.contains(String(format: "#[Max     = %12.3f", Double(combined.max) / 1e6)), "\(distribution)")
        #expect(distribution.contains(String(format: "#[Mean    = %12.3f", combined.mean / 1e6)), "\(distribution)")
        // Per interval too (`0.099: I:1326 ( … ) T:1326 ( … )`): the intervals' counts add up to the run.
        let intervals = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").filter {
            $0.first?.isNumber == true
        }
        func count(_ line: Substring, after marker: String) -> Int? {
            guard let range = line.range(of: marker) else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        #expect(intervals.compactMap { count($0, after: " I:") }.reduce(0, +) == 2000, "\(intervals)")
        #expect(intervals.last.flatMap { count($0, after: " T:") } == 2000, "\(intervals)")
    }
}

/// The request mix file's format: requests, weights, fields and bodies, and what it refuses.
struct RequestMixFileTests {
    let origin = try! HTTPURL("http://127.0.0.1:8080/base")

    @Test func requestsWeightsFieldsAndBodies() throws {
        let text = """
            # a comment
            GET /search?q=wire weight=8
            Accept: application/json

            POST http://127.0.0.1:8080/items weight=2
            Content-Type: application/json
            @item.json


            HEAD /health
            """
        var read: [String] = []
        let file = try RequestMixFile(text: text, origin: origin) { path in
            read.append(path)
            return Array("{}".utf8)
        }
        #expect(read == ["item.json"])
        #expect(file.entries.map(\.method) == [.get, .post, .head])
        #expect(file.entries.map(\.url.target) == ["/search?q=wire", "/items", "/health"])
        #expect(file.entries.map(\.weight) == [8, 2, 1])
        #expect(file.entries.map(\.line) == [2, 5, 10])
        #expect(file.entries[0].headers.first(name: "accept") == "application/json")
        #expect(file.entries[1].body == Array("{}".utf8))
        #expect(file.entries[2].body == nil)
    }

    @Test(arguments: [
        ("", "no request"),
        ("GET", "expected 'METHOD TARGET [weight=N]'"),
        ("GET / weight=0", "a weight is a whole number from 1"),
        ("GET / weight=x", "a weight"),
        ("GET http://other.example/ ", "not on"),
        ("G:T /", "not a method"),
        ("CONNECT /", "not a method"),
        ("GET /\nno colon here", "expected 'Name: value'"),
        ("POST /\n@a\n@b", "a second body"),
        ("GET / weight=100001", "more than 100000"),
    ])
    func refusals(text: String, message: String) {
        do {
            _ = try RequestMixFile(text: text, origin: origin) { _ in [] }
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.description.contains(message), "\(text): \(error)")
        }
    }
}

extension IOSuite {
    /// `wire bench` in parts as a user runs it: N processes with --segment and --start-at, merged.
    @Suite struct BenchSegmentToolTests {
        /// Four processes, each a quarter of -c and -R, started together, merged, beside one process
        /// running the whole: the counts add up exactly, the rates agree within 0.5 %, and the merged
        /// percentiles are those of the parts' histograms added. Then the same with a request count: four
        /// processes given the one run's -n, merged, send exactly the requests one process sends.
        @Test func fourSegmentsMergedMatchOneRun() async throws {
            let server = try await ServerHarness.start(handler: HTTPFixedResponseHandler.hello)
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let url = "http://127.0.0.1:\(server.port)/"
            // A timed run: every part measures the same three seconds from the common start, so the merged
            // time is exactly one run's. (A -n run ends with its last response instead: on a busy two-core
            // machine the slowest of four processes' last wake-ups, some 20 ms, would weigh on all of it.)
            let load = ["-c", "8", "-R", "1000", "-d", "3s", "--json", url]
            // Far enough ahead for four debug processes to start and connect.
            let startAt = Date().timeIntervalSince1970 + 2
            let parts = try await withThrowingTaskGroup(of: (Int, WireToolRunner.Run).self) { group in
                for part in 1...4 {
                    let arguments =
                        ["bench", "--segment", "\(part)/4", "--start-at", String(format: "%.3f", startAt)] + [
                            "--hlog", folder.appendingPathComponent("\(part).hlog").path,
                            "--json-intervals", folder.appendingPathComponent("\(part).jsonl").path, "--interval", "500ms",
                        ] + load
                    group.addTask { (part, try await WireToolRunner.run(arguments, seconds: 30)) }
                }
                var runs: [Int: WireToolRunner.Run] = [:]
                for try await (part, run) in group { runs[part] = run }
                return runs
            }
            let whole = try await WireToolRunner.run(["bench"] + load, seconds: 30)
            // A fixed count, split by --segment as -c is: each part sends its share of the one run's -n.
            let counted = ["-c", "8", "-n", "1001", "--json", url]
            let countedParts = try await withThrowingTaskGroup(of: (Int, WireToolRunner.Run).self) { group in
                for part in 1...4 {
                    let log = folder.appendingPathComponent("counted-\(part).jsonl").path
                    group.addTask {
                        (
                            part,
                            try await WireToolRunner.run(
                                ["bench", "--segment", "\(part)/4", "--json-intervals", log] + counted, seconds: 30)
                        )
                    }
                }
                var runs: [Int: WireToolRunner.Run] = [:]
                for try await (part, run) in group { runs[part] = run }
                return runs
            }
            let countedWhole = try await WireToolRunner.run(["bench"] + counted, seconds: 30)
            await server.stop()

            let countedSingle = try #require(try JSONSerialization.jsonObject(with: Data(countedWhole.output)) as? [String: Any])
            #expect(countedWhole.status == 0, "\(countedWhole.errors)")
            #expect(countedSingle["requests"] as? Int == 1001)
            var countedRequests: [Int] = []
            for part in 1...4 {
                let run = try #require(countedParts[part])
                #expect(run.status == 0, "part \(part): \(run.errors)")
                let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.output)) as? [String: Any])
                countedRequests.append(summary["requests"] as? Int ?? 0)
            }
            // 1001 over four parts: the striped shares, 251 and then 250 each.
            #expect(countedRequests == [251, 250, 250, 250])
            let countedMerge = try await WireToolRunner.run(
                ["bench", "merge", "--json"] + (1...4).map { folder.appendingPathComponent("counted-\($0).jsonl").path })
            #expect(countedMerge.status == 0 && countedMerge.errors.isEmpty, "\(countedMerge.errors)")
            let countedReport = try #require(try JSONSerialization.jsonObject(with: Data(countedMerge.output)) as? [String: Any])
            #expect(countedReport["requests"] as? Int == countedSingle["requests"] as? Int)
            #expect((countedReport["errors"] as? [String: Any])?["total"] as? Int == 0)

            var partRequests = 0
            for part in 1...4 {
                let run = try #require(parts[part])
                #expect(run.status == 0, "part \(part): \(run.errors)")
                let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.output)) as? [String: Any])
                #expect(summary["segment"] as? String == "\(part)/4")
                #expect(summary["connections"] as? Int == 2)
                #expect(summary["rate"] as? Double == 250)
                // Slots 0 to 2,999 are due in the three seconds, a quarter of them this part's; those
                // answered after the end are not counted.
                let requests = summary["requests"] as? Int ?? 0
                #expect(requests <= 750 && requests > 600, "part \(part): \(requests) requests")
                partRequests += summary["requests"] as? Int ?? 0
            }
            #expect(partRequests > 2_400)

            let logs = (1...4).map { folder.appendingPathComponent("\($0).jsonl").path }
            let merged = try await WireToolRunner.run(["bench", "merge", "--json"] + logs)
            #expect(merged.status == 0, "\(merged.errors)")
            #expect(merged.errors.isEmpty)
            let report = try #require(try JSONSerialization.jsonObject(with: Data(merged.output)) as? [String: Any])
            #expect(report["requests"] as? Int == partRequests)
            #expect(abs((report["duration_seconds"] as? Double ?? 0) - 3) < 0.001)
            #expect((report["segments"] as? [String])?.sorted() == ["1/4", "2/4", "3/4", "4/4"])
            let errors = try #require(report["errors"] as? [String: Any])
            #expect(errors["total"] as? Int == 0)

            let single = try #require(try JSONSerialization.jsonObject(with: Data(whole.output)) as? [String: Any])
            #expect(whole.status == 0, "\(whole.errors)")
            #expect((single["requests"] as? Int ?? 0) <= 3_000)
            let mergedRate = try #require(report["requests_per_second"] as? Double)
            let singleRate = try #require(single["requests_per_second"] as? Double)
            #expect(abs(mergedRate / singleRate - 1) < 0.005, "merged \(mergedRate)/s, one process \(singleRate)/s")

            // The parts' HdrHistogram logs, added here: the merge's percentiles are theirs.
            var combined = Histogram<UInt64>(highestTrackableValue: 3_600_000_000_000, numberOfSignificantValueDigits: .three)
            for part in 1...4 {
                let log = try String(contentsOfFile: folder.appendingPathComponent("\(part).hlog").path, encoding: .utf8)
                for interval in try HistogramLog.read(log) { combined.add(interval.histogram) }
            }
            #expect(combined.totalCount == UInt64(partRequests))
            let latency = try #require(report["latency_ms"] as? [String: Any])
            for (key, percentile) in [("p50", 50.0), ("p75", 75), ("p90", 90), ("p99", 99), ("p99_9", 99.9)] {
                let reported = UInt64(((latency[key] as? Double ?? -1) * 1e6).rounded())
                #expect(combined.valuesAreEquivalent(reported, combined.valueAtPercentile(percentile)), "\(key)")
            }
            #expect(combined.valuesAreEquivalent(UInt64(((latency["max"] as? Double ?? -1) * 1e6).rounded()), combined.max))

            // The HdrHistogram logs alone merge to the same requests and percentiles.
            let fromLogs = try await WireToolRunner.run(
                ["bench", "merge", "--json"] + (1...4).map { folder.appendingPathComponent("\($0).hlog").path })
            let logReport = try #require(try JSONSerialization.jsonObject(with: Data(fromLogs.output)) as? [String: Any])
            #expect(logReport["requests"] as? Int == partRequests)
            #expect((logReport["latency_ms"] as? [String: Any])?["p99"] as? Double == latency["p99"] as? Double)
        }

        /// `wire bench merge` says when the logs are not one whole run, and still reports what it was given.
        @Test func mergeWarnsOfAMissingPartAndOfAPartGivenTwice() async throws {
            let server = try await ServerHarness.start(handler: HTTPFixedResponseHandler.hello)
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let logs = (1...3).map { folder.appendingPathComponent("part-\($0).jsonl").path }
            for part in 1...3 {
                let run = try await WireToolRunner.run([
                    "bench", "--segment", "\(part)/3", "-c", "3", "-n", "30", "--json-intervals", logs[part - 1], "--json",
                    "http://127.0.0.1:\(server.port)/",
                ])
                #expect(run.status == 0, "part \(part): \(run.errors)")
            }
            await server.stop()
            let whole = try await WireToolRunner.run(["bench", "merge", "--json"] + logs)
            #expect(whole.status == 0 && whole.errors.isEmpty, "\(whole.errors)")
            let missing = try await WireToolRunner.run(["bench", "merge", "--json", logs[0], logs[2]])
            #expect(missing.status == 0)
            #expect(missing.errors == "wire bench merge: the parts are not one whole run: missing 2/3\n", "\(missing.errors)")
            let missingReport = try #require(try JSONSerialization.jsonObject(with: Data(missing.output)) as? [String: Any])
            #expect(missingReport["requests"] as? Int == 20)
            let twice = try await WireToolRunner.run(["bench", "merge"] + logs + [logs[0]])
            #expect(twice.status == 0)
            #expect(twice.errors == "wire bench merge: the parts are not one whole run: given twice 1/3\n", "\(twice.errors)")
            let both = try await WireToolRunner.run(["bench", "merge", logs[0], logs[0]])
            #expect(
                both.errors == "wire bench merge: the parts are not one whole run: missing 2/3, 3/3; given twice 1/3\n",
                "\(both.errors)")
        }

        @Test func aStartTimeThatHasPassedIsRefused() async throws {
            let server = try await ServerHarness.start(handler: HTTPFixedResponseHandler.hello)
            let run = try await WireToolRunner.run([
                "bench", "-n", "10", "--start-at", "2001-09-09T01:46:40Z", "http://127.0.0.1:\(server.port)/",
            ])
            await server.stop()
            #expect(run.status == 1)
            #expect(run.errors.contains("--start-at 2001-09-09T01:46:40Z has passed"), "\(run.errors)")
        }

        /// A weighted mix as a user writes it: each request as often as its weight, bodies included.
        @Test func aRequestMixSendsEachRequestByItsWeight() async throws {
            let loop = try EventLoop(name: "scripted")
            let heads = Lock<[String]>([])
            let server = try await ScriptedServer.start(on: loop) { _, _, head in
                heads.withLock { $0.append(String(head.prefix { $0 != "\r\n" })) }
                // The answer to HEAD announces the body a GET would get, and sends none.
                return .respond(head.hasPrefix("HEAD") ? "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n" : ScriptedServer.ok("hi"))
            }
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            try "{\"n\":1}".write(to: folder.appendingPathComponent("item.json"), atomically: true, encoding: .utf8)
            let mix = folder.appendingPathComponent("mix.txt").path
            try """
            GET /a weight=5
            Accept: text/plain

            POST /items weight=2
            Content-Type: application/json
            @item.json

            HEAD /health
            """.write(toFile: mix, atomically: true, encoding: .utf8)
            let url = "http://127.0.0.1:\(server.address.port!)/"
            let run = try await WireToolRunner.run([
                "bench", "-n", "80", "-c", "2", "--pipeline", "3", "--requests-file", mix, "--json", url,
            ])
            try await server.close()
            await loop.shutdownGracefully()
            #expect(run.status == 0, "\(run.errors)")
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.output)) as? [String: Any])
            #expect(summary["requests"] as? Int == 80)
            #expect(summary["mix_requests"] as? Int == 3)
            let seen = heads.withLock { $0 }
            #expect(seen.count == 80)
            #expect(seen.filter { $0 == "GET /a HTTP/1.1" }.count == 50)
            #expect(seen.filter { $0 == "POST /items HTTP/1.1" }.count == 20)
            #expect(seen.filter { $0 == "HEAD /health HTTP/1.1" }.count == 10)
        }
    }
}
