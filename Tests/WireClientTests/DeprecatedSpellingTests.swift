import FoundationEssentials
import Testing
import WireClient

/// The AFNetworking and NSURLSessionConfiguration spellings that gave way to one spelling per concept still read and
/// write the same setting. Each test is itself deprecated, so its uses of deprecated names do not warn (the
/// tests build with warnings as errors); the testing library calls it from its own deprecated thunk.
@Suite struct DeprecatedSpellingTests {
    @available(*, deprecated, message: "exercises deprecated spellings")
    @Test func theConfigurationsHTTPShouldSetCookiesIsShouldHandleCookies() {
        var configuration = SessionConfiguration()
        #expect(configuration.httpShouldSetCookies)
        configuration.httpShouldSetCookies = false
        #expect(configuration.shouldHandleCookies == false)
        configuration.shouldHandleCookies = true
        #expect(configuration.httpShouldSetCookies)
    }

    @available(*, deprecated, message: "exercises deprecated spellings")
    @Test func theConfigurationsHTTPShouldUsePipeliningIsShouldUsePipelining() {
        var configuration = SessionConfiguration()
        #expect(!configuration.httpShouldUsePipelining)
        configuration.httpShouldUsePipelining = true
        #expect(configuration.shouldUsePipelining)
        configuration.shouldUsePipelining = false
        #expect(!configuration.httpShouldUsePipelining)
    }

    @available(*, deprecated, message: "exercises deprecated spellings")
    @Test func theSerializersHTTPShouldHandleCookiesIsShouldHandleCookies() throws {
        let serializers: [any RequestSerializer] = [
            HTTPRequestSerializer(), JSONRequestSerializer(), PropertyListRequestSerializer(),
        ]
        for var serializer in serializers {
            #expect(serializer.httpShouldHandleCookies == nil)
            serializer.httpShouldHandleCookies = false
            #expect(serializer.shouldHandleCookies == false)
            #expect(
                try serializer.request(withMethod: "GET", urlString: "http://h/", parameters: nil).shouldHandleCookies == false)
            serializer.shouldHandleCookies = true
            #expect(serializer.httpShouldHandleCookies == true)
        }
        var form = HTTPRequestSerializer()
        form.httpShouldHandleCookies = false
        #expect(form.shouldHandleCookies == false)
    }

    @available(*, deprecated, message: "exercises deprecated spellings")
    @Test func theSerializersHTTPShouldUsePipeliningIsShouldUsePipelining() throws {
        let serializers: [any RequestSerializer] = [
            HTTPRequestSerializer(), JSONRequestSerializer(), PropertyListRequestSerializer(),
        ]
        for var serializer in serializers {
            #expect(serializer.httpShouldUsePipelining == nil)
            serializer.httpShouldUsePipelining = false
            #expect(serializer.shouldUsePipelining == false)
            #expect(
                try serializer.request(withMethod: "GET", urlString: "http://h/", parameters: nil).shouldUsePipelining == false)
            serializer.shouldUsePipelining = true
            #expect(serializer.httpShouldUsePipelining == true)
        }
    }
}
