import Foundation
import Testing
import Wire

extension IOSuite {
    /// `wire get -I` and `-X` as curl has them, against the Python HTTP/1.1 peer.
    @Suite struct GetCommandMethodTests {
        /// The heads in `text`, each up to its empty line, and what follows the last one.
        static func heads(_ text: String) -> (heads: [String], rest: String) {
            var parts = text.components(separatedBy: "\r\n\r\n")
            let rest = parts.removeLast()
            return (parts, rest)
        }

        @Test func headSendsHEADAndWritesOnlyEachResponseHead() async throws {
            try await GetCommandPeerTests.withPeer { base in
                let run = try await WireToolRunner.run(["get", "-I", "-v", "\(base)/bytes/5000", "\(base)/echo"])
                #expect(run.status == 0, "\(run.errors)")
                let (heads, rest) = Self.heads(run.text)
                try #require(heads.count == 2, "\(run.text)")
                #expect(rest.isEmpty, "a body was written: \(rest.utf8.count) bytes")
                #expect(heads[0].hasPrefix("HTTP/1.1 200 OK\r\n"))
                #expect(heads[0].contains("\r\nContent-Length: 5000"))
                #expect(heads[1].contains("\r\nX-Method: HEAD"))
                #expect(run.errors.contains("> HEAD /bytes/5000 HTTP/1.1\n"))
                // The second URL went over the first one's connection: the HEAD answer's
                // Content-Length announced no body to wait for.
                #expect(run.errors.contains("* re-used the connection to"), "\(run.errors)")
            }
        }

        @Test func headWithXGetShowsTheHeadOfAGetAndDropsItsBody() async throws {
            try await GetCommandPeerTests.withPeer { base in
                let run = try await WireToolRunner.run(["get", "-sI", "-X", "GET", "\(base)/bytes/70000", "\(base)/echo"])
                #expect(run.status == 0, "\(run.errors)")
                let (heads, rest) = Self.heads(run.text)
                try #require(heads.count == 2, "\(run.text.prefix(300))")
                #expect(rest.isEmpty)
                #expect(heads[0].contains("\r\nContent-Length: 70000"))
                #expect(heads[1].contains("\r\nX-Method: GET"))
            }
        }

        @Test func headWithDataIsAUsageError() async throws {
            let run = try await WireToolRunner.run(["get", "-I", "-d", "x=1", "http://127.0.0.1:1/"])
            #expect(run.status == 2)
            #expect(
                run.errors
                    == "wire: (2) choose one method: -I/--head asks for HEAD, -d/--data-binary for POST (see 'wire get --help')\n"
            )
        }

        /// `wire get -X` words, the method the server must see, and the body it must receive.
        static let methods: [(words: [String], method: String, body: String)] = [
            (["-X", "PUT", "-d", "a=1"], "PUT", "a=1"),
            (["-XDELETE"], "DELETE", ""),
            // curl's -X renames the method only: GET still carries -d's data, POST without data has none.
            (["-X", "GET", "-d", "q=2"], "GET", "q=2"),
            (["--request=POST"], "POST", ""),
        ]

        @Test(arguments: methods.indices)
        func xOnGetRenamesTheMethodOnly(_ index: Int) async throws {
            let (words, method, body) = Self.methods[index]
            try await GetCommandPeerTests.withPeer { base in
                let run = try await WireToolRunner.run(["get", "-s", "-i"] + words + ["\(base)/echo"])
                #expect(run.status == 0, "\(run.errors)")
                let (heads, rest) = Self.heads(run.text)
                try #require(heads.count == 1, "\(run.text)")
                #expect(heads[0].contains("\r\nX-Method: \(method)"), "\(heads[0])")
                #expect(heads[0].contains("\r\nX-Body-Length: \(body.utf8.count)"), "\(heads[0])")
                #expect(rest == body)
            }
        }
    }
}
