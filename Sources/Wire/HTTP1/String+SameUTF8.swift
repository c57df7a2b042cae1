extension String {
    /// Whether `other` is spelled with exactly the same UTF-8 bytes.
    ///
    /// `==` compares canonical equivalence: `"K"` equals the Kelvin sign (U+212A), `";"` the Greek question mark
    /// (U+037E), a precomposed `é` an `e` with a combining accent. Bytes on the wire are not text, so what decides
    /// whether two requests serialize alike must compare bytes.
    package func hasSameUTF8(as other: String) -> Bool {
        let count = utf8.count
        guard count == other.utf8.count else { return false }
        var mine = self
        var theirs = other
        return mine.withUTF8 { left in
            theirs.withUTF8 { right in
                // Copies of one string share its storage: no byte to compare (a caller repeating its URL text).
                if left.baseAddress == right.baseAddress { return true }
                // A plain loop over the two buffers (`elementsEqual` went through an unspecialised iterator, about 500
                // instructions a request for the few bytes the request caches compare).
                var index = 0
                while index < count {
                    if left[index] != right[index] { return false }
                    index &+= 1
                }
                return true
            }
        }
    }
}
