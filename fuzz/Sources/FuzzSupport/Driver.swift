import CFuzzerDriver

/// Runs libFuzzer with `callback` as the target; each target's `<Target>_main` calls this.
///
/// SwiftPM links every Swift executable with `--defsym main=<Target>_main` (so tests can import executables), which
/// hides libFuzzer's own `main`. Each target therefore exports that symbol and hands control to libFuzzer's
/// `LLVMFuzzerRunDriver`, which parses the usual libFuzzer flags and runs the loop.
public func runLibFuzzer(
    argc: CInt,
    argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt {
    var count = argc
    var arguments: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&count, &arguments, callback)
}
