import Testing

@Test func placeholderFeedbackLoop() {
    #expect(Bool(true))
}
