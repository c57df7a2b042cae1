import FoundationEssentials
import Glibc
import Wire
import WireClient
import WireTLS

// TLS figures: CPU per new connection of a WireClient session with a pinned security policy (issue 27, section 6).
// COUNT sequential GETs, each on a new connection (the peer closes after each answer: `openssl s_server -WWW`), after
// a warm-up of 20; prints one JSON line with this process's CPU (getrusage, user + system) and wall time per
// connection, and how many connections resumed a TLS session.
//
//   TLSFigures MODE URL CA_PEM PIN_PEM [COUNT=2000] [VERSION=1.3|1.2]
//
// MODE:
//   pinned     SessionManager, SecurityPolicy pinning the public key of PIN_PEM's first certificate
//   fresh      the same with TLSConfiguration.resumesSessions off: a full handshake for every connection
//   default    SessionManager under SecurityPolicy.default (no pins)
//
// Run it pinned to one core and the peer to the other, e.g.
//   taskset -c 0 openssl s_server -accept 127.0.0.1:18443 -cert leaf.pem -cert_chain intermediate.pem -key leaf.key -WWW -quiet
//   taskset -c 1 .build/release/TLSFigures pinned https://localhost:18443/user.json root.pem intermediate.pem 2000 1.3

func report(_ text: String) {
    let line = text + "\n"
    _ = line.withCString { write(1, $0, strlen($0)) }
}

func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

enum Mode: String { case pinned, fresh, `default` }

let arguments = CommandLine.arguments
guard arguments.count >= 5, let mode = Mode(rawValue: arguments[1]), let url = URL(string: arguments[2]) else {
    report("usage: TLSFigures pinned|fresh|default URL CA_PEM PIN_PEM [COUNT=2000] [VERSION=1.3|1.2]")
    exit(2)
}
let count = arguments.count > 5 ? Int(arguments[5]) ?? 2000 : 2000
let version: TLSVersion = arguments.count > 6 && arguments[6] == "1.2" ? .tls12 : .tls13

var configuration = SessionConfiguration()
var tls = TLSConfiguration()
tls.trustRoots = .pemFile(arguments[3])
tls.maximumVersion = version
if mode == .fresh { tls.resumesSessions = false }
configuration.tls = tls
let manager = SessionManager(configuration: configuration)
manager.responseSerializer = HTTPResponseSerializer()
if mode != .default {
    let pinned = try Certificate.load(file: arguments[4])[0]
    try manager.setSecurityPolicy(SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [Data(pinned.der)]))
}

/// One GET on a new connection; whether it resumed a session. Fails loudly on anything but a 200 with a body.
func once() async -> Bool {
    do {
        let result = try await manager.data(for: ClientRequest(url: url))
        guard result.response?.statusCode == 200, let data = result.data, !data.isEmpty else {
            report("unexpected answer: \(String(describing: result.response?.statusCode))")
            exit(1)
        }
        return result.response?.metrics?.transportSecurity?.isSessionResumed ?? false
    } catch {
        report("failed: \(error)")
        exit(1)
    }
}

for _ in 0..<20 { _ = await once() }
var resumed = 0
let cpuBefore = processCPUSeconds()
let start = Deadline.now()
for _ in 0..<count {
    if await once() { resumed += 1 }
}
let elapsed = (Deadline.now() - start).components
let wall = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
let cpu = processCPUSeconds() - cpuBefore
report("""
    {"mode":"\(mode.rawValue)","tls":"\(version)","connections":\(count),"resumed":\(resumed),\
    "cpu_us_per_connection":\((cpu / Double(count) * 1e7).rounded() / 10),\
    "wall_us_per_connection":\((wall / Double(count) * 1e7).rounded() / 10),"connections_per_s":\(Int(Double(count) / wall))}
    """)
