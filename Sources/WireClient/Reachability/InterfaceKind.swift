/// What kind of network an interface connects to, as far as the kernel tells.
public enum InterfaceKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// Ethernet and anything else with an Ethernet hardware type that is not wireless.
    case wired
    /// Wi-Fi (802.11).
    case wireless
    /// A cellular modem.
    case wwan
    /// A tunnel or VPN (tun/tap, WireGuard, and interfaces with no hardware type).
    case tunnel
    /// The loopback interface.
    case loopback
    /// None of the above.
    case other
}

/// Classifies interfaces from sysfs (`<root>/class/net/<name>/`), first match wins:
/// loopback by hardware type 772; WWAN by `DEVTYPE=wwan`, hardware type 519 (raw IP) or 512 (PPP), or a name
/// starting `wwan`, `rmnet` or `ccmni`; wireless by a `wireless/` or `phy80211/` directory or `DEVTYPE=wlan`;
/// tunnel by a `tun_flags` file, `DEVTYPE=wireguard` or hardware type 65534 (none); wired by type 1 (Ethernet).
///
/// The root is injectable so that tests classify a fixture tree. When sysfs has no directory for the interface
/// (sysfs shows the network namespace it was mounted in, not the caller's), the hardware type the kernel gave
/// over netlink stands in for the `type` file.
public struct InterfaceClassifier: Sendable, Hashable {
    /// The sysfs mount point, `/sys` by default.
    public var sysfsRoot: String

    /// A classifier reading sysfs under `sysfsRoot`.
    public init(sysfsRoot: String = "/sys") {
        self.sysfsRoot = sysfsRoot
    }

    /// The kind of the interface `name`; `hardwareType` (ARPHRD, from netlink) is used when sysfs has no `type`.
    public func kind(ofInterface name: String, hardwareType: Int? = nil) -> InterfaceKind {
        // A kernel interface name never holds "/" and is never "." or "..": anything else stays out of the tree.
        let isSafeName = !name.isEmpty && !name.contains("/") && name != "." && name != ".."
        let directory = "\(sysfsRoot)/class/net/\(name)"
        let type = isSafeName ? readInteger("\(directory)/type") ?? hardwareType : hardwareType
        let deviceType = isSafeName ? self.deviceType(directory) : nil
        if type == 772 { return .loopback }
        if deviceType == "wwan" || type == 519 || type == 512
            || ["wwan", "rmnet", "ccmni"].contains(where: { name.hasPrefix($0) })
        {
            return .wwan
        }
        if isSafeName, exists("\(directory)/wireless") || exists("\(directory)/phy80211") { return .wireless }
        if deviceType == "wlan" { return .wireless }
        if isSafeName, exists("\(directory)/tun_flags") { return .tunnel }
        if deviceType == "wireguard" || type == 65534 { return .tunnel }
        if type == 1 { return .wired }
        return .other
    }

    /// `DEVTYPE=` of the interface's `uevent`, if any.
    private func deviceType(_ directory: String) -> String? {
        guard let text = SysfsFile.read("\(directory)/uevent") else { return nil }
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("DEVTYPE=") {
            return String(line.dropFirst("DEVTYPE=".count))
        }
        return nil
    }

    private func readInteger(_ path: String) -> Int? {
        SysfsFile.read(path).flatMap { Int(SysfsFile.trimmed($0)) }
    }

    private func exists(_ path: String) -> Bool { SysfsFile.exists(path) }
}
