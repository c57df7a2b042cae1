/// A fault scenario: what `wire serve --faults` (and the tests, through `FaultServer`) does with each connection and
/// request. A list of rules; the first whose match fits a request (or, for `"when": "accept"`, a connection) runs its
/// actions in order. A request no rule fits gets `404` with a short body.
package struct FaultScenario: Sendable, Equatable {
    /// The seed of the generator behind every random choice (random trickle sizes); `--seed` overrides it.
    package var seed: UInt64
    /// The rules, first match wins.
    package var rules: [FaultRule]

    package init(seed: UInt64 = 0, rules: [FaultRule]) {
        self.seed = seed
        self.rules = rules
    }

    /// The rule for request `request` (from 0) on connection `connection` (from 0), whose target is `target`.
    package func rule(connection: Int, request: Int, target: String) -> FaultRule? {
        rules.first { $0.when != .accept && $0.matches(connection: connection, request: request, target: target) }
    }

    /// The rule that runs as connection `connection` is accepted, before anything is read.
    package func acceptRule(connection: Int) -> FaultRule? {
        rules.first { $0.when == .accept && $0.matches(connection: connection, request: 0, target: "") }
    }
}

/// One rule: where it applies, when its actions start, and the actions.
package struct FaultRule: Sendable, Equatable {
    /// When the actions start.
    package enum Trigger: String, Sendable, Equatable {
        /// As the connection is accepted, before a byte is read (the only moment a TLS handshake can be cut).
        case accept
        /// As soon as the request head is in, while its body may still be coming (a server that stops reading).
        case head
        /// As soon as the head and the first byte of its `Content-Length` body are in (at once for a request without
        /// a body): a server that answers an upload it has seen start, the client still sending.
        case body
        /// Once the whole request (head and `Content-Length` body) is in: the default.
        case request
    }

    /// The request target's path to match: exact, or a prefix when it ends with `*`; nil matches any.
    package var path: String?
    /// The connection's number (from 0, in accept order) to match; nil matches any.
    package var connection: Int?
    /// The request's number on its connection (from 0) to match; nil matches any.
    package var request: Int?
    package var when: Trigger
    package var actions: [FaultAction]

    package init(
        path: String? = nil, connection: Int? = nil, request: Int? = nil, when: Trigger = .request, actions: [FaultAction]
    ) {
        self.path = path
        self.connection = connection
        self.request = request
        self.when = when
        self.actions = actions
    }

    func matches(connection: Int, request: Int, target: String) -> Bool {
        if let wanted = self.connection, wanted != connection { return false }
        if let wanted = self.request, wanted != request { return false }
        guard let path else { return true }
        let targetPath = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        if path.hasSuffix("*") { return targetPath.hasPrefix(path.dropLast()) }
        return targetPath == path
    }
}

/// How a connection ends.
package enum FaultEnding: String, Sendable, Equatable {
    /// An orderly end of the server's side (FIN after the queued bytes); the connection closes when the client's does.
    case fin
    /// An abortive close (RST), dropping whatever is queued.
    case rst
    /// A RST once the client's kernel has acknowledged every byte written: the client holds the whole answer, unread
    /// perhaps, when the reset comes (its queued bytes are not dropped, as `rst` drops them). Waits at most 10 s.
    case rstAfterAck = "rst-after-ack"
    /// A FIN on the TCP connection under TLS with no TLS `close_notify` before it: a body delimited by the
    /// connection's end is then truncation, which a client must refuse. Without TLS, the same as `fin`.
    case finWithoutCloseNotify = "fin-without-close-notify"
}

/// What a TLS handshake cut halfway does once the ClientHello is in.
package enum HandshakeCut: String, Sendable, Equatable {
    /// Sends nothing and keeps the connection open: the client's handshake timeout fires.
    case stall
    /// Closes with a FIN.
    case fin
    /// Closes with a RST.
    case rst
}

/// One step of a rule. The scenario's writing actions (`status`, `field`, `head`, `body`, `chunk`, `response`,
/// `informational`…) are kept as the exact bytes they send.
package enum FaultAction: Sendable, Equatable {
    /// Waits this long before the next action.
    case delay(milliseconds: Int)
    /// Sends these bytes (through the trickle and the cut, when set).
    case write([UInt8])
    /// From here on, writes go out `bytes` at a time (each a random size in 1...`bytes` when `random`), one piece
    /// every `everyMilliseconds`.
    case trickle(bytes: Int, everyMilliseconds: Int, random: Bool)
    /// Ends the connection once `offset` bytes of this rule's writes have gone out: the write crossing it is cut.
    case cutAt(offset: Int, ending: FaultEnding)
    /// Ends the connection now.
    case close(FaultEnding)
    /// Sends header fields forever, one every `everyMilliseconds`: a head that never ends.
    case endlessHead(everyMilliseconds: Int)
    /// Stops reading from the client: its writes back up once the kernel's buffers are full.
    case stopReading
    /// Does nothing more on this connection, ever: no further request is answered.
    case hang
    /// From here on, this rule's writes are held back on the connection, unsent, and the next request is read: a
    /// server that answers only once later requests are in (a pipelining client's test). `release` sends them.
    case hold
    /// Sends everything held back on the connection, in one write (through the trickle and the cut, when set), and
    /// ends this rule's hold.
    case release
    /// Reads the TLS ClientHello (one whole record) and then stalls or closes: the handshake stops halfway.
    case cutHandshake(HandshakeCut)
}

/// Why a scenario was refused: where (the rule and action, by index from 0) and which field.
package struct FaultScenarioError: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Kind: String, Sendable, Equatable {
        /// The file is not JSON.
        case invalidJSON
        /// A required field is absent.
        case missingField
        /// A field has the wrong JSON type.
        case wrongType
        /// A field's value is outside what it allows.
        case invalidValue
        /// A field no rule or action of this kind knows.
        case unknownField
        /// The actions cannot go together (a TLS cut outside `"when": "accept"`, or without TLS).
        case conflict
    }

    package var kind: Kind
    /// The rule's index, when the error is inside one.
    package var rule: Int?
    /// The action's index within its rule, when the error is inside one.
    package var action: Int?
    /// The field, as spelled in the file.
    package var field: String?
    package var detail: String

    package init(_ kind: Kind, rule: Int? = nil, action: Int? = nil, field: String? = nil, _ detail: String) {
        self.kind = kind
        self.rule = rule
        self.action = action
        self.field = field
        self.detail = detail
    }

    package var description: String {
        var place: [String] = []
        if let rule { place.append("rules[\(rule)]") }
        if let action { place.append("actions[\(action)]") }
        if let field { place.append(field) }
        let location = place.isEmpty ? "" : place.joined(separator: ".") + ": "
        return "\(location)\(detail)"
    }
}
