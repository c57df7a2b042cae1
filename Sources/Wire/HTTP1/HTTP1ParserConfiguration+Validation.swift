extension HTTP1ParserConfiguration {
    /// Throws when a limit is one no message could meet: a start line, head or field count below 1,
    /// or a negative chunk-extension or body limit. `prefix` is where the configuration sits in its
    /// owner (`parserConfiguration.`), so the error names the field as the caller spells it.
    func validate(prefix: String) throws(ConfigurationError) {
        try ConfigurationError.require(prefix + "maxStartLineLength", maxStartLineLength, atLeast: 1)
        try ConfigurationError.require(prefix + "maxHeaderSectionSize", maxHeaderSectionSize, atLeast: 1)
        try ConfigurationError.require(prefix + "maxHeaderCount", maxHeaderCount, atLeast: 1)
        try ConfigurationError.require(prefix + "maxChunkExtensionLength", maxChunkExtensionLength, atLeast: 0)
        if let maxBodySize { try ConfigurationError.require(prefix + "maxBodySize", maxBodySize, atLeast: 0) }
    }
}
