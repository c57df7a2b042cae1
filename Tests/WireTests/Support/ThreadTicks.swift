import Glibc
import Wire

/// utime + stime of one thread, in clock ticks, from `/proc/self/task/<tid>/stat`.
func threadCPUTicks(_ tid: Int32) throws -> Int {
    let text = try readTextFile("/proc/self/task/\(tid)/stat")
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    guard let close = text.lastIndex(of: ")") else { return -1 }
    let fields = text[text.index(after: close)...].split(separator: " ")
    return Int(fields[11])! + Int(fields[12])!
}

func readTextFile(_ path: String) throws -> String {
    guard let file = fopen(path, "r") else { throw IOError(syscall: "fopen", errno: Errno(rawValue: errno)) }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = fread(&chunk, 1, chunk.count, file)
        if count <= 0 { break }
        bytes += chunk[0..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}
