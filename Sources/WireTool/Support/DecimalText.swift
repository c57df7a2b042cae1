/// Decimal text of a `Double` for reports, as printf's `%.Nf` and `%g` write it for the values reports hold.
package enum DecimalText {
    /// `value` rounded to `decimals` places (0–9), like `%.<decimals>f`: `fixed(3.14159, decimals: 2)` is `3.14`.
    /// Halfway cases round away from zero after scaling, so a value printf would round by its exact binary
    /// expansion may, at the last place, differ from it.
    package static func fixed(_ value: Double, decimals: Int) -> String {
        precondition((0...9).contains(decimals), "DecimalText.fixed supports 0 to 9 decimals")
        guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
        var scale: UInt64 = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (value.magnitude * Double(scale)).rounded(.toNearestOrAwayFromZero)
        // Beyond 2^63 the digits are the integer's anyway; Swift's own description is as exact as any.
        guard scaled < 9.2e18 else { return String(value.rounded()) }
        let units = UInt64(scaled)
        // printf keeps the sign of a negative value that rounds to zero (`-0.00`).
        let sign = value.sign == .minus ? "-" : ""
        let whole = String(units / scale)
        guard decimals > 0 else { return sign + whole }
        let fraction = String(units % scale)
        return sign + whole + "." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }

    /// `value` with up to six decimals and no trailing zeros (`0.25`, `2`, `0.000001`), as `%g` writes values
    /// between 1e-4 and 1e6.
    package static func short(_ value: Double) -> String {
        var text = fixed(value, decimals: 6)
        guard text.contains(".") else { return text }
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }
}
