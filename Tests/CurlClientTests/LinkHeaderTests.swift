import CurlClient
import Testing
import Upstream

struct LinkHeaderTests {
    @Test func findsNextAmongSeveralLinks() {
        let header = LinkHeader.parse(
            #"<https://api.example/items?page=3>; rel="next", <https://api.example/items?page=1>; rel="prev""#
        )
        #expect(header.links.count == 2)
        #expect(header.next == "https://api.example/items?page=3")
        #expect(header.target(rel: "PREV") == "https://api.example/items?page=1")
    }

    @Test func quotedParametersKeepCommasSemicolonsAndEscapes() {
        let header = LinkHeader.parse(
            #"<a>; title="one, two; \"three\""; rel="next", <b>; rel=last"#
        )
        #expect(header.links.map(\.target) == ["a", "b"])
        #expect(header.links[0][parameter: "title"] == #"one, two; "three""#)
        #expect(header.next == "a")
        #expect(header.target(rel: "last") == "b")
    }

    @Test func oneLinkCanCarrySeveralRelations() {
        let header = LinkHeader.parse(#"<https://x/1>; rel="first  Start"; type="application/json""#)
        #expect(header.links.first?.relations == ["first", "start"])
        #expect(header.target(rel: "start") == "https://x/1")
        #expect(header.links.first?[parameter: "type"] == "application/json")
    }

    @Test func onlyTheFirstRelParameterCounts() {
        let header = LinkHeader.parse(#"<https://x/2>; rel="next"; rel="prev""#)
        #expect(header.links.first?.relations == ["next"])
        #expect(header.target(rel: "prev") == nil)
    }

    @Test func severalFieldValuesAreCombined() {
        let header = LinkHeader.parse([#"<https://x/2>; rel="next""#, "<https://x/9>; rel=last"])
        #expect(header.next == "https://x/2")
        #expect(header.target(rel: "last") == "https://x/9")
    }

    @Test func parameterNamesAreCaseInsensitiveAndSpacesTolerated() {
        let header = LinkHeader.parse(#"  <https://x/2>  ;  REL = "next"  ,<https://x/3>;Rel=prev"#)
        #expect(header.next == "https://x/2")
        #expect(header.target(rel: "prev") == "https://x/3")
    }

    @Test func lastPageHasNoNext() {
        #expect(LinkHeader.parse(#"<https://x/1>; rel="first""#).next == nil)
        #expect(LinkHeader.parse("").links.isEmpty)
    }

    @Test func malformedInputKeepsTheLinksBeforeTheFault() {
        let header = LinkHeader.parse(#"<https://x/2>; rel="next", garbage <https://x/3"#)
        #expect(header.links.map(\.target) == ["https://x/2"])
    }
}
