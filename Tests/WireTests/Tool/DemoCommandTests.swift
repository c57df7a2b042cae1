import Testing

extension IOSuite {
    /// `wire demo`, the README's "main job": it must run with no network and show both the client and the manager.
    @Suite struct DemoCommandTests {
        @Test func theDemoRunsTheClientAndTheManagerOnLoopback() async throws {
            let run = try await WireToolRunner.run(["demo", "--loops", "1"], seconds: 30)
            #expect(run.status == 0, "\(run.errors)")
            let text = run.text
            for line in ["GET /hello", "POST /echo", "400 Bad Request",
                         "GET user → 200, decoded User(id: 1, name: \"Ada\")",
                         "GET hello → refused by validation: unacceptableContentType(\"text/plain\")",
                         "GET flaky → 200 after 2 attempts", "event: task #3 did resume"] {
                #expect(text.contains(line), "missing: \(line)\n\(text)")
            }
        }
    }
}
