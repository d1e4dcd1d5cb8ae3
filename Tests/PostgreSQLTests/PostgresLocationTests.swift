import PostgreSQL
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
}
