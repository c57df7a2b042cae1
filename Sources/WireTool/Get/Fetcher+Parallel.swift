import Wire

extension Fetcher {
    /// `-Z`: the transfers run at once, at most `--parallel-max` in flight, each as a task on the run's one loop and
    /// its one client, so transfers to one origin share that client's keep-alive pool (a connection a transfer is done
    /// with serves the next; the pool opens at most `--parallel-max` per origin). A transfer starts as soon as another
    /// ends. `--rate` does not apply, as in curl.
    ///
    /// Every glob is read before the first transfer starts (a malformed one exits 3 with nothing fetched, as curl's
    /// `-Z` does). A transfer's standard output is held until it ends and then written whole, so bodies never
    /// interleave; files are written as they come. The status is that of the last transfer to fail, in the order they
    /// ended (curl 7.88's rule for `-Z`: a success does not clear it); with `--fail-early`, the first failure stops new
    /// starts, cancels the transfers in flight (each exits 42) and is the status.
    func transferInParallel(with builder: RequestBuilder, client: HTTPClient) async -> Int32 {
        var queue = TransferQueue(options)
        do throws(TransferFailure) { try queue.checkAll() } catch {
            report(error)
            return error.status
        }
        let meter = ParallelMeter.isWanted(options, standardError: standardError) ? ParallelMeter(sink: standardError) : nil
        let limit = options.parallelMax
        let status = await withTaskGroup(of: Int32.self, returning: Int32.self) { group in
            var running = 0
            var status = ExitStatus.success
            var stopped = false
            while true {
                while !stopped && running < limit {
                    let next: TransferQueue.Transfer
                    do throws(TransferFailure) {
                        guard let transfer = try queue.next() else { break }
                        next = transfer
                    } catch {
                        // Not met after checkAll; a failure here still ends the run as a glob error would.
                        report(error)
                        status = error.status
                        stopped = true
                        break
                    }
                    let fetcher = forParallelTransfer(meter: meter)
                    group.addTask {
                        let status = await fetcher.perform(next, with: builder, client: client)
                        if let slot = fetcher.meter { slot.meter.end(slot.transfer) }
                        return status
                    }
                    running += 1
                }
                guard let result = await group.next() else { break }
                running -= 1
                if result != ExitStatus.success && !stopped {
                    status = result
                    if options.failEarly {
                        stopped = true
                        group.cancelAll()
                    }
                }
            }
            return status
        }
        meter?.finish()
        return status
    }

    /// A copy of this fetcher for one transfer among several at once: its own `-w` observation, its standard output
    /// held until it ends, and its place in the meter.
    private func forParallelTransfer(meter: ParallelMeter?) -> Fetcher {
        var fetcher = self
        fetcher.observation = observation?.forAnotherTransfer()
        fetcher.standardOutput = .holdingStandardOutput()
        fetcher.meter = meter.map { ($0, $0.begin()) }
        return fetcher
    }
}
