import FoundationEssentials
import Testing
import Wire
import WireClient

/// The XML, property-list, compound and string response serializers.
@Suite struct StringXMLPropertyListCompoundSerializerTests {
    @Test func stringUsesTheCharsetOfContentType() {
        let serializer = StringResponseSerializer()
        #expect(
            serializer.serialize(response: makeResponse(200, "text/plain"), data: Data("café".utf8)).value as? String == "café")
        #expect(
            serializer.serialize(
                response: makeResponse(200, "text/plain; charset=ISO-8859-1"), data: Data([0x63, 0x61, 0x66, 0xE9])
            ).value as? String == "café")
        #expect(
            serializer.serialize(response: makeResponse(200, "text/plain; charset=\"utf-16le\""), data: Data([0x68, 0, 0xE9, 0]))
                .value as? String == "hé")
        #expect(
            serializer.serialize(response: makeResponse(200, "text/plain; charset=utf-16"), data: Data([0xFF, 0xFE, 0x68, 0]))
                .value as? String == "h")
        #expect(
            serializer.serialize(response: makeResponse(200, "text/plain; charset=utf-16"), data: Data([0, 0x68])).value
                as? String == "h")
        #expect(
            serializer.serialize(response: makeResponse(200, "text/plain; charset=utf-32be"), data: Data([0, 1, 0xF6, 0x00]))
                .value as? String == "😀")
        #expect(serializer.serialize(response: makeResponse(200, "text/plain"), data: Data()).value as? String == "")
        let unknown = serializer.serialize(response: makeResponse(200, "text/plain; charset=klingon"), data: Data("x".utf8))
        #expect(unknown.value == nil && unknown.error?.code == .responseSerializationFailed)
        let invalid = serializer.serialize(response: makeResponse(200, "text/plain; charset=us-ascii"), data: Data([0xC3, 0xA9]))
        #expect(invalid.error?.code == .responseSerializationFailed)
        #expect(
            serializer.serialize(response: makeResponse(200, "text/plain"), data: Data([0xFF])).error?.code
                == .responseSerializationFailed)
        let bad = serializer.serialize(response: makeResponse(503, "text/plain"), data: Data("busy".utf8))
        #expect(bad.value as? String == "busy" && bad.error?.code == .unacceptableStatusCode(503))
    }

    @Test func xmlIsTheRawDocument() {
        let document = Data("<a><b/></a>".utf8)
        let serializer = XMLResponseSerializer()
        #expect(serializer.acceptableContentTypes == ["application/xml", "text/xml"])
        #expect(
            serializer.serialize(response: makeResponse(200, "text/xml"), data: document).value as? XMLData
                == XMLData(data: document))
        let wrong = serializer.serialize(response: makeResponse(200, "application/json"), data: document)
        #expect(wrong.value == nil && wrong.error?.code == .unacceptableContentType("application/json"))
        let empty = serializer.serialize(response: makeResponse(200, "text/xml"), data: Data())
        #expect(empty.value == nil && empty.error == nil)
    }

    @Test func propertyListsXMLAndBinary() throws {
        let serializer = PropertyListResponseSerializer()
        #expect(serializer.acceptableContentTypes == ["application/x-plist"])
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><dict><key>n</key><integer>3</integer><key>r</key><real>1.5</real><key>s</key><string>x</string>\
            <key>t</key><true/><key>d</key><data>AQI=</data><key>a</key><array><false/></array>\
            <key>w</key><date>2001-01-01T00:00:00Z</date></dict></plist>
            """
        let expected: PropertyListValue = .dictionary([
            "n": .int(3), "r": .double(1.5), "s": .string("x"), "t": .bool(true), "d": .data(Data([1, 2])),
            "a": .array([.bool(false)]),
            "w": .date(Date(timeIntervalSinceReferenceDate: 0)),
        ])
        let parsed = serializer.serialize(response: makeResponse(200, "application/x-plist"), data: Data(xml.utf8))
        #expect(parsed.error == nil)
        #expect(parsed.value as? PropertyListValue == expected)
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        let binary = try encoder.encode(["k": ["v"]])
        #expect(
            serializer.serialize(response: makeResponse(200, "application/x-plist"), data: binary).value as? PropertyListValue
                == .dictionary(["k": .array([.string("v")])]))
        let empty = serializer.serialize(response: makeResponse(200, "application/x-plist"), data: Data())
        #expect(empty.value == nil && empty.error == nil)
        let garbage = serializer.serialize(response: makeResponse(200, "application/x-plist"), data: Data("bplist00garbage".utf8))
        #expect(garbage.value == nil && garbage.error?.code == .responseSerializationFailed)
        for text in ["<plist><dict><key>a</key></dict></plist>", "{ a = b; }", "word"] {
            #expect(
                serializer.serialize(response: makeResponse(200, "application/x-plist"), data: Data(text.utf8)).error?.code
                    == .responseSerializationFailed, "\(text)")
        }
        let wrong = serializer.serialize(response: makeResponse(200, "text/xml"), data: Data(xml.utf8))
        #expect(wrong.value == nil && wrong.error?.code == .unacceptableContentType("text/xml"))
    }

    @Test func compoundTriesInOrderThenFallsBackToData() throws {
        let compound = CompoundResponseSerializer(serializers: [JSONResponseSerializer(), ImageResponseSerializer()])
        let json = compound.serialize(response: makeResponse(200, "application/json"), data: Data(#"{"a":1}"#.utf8))
        #expect(json.value as? JSONValue == ["a": 1])
        let png = Data(ImageFixtures.png(width: 3, height: 4))
        #expect((compound.serialize(response: makeResponse(200, "image/png"), data: png).value as? ImageData)?.pixelHeight == 4)
        let bad = compound.serialize(response: makeResponse(500, "application/json"), data: Data(#"{"e":1}"#.utf8))
        #expect(bad.value as? JSONValue == ["e": 1] && bad.error?.code == .unacceptableStatusCode(500))
        // Neither yields a value: the raw data, validated with the compound's own sets (any type), other errors dropped.
        let html = compound.serialize(response: makeResponse(200, "text/html"), data: Data("<p>".utf8))
        #expect(html.value as? Data == Data("<p>".utf8))
        #expect(html.error == nil)
        let htmlError = compound.serialize(response: makeResponse(404, "text/html"), data: Data("<p>".utf8))
        #expect(htmlError.value as? Data == Data("<p>".utf8))
        #expect(htmlError.error?.code == .unacceptableStatusCode(404))
        #expect(htmlError.error?.underlying == nil)
    }
}
