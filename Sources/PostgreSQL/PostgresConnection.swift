import CPostgreSQL
import Foundation

/// One connection to a PostgreSQL server through libpq.
///
/// The location is anything libpq's `PQconnectdb` takes: a `postgresql://` URL or a
/// `key=value` string, with libpq's own environment (`PGHOST`, `PGPASSFILE`, `PGSSLMODE`,
/// …) filling in what it leaves out. Statements run with `$1`, `$2` … parameters and are
/// prepared once per connection, on first use. The server's notices are dropped (libpq
/// would print them raw to stderr).
///
/// A connection is used by one thread at a time; a process that works on several threads
/// opens a connection for each (or takes them from a pool).
public final class PostgresConnection {
    /// The location with any password replaced by `***`: what errors and logs name.
    public let redactedLocation: String
    private let location: String
    private var handle: OpaquePointer?
    private var preparedNames: [String: String] = [:]

    /// How long a connection attempt may take when neither the location
    /// (`connect_timeout=`) nor `PGCONNECT_TIMEOUT` says: libpq's own default is to wait
    /// for ever on a host that does not answer.
    public static let defaultConnectTimeout = 10

    /// Connects to `location`; throws `cannotConnect` with libpq's reason.
    public init(_ location: String) throws {
        self.location = location
        self.redactedLocation = PostgresLocation.redacted(location)
        self.handle = try Self.connect(location, redactedLocation: redactedLocation)
    }

    deinit { PQfinish(handle) }

    private static func connect(_ written: String, redactedLocation: String) throws -> OpaquePointer {
        let (location, secrets) = try PostgresLocation.prepared(written)
        // Keywords before `dbname` are defaults: what the location itself says wins.
        var settings: [(String, String)] = [("application_name", "topregions")]
        if ProcessInfo.processInfo.environment["PGCONNECT_TIMEOUT"] == nil {
            settings.append(("connect_timeout", String(defaultConnectTimeout)))
        }
        settings.append(("dbname", location))
        // After the location, so that it wins: text goes both ways as UTF-8 whatever the
        // database's encoding (a database that cannot hold a character refuses it).
        settings.append(("client_encoding", "UTF8"))
        let connection = withCStringArray(settings.map(\.0)) { keywords in
            withCStringArray(settings.map(\.1)) { values in topregions_pq_connect_quietly(keywords, values) }
        }
        guard let connection else {
            throw PostgresError(.cannotConnect, "cannot connect to \(redactedLocation): out of memory")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            // libpq and the server may quote what they were given: never its secrets.
            let reason = PostgresLocation.scrubbed(Self.trimmedMessage(PQerrorMessage(connection)), of: secrets)
                .replacingOccurrences(of: written, with: redactedLocation).replacingOccurrences(of: location, with: redactedLocation)
            PQfinish(connection)
            throw PostgresError(.cannotConnect, "cannot connect to \(redactedLocation): \(reason)")
        }
        return connection
    }

    /// Closes this connection and opens a new one to the same location (after a server
    /// restart or a network cut). Prepared statements and `LISTEN`s are not carried over.
    public func reconnect() throws {
        PQfinish(handle)
        handle = nil
        preparedNames = [:]
        handle = try Self.connect(location, redactedLocation: redactedLocation)
    }

    /// Closes the connection; later calls throw `closed`.
    public func close() {
        PQfinish(handle)
        handle = nil
        preparedNames = [:]
    }

