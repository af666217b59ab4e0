import Testing

@Test func placeholderCurlClient() {
    #expect(Bool(true))
}
