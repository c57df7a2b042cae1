import Wire

/// The requests of a run in the order they are sent, laid out so that any `pipeline` consecutive
/// ones are one contiguous slice: a batch is sent without copying, as with a single request.
///
/// Position `p` (from 0 to `length - 1`) is the `p`-th request of one cycle of the mix; a run
/// walks the positions in a circle (a connection at a constant rate sends slot `k`'s request,
/// position `k % length`, so the requests of segmented runs interleave as in one run).
struct LoadRequestSequence {
    /// Requests in one cycle.
    let length: Int
    /// The cycle, followed by its first `pipeline - 1` requests again.
    private let tiled: ByteBuffer
    /// Where each request of `tiled` starts, and where the last ends.
    private let offsets: [Int]
    /// Whether the request at each position is HEAD.
    private let isHeadAt: [Bool]
    /// Whether any request is HEAD.
    let hasHead: Bool
    /// The bytes of `pipeline` requests from position 0 when the cycle is one request (the common
    /// case): the whole buffer, no slice.
    private let singleBatchLength: Int?

    init(plan: LoadPlan) {
        let entries =
            plan.mix.isEmpty ? [LoadPlan.MixEntry(request: plan.request, isHead: plan.isHeadRequest)] : plan.mix
        let order = LoadPlan.mixOrder(weights: entries.map(\.weight))
        length = order.count
        var buffer = ByteBuffer(capacity: 0)
        var offsets: [Int] = [0]
        for step in 0..<(order.count + plan.pipeline - 1) {
            buffer.writeBuffer(entries[order[step % order.count]].request)
            offsets.append(buffer.readableBytes)
        }
        tiled = buffer
        self.offsets = offsets
        isHeadAt = order.map { entries[$0].isHead }
        hasHead = isHeadAt.contains(true)
        singleBatchLength = order.count == 1 ? buffer.readableBytes : nil
    }

    /// `count` requests from `position` on (at most the plan's pipeline), as one slice.
    func bytes(at position: Int, count: Int) -> ByteBuffer {
        if let singleBatchLength {
            let length = offsets[count]
            return length == singleBatchLength ? tiled : tiled.slice(at: 0, length: length)
        }
        let start = offsets[position]
        return tiled.slice(at: start, length: offsets[position + count] - start)
    }

    /// Whether the request at `position` is HEAD.
    func isHead(at position: Int) -> Bool { isHeadAt[position % length] }
}
