@testable import PostgreSQL
import Testing

@Suite("PostgreSQL locations")
struct PostgresLocationTests {
    @Test("postgresql:// and postgres:// in any case are URLs; paths and key=value strings are not")
    func recognisesURLs() {
        #expect(PostgresLocation.isURL("postgresql://user@host:5432/gallery"))
        #expect(PostgresLocation.isURL("postgres://host/gallery"))
        #expect(PostgresLocation.isURL("PostgreSQL://host/gallery"))
        #expect(!PostgresLocation.isURL("gallery.sqlite"))
        #expect(!PostgresLocation.isURL("/var/lib/postgresql/store.sqlite"))
        #expect(!PostgresLocation.isURL("postgresql:/not-a-url"))
        #expect(!PostgresLocation.isURL("host=db dbname=gallery"))
    }

    @Test("A password in a URL's user information or query is redacted; the rest is kept as written",
          arguments: [
              ("postgresql://alice:s3cr%40t@db.example:5432/gallery?sslmode=require",
               "postgresql://alice:***@db.example:5432/gallery?sslmode=require"),
              ("postgres://alice@db/gallery?password=hunter2&sslmode=verify-full",
               "postgres://alice@db/gallery?password=***&sslmode=verify-full"),
              ("postgresql://alice:p@ss:word@db/gallery", "postgresql://alice:***@db/gallery"),
              ("postgresql://db/gallery", "postgresql://db/gallery"),
              ("postgresql://alice@db", "postgresql://alice@db"),
              ("postgresql://alice@db/g?pass%77ord=hunter2", "postgresql://alice@db/g?pass%77ord=***"),
              ("postgresql://alice@db/g?sslpassword=hunter2&PASSWORD=x", "postgresql://alice@db/g?sslpassword=***&PASSWORD=***"),
              // A / or ? left unencoded in a password: libpq reads it otherwise, still never shown.
              ("postgresql://tr:hunter/x@127.0.0.1:55440/conc", "postgresql://tr:***@127.0.0.1:55440/conc"),
              ("postgresql://tr:hunter?x@127.0.0.1:55440/conc", "postgresql://tr:***@127.0.0.1:55440/conc"),
              // A misspelled keyword's value could be a secret; a known one is shown.
              ("postgresql://tr@db/conc?passwrd=hunter2&sslmode=require&application_name=x",
               "postgresql://tr@db/conc?passwrd=***&sslmode=require&application_name=x"),
          ])
    func redactsURLs(location: String, expected: String) {
        #expect(PostgresLocation.redacted(location) == expected)
    }

    @Test("A password keyword of a key=value string is redacted, quoted or not",
          arguments: [
              ("host=db password=hunter2 dbname=gallery", "host=db password=*** dbname=gallery"),
              ("host=db password = 'it\\'s a \\\\ secret' dbname=gallery", "host=db password=*** dbname=gallery"),
              ("host=db dbname=gallery", "host=db dbname=gallery"),
              ("host=db mypassword=kept", "host=db mypassword=kept"),
          ])
    func redactsKeywords(location: String, expected: String) {
        #expect(PostgresLocation.redacted(location) == expected)
    }

    @Test("Before libpq connects: the scheme in lower case, and libpq's own parser finds the secrets")
    func preparedForLibpq() throws {
        let url = try PostgresLocation.prepared("POSTGRESQL://ann:hunter2@db.example/g?sslpassword=keypass")
        #expect(url.location == "postgresql://ann:hunter2@db.example/g?sslpassword=keypass")
        #expect(Set(url.secrets) == ["hunter2", "keypass"])
        let encoded = try PostgresLocation.prepared("postgresql://ann@db/g?pass%77ord=Pw0rd")
        #expect(encoded.secrets == ["Pw0rd"], "libpq decodes the parameter's name")
        let keywords = try PostgresLocation.prepared("host=db password='it\\'s' dbname=g")
        #expect(keywords.secrets == ["it's"])
        #expect(PostgresLocation.scrubbed("said hunter2 and keypass", of: url.secrets) == "said *** and ***")
    }

