import Wire

/// How the answers a live server gave a replayed client differ from the recorded ones, as JSON lines.
///
/// One line per response (interim 1xx ones included), in order:
/// `{"conn": C, "response": I, "same": BOOL, "status": S, "recorded_status": R, "length": L, "recorded_length": RL}`
/// and, when they differ, `"first_difference"` (the first differing byte's offset in the response, the shorter
/// one's length when one is a prefix of the other), `"offset"` (the same byte's offset in the connection's
/// received bytes), `"fields"` (`[{"name", "recorded": [values], "live": [values]}]` for each field name whose values
/// differ, names compared without case) and `"body_same"`. A recorded response that did not come is
/// `{"conn", "response", "missing": true, "recorded_status"}`; one more than recorded `{"conn", "response",
/// "extra": true, "status"}`; bytes the parser refuses `{"conn", "verdict": "error", "error": KIND, "offset": O}`.
/// Then one line for the connection: `{"conn", "connection": END, "sent", "writes", "received", "reads",
/// "differences": N}`.
struct ReplayComparison {
    /// Differences found so far, over every connection.
    private(set) var differences = 0

    /// Compares what `outcome` received with `connection`'s recorded server bytes, and writes the lines.
    mutating func compare(
        _ outcome: ReplayPlayer.Outcome, with connection: Recording.Connection, into output: inout JSONLineWriter
    ) {
        let methods = MessageStream.methods(connection.bytes(of: .client))
        let recordedBytes = connection.bytes(of: .server)
        let recorded = MessageStream(recordedBytes, kind: .response, methods: methods).messages
        let live = MessageStream(outcome.received, kind: .response, methods: methods)
        var found = 0
        for index in 0..<max(recorded.count, live.messages.count) {
            output.beginObject()
            output.key("conn")
            output.integer(connection.number)
            output.key("response")
            output.integer(index)
            if index >= live.messages.count {
                found += 1
                output.key("missing")
                output.boolean(true)
                output.key("recorded_status")
                output.integer(recorded[index].response?.status.code ?? 0)
                output.endObject()
                continue
            }
            let answer = live.messages[index]
            if index >= recorded.count {
                found += 1
                output.key("extra")
                output.boolean(true)
                output.key("status")
                output.integer(answer.response?.status.code ?? 0)
                output.endObject()
                continue
            }
            let expected = recorded[index]
            let expectedBytes = recordedBytes[expected.range]
            let answerBytes = outcome.received[answer.range]
            let same = expectedBytes.elementsEqual(answerBytes)
            if !same { found += 1 }
            output.key("same")
            output.boolean(same)
            output.key("status")
            output.integer(answer.response?.status.code ?? 0)
            output.key("recorded_status")
            output.integer(expected.response?.status.code ?? 0)
            output.key("length")
            output.integer(answer.range.count)
            output.key("recorded_length")
            output.integer(expected.range.count)
            if !same {
                let difference =
                    zip(expectedBytes, answerBytes).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                    ?? min(expectedBytes.count, answerBytes.count)
                output.key("first_difference")
                output.integer(difference)
                output.key("offset")
                output.integer(answer.range.lowerBound + difference)
                output.key("fields")
                Self.writeFieldDifferences(
                    expected.response?.headers ?? HTTPHeaders(), answer.response?.headers ?? HTTPHeaders(), into: &output)
                output.key("body_same")
                output.boolean(expected.body == answer.body)
            }
            output.endObject()
        }
        if let error = live.error {
            found += 1
            output.beginObject()
            output.key("conn")
            output.integer(connection.number)
            output.key("verdict")
            output.string("error")
            output.key("error")
            output.string(error.kind)
            output.key("offset")
            output.integer(error.offset)
            output.endObject()
        }
        differences += found
        output.beginObject()
        output.key("conn")
        output.integer(connection.number)
        output.key("connection")
        output.string(outcome.end.name)
        if case .failed(let detail) = outcome.end {
            output.key("detail")
            output.string(detail)
        }
        output.key("sent")
        output.integer(outcome.sent)
        output.key("writes")
        output.integer(outcome.writes)
        output.key("received")
        output.integer(outcome.received.count)
        output.key("reads")
        output.integer(outcome.reads)
        output.key("differences")
        output.integer(found)
        output.endObject()
    }

    /// The field names whose values differ, in the order they first appear (recorded first, then new ones).
    private static func writeFieldDifferences(
        _ recorded: HTTPHeaders, _ live: HTTPHeaders, into output: inout JSONLineWriter
    ) {
        func values(_ headers: HTTPHeaders) -> (order: [String], values: [String: [String]]) {
            var order: [String] = []
            var values: [String: [String]] = [:]
            for position in headers.indices {
                let name = headers.name(at: position).lowercased()
                if values[name] == nil { order.append(name) }
                values[name, default: []].append(headers.value(at: position))
            }
            return (order, values)
        }
        let (recordedOrder, recordedValues) = values(recorded)
        let (liveOrder, liveValues) = values(live)
        output.beginArray()
        for name in recordedOrder + liveOrder.filter({ recordedValues[$0] == nil }) {
            let before = recordedValues[name] ?? []
            let after = liveValues[name] ?? []
            guard before != after else { continue }
            output.beginObject()
            output.key("name")
            output.string(name)
            output.key("recorded")
            output.beginArray()
            for value in before { output.string(value) }
            output.endArray()
            output.key("live")
            output.beginArray()
            for value in after { output.string(value) }
            output.endArray()
            output.endObject()
        }
        output.endArray()
    }
}
