/// Names of parameters that carry credentials, whose values logs and progress lines hide.
public enum CredentialNames {
    /// Whether a parameter's name suggests a credential (`token`, `apikey`, `api-key`,
    /// `auth`, `sig`, `session` …). Erring on the side of hiding costs nothing: no value a
    /// person needs to read goes by such a name.
    public static func looksSecret(_ name: String) -> Bool {
        // ASCII letters only, lowercased: the words are ASCII, and a name's other letters
        // and signs may only join two halves of one (hiding more is the safe mistake).
        var folded: [UInt8] = []
        folded.reserveCapacity(name.utf8.count)
        for byte in name.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"): folded.append(byte)
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): folded.append(byte + 32)
            default: continue
            }
        }
        return words.contains { word in contains(folded, word) }
    }

    private static let words: [[UInt8]] = ["token", "key", "secret", "passw", "auth", "sig", "session", "bearer", "credential", "cookie", "jwt"]
        .map { Array($0.utf8) }

    private static func contains(_ text: [UInt8], _ word: [UInt8]) -> Bool {
        guard text.count >= word.count else { return false }
        return (0...(text.count - word.count)).contains { start in text[start..<(start + word.count)].elementsEqual(word) }
    }
}
