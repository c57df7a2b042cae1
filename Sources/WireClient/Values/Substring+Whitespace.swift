extension Substring {
    /// The text without leading and trailing spaces and tabs: HTTP's optional whitespace around a field's parts.
    func trimmingSpacesAndTabs() -> Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
