import FoundationEssentials
import Wire

/// The request a redirect leads to, before the redirect hook sees it: which statuses redirect, how the
/// method and body change, and which credentials stay behind when the origin changes (Wire's `RedirectRewrite`, the
/// rules its own client follows). A pure function.
enum RedirectRules {
    /// What a response means for the next hop.
    enum Outcome {
        /// Not a redirect: deliver the response.
        case deliver
        /// Follow with this request; `keepsBody` when the body must be sent again.
        case follow(ClientRequest, keepsBody: Bool)
        /// A redirect that cannot be followed.
        case fail(ClientError)
    }

    /// The next request after `request` was answered with `status` and `location`.
    /// - Parameters:
    ///   - request: The request that was answered.
    ///   - status: The response status.
    ///   - location: The response's `Location`, if any.
    static func next(after request: ClientRequest, status: Int, location: @autoclosure () -> String?) -> Outcome {
        // The `Location` field is looked up only for a redirect status (every response passes here).
        // A status outside 3xx is answered without hashing it into the set.
        guard (300...399).contains(status), RedirectRewrite.statuses.contains(status), let location = location(),
            !location.isEmpty
        else { return .deliver }
        guard let target = URL(string: location, relativeTo: request.url)?.absoluteURL,
            let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https", target.host != nil
        else {
            return .fail(
                ClientError(
                    .badURL, failingURL: request.url,
                    failureReason: "the redirect's Location \"\(location)\" is not an http or https URL"))
        }
        var next = request
        next.url = target
        // Methods are case-sensitive (RFC 9110 §9.1), but NSURLRequest upper-cases what it is given: so does this.
        let becomesGET = RedirectRewrite.becomesGET(status: status, method: request.method.uppercased())
        if becomesGET {
            next.method = "GET"
            next.body = nil
        }
        RedirectRewrite.rewrite(
            &next.headers, droppingBody: becomesGET,
            leavingOrigin: origin(of: request.url) != origin(of: target))
        return .follow(next, keepsBody: !becomesGET && request.body != nil)
    }

    /// Scheme, host and port (the default port filled in), lower-cased: what "the origin changes" compares.
    static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }
}
