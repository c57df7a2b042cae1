import Testing
import WireClient

/// The task state machine as a value, without sockets.
@Suite struct TaskStateMachineTests {
    typealias State = TaskStateMachine.State
    typealias Input = TaskStateMachine.Input

    @Test func theTableHasExactlyTheSpecifiedTransitions() {
        let expected: [State: [Input: State]] = [
            .suspended: [.resume: .running, .cancel: .canceling],
            .running: [.suspend: .suspended, .cancel: .canceling, .complete: .completed],
            .canceling: [.complete: .completed],
            .completed: [:],
        ]
        #expect(TaskStateMachine.table == expected)
        for state in State.allCases {
            for input in Input.allCases {
                var machine = TaskStateMachine(state: state)
                let transition = machine.apply(input)
                if let target = expected[state]?[input] {
                    #expect(transition == TaskStateMachine.Transition(from: state, to: target))
                    #expect(machine.state == target)
                } else {
                    // Anything else is a no-op: no transition (so no event), state unchanged.
                    #expect(transition == nil, "\(state) + \(input)")
                    #expect(machine.state == state)
                }
            }
        }
    }

    @Test func aNewTaskIsSuspendedAndCompletedIsTerminal() {
        var machine = TaskStateMachine()
        #expect(machine.state == .suspended)
        #expect(machine.apply(.complete) == nil)  // a suspended task does not complete without cancel or resume
        #expect(machine.apply(.resume) != nil)
        #expect(machine.apply(.resume) == nil)  // second resume: no event
        #expect(machine.apply(.suspend) != nil)
        #expect(machine.apply(.suspend) == nil)
        #expect(machine.apply(.cancel) != nil)
        #expect(machine.apply(.cancel) == nil)
        #expect(machine.apply(.resume) == nil)
        #expect(machine.apply(.complete)?.to == .completed)
        for input in Input.allCases { #expect(machine.apply(input) == nil) }
    }

    @Test func progressFractionIsZeroWhileUnknown() {
        #expect(TaskProgress().fractionCompleted == 0)
        #expect(TaskProgress().totalUnitCount == -1)
        #expect(TaskProgress(completedUnitCount: 5, totalUnitCount: 10).fractionCompleted == 0.5)
        #expect(TaskProgress(completedUnitCount: 10, totalUnitCount: 10).fractionCompleted == 1)
        #expect(TaskProgress(completedUnitCount: 0, totalUnitCount: 0).fractionCompleted == 0)
    }
}
