import Testing
import Wire

struct CharacterClassesTests {
    @Test func constantTableMatchesTheClassifierForEveryByte() {
        for byte in 0...255 {
            #expect(CharacterClasses.table[UInt8(byte)] == CharacterClasses.classify(UInt8(byte)), "byte \(byte)")
        }
    }
}
