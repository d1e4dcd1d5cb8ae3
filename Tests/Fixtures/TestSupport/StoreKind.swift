import Foundation

/// The stores a domain test runs on. PostgreSQL's cases run where PostgreSQL is installed
/// (CI requires it); elsewhere they are left out, and the PostgreSQL suites say how to
/// enable them (`PostgresTestServer.enablingCommand`).
public enum StoreKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite, postgresql

    /// The kinds this machine can run.
    public static var available: [StoreKind] { PostgresTestServer.shouldRun ? allCases : [.sqlite] }

    public var description: String { rawValue }
}

