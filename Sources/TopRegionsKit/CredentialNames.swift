/// Names of parameters that carry credentials, whose values logs and progress lines hide.
public enum CredentialNames {
    /// Whether a parameter's name suggests a credential (`token`, `apikey`, `api-key`,
    /// `auth`, `sig`, `session` …). Erring on the side of hiding costs nothing: no value a
    /// person needs to read goes by such a name.
    public static func looksSecret(_ name: String) -> Bool {
        let folded = name.lowercased().filter { $0.isLetter }
        let words = ["token", "key", "secret", "passw", "auth", "sig", "session", "bearer", "credential", "cookie", "jwt"]
        return words.contains { folded.contains($0) }
    }
}
