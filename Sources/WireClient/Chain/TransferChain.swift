/// The stages after the one running, with the request it is asked for: what `TransferStage.intercept(_:)` gets.
///
/// `proceed(_:)` hands a request to the next stage and returns what comes back up; the last stage sends it through
/// Wire. A chain is a value: a stage may call `proceed(_:)` several times (each call runs the rest of the chain
/// again), and keeps no chain past its own return.
public struct TransferChain: Sendable {
    /// The request this stage is asked for.
    public let request: ClientRequest
    /// The stages, the running one's successors from `index` on.
    let stages: TransferStages
    let index: Int
    /// The task's side of the transfer, which WireClient's own stages act through.
    package let transfer: any TransferContext

    /// A chain that starts at the first of `stages`.
    package init(request: ClientRequest, stages: TransferStages, transfer: any TransferContext) {
        self.init(request: request, stages: stages, index: 0, transfer: transfer)
    }

    private init(request: ClientRequest, stages: TransferStages, index: Int, transfer: any TransferContext) {
        self.request = request
        self.stages = stages
        self.index = index
        self.transfer = transfer
    }

    /// The failure of a request passed on by a chain's last stage (`proceed` past the end, `ChainEnd`).
    package static func noStageLeft(for request: ClientRequest) -> ClientError {
        ClientError(
            .requestSerializationFailed, failingURL: request.url, failureReason: "the transfer chain has no stage left")
    }

    /// The identifier of the task the transfer is for (`SessionTask.taskIdentifier`).
    public var taskIdentifier: Int { transfer.taskIdentifier }

    // Inlined into WireClient's own stages, whose `intercept`s are inlined into their conformances' witnesses in turn:
    // an async call is a frame on the task, and a stage otherwise cost three per hop (this, the witness, the stage).
    /// Runs the rest of the chain for `request`: the next stage, and through it every stage after.
    /// - Parameter request: The request to send (`request`, or a rewritten one).
    /// - Returns: The response the rest of the chain gives, its body unread.
    /// - Throws: What the rest of the chain throws.
    @inline(__always) nonisolated(nonsending) public func proceed(_ request: ClientRequest) async throws(ClientError)
        -> StageResponse
    {
        guard index < stages.list.count else {
            // The session's last stage is the exchange, which never proceeds: only a chain made by hand gets here.
            throw Self.noStageLeft(for: request)
        }
        return try await stages.list[index].intercept(
            TransferChain(request: request, stages: stages, index: index + 1, transfer: transfer))
    }
}

/// The stages of a transfer, in order, in one object: a chain passed from stage to stage copies a reference, not an
/// array.
package final class TransferStages: Sendable {
    let list: [any TransferStage]

    /// The stages, outermost first; the last must answer without proceeding.
    package init(_ list: [any TransferStage]) {
        self.list = list
    }
}