    @Test("libpq's complaint about a location keeps the names it quotes, not the location")
    func libpqComplaints() {
        #expect(PostgresLocation.quotingOnlyNames("invalid URI query parameter: \"bogus\"") == "invalid URI query parameter: \"bogus\"")
        #expect(PostgresLocation.quotingOnlyNames("end of string reached when looking for matching \"]\" in IPv6 host address in URI: \"postgresql://a:pw@[::1/db\"")
                == "end of string reached when looking for matching \"]\" in IPv6 host address in URI: \"…\"")
        #expect(PostgresLocation.quotingOnlyNames("invalid percent-encoded token: \"p%zzSECRET\"") == "invalid percent-encoded token: \"…\"")
    }

    @Test("A short password is hidden where it stands on its own, not inside the words around it")
    func shortSecretsInMessages() {
        #expect(PostgresLocation.scrubbed("connection to server at \"db\" failed: password authentication failed for user \"r\"", of: ["r"])
                == "connection to server at \"db\" failed: password authentication failed for user \"***\"")
        #expect(PostgresLocation.scrubbed("too many connections for role \"lim\" (lim=lim)", of: ["lim"]) == "too many connections for role \"***\" (***=***)")
        #expect(PostgresLocation.scrubbed("invalid percent-encoded token: \"p%zz\" at p%zz", of: ["p%zz"]) == "invalid percent-encoded token: \"***\" at ***")
        #expect(PostgresLocation.scrubbed("x:hunter2@h hunter2x xhunter2 #hunter2#", of: ["hunter2"]) == "x:***@h hunter2x xhunter2 #***#")
        // A secret that begins or ends with punctuation is hidden even beside letters.
        #expect(PostgresLocation.scrubbed("a-!pw!-b and x!pw!y", of: ["!pw!"]) == "a-***-b and x***y")
    }

    @Test("A location libpq cannot read, or with an @ not written %40 before the host, is refused without its password",
          arguments: ["postgresql://ann:SECRETPW@[::1/db", "postgresql://ann:pa@SECRETPW@127.0.0.1/db", "host=db password='SECRETPW"])
    func refusedUnread(location: String) {
        #expect {
            _ = try PostgresLocation.prepared(location)
        } throws: { error in
            let text = "\(error)"
            return (error as? PostgresError)?.kind == .invalidParameter && !text.contains("SECRETPW") && !text.isEmpty
        }
    }

    @Test("A location too long to show is cut")
    func longLocationsCut() {
        let shown = PostgresLocation.redacted("postgresql://db/" + String(repeating: "g", count: 100_000))
        #expect(shown.count == PostgresLocation.longestShown + 1 && shown.hasSuffix("…"))
    }

    @Test("URLs quoted in any message are redacted: an unknown option's word, an unexpected argument")
    func urlsInMessages() {
        let message = "unknown option --stor=postgresql://tr:hunter9@x/conc; unexpected argument \"POSTGRES://u:pw@h/d\" and postgresql://a@b ok"
        let shown = PostgresLocation.redactingURLs(in: message)
        #expect(shown == "unknown option --stor=postgresql://tr:***@x/conc; unexpected argument \"POSTGRES://u:***@h/d\" and postgresql://a@b ok")
    }

    @Test("Other secrets a message may quote are redacted: another scheme's password, a key=value password taken for a path")
    func otherSecretsInMessages() {
        #expect(PostgresLocation.redactingSecrets(in: "--rate-ledger must be a postgresql:// URL, not mysql://alice:PWX1@h:1/g")
                == "--rate-ledger must be a postgresql:// URL, not mysql://alice:***@h:1/g")
        #expect(PostgresLocation.redactingSecrets(in: "no store at /tmp/host=h port=1 user=alice password=PWXk dbname=g1; run sync")
                == "no store at /tmp/host=h port=1 user=alice password=*** dbname=g1; run sync")
        #expect(PostgresLocation.redactingSecrets(in: "cannot connect to postgresql://u@h:1/g?password=Pw9: connection refused")
                == "cannot connect to postgresql://u@h:1/g?password=***: connection refused", "the message's colon stays")
        #expect(PostgresLocation.redactingSecrets(in: "see https://example.org/a?b=c and postgresql://u:p@h/d")
                == "see https://example.org/a?b=c and postgresql://u:***@h/d")
    }

    @Test("libpq's message is one line, its hint lines joined as sentences")
    func messagesOnOneLine() {
        let libpq = "connection to server at \"h\" (127.0.0.1), port 1 failed: Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?\n"
        #expect(PostgresConnection.trimmedMessage(libpq)
                == "connection to server at \"h\" (127.0.0.1), port 1 failed: Connection refused. Is the server running on that host and accepting TCP/IP connections?")
        #expect(PostgresConnection.trimmedMessage("FATAL:  database \"x\" does not exist\n") == "FATAL:  database \"x\" does not exist")
        #expect(PostgresConnection.trimmedMessage("ERROR:  oops:\n  DETAIL:  more\n") == "ERROR:  oops: DETAIL:  more")
        #expect(PostgresConnection.trimmedMessage(" \n\t") == "no reason given")
    }

    @Test("Connection failures that may pass are told from those that will not, by libpq's words or the server's SQLSTATE")
    func transientConnectionFailures() {
        let passing = ["connection to server at \"h\", port 1 failed: Connection refused", "timeout expired",
                       "FATAL:  the database system is not yet accepting connections", "FATAL:  the database system is starting up",
                       "FATAL:  terminating connection because of crash of another server process", "FATAL:  sorry, too many clients already"]
        for message in passing { #expect(PostgresError(.cannotConnect, message).isTransientConnectionFailure, "\(message)") }
        for message in ["FATAL:  password authentication failed for user \"a\"", "FATAL:  database \"x\" does not exist",
                        "FATAL:  role \"nobody\" does not exist", "invalid integer value \"x\" for connection option \"port\""] {
            #expect(!PostgresError(.cannotConnect, message).isTransientConnectionFailure, "\(message)")
        }
        #expect(PostgresError(.server, "terminating connection due to administrator command", sqlState: "57P01").isConnectionGone)
        #expect(PostgresError(.server, "x", sqlState: "08006").isTransientConnectionFailure)
        #expect(!PostgresError(.server, "division by zero", sqlState: "22012").isTransientConnectionFailure)
        #expect(PostgresError(.connectionLost, "lost").isConnectionGone)
    }
}
