import Testing
import Wire

struct RegistrationTableTests {
    @Test func keysFindTheirHandlersUntilRemoved() {
        var table = RegistrationTable<String>()
        let first = table.insert("first")
        let second = table.insert("second")
        #expect(first >= RegistrationTable<String>.firstKey && second != first)
        #expect(table.handler(for: first) == "first" && table.handler(for: second) == "second")
        table.remove(first)
        #expect(table.handler(for: first) == nil && table.count == 1)
        #expect(table.handler(for: 0) == nil, "the doorbell's key is never a handler's")
    }

    @Test func aReusedSlotDoesNotAnswerTheOldKey() {
        var table = RegistrationTable<String>()
        let old = table.insert("closed earlier in the batch")
        table.remove(old)
        let new = table.insert("new")
        #expect(new != old, "same slot, next generation")
        #expect(table.handler(for: old) == nil, "a stale event finds nothing")
        table.remove(old)
        #expect(table.handler(for: new) == "new", "removing by a stale key leaves the new handler")
    }

    @Test func removeAllHandsBackEveryHandlerAndInvalidatesEveryKey() {
        var table = RegistrationTable<Int>()
        let keys = (0..<5).map { table.insert($0) }
        table.remove(keys[2])
        #expect(table.removeAll().sorted() == [0, 1, 3, 4])
        #expect(table.isEmpty)
        #expect(keys.allSatisfy { table.handler(for: $0) == nil })
        let fresh = table.insert(9)
        #expect(!keys.contains(fresh) && table.handler(for: fresh) == 9)
    }
}
