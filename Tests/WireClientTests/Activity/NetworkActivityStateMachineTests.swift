import Testing
import WireClient

/// The network activity state machine, events in and actions out, without a clock.
@Suite struct NetworkActivityStateMachineTests {
    typealias Machine = NetworkActivityStateMachine

    static func enabled() -> Machine {
        var machine = Machine()
        #expect(machine.setEnabled(true) == [])
        return machine
    }

    @Test func defaultsAreAFNetworkings() {
        let machine = Machine()
        #expect(machine.activationDelay == .seconds(1) && machine.completionDelay == .milliseconds(170))
        #expect(!machine.isEnabled && !machine.isVisible && machine.state == .notActive)
    }

    @Test func aDisabledMachineCountsButDoesNothing() {
        var machine = Machine()
        #expect(machine.taskStarted(id: 1) == [])
        #expect(machine.activityCount == 1 && machine.state == .notActive)
    }

    @Test func activityShowsOnlyAfterTheActivationDelay() {
        var machine = Self.enabled()
        #expect(machine.taskStarted(id: 1) == [.startTimer(.activation, .seconds(1))])
        #expect(machine.state == .delayingStart && !machine.isVisible)
        // More activity while delaying changes nothing: the timer decides.
        #expect(machine.taskStarted(id: 2) == [])
        #expect(machine.timerFired(.activation) == [.cancelTimer(.completion), .show])
        #expect(machine.state == .active && machine.isVisible)
    }

    @Test func aShortRequestNeverShows() {
        var machine = Self.enabled()
        _ = machine.taskStarted(id: 1)
        #expect(machine.taskStopped(id: 1) == [])
        #expect(machine.timerFired(.activation) == [.cancelTimer(.activation), .cancelTimer(.completion)])
        #expect(machine.state == .notActive && !machine.isVisible)
    }

    @Test func backToBackRequestsShowOneContinuousSpin() {
        var machine = Self.enabled()
        _ = machine.taskStarted(id: 1)
        _ = machine.timerFired(.activation)
        #expect(machine.taskStopped(id: 1) == [.startTimer(.completion, .milliseconds(170))])
        #expect(machine.state == .delayingEnd && machine.isVisible)
        // The next request arrives within the completion delay: no hide and show pair.
        #expect(machine.taskStarted(id: 2) == [.cancelTimer(.completion)])
        #expect(machine.state == .active && machine.isVisible)
        _ = machine.taskStopped(id: 2)
        #expect(machine.timerFired(.completion) == [.cancelTimer(.activation), .cancelTimer(.completion), .hide])
        #expect(machine.state == .notActive && !machine.isVisible)
    }

    @Test func aSuspendedThenCompletedTaskIsRemovedOnce() {
        var machine = Self.enabled()
        _ = machine.taskStarted(id: 1)
        _ = machine.taskStarted(id: 2)
        _ = machine.timerFired(.activation)
        #expect(machine.taskStopped(id: 1) == [])  // suspended
        #expect(machine.taskStopped(id: 1) == [])  // then completed: AF would have counted 2 down and hidden
        #expect(machine.activityCount == 1 && machine.state == .active && machine.isVisible)
    }

    @Test func tasksOfDifferentManagersAreDifferentTasks() {
        var machine = Self.enabled()
        _ = machine.taskStarted(id: .init(manager: 1, task: 1))
        _ = machine.taskStarted(id: .init(manager: 2, task: 1))
        #expect(machine.activityCount == 2)
        _ = machine.taskStopped(id: .init(manager: 1, task: 1))
        #expect(machine.activityCount == 1)
    }

    @Test func disablingHidesAtOnceAndEnablingReevaluates() {
        var machine = Self.enabled()
        _ = machine.taskStarted(id: 1)
        _ = machine.timerFired(.activation)
        #expect(machine.setEnabled(false) == [.cancelTimer(.activation), .cancelTimer(.completion), .hide])
        #expect(machine.state == .notActive && !machine.isVisible)
        // A deviation from AF, which waited for the next change: the running task is seen at once.
        #expect(machine.setEnabled(true) == [.startTimer(.activation, .seconds(1))])
        #expect(machine.state == .delayingStart)
    }

    @Test func aStaleTimerChangesNothing() {
        var machine = Self.enabled()
        _ = machine.taskStarted(id: 1)
        _ = machine.timerFired(.activation)
        #expect(machine.timerFired(.completion) == [])
        #expect(machine.timerFired(.activation) == [])
        #expect(machine.state == .active)
    }

    @Test func stoppingATaskThatNeverStartedChangesNothing() {
        var machine = Self.enabled()
        #expect(machine.taskStopped(id: 7) == [])
        #expect(machine.state == .notActive && machine.activityCount == 0)
    }
}
