import WireClient

/// A manager configured by `configure` whose response serializer hands bodies back as `Data` whatever their type:
/// what most socket tests want to look at.
func rawDataManager(_ configure: (inout SessionConfiguration) -> Void = { _ in }) -> SessionManager {
    var configuration = SessionConfiguration()
    configure(&configuration)
    let manager = SessionManager(configuration: configuration)
    manager.responseSerializer = HTTPResponseSerializer()
    return manager
}
