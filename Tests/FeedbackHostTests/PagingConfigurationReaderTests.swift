import FeedbackService
import Systems
import Testing

@testable import feedback_host

/// The paging system's settings come from the executable's one key space: flags, environment, defaults.
@Suite struct PagingConfigurationReaderTests {
    @Test func configurationComesFromFlagsAndEnvironmentInTheServiceKeySpace() {
        let reader = ServiceApplication.defaultReader(
            arguments: [
                "feedback-host", "--upstream", "https://api.github.com/search/repositories", "--paging-page-limit", "3",
            ],
            environment: ["FEEDBACKHOST_UPSTREAM_ITEMS_PATH": "data.items", "FEEDBACKHOST_PAGING_BACKOFF_MS": "20"]
        )
        let configuration = PagingConfiguration(reader: reader)
        #expect(configuration.upstream == "https://api.github.com/search/repositories")
        #expect(configuration.pageLimit == 3)
        #expect(configuration.itemsPath == "data.items")
        #expect(configuration.backoffMilliseconds == 20)
        #expect(configuration.queryParameter == "q")
        #expect(
            PagingConfiguration(reader: ServiceApplication.defaultReader(arguments: [], environment: [:])).upstream
                == nil
        )
    }
}