    /// Whether libpq still considers the connection usable.
    public var isConnected: Bool {
        guard let handle else { return false }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// Whether the connection is still up, as far as can be told without a round trip:
    /// reads what the server has sent (without waiting), so a server that ended the session
    /// (a restart, `pg_terminate_backend`) is noticed. Notifications read stay queued.
    public func isAlive() -> Bool {
        guard let handle else { return false }
        // A server that ends a session sends its reason, then closes: the first read takes
        // the message, a second meets the end of the stream.
        for _ in 0..<4 {
            guard PQstatus(handle) == CONNECTION_OK else { return false }
            var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 0) > 0 else { return true }
            if PQconsumeInput(handle) == 0 { return false }
        }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// Whether a transaction is open, or failed and not yet rolled back.
    public var isInTransaction: Bool {
        guard let handle else { return false }
        return PQtransactionStatus(handle) != PQTRANS_IDLE
    }

    /// The server process serving this connection (`pg_backend_pid()`).
    public var backendProcessID: Int32 {
        handle.map { PQbackendPID($0) } ?? 0
    }

    /// Runs one statement without parameters, or several separated by semicolons (for
    /// schema scripts); returns the last statement's rows.
    @discardableResult
    public func execute(_ sql: String) throws -> PostgresResult {
        let connection = try open()
        return try check(PQexec(connection, sql), sql: sql)
    }

    /// Runs one statement with `parameters` bound to `$1`, `$2` …, preparing it on this
    /// connection the first time it is run.
    @discardableResult
    public func query(_ sql: String, _ parameters: [PostgresValue] = []) throws -> PostgresResult {
        try check(try runPrepared(sql, parameters), sql: sql)
    }

    /// Runs one statement as `query` does, and hands its rows to `body` one at a time
    /// through one cursor, read in place: numbers are parsed from libpq's text without a
    /// `String` made for each (for reading many rows).
    public func query(_ sql: String, _ parameters: [PostgresValue] = [], eachRow body: (PostgresCursor) throws -> Void) throws {
        let result = try runPrepared(sql, parameters)
        defer { PQclear(result) }
        guard let result else { throw connectionError(sql: sql) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            let cursor = PostgresCursor(result)
            for row in 0..<cursor.rowCount {
                cursor.row = Int32(row)
                try body(cursor)
            }
        default:
            throw failure(of: result, sql: sql)
        }
    }

    /// Sends a statement with its parameters, preparing it the first time; the result is
    /// the caller's to check and clear.
    private func runPrepared(_ sql: String, _ parameters: [PostgresValue]) throws -> OpaquePointer? {
        let connection = try open()
        for (index, parameter) in parameters.enumerated() {
            if case .text(let text) = parameter, text.utf8.contains(0) {
                throw PostgresError(.invalidParameter, "parameter $\(index + 1) is text holding NUL, which PostgreSQL cannot store", sql: sql)
            }
        }
        let name = try preparedName(for: sql, parameterCount: parameters.count, on: connection)
        let wire = parameters.map(\.wireForm)
        return withParameterArrays(wire) { values, lengths, formats in
            PQexecPrepared(connection, name, Int32(wire.count), values, lengths, formats, 0)
        }
    }

    private func preparedName(for sql: String, parameterCount: Int, on connection: OpaquePointer) throws -> String {
        if let name = preparedNames[sql] { return name }
        let name = "topregions_\(preparedNames.count + 1)"
        _ = try check(PQprepare(connection, name, sql, Int32(parameterCount), nil), sql: sql)
        preparedNames[sql] = name
        return name
    }

    func open() throws -> OpaquePointer {
        guard let handle else { throw PostgresError(.closed, "the connection to \(redactedLocation) is closed") }
        return handle
    }

    /// The rows of `result`, or the error it carries; frees it either way.
    private func check(_ result: OpaquePointer?, sql: String) throws -> PostgresResult {
        defer { PQclear(result) }
        guard let result else { throw connectionError(sql: sql) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return PostgresResult(result)
        default:
            throw failure(of: result, sql: sql)
        }
    }

    /// The error a failed result carries: the server's message and SQLSTATE, or the lost
    /// connection beneath it.
    func failure(of result: OpaquePointer, sql: String) -> PostgresError {
        if !isConnected { return connectionError(sql: sql) }
        let sqlState = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
        let message = PQresultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) }
            ?? Self.trimmedMessage(PQresultErrorMessage(result))
        return PostgresError(.server, message, sqlState: sqlState, sql: sql)
    }

    /// The error for a connection that failed under a statement: lost, or never usable.
    func connectionError(sql: String? = nil) -> PostgresError {
        let reason = handle.map { Self.trimmedMessage(PQerrorMessage($0)) } ?? "closed"
        return PostgresError(.connectionLost, "lost the connection to \(redactedLocation): \(reason)", sql: sql)
    }

    /// libpq's message on one line: it breaks its hints onto indented lines of their own,
    /// often without a full stop ("…failed: Connection refused" / "Is the server running…").
    static func trimmedMessage(_ message: UnsafePointer<CChar>?) -> String {
        guard let message else { return "no reason given" }
        let lines = String(cString: message).split(whereSeparator: { $0 == "\n" || $0 == "\t" || $0 == "\r" })
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        var text = ""
        for line in lines {
            if let last = text.last { text += ".:;?!".contains(last) ? " " : ". " }
            text += line
        }
        return text.isEmpty ? "no reason given" : text
    }
}

/// Calls `body` with a C array of C strings for `strings`, NULL-terminated.
private func withCStringArray<Result>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> Result) -> Result {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
}

/// Calls `body` with libpq's three parameter arrays (values, lengths, formats).
private func withParameterArrays<Result>(
    _ parameters: [(bytes: [UInt8]?, format: Int32)],
    _ body: (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> Result
) -> Result {
    let copies: [UnsafeMutablePointer<UInt8>?] = parameters.map { parameter in
        guard let bytes = parameter.bytes else { return nil }
        let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes.count + 1)
        copy.initialize(from: bytes, count: bytes.count)
        copy[bytes.count] = 0
        return copy
    }
    defer { copies.forEach { $0?.deallocate() } }
    let values: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) } }
    let lengths = parameters.map { Int32($0.bytes?.count ?? 0) }
    let formats = parameters.map(\.format)
    return values.withUnsafeBufferPointer { valueBuffer in
        lengths.withUnsafeBufferPointer { lengthBuffer in
            formats.withUnsafeBufferPointer { formatBuffer in
                body(valueBuffer.baseAddress, lengthBuffer.baseAddress, formatBuffer.baseAddress)
            }
        }
    }
}
