import FoundationEssentials

/// The user's preferred languages on Linux, from the locale environment (what `NSLocale.preferredLanguages` gives
/// AFNetworking on Apple systems), and the `Accept-Language` value they make.
public enum PreferredLanguages {
    /// The process's preferred languages: `fromEnvironment(_:)` of its environment.
    public static var current: [String] {
        fromEnvironment(ProcessInfo.processInfo.environment)
    }

    /// The preferred languages an environment describes, for `Accept-Language`.
    ///
    /// The locale is the first non-empty of `LC_ALL`, `LC_MESSAGES`, `LANG`. If it is `C` or `POSIX` (with or without a
    /// codeset) the list is that locale alone; otherwise the `:`-separated entries of `LANGUAGE` followed by the
    /// locale. Each entry loses its `.codeset` and `@modifier` and has `_` replaced by `-`; `C`, `POSIX` and empty
    /// entries are dropped; a repeated entry keeps its first position; an empty list becomes `["en"]`.
    /// - Parameter environment: Variable names and values.
    /// - Returns: Language tags, most preferred first.
    package static func fromEnvironment(_ environment: [String: String]) -> [String] {
        let locale = ["LC_ALL", "LC_MESSAGES", "LANG"].lazy.compactMap { environment[$0] }.first { !$0.isEmpty }
        var entries: [String] = []
        if let locale, isPOSIX(normalized(locale)) {
            entries = [locale]
        } else {
            entries = (environment["LANGUAGE"] ?? "").split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            if let locale { entries.append(locale) }
        }
        var languages: [String] = []
        for entry in entries {
            let language = normalized(entry)
            guard !language.isEmpty, !isPOSIX(language), !languages.contains(language) else { continue }
            languages.append(language)
        }
        return languages.isEmpty ? ["en"] : languages
    }

    /// The `Accept-Language` value for `languages`: AFNetworking's format, `"<lang>;q=<q>"` with q = 1, 0.9, … 0.5
    /// written with one significant digit (`q=1`, never `q=1.0`), joined by `", "`, at most six entries.
    /// - Parameter languages: Language tags, most preferred first.
    /// - Returns: The header value (empty for no languages).
    package static func acceptLanguage(_ languages: [String]) -> String {
        languages.prefix(6).enumerated().map { index, language in
            "\(language);q=\(index == 0 ? "1" : "0.\(10 - index)")"
        }.joined(separator: ", ")
    }

    /// `entry` without `.codeset` and `@modifier`, with `-` for `_`.
    private static func normalized(_ entry: String) -> String {
        let base = entry.prefix { $0 != "." && $0 != "@" }
        return String(base.map { $0 == "_" ? "-" : $0 })
    }

    private static func isPOSIX(_ language: String) -> Bool {
        language == "C" || language == "POSIX"
    }
}
