import Testing

extension IOSuite {
    /// `wire demo`, the README's "main job": it must run with no network and show the client, the manager, merged
    /// downloads and cache hits.
    @Suite struct DemoCommandTests {
        @Test func theDemoRunsTheClientAndTheManagerOnLoopback() async throws {
            let run = try await WireToolRunner.run(["demo", "--loops", "1"], seconds: 30)
            #expect(run.status == 0, "\(run.errors)")
            let text = run.text
            for line in [
                "GET /hello", "POST /echo", "400 Bad Request",
                "GET user → 200, decoded User(id: 1, name: \"Ada\")",
                "GET hello → refused by validation: unacceptableContentType(\"text/plain\")",
                "GET flaky → 200 after 2 attempts", "event: task #3 did resume",
                "40 requests for 4 URLs at once → 4 downloads, 40960 bytes delivered",
                "the same 40 again → 0 downloads (all from the memory cache",
                "GET cached → 200 from cache, 0 requests to the server",
                "GET revalidated → 200 from revalidated, 1 request to the server",
                "POST upload (multipart: a 3 MiB file and a field) → 200, server: file and field intact",
                "GET bytes/3145735 to a file → 200, 3145735 bytes written, intact",
            ] {
                #expect(text.contains(line), "missing: \(line)\n\(text)")
            }
        }
    }
}
